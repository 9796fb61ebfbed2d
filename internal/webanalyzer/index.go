package webanalyzer

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
)

// MaxAnchorText bounds the anchor text given to one document.
const MaxAnchorText = 8 << 10

// Anchors reads anchors.final from a state directory: URL -> the anchor
// text of the links between sites pointing at it, for the index's anchor
// field. Each distinct text appears as often as links carry it (at most
// 5 times), texts carried by higher-ranked sources first, at most
// MaxAnchorText bytes.
func Anchors(state string) (map[string]string, error) {
	urlOf := map[string]string{}
	err := readTable(filepath.Join(state, Compacted(TableURIMap)), func(f []string) error {
		if len(f) >= 2 {
			urlOf[f[0]] = f[1]
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	type anchor struct {
		text  string
		freq  int
		lrank float64
	}
	by := map[string][]anchor{}
	err = readTable(filepath.Join(state, OutAnchors), func(f []string) error {
		if len(f) != 7 {
			return fmt.Errorf("webanalyzer: %s: record of %d fields", OutAnchors, len(f))
		}
		u, ok := urlOf[f[0]]
		text := DecodeText(f[6])
		if !ok || text == "" {
			return nil
		}
		n, _ := strconv.Atoi(f[2])
		lr, _ := strconv.ParseFloat(f[3], 64)
		by[u] = append(by[u], anchor{text, n, lr})
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(by))
	for u, as := range by {
		sort.Slice(as, func(i, j int) bool {
			if as[i].lrank != as[j].lrank {
				return as[i].lrank > as[j].lrank
			}
			return as[i].text < as[j].text
		})
		var b strings.Builder
		for _, a := range as {
			for k := 0; k < min(a.freq, 5) && b.Len()+len(a.text)+1 <= MaxAnchorText; k++ {
				if b.Len() > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(a.text)
			}
		}
		out[u] = b.String()
	}
	return out, nil
}

// IndexRank is the rank a document gets in the index (whose scores are
// multiplied by 1+rank) from its static rank s and its site's rank r, both
// fractions of 1, over n pages and m sites: 0.5*log2(1+s*n) +
// 0.25*log2(1+r*m). A page of average static rank on a site of average
// rank gets 0.75; the logarithms keep a heavily linked page from burying
// better text matches.
func IndexRank(s, r float64, n, m int) float64 {
	return 0.5*math.Log2(1+s*float64(n)) + 0.25*math.Log2(1+r*float64(m))
}
