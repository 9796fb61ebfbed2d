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
	var links, ranks [][]byte
	for p := 0; p < parts; p++ {
		if links, err = readRecords(fmt.Sprintf("%s.%d", a[2], p), links); err != nil {
			return err
		}
		for _, in := range a[3:5] {
			if ranks, err = readRecords(fmt.Sprintf("%s.%d", in, p), ranks); err != nil {
				return err
			}
		}
	}
	out, err := iterateRanks(links, ranks, rounds, true)
	if err != nil {
		return err
	}
	return writeRecords(a[5], out)
}

// iterateRanks runs the rounds over extract_links' records and the
// initial rank_by_uri ones, on numbers when allowed and the tables are
// well formed, else on the records, and returns the last rank_by_uri.
func iterateRanks(links, ranks [][]byte, rounds int, numbers bool) ([][]byte, error) {
	it := newRankIteration(links, ranks)
	if nit := it.numeric(); numbers && nit != nil {
		it.links, it.groups = nil, nil // the numbers are all the rounds need
		nit.run(rounds)
		return nit.records(it.ranks, rounds), nil
	}
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

func newRankIteration(links, ranks [][]byte) *rankIteration {
	// rank_by_uri: sort -u -k1,1 (the first record of a key wins; they
	// are all "URLHASH 1 D").
	slices.SortStableFunc(ranks, func(x, y []byte) int { return bytes.Compare(f(x, 1), f(y, 1)) })
	ranks = slices.CompactFunc(ranks, func(x, y []byte) bool { return bytes.Equal(f(x, 1), f(y, 1)) })
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

// writeRecords writes records, one a line, to path (through a temporary
// file, so that path appears only complete).
func writeRecords(path string, recs [][]byte) error {
	tmp := path + ".tmp"
	fh, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	w := bufio.NewWriterSize(fh, 1<<16)
	for _, r := range recs {
		w.Write(r)
		w.WriteByte('\n')
	}
	if err := w.Flush(); err != nil {
		fh.Close()
		return fmt.Errorf("webanalyzer: %w", err)
	}
	if err := fh.Close(); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	return nil
}

// numericRank is the iteration on numbers: what the rounds compute when
// the tables are well formed (numeric). The functions read their numbers
// from the records and write them in the shortest form that reads back
// exactly (fnum), so a score or a rank passed through a record is the
// float64 itself: the same operations in the same order give the same
// bits, and the records written at the end are the ones the functions
// would have written round after round.
type numericRank struct {
	x, d []float64 // each page's rank and damping, in rank_by_uri's order
	// The links in the order their scores are summed (by TO, then by the
	// whole record): sum_linkscore_and_new_static_rank adds, for each
	// page, d[from]*x[from]/count of every link reaching it, from 0, in
	// that order; then the page's rank is (1-d) + the sum.
	from, to []int32
	count    []float64
	next     []float64
}

// numeric returns the numeric form of the iteration, or nil unless the
// tables are well formed: every FROM has a rank_by_uri record and one
// COUNT, a positive number, for all its links (as extract_links and
// initial_rank make them); otherwise the rounds run on records.
func (it *rankIteration) numeric() *numericRank {
	if len(it.ranks) >= math.MaxInt32 || len(it.links) >= math.MaxInt32 {
		return nil
	}
	n := &numericRank{x: make([]float64, len(it.ranks)), d: make([]float64, len(it.ranks)), next: make([]float64, len(it.ranks))}
	for i, r := range it.ranks {
		n.x[i], n.d[i] = num(f(r, 2)), num(f(r, 3))
	}
	// The links a rank_by_uri record takes, in link order, then sorted
	// the way the scores are (by TO, then by the whole record: a score
	// record is FROM TO SCORE, and one FROM's links share their SCORE).
	var idx, from, to []int32 // idx: the link's index in it.links
	var count []float64
	for _, g := range it.groups {
		if g.rank < 0 {
			return nil
		}
		c := f(it.links[g.lo], 3)
		cnt := num(c)
		if !(cnt > 0) {
			return nil
		}
		for i := g.lo; i < g.hi; i++ {
			r := it.links[i]
			if !bytes.Equal(f(r, 3), c) {
				return nil
			}
			t, ok := slices.BinarySearchFunc(it.ranks, f(r, 2), func(r, k []byte) int { return bytes.Compare(f(r, 1), k) })
			if !ok {
				continue // a score no rank_by_uri record takes
			}
			idx, from, to, count = append(idx, int32(i)), append(from, int32(g.rank)), append(to, int32(t)), append(count, cnt)
		}
	}
	perm := make([]int32, len(idx))
	for i := range perm {
		perm[i] = int32(i)
	}
	slices.SortStableFunc(perm, func(a, b int32) int {
		x, y := it.links[idx[a]], it.links[idx[b]]
		if c := bytes.Compare(f(x, 2), f(y, 2)); c != 0 {
			return c
		}
		return bytes.Compare(x, y)
	})
	n.from, n.to, n.count = make([]int32, len(perm)), make([]int32, len(perm)), make([]float64, len(perm))
	for i, j := range perm {
		n.from[i], n.to[i], n.count[i] = from[j], to[j], count[j]
	}
	return n
}

// run runs up to rounds rounds, fewer when one changes no rank.
func (n *numericRank) run(rounds int) {
	for r := 0; r < rounds; r++ {
		clear(n.next)
		for i, to := range n.to {
			from := n.from[i]
			n.next[to] += float64(n.d[from] * n.x[from] / n.count[i])
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
