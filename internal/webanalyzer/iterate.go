package webanalyzer

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"os"
	"slices"
	"strconv"
)

// staticRankTask is webanalyzer.static_rank, a pythontasks function:
//
//	webanalyzer.static_rank ROUNDS PARTS LINKS INITIAL NOLINKS OUT
//
// It reads LINKS.0 .. LINKS.PARTS-1 (extract_links' FROM TO COUNT, each
// sorted by FROM), INITIAL.i and NOLINKS.i (initial_rank's and
// webanalyzer.rank_one's URLHASH 1 D), makes rank_by_uri of them as
// "sort -u -k1,1" would, runs ROUNDS rounds of the iteration in memory
// and writes the last rank_by_uri to OUT, sorted by URLHASH. Each round is
// what the build's targets did one table program at a time:
// compute_linkscore_divide_by_linkcount (merge on FROM), the scores
// sorted by TO (then by the whole record, the table engine's order), and
// sum_linkscore_and_new_static_rank (merge on URLHASH), called as the
// same functions on the same records, so the bytes are the ones the
// per-round targets wrote. A round that changes no record ends the
// iteration early: every later round would repeat it.
func staticRankTask(a []string) error {
	if len(a) != 6 {
		return fmt.Errorf("webanalyzer: static_rank: want ROUNDS PARTS LINKS INITIAL NOLINKS OUT, got %d parameters", len(a))
	}
	rounds, err := strconv.Atoi(a[0])
	if err != nil || rounds < 0 || rounds > 100000 {
		return fmt.Errorf("webanalyzer: static_rank: rounds %q", a[0])
	}
	parts, err := strconv.Atoi(a[1])
	if err != nil || parts < 1 || parts > 4096 {
		return fmt.Errorf("webanalyzer: static_rank: parts %q", a[1])
	}
	// rank_by_uri: initial_rank writes a record per link, so the first
	// of each key is kept as the records stream by.
	var ranks [][]byte
	var linkFiles []string
	seen := map[string]bool{}
	for p := 0; p < parts; p++ {
		linkFiles = append(linkFiles, fmt.Sprintf("%s.%d", a[2], p))
		for _, in := range a[3:5] {
			err := eachLine(fmt.Sprintf("%s.%d", in, p), func(r []byte) bool {
				if k := f(r, 1); !seen[string(k)] {
					seen[string(k)] = true
					ranks = append(ranks, bytes.Clone(r))
				}
				return true
			})
			if err != nil {
				return err
			}
		}
	}
	seen = nil
	ranks = rankByURI(ranks)
	// The links streamed into numbers; kept as records only when they
	// are not well formed.
	n, err := numericRanks(ranks, func(fn func([]byte) bool) error {
		for _, name := range linkFiles {
			if err := eachLine(name, fn); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if n != nil {
		n.run(rounds)
		return writeRecords(a[5], n.records(ranks, rounds))
	}
	var links [][]byte
	for _, name := range linkFiles {
		if links, err = readRecords(name, links); err != nil {
			return err
		}
	}
	out, err := iterateRanks(links, ranks, rounds, false)
	if err != nil {
		return err
	}
	return writeRecords(a[5], out)
}

// iterateRanks runs the rounds over extract_links' records and the
// initial rank_by_uri ones, on numbers when allowed and the tables are
// well formed, else on the records, and returns the last rank_by_uri.
func iterateRanks(links, ranks [][]byte, rounds int, numbers bool) ([][]byte, error) {
	ranks = rankByURI(ranks)
	if numbers {
		n, err := numericRanks(ranks, func(fn func([]byte) bool) error {
			for _, r := range links {
				if !fn(r) {
					break
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if n != nil {
			n.run(rounds)
			return n.records(ranks, rounds), nil
		}
	}
	it := newRankIteration(links, ranks)
	for r := 0; r < rounds; r++ {
		changed, err := it.round()
		if err != nil {
			return nil, err
		}
		if !changed {
			break
		}
	}
	return it.ranks, nil
}

// rankByURI is "sort -u -k1,1" of the initial ranks: the first record of
// a key wins (they are all "URLHASH 1 D").
func rankByURI(ranks [][]byte) [][]byte {
	slices.SortStableFunc(ranks, func(x, y []byte) int { return bytes.Compare(f(x, 1), f(y, 1)) })
	return slices.CompactFunc(ranks, func(x, y []byte) bool { return bytes.Equal(f(x, 1), f(y, 1)) })
}

// rankIteration is the static rank's state between rounds: the links
// grouped by FROM, and rank_by_uri, one record per URLHASH in key order.
type rankIteration struct {
	links  [][]byte
	groups []linkGroup
	ranks  [][]byte
	// perm, once known, is the order of the scores sorted by TO: the
	// scores are one per link in link order each round, and two scores
	// of the same FROM and TO are equal (extract_links gives each link of
	// a FROM the same COUNT), so the order is the same every round.
	perm   []int
	scores [][]byte
}

// linkGroup is the links of one FROM (links[lo:hi]) and its rank_by_uri
// record (-1 without one).
type linkGroup struct {
	lo, hi int
	rank   int
}

// newRankIteration takes the links and rank_by_uri (rankByURI's).
func newRankIteration(links, ranks [][]byte) *rankIteration {
	slices.SortStableFunc(links, func(x, y []byte) int { return bytes.Compare(f(x, 1), f(y, 1)) })
	it := &rankIteration{links: links, ranks: ranks}
	for lo := 0; lo < len(links); {
		key := f(links[lo], 1)
		hi := lo + 1
		for hi < len(links) && bytes.Equal(f(links[hi], 1), key) {
			hi++
		}
		g := linkGroup{lo: lo, hi: hi, rank: -1}
		if i, ok := slices.BinarySearchFunc(ranks, key, func(r, k []byte) int { return bytes.Compare(f(r, 1), k) }); ok {
			g.rank = i
		}
		it.groups = append(it.groups, g)
		lo = hi
	}
	return it
}

// round runs one round and reports whether any rank record changed.
func (it *rankIteration) round() (bool, error) {
	// compute_linkscore_divide_by_linkcount, merged on FROM (reduce mode:
	// the keys of the links).
	scores := it.scores[:0]
	emit := func(r []byte) error { scores = append(scores, r); return nil }
	one := make([][]byte, 1)
	for _, g := range it.groups {
		groups := [][][]byte{it.links[g.lo:g.hi], nil}
		if g.rank >= 0 {
			one[0] = it.ranks[g.rank]
			groups[1] = one
		}
		if err := linkscore(f(it.links[g.lo], 1), groups, emit); err != nil {
			return false, err
		}
	}
	// The scores by TO, as "sort -k2,2" orders them.
	byTO := func(x, y []byte) int {
		if c := bytes.Compare(f(x, 2), f(y, 2)); c != 0 {
			return c
		}
		return bytes.Compare(x, y)
	}
	if len(scores) != len(it.links) {
		it.perm = nil // not one score per link: sort them this round
		slices.SortFunc(scores, byTO)
	} else {
		if it.perm == nil {
			it.perm = make([]int, len(scores))
			for i := range it.perm {
				it.perm[i] = i
			}
			slices.SortStableFunc(it.perm, func(i, j int) int { return byTO(scores[i], scores[j]) })
		}
		sorted := make([][]byte, len(scores))
		for i, j := range it.perm {
			sorted[i] = scores[j]
		}
		scores = sorted
	}
	it.scores = scores[:0]
	// sum_linkscore_and_new_static_rank, merged on URLHASH (reduce mode:
	// the keys of rank_by_uri).
	next := make([][]byte, 0, len(it.ranks))
	emit = func(r []byte) error { next = append(next, r); return nil }
	changed := false
	s := 0
	for _, r := range it.ranks {
		key := f(r, 1)
		for s < len(scores) && bytes.Compare(f(scores[s], 2), key) < 0 {
			s++
		}
		e := s
		for e < len(scores) && bytes.Equal(f(scores[e], 2), key) {
			e++
		}
		one[0] = r
		n := len(next)
		if err := sumLinkscore(key, [][][]byte{one, scores[s:e]}, emit); err != nil {
			return false, err
		}
		if len(next) != n+1 || !bytes.Equal(next[n], r) {
			changed = true
		}
		s = e
	}
	it.ranks = next
	return changed, nil
}

// readRecords appends the records (lines without LF) of a table file.
func readRecords(path string, out [][]byte) ([][]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return out, fmt.Errorf("webanalyzer: %w", err)
	}
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			i = len(b)
		}
		if i > 0 {
			out = append(out, b[:i:i])
		}
		b = b[min(i+1, len(b)):]
	}
	return out, nil
}

// eachLine calls fn with each record (line without LF, not empty) of a
// table file, until fn returns false.
func eachLine(path string, fn func([]byte) bool) error {
	fh, err := os.Open(path)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(fh)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	sc.Split(func(data []byte, atEOF bool) (int, []byte, error) { // LF only, as readRecords
		if i := bytes.IndexByte(data, '\n'); i >= 0 {
			return i + 1, data[:i], nil
		}
		if atEOF && len(data) > 0 {
			return len(data), data, nil
		}
		return 0, nil, nil
	})
	for sc.Scan() {
		if len(sc.Bytes()) > 0 && !fn(sc.Bytes()) {
			return nil
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("webanalyzer: %s: %w", path, err)
	}
	return nil
}

// writeRecords writes records, one a line, to path (through a temporary
// file, so that path appears only complete).
func writeRecords(path string, recs [][]byte) error {
	return writeTo(path, func(w *bufio.Writer) error { return writeLines(w, recs) })
}

// numericRank is the iteration on numbers: what the rounds compute when
// the tables are well formed (numericRanks). The functions read their
// numbers from the records and write them in the shortest form that reads
// back exactly (fnum), so a score or a rank passed through a record is the
// float64 itself: the same operations in the same order give the same
// bits, and the records written at the end are the ones the functions
// would have written round after round.
type numericRank struct {
	// Each page's rank, damping and number of links (0 without links),
	// in rank_by_uri's order.
	x, d, count, next []float64
	// The links in the order their scores are summed: by TO, then by the
	// whole score record FROM TO SCORE, that is by FROM (one FROM's links
	// share their SCORE). sum_linkscore_and_new_static_rank adds, for
	// each page, d[from]*x[from]/count[from] of every link reaching it,
	// from 0, in that order; then the page's rank is (1-d) + the sum.
	links []numLink
}

// numLink is a link between two pages of rank_by_uri, by their indexes.
type numLink struct{ to, from int32 }

// numericRanks reads the links (extract_links' FROM TO COUNT records,
// given one by one to the function each calls, which returns false to
// stop) into numbers, or returns nil unless the tables are well formed:
// every FROM has a rank_by_uri record and one COUNT, a positive number,
// for all its links (as extract_links and initial_rank make them), and no
// key holds a byte below '!' (so that ordering FROMs orders the records
// that start with them). Otherwise the rounds run on the records.
func numericRanks(ranks [][]byte, each func(func([]byte) bool) error) (*numericRank, error) {
	if len(ranks) >= math.MaxInt32 {
		return nil, nil
	}
	n := &numericRank{x: make([]float64, len(ranks)), d: make([]float64, len(ranks)),
		count: make([]float64, len(ranks)), next: make([]float64, len(ranks))}
	counts := make([][]byte, len(ranks))
	keys := make([][]byte, len(ranks)) // the URLHASH of each, found once
	for i, r := range ranks {
		keys[i] = f(r, 1)
		n.x[i], n.d[i] = num(f(r, 2)), num(f(r, 3))
		if bytes.ContainsFunc(keys[i], func(c rune) bool { return c < '!' }) {
			return nil, nil
		}
	}
	find := func(k []byte) (int, bool) { return slices.BinarySearchFunc(keys, k, bytes.Compare) }
	ok := true
	// The links come grouped by FROM: the last FROM's place is kept.
	var lastFrom []byte
	lastAt, lastFound := 0, false
	err := each(func(r []byte) bool {
		fk := f(r, 1)
		if lastFrom == nil || !bytes.Equal(fk, lastFrom) {
			lastFrom = append(lastFrom[:0], fk...)
			lastAt, lastFound = find(fk)
		}
		from, found := lastAt, lastFound
		c := f(r, 3)
		if !found || len(n.links) >= math.MaxInt32 {
			ok = false
			return false
		}
		if counts[from] == nil {
			counts[from] = bytes.Clone(c)
			if n.count[from] = num(c); !(n.count[from] > 0) {
				ok = false
				return false
			}
		} else if !bytes.Equal(counts[from], c) {
			ok = false
			return false
		}
		if to, found := find(f(r, 2)); found { // else no rank_by_uri record takes the score
			n.links = append(n.links, numLink{to: int32(to), from: int32(from)})
		}
		return true
	})
	if err != nil || !ok {
		return nil, err
	}
	slices.SortFunc(n.links, func(a, b numLink) int {
		if a.to != b.to {
			return int(a.to) - int(b.to)
		}
		return int(a.from) - int(b.from)
	})
	return n, nil
}

// run runs up to rounds rounds, fewer when one changes no rank.
func (n *numericRank) run(rounds int) {
	for r := 0; r < rounds; r++ {
		clear(n.next)
		for _, l := range n.links {
			n.next[l.to] += float64(n.d[l.from] * n.x[l.from] / n.count[l.from])
		}
		changed := r == 0 // the first round rewrites the records
		for p, s := range n.next {
			v := float64((1 - n.d[p]) + s)
			if v != n.x[p] && !(math.IsNaN(v) && math.IsNaN(n.x[p])) {
				changed = true
			}
			n.x[p] = v
		}
		if !changed {
			return
		}
	}
}

// records returns rank_by_uri after the rounds: the initial records
// without any, else what sum_linkscore_and_new_static_rank writes.
func (n *numericRank) records(initial [][]byte, rounds int) [][]byte {
	if rounds == 0 {
		return initial
	}
	out := make([][]byte, len(initial))
	for i, r := range initial {
		out[i] = rec(f(r, 1), fnum(n.x[i]), f(r, 3))
	}
	return out
}
