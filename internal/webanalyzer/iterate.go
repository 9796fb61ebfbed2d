package webanalyzer

import (
	"bufio"
	"bytes"
	"fmt"
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
	it := newRankIteration(links, ranks)
	for r := 0; r < rounds; r++ {
		changed, err := it.round()
		if err != nil {
			return err
		}
		if !changed {
			break
		}
	}
	return writeRecords(a[5], it.ranks)
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
