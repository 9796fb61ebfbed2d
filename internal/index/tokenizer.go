package index

import (
	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/tokenizer/unicode"
	"github.com/blevesearch/bleve/v2/registry"
	"github.com/blevesearch/segment"
)

// wordsTokenizer is the tokenizer of textAnalyzer in indexes created since
// it exists: bleve's "unicode" tokenizer (Unicode word boundaries, UAX #29
// as github.com/blevesearch/segment implements it), with the same tokens,
// faster on ASCII text, which is most of what a crawl indexes.
//
// In ASCII, only letters, digits and _ . ' : , ; can join a word with its
// neighbours (WB5-WB13b; the double quote joins Hebrew letters only);
// every other byte is a boundary on both sides, and no rule looks across
// it. So an ASCII text is cut at those bytes into runs, less the
// punctuation at either end: a run of letters and digits alone is one
// word; a run with . ' : , or ; is cut by the few rules that apply there
// (joinRun); a run with _ goes through the segmenter on its own, which
// gives what it gives in context. Text with any other byte goes through
// the segmenter whole. TestWordsTokenizer and FuzzWordsTokenizer compare
// the tokens (term, offsets, position, type) with bleve's tokenizer.
const wordsTokenizer = "trawl_words"

func init() {
	err := registry.RegisterTokenizer(wordsTokenizer, func(map[string]interface{}, *registry.Cache) (analysis.Tokenizer, error) {
		return wordTokenizer{}, nil
	})
	if err != nil {
		panic(err)
	}
}

type wordTokenizer struct{}

// asciiClass: 0 a boundary byte, 1 a letter or digit, 2 a byte that may
// join or part words depending on its neighbours.
var asciiClass = func() (c [128]uint8) {
	for b := '0'; b <= '9'; b++ {
		c[b] = 1
	}
	for b := 'a'; b <= 'z'; b++ {
		c[b], c[b-'a'+'A'] = 1, 1
	}
	for _, b := range "_.':,;" {
		c[b] = 2
	}
	return c
}()

func (wordTokenizer) Tokenize(input []byte) analysis.TokenStream {
	for _, b := range input {
		if b >= 0x80 {
			return unicode.NewUnicodeTokenizer().Tokenize(input)
		}
	}
	var (
		rv  = make(analysis.TokenStream, 0, len(input)/6+1)
		ta  []analysis.Token
		pos = 1
	)
	emit := func(term []byte, start int, typ analysis.TokenType) {
		if len(ta) == 0 {
			ta = make([]analysis.Token, min(max((len(input)-start)/6, 1), 1000))
		}
		t := &ta[0]
		ta = ta[1:]
		t.Term, t.Start, t.End, t.Position, t.Type = term, start, start+len(term), pos, typ
		rv = append(rv, t)
		pos++
	}
	for i := 0; i < len(input); {
		if asciiClass[input[i]] == 0 {
			i++
			continue
		}
		end := i
		for end < len(input) && asciiClass[input[end]] != 0 {
			end++
		}
		// A . ' : , or ; at either end of a run joins nothing (WB6, WB7,
		// WB11 and WB12 need a letter or digit on both sides).
		s, e := i, end
		for s < e && isMid(input[s]) {
			s++
		}
		for e > s && isMid(input[e-1]) {
			e--
		}
		i = end
		mixed, letters, under := false, false, false
		for _, c := range input[s:e] {
			switch {
			case c == '_':
				under = true
			case asciiClass[c] == 2:
				mixed = true
			case c > '9':
				letters = true
			}
		}
		switch {
		case s == e:
		case under:
			seg := segment.NewWordSegmenterDirect(input[s:e])
			for at := s; seg.Segment(); {
				b := seg.Bytes()
				if tp := seg.Type(); tp != segment.None {
					emit(b, at, tokenType(tp))
				}
				at += len(b)
			}
		case !mixed && letters:
			emit(input[s:e], s, analysis.AlphaNumeric)
		case !mixed:
			emit(input[s:e], s, analysis.Numeric)
		default:
			joinRun(input[s:e], s, emit)
		}
	}
	return rv
}

// joinRun emits the words of an ASCII run of letters, digits and
// . ' : , ; (no _, none at either end) by the rules of UAX #29 that apply
// there: letters and digits join (WB5, WB8-WB10); a . ' or : between two
// letters joins them (WB6, WB7), a . ' , or ; between two digits (WB11,
// WB12); everything else is a boundary, and a segment without a letter or
// digit is no word.
func joinRun(run []byte, off int, emit func([]byte, int, analysis.TokenType)) {
	isLetter := func(c byte) bool { return c > '9' && asciiClass[c] == 1 }
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	start, letters := -1, false
	flush := func(end int) {
		if start >= 0 {
			typ := analysis.Numeric
			if letters {
				typ = analysis.AlphaNumeric
			}
			emit(run[start:end], off+start, typ)
		}
		start, letters = -1, false
	}
	for k := 0; k < len(run); k++ {
		c := run[k]
		if asciiClass[c] == 1 {
			if start < 0 {
				start = k
			}
			letters = letters || isLetter(c)
			continue
		}
		// c is a . ' : , or ;
		if start >= 0 && k+1 < len(run) {
			prev, next := run[k-1], run[k+1]
			if (isLetter(prev) && isLetter(next) && (c == '.' || c == '\'' || c == ':')) ||
				(isDigit(prev) && isDigit(next) && c != ':') {
				continue
			}
		}
		flush(k)
	}
	flush(len(run))
}

func isMid(c byte) bool { return asciiClass[c] == 2 && c != '_' }

// tokenType is bleve's unicode tokenizer's type of a segment.
func tokenType(t int) analysis.TokenType {
	switch t {
	case segment.Ideo, segment.Kana:
		return analysis.Ideographic
	case segment.Number:
		return analysis.Numeric
	}
	return analysis.AlphaNumeric
}
