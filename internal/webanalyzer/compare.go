package webanalyzer

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// compareLinksAndNoLinks is wamakefileutils.compare_links_and_nolinks
// (MS-FSFDMW 3.6.5.2.5): prefix, index, split-factor (ignored). It copies
// PREFIXlinks_by_from_tmp.INDEX to PREFIXlinks_by_from.INDEX and
// PREFIXno_links_by_urihash_tmp.INDEX to PREFIXno_links_by_urihash.INDEX,
// in order, except that a page in both (a links FROM equal to a no_links
// URLHASH) keeps only its newer side: the side with the smaller TIMESTAMP
// is discarded, and the links on a tie. A page's links side is as new as
// its newest link record. Columns as in doc.go: links FROM TO INTRA
// TIMESTAMP ANCHORTEXT, no_links URLHASH TIMESTAMP URL.
func compareLinksAndNoLinks(a []string) error {
	if len(a) != 3 {
		return fmt.Errorf("webanalyzer: compare_links_and_nolinks: want prefix, index, split-factor, got %d parameters", len(a))
	}
	if _, err := strconv.Atoi(a[1]); err != nil {
		return fmt.Errorf("webanalyzer: compare_links_and_nolinks: index %q is not an integer", a[1])
	}
	if _, err := strconv.Atoi(a[2]); err != nil {
		return fmt.Errorf("webanalyzer: compare_links_and_nolinks: split-factor %q is not an integer", a[2])
	}
	prefix, index := a[0], a[1]
	linksIn, noIn := prefix+"links_by_from_tmp."+index, prefix+"no_links_by_urihash_tmp."+index
	// The no_links side of each page, then the links side of those pages.
	noTS := map[string]int64{}
	if err := eachRecord(noIn, func(f [][]byte) {
		if len(f) >= 2 {
			noTS[string(f[0])] = max(noTS[string(f[0])], stamp(f[1]))
		}
	}); err != nil {
		return err
	}
	linkTS := map[string]int64{}
	if err := eachRecord(linksIn, func(f [][]byte) {
		if len(f) >= 4 {
			if _, ok := noTS[string(f[0])]; ok {
				linkTS[string(f[0])] = max(linkTS[string(f[0])], stamp(f[3]))
			}
		}
	}); err != nil {
		return err
	}
	// dropLinks: the page's links go (their side is older, or a tie).
	dropLinks := func(key string) bool {
		lt, ok := linkTS[key]
		return ok && lt <= noTS[key]
	}
	if err := copyRecords(linksIn, prefix+"links_by_from."+index, func(f [][]byte) bool {
		return len(f) == 0 || !dropLinks(string(f[0]))
	}); err != nil {
		return err
	}
	return copyRecords(noIn, prefix+"no_links_by_urihash."+index, func(f [][]byte) bool {
		if len(f) == 0 {
			return true
		}
		_, both := linkTS[string(f[0])]
		return !both || dropLinks(string(f[0]))
	})
}

func stamp(b []byte) int64 {
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

func eachRecord(name string, fn func(fields [][]byte)) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for sc.Scan() {
		fn(bytes.Split(sc.Bytes(), []byte{' '}))
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("webanalyzer: %s: %w", name, err)
	}
	return nil
}

// copyRecords writes the records of in that keep accepts to out, in
// order, under a temporary name renamed into place when complete.
func copyRecords(in, out string, keep func(fields [][]byte) bool) error {
	tmp, err := os.CreateTemp(filepath.Dir(out), "."+filepath.Base(out)+".tmp-*")
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	defer os.Remove(tmp.Name())
	w := bufio.NewWriter(tmp)
	var werr error
	if err := eachRecord(in, func(f [][]byte) {
		if werr == nil && keep(f) {
			if _, err := w.Write(bytes.Join(f, []byte{' '})); err != nil {
				werr = err
				return
			}
			werr = w.WriteByte('\n')
		}
	}); err != nil {
		tmp.Close()
		return err
	}
	if werr == nil {
		werr = w.Flush()
	}
	if err := tmp.Close(); werr == nil {
		werr = err
	}
	if werr != nil {
		return fmt.Errorf("webanalyzer: %w", werr)
	}
	if err := os.Rename(tmp.Name(), out); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	return nil
}
