package config

import (
	"fmt"
	"sort"
	"strings"
	"unicode/utf8"
)

// Error is one problem found in a configuration file, located by file and
// line, and by collection and parameter (or section) where it has one.
type Error struct {
	File string
	Line int
	// Collection is the DomainSpecification name, when known.
	Collection string
	// Param is the parameter's path ("delay", "crawlmode/mode",
	// "SubDomain[sub1]/refresh"); Section is set instead for a problem
	// with a whole section.
	Param   string
	Section string
	Msg     string
	// NotHonoured marks the warning "not honoured by the crawl yet".
	NotHonoured bool
}

// Error formats the problem as "file:line: collection C: parameter P: msg".
func (e *Error) Error() string {
	var b strings.Builder
	if e.File != "" {
		b.WriteString(e.File)
		b.WriteString(":")
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, "%d:", e.Line)
	}
	if b.Len() > 0 {
		b.WriteString(" ")
	}
	if e.Collection != "" {
		fmt.Fprintf(&b, "collection %s: ", Clip(e.Collection))
	}
	switch {
	case e.Param != "":
		fmt.Fprintf(&b, "parameter %s: ", Clip(e.Param))
	case e.Section != "":
		fmt.Fprintf(&b, "section %s: ", Clip(e.Section))
	}
	b.WriteString(e.Msg)
	return b.String()
}

// ErrorList is every problem of a file; Parse returns it (as error) when
// there is at least one.
type ErrorList []*Error

// Error joins the problems, one per line.
func (l ErrorList) Error() string {
	s := make([]string, len(l))
	for i, e := range l {
		s[i] = e.Error()
	}
	return strings.Join(s, "\n")
}

// Unwrap returns the problems for errors.Is and errors.As.
func (l ErrorList) Unwrap() []error {
	out := make([]error, len(l))
	for i, e := range l {
		out[i] = e
	}
	return out
}

// sortErrors orders by file and line, keeping the order of discovery for
// one line, and drops exact duplicates.
func sortErrors(l ErrorList) ErrorList {
	sort.SliceStable(l, func(i, j int) bool {
		if l[i].File != l[j].File {
			return l[i].File < l[j].File
		}
		return l[i].Line < l[j].Line
	})
	out := l[:0]
	seen := map[string]bool{}
	for _, e := range l {
		k := e.Error()
		if seen[k] {
			continue
		}
		seen[k] = true
		out = append(out, e)
	}
	return out
}

// Suggest returns ` (did you mean "x"?)` for the candidate nearest to name
// (case-insensitive edit distance), when it is near enough, else "". The
// configuration's errors and trawl's command line use it.
func Suggest(name string, candidates []string) string { return suggest(name, candidates) }

// MaxSuggestName is the longest name suggest compares with the
// candidates: a longer one is no typo of a known name, and comparing it
// would cost its length times every candidate's.
const MaxSuggestName = 64

// maxEchoed is how much of a name or value an error message quotes.
const maxEchoed = 64

// Clip returns s, or its first maxEchoed bytes (cut at a rune boundary)
// followed by "...(N bytes)" when it is longer: what an error message
// quotes of a name or value it was sent.
func Clip(s string) string {
	if len(s) <= maxEchoed {
		return s
	}
	cut := maxEchoed
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return fmt.Sprintf("%s...(%d bytes)", s[:cut], len(s))
}

// suggest returns ` (did you mean "x"?)` for the candidate nearest to name,
// when it is near enough; never for a name longer than MaxSuggestName.
func suggest(name string, candidates []string) string {
	if len(name) > MaxSuggestName {
		return ""
	}
	best, bestD := "", -1
	for _, c := range candidates {
		d := editDistance(strings.ToLower(name), strings.ToLower(c))
		if bestD < 0 || d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	limit := 2
	if l := len(name) / 3; l > limit {
		limit = l
	}
	if best == "" || bestD > limit || bestD >= len(name) {
		return ""
	}
	return fmt.Sprintf(" (did you mean %q?)", best)
}

// editDistance is the Levenshtein distance between a and b.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
