package filter

import (
	"slices"
	"strings"
)

// A prefilter is a necessary condition for a regexp to match: for every
// run, the input contains at least one of the run's strings. A regexp
// only runs on input that passes its prefilter, so analyze must never
// produce a condition that a matching input fails. It is conservative:
// anything it does not understand simply contributes no condition.
type prefilter [][]string

const (
	maxSet  = 16 // strings in one run
	maxRuns = 3  // runs kept, the most selective first
)

// pass reports whether s satisfies the prefilter.
func (p prefilter) pass(s string) bool {
	for _, run := range p {
		if !runPass(run, s) {
			return false
		}
	}
	return true
}

func runPass(run []string, s string) bool {
	for _, lit := range run {
		if strings.Contains(s, lit) {
			return true
		}
	}
	return false
}

// guarded is a prefilter compiled for speed: each run has a guard, the
// longest substring common to all its strings (when of 2 bytes or more),
// which a single search can rule out before the strings are tried.
type guarded struct {
	guards []string
	runs   [][]string
}

func (p prefilter) compile() *guarded {
	if p == nil {
		return nil
	}
	g := &guarded{runs: p}
	for _, run := range p {
		guard := ""
		if len(run) > 1 {
			guard = commonSubstring(run)
			if len(guard) < 2 {
				guard = ""
			}
		}
		g.guards = append(g.guards, guard)
	}
	return g
}

func (g *guarded) pass(s string) bool {
	for i, run := range g.runs {
		if g.guards[i] != "" && !strings.Contains(s, g.guards[i]) {
			return false
		}
		if !runPass(run, s) {
			return false
		}
	}
	return true
}

// commonSubstring returns the longest string contained in every string
// of set.
func commonSubstring(set []string) string {
	short := set[0]
	for _, s := range set {
		if len(s) < len(short) {
			short = s
		}
	}
	for n := len(short); n > 0; n-- {
		for i := 0; i+n <= len(short); i++ {
			sub := short[i : i+n]
			all := true
			for _, s := range set {
				if !strings.Contains(s, sub) {
					all = false
					break
				}
			}
			if all {
				return sub
			}
		}
	}
	return ""
}

// analyze derives a prefilter from a .NET pattern (nil when none). With
// fold, the strings are lower case (for IgnoreCase regexps matched on
// lower-case ASCII input).
func analyze(pat string, fold bool) prefilter {
	if hasInlineOption(pat) {
		return nil
	}
	a := &analyzer{pat: pat}
	info := a.alt(0)
	if a.bad || a.i != len(pat) {
		return nil
	}
	runs := info.runs
	if info.exact != nil {
		runs = append(runs, info.exact)
	}
	var out prefilter
	for _, r := range runs {
		if len(r) == 0 || len(r) > maxSet || slices.Contains(r, "") {
			continue
		}
		if fold {
			for i := range r {
				r[i] = strings.ToLower(r[i])
			}
		}
		out = append(out, r)
	}
	slices.SortStableFunc(out, func(a, b []string) int { return minLen(b) - minLen(a) })
	if len(out) > maxRuns {
		out = out[:maxRuns]
	}
	return out
}

func minLen(r []string) int {
	m := 1 << 30
	for _, s := range r {
		m = min(m, len(s))
	}
	return m
}

// info describes what a part of a pattern matches: exact, when not nil,
// is the finite set of strings it matches; runs are conditions every
// match of it satisfies.
type info struct {
	exact []string
	runs  [][]string
}

type analyzer struct {
	pat string
	i   int
	bad bool
}

// alt parses alternatives up to ')' or the end.
func (a *analyzer) alt(depth int) info {
	var alts []info
	for {
		alts = append(alts, a.seq(depth))
		if a.bad || a.i >= len(a.pat) || a.pat[a.i] != '|' {
			break
		}
		a.i++
	}
	if len(alts) == 1 {
		return alts[0]
	}
	// Exact if every alternative is.
	var exact []string
	for _, x := range alts {
		if x.exact == nil {
			exact = nil
			break
		}
		exact = append(exact, x.exact...)
		if len(exact) > maxSet {
			exact = nil
			break
		}
	}
	if exact != nil {
		return info{exact: dedup(exact)}
	}
	// Otherwise one run: the union of each alternative's best run.
	var union []string
	for _, x := range alts {
		best := bestRun(x)
		if best == nil {
			return info{}
		}
		union = append(union, best...)
	}
	if len(union) > maxSet {
		return info{}
	}
	return info{runs: [][]string{dedup(union)}}
}

// bestRun returns the most selective condition of x, or nil.
func bestRun(x info) []string {
	var best []string
	cands := x.runs
	if x.exact != nil {
		cands = append(slices.Clip(cands), x.exact)
	}
	for _, r := range cands {
		if len(r) == 0 || len(r) > maxSet || slices.Contains(r, "") {
			continue
		}
		if best == nil || minLen(r) > minLen(best) {
			best = r
		}
	}
	return best
}

func dedup(s []string) []string {
	slices.Sort(s)
	return slices.Compact(s)
}

// cross returns {x+y : x in a, y in b}, or nil when it would be too big.
func cross(a, b []string) []string {
	if len(a)*len(b) > maxSet {
		return nil
	}
	out := make([]string, 0, len(a)*len(b))
	for _, x := range a {
		for _, y := range b {
			out = append(out, x+y)
		}
	}
	return dedup(out)
}

// seq parses a concatenation up to '|', ')' or the end.
func (a *analyzer) seq(depth int) info {
	var res info
	var cur []string // the exact run being built; nil when none
	allExact := true
	closeRun := func() {
		if cur != nil {
			res.runs = append(res.runs, cur)
		}
		cur = nil
	}
	for a.i < len(a.pat) && !a.bad {
		c := a.pat[a.i]
		if c == '|' {
			break
		}
		if c == ')' {
			if depth == 0 {
				a.bad = true
			}
			break
		}
		atom, zeroWidth := a.atom(depth)
		if a.bad {
			break
		}
		if zeroWidth {
			if atom.exact == nil && atom.runs == nil {
				continue // a comment
			}
			allExact = false
			closeRun()
			continue
		}
		minRep, maxRep, isQuant := a.quant()
		switch {
		case !isQuant || (minRep == 1 && maxRep == 1):
		case minRep == 0 && maxRep == 1 && atom.exact != nil:
			atom = info{exact: dedup(append(slices.Clone(atom.exact), ""))}
		case minRep == 0:
			atom = info{}
		default: // at least once, then repeats: keep the first copy, end the run
			allExact = false
			if atom.exact != nil {
				if cur == nil {
					cur = []string{""}
				}
				if cur = cross(cur, atom.exact); cur == nil {
					cur = atom.exact
				}
			} else {
				closeRun()
				res.runs = append(res.runs, atom.runs...)
			}
			closeRun()
			continue
		}
		if atom.exact != nil {
			if cur == nil {
				cur = []string{""}
			}
			next := cross(cur, atom.exact)
			if next == nil {
				allExact = false
				closeRun()
				next = atom.exact
			}
			cur = next
			continue
		}
		allExact = false
		closeRun()
		res.runs = append(res.runs, atom.runs...)
	}
	if allExact {
		if cur == nil {
			cur = []string{""}
		}
		return info{exact: cur}
	}
	closeRun()
	return res
}

// atom parses one atom. zeroWidth reports an anchor, a lookaround or a
// comment (a comment returns an empty info).
func (a *analyzer) atom(depth int) (x info, zeroWidth bool) {
	p := a.pat
	c := p[a.i]
	switch c {
	case '(':
		if strings.HasPrefix(p[a.i:], "(?#") {
			k := strings.IndexByte(p[a.i:], ')')
			if k < 0 {
				a.bad = true
				return info{}, false
			}
			a.i += k + 1
			return info{}, true
		}
		rest := p[a.i+1:]
		switch {
		case strings.HasPrefix(rest, "?="), strings.HasPrefix(rest, "?!"),
			strings.HasPrefix(rest, "?<="), strings.HasPrefix(rest, "?<!"), strings.HasPrefix(rest, "?("):
			j := skipGroup(p, a.i)
			if j < 0 {
				a.bad = true
				return info{}, false
			}
			a.i = j
			return info{runs: [][]string{}}, true
		case strings.HasPrefix(rest, "?:"), strings.HasPrefix(rest, "?>"):
			a.i += 3
		case strings.HasPrefix(rest, "?<"), strings.HasPrefix(rest, "?'"):
			close := byte('>')
			if rest[1] == '\'' {
				close = '\''
			}
			k := strings.IndexByte(rest[2:], close)
			if k < 0 {
				a.bad = true
				return info{}, false
			}
			a.i += 1 + 2 + k + 1
		case strings.HasPrefix(rest, "?"):
			// (?flags:...) or (?flags): flags without i/x (checked).
			k := strings.IndexAny(rest, ":)")
			if k < 0 {
				a.bad = true
				return info{}, false
			}
			if rest[k] == ')' {
				a.i += 1 + k + 1
				return info{}, true
			}
			a.i += 1 + k + 1
		default:
			a.i++
		}
		x = a.alt(depth + 1)
		if a.bad || a.i >= len(p) || p[a.i] != ')' {
			a.bad = true
			return info{}, false
		}
		a.i++
		return x, false
	case '[':
		j := skipClass(p, a.i)
		if j < 0 {
			a.bad = true
			return info{}, false
		}
		set := smallClass(p[a.i+1 : j-1])
		a.i = j
		return info{exact: set}, false
	case '^', '$':
		a.i++
		return info{runs: [][]string{}}, true
	case '.':
		a.i++
		return info{}, false
	case '\\':
		if a.i+1 >= len(p) {
			a.bad = true
			return info{}, false
		}
		n := p[a.i+1]
		if n < 0x80 && !isAlnum(n) && n > ' ' && n != 0x7f {
			a.i += 2
			return info{exact: []string{string(n)}}, false
		}
		switch n {
		case 'b', 'B', 'A', 'z', 'Z', 'G':
			a.i += 2
			return info{runs: [][]string{}}, true
		}
		a.i = skipEscape(p, a.i)
		return info{}, false
	case '*', '+', '?':
		a.bad = true // a quantifier with nothing to repeat
		return info{}, false
	}
	if c >= 0x80 || c < ' ' || c == 0x7f {
		// Non-ASCII or control: skip the whole UTF-8 sequence.
		a.i++
		for a.i < len(p) && p[a.i]&0xc0 == 0x80 {
			a.i++
		}
		return info{}, false
	}
	if c == '{' {
		if _, _, ok := quantifier(p, a.i); ok {
			a.bad = true
			return info{}, false
		}
		a.i++
		return info{}, false // a literal '{'; not used
	}
	a.i++
	return info{exact: []string{string(c)}}, false
}

// quant parses a quantifier at a.i, if any, and a lazy '?' after it.
func (a *analyzer) quant() (minRep, maxRep int, ok bool) {
	if a.i >= len(a.pat) {
		return 0, 0, false
	}
	switch a.pat[a.i] {
	case '*':
		minRep, maxRep = 0, -1
		a.i++
	case '+':
		minRep, maxRep = 1, -1
		a.i++
	case '?':
		minRep, maxRep = 0, 1
		a.i++
	case '{':
		end, mn, mx, isQ := quantifierRange(a.pat, a.i)
		if !isQ {
			return 0, 0, false
		}
		minRep, maxRep = mn, mx
		a.i = end
	default:
		return 0, 0, false
	}
	if a.i < len(a.pat) && a.pat[a.i] == '?' {
		a.i++
	}
	return minRep, maxRep, true
}

// smallClass returns the characters of a class body when it is a short
// list of plain ASCII characters (no ranges, negation or escapes of
// letters), else nil.
func smallClass(body string) []string {
	if body == "" || body[0] == '^' {
		return nil
	}
	var out []string
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' && i+1 < len(body) && body[i+1] < 0x80 && !isAlnum(body[i+1]) && body[i+1] > ' ' {
			out = append(out, string(body[i+1]))
			i++
			continue
		}
		if c == '-' || c == '[' || c == '\\' || c < ' ' || c >= 0x7f {
			return nil
		}
		out = append(out, string(c))
	}
	if len(out) > 4 {
		return nil
	}
	return dedup(out)
}

func isAlnum(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// hasInlineOption reports "(?" followed by option letters that include i
// or x (case-insensitive or whitespace-ignoring matching).
func hasInlineOption(pat string) bool {
	for i := 0; ; {
		j := strings.Index(pat[i:], "(?")
		if j < 0 {
			return false
		}
		k := i + j + 2
		for k < len(pat) && strings.IndexByte("imnsxIMNSX-", pat[k]) >= 0 {
			if p := pat[k] | 0x20; p == 'i' || p == 'x' {
				return true
			}
			k++
		}
		i = i + j + 2
	}
}

// skipGroup returns the index after the group that starts at pat[i]=='('.
func skipGroup(pat string, i int) int {
	depth := 0
	for j := i; j < len(pat); {
		switch pat[j] {
		case '\\':
			j += 2
		case '[':
			if j = skipClass(pat, j); j < 0 {
				return -1
			}
		case '(':
			if strings.HasPrefix(pat[j:], "(?#") {
				k := strings.IndexByte(pat[j:], ')')
				if k < 0 {
					return -1
				}
				j += k + 1
				if depth == 0 {
					return j
				}
				continue
			}
			depth++
			j++
		case ')':
			depth--
			j++
			if depth == 0 {
				return j
			}
		default:
			j++
		}
	}
	return -1
}

// skipClass returns the index after the character class that starts at
// pat[i]=='[', including .NET class subtraction "[a-z-[aeiou]]".
func skipClass(pat string, i int) int {
	j := i + 1
	if j < len(pat) && pat[j] == '^' {
		j++
	}
	if j < len(pat) && pat[j] == ']' {
		j++
	}
	for j < len(pat) {
		switch {
		case pat[j] == '\\':
			j += 2
		case pat[j] == '-' && j+1 < len(pat) && pat[j+1] == '[':
			if j = skipClass(pat, j+1); j < 0 {
				return -1
			}
		case pat[j] == ']':
			return j + 1
		default:
			j++
		}
	}
	return -1
}

// quantifier parses "{n}", "{n,}" or "{n,m}" at pat[i].
func quantifier(pat string, i int) (end, min int, ok bool) {
	end, min, _, ok = quantifierRange(pat, i)
	return end, min, ok
}

// quantifierRange is quantifier with the maximum (-1: none).
func quantifierRange(pat string, i int) (end, minRep, maxRep int, ok bool) {
	num := func(j int) (int, int) {
		n := 0
		for j < len(pat) && pat[j] >= '0' && pat[j] <= '9' {
			n = min(n*10+int(pat[j]-'0'), 1<<20)
			j++
		}
		return n, j
	}
	j := i + 1
	minRep, k := num(j)
	if k == j {
		return 0, 0, 0, false
	}
	j, maxRep = k, minRep
	if j < len(pat) && pat[j] == ',' {
		maxRep, k = num(j + 1)
		if k == j+1 {
			maxRep = -1
		}
		j = k
	}
	if j < len(pat) && pat[j] == '}' {
		return j + 1, minRep, maxRep, true
	}
	return 0, 0, 0, false
}

// skipEscape returns the index after the escape at pat[i]=='\\' whose
// second character is a letter or digit, with its arguments: \p{..},
// \k<..>, \xhh, \uhhhh, \cX, back references and octal digits.
func skipEscape(pat string, i int) int {
	j := i + 2
	switch pat[i+1] {
	case 'p', 'P':
		if j < len(pat) && pat[j] == '{' {
			if k := strings.IndexByte(pat[j:], '}'); k >= 0 {
				return j + k + 1
			}
			return len(pat)
		}
	case 'k':
		if j < len(pat) && (pat[j] == '<' || pat[j] == '\'') {
			close := byte('>')
			if pat[j] == '\'' {
				close = '\''
			}
			if k := strings.IndexByte(pat[j+1:], close); k >= 0 {
				return j + 1 + k + 1
			}
			return len(pat)
		}
	case 'x':
		for n := 0; n < 2 && j < len(pat) && isHexDigit(pat[j]); n++ {
			j++
		}
	case 'u':
		for n := 0; n < 4 && j < len(pat) && isHexDigit(pat[j]); n++ {
			j++
		}
	case 'c':
		if j < len(pat) {
			j++
		}
	default:
		if pat[i+1] >= '0' && pat[i+1] <= '9' {
			for j < len(pat) && pat[j] >= '0' && pat[j] <= '9' {
				j++
			}
		}
	}
	return j
}

func isHexDigit(c byte) bool {
	return (c >= '0' && c <= '9') || (c|0x20 >= 'a' && c|0x20 <= 'f')
}
