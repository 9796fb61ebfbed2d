package clicks

import (
	"net/url"
	"regexp"
	"strings"
	"unicode"
)

// scopeRule is SCOPERULE of filter_old_queries (MS-FSFDMW 3.6.5.3.3): a
// trailing scope:"..." is cut from a query before anything else.
var scopeRule = regexp.MustCompile(` scope:".*"$`)

// queryRules are the other rules of filter_old_queries, cleaned of the
// source's garbling (see the digest): a query that holds any of them,
// case-insensitively and anywhere, uses the query language's operators
// (a property filter, AND, OR, NOT, an exclusion, NEAR, WORDS) and is not
// counted.
var queryRules = regexp.MustCompile(`(?i)\S+:\S+|\S+=\S+|\S+>\S+|\S+<\S+| and | or | not |^not | -\S+|^-\S+| near | words\(\S+|^words\(\S+`)

// StripScope applies the scope rule.
func StripScope(q string) string { return scopeRule.ReplaceAllString(q, "") }

// Filtered reports whether filter_old_queries drops q (after StripScope)
// for its operators.
func Filtered(q string) bool { return queryRules.MatchString(q) }

// Tokenize is tokenize_query's normalization (3.6.5.3.11; MS-FSIN, which
// defines it, is not public): the query's words (runs of letters and
// digits, as the index's tokenizer cuts them) in lower case, joined by
// one space. Quotes and punctuation go.
func Tokenize(q string) string {
	words := strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	return strings.Join(words, " ")
}

// Key returns the key under which the click relevance of query q is
// kept: its scope cut, Tokenize'd; ok is false when filter_old_queries
// drops q (then no click relevance applies to it) or nothing is left.
func Key(q string) (key string, ok bool) {
	q = StripScope(strings.TrimSpace(q))
	if Filtered(q) {
		return "", false
	}
	k := Tokenize(q)
	return k, k != ""
}

// escape and unescape the free-text QUERY field: one table field, SP
// written as '+' (net/url's query escaping), "-" for the empty text.
func escape(s string) string {
	if s == "" {
		return "-"
	}
	return url.QueryEscape(s)
}

func unescape(s string) string {
	if s == "-" {
		return ""
	}
	u, err := url.QueryUnescape(s)
	if err != nil {
		return s
	}
	return u
}
