package webanalyzer

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/trawl/trawl/internal/table"
)

// The delta tasks of an incremental run (doc.go, "Incremental runs"): the
// rank-independent intermediates links.final and inter.final are the last
// run's, less the records of the pages whose part changed, plus those
// pages' records computed again by the same merge and reduce functions.
// Each task compares the last run's tables with this run's and writes the
// changed pages' input records (for the functions) and the last run's
// output without them (for the final sort -m).

// linksDeltaTask (webanalyzer.links_delta OLDLINKS NEWLINKS OLDURIEQ
// NEWURIEQ OLDFINAL TOUCHED KEPT): a page's normalized links are a
// function of its compacted link records (c.links, sorted by FROM) and of
// the equivalence records (c.urieq, sorted by MEMBER) of each link's
// target. A page is touched when its link records differ between the last
// run and this one, or one of its links points at a member whose
// equivalence records differ. TOUCHED gets the touched pages' new link
// records (c.links' order), KEPT the last links.final without the touched
// pages.
func linksDeltaTask(a []string) error {
	return deltaTask("links_delta", "OLDLINKS NEWLINKS OLDURIEQ NEWURIEQ OLDFINAL TOUCHED KEPT", a, 2, 2)
}

// interDeltaTask (webanalyzer.inter_delta OLDFINAL NEWFINAL OLDSITEMAP
// NEWSITEMAP OLDINTER TOUCHED KEPT): a page's links between sites
// (inter.final, sorted by FROM) are a function of its normalized links
// (links.final, sorted by FROM) and of the site map records of each
// link's ends. A page is touched when its normalized links differ, or one
// of its links has an end whose site map record differs. TOUCHED gets the
// touched pages' new links.final records, KEPT the last inter.final
// without the touched pages.
func interDeltaTask(a []string) error {
	return deltaTask("inter_delta", "OLDFINAL NEWFINAL OLDSITEMAP NEWSITEMAP OLDINTER TOUCHED KEPT", a, 1, 1, 2)
}

// deltaTask is both tasks: a[2] and a[3], the last run's and this run's
// side table (sorted on column sideKey), give the keys whose records
// differ; a[0] and a[1], the main table (sorted on FROM, column 1), give
// the touched pages: those whose records differ, or one of whose new
// records holds one of those keys in a column of hitCols. Their new
// records go to a[5], a[4] without their records to a[6]. Both walks are
// table.Merge in reduce mode over the two runs' tables.
func deltaTask(name, usage string, a []string, sideKey int, hitCols ...int) error {
	if len(a) != 7 {
		return fmt.Errorf("webanalyzer: %s: want %s, got %d parameters", name, usage, len(a))
	}
	changed := map[string]bool{}
	err := diffTables(a[2], a[3], sideKey, "", func(key []byte, g [][][]byte, _ table.Emit) error {
		if !sameGroup(g[0], g[1]) {
			changed[string(key)] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	touched := map[string]bool{}
	err = diffTables(a[0], a[1], 1, a[5], func(key []byte, g [][][]byte, emit table.Emit) error {
		differ := !sameGroup(g[0], g[1])
		for _, r := range g[1] {
			for _, c := range hitCols {
				differ = differ || changed[string(f(r, c))]
			}
		}
		if !differ {
			return nil
		}
		touched[string(key)] = true
		for _, r := range g[1] {
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	return filterOut(a[4], a[6], 1, touched)
}

// diffTables runs fn over the groups of two tables sorted on column key
// (table.Merge in reduce mode: old records in g[0], new in g[1]); what fn
// emits goes to out ("" for nowhere).
func diffTables(old, cur string, key int, out string, fn table.MergeFunc) error {
	prefix := out + ".part"
	if out == "" {
		tmp, err := os.MkdirTemp(filepath.Dir(cur), ".delta-")
		if err != nil {
			return fmt.Errorf("webanalyzer: %w", err)
		}
		defer os.RemoveAll(tmp)
		prefix = filepath.Join(tmp, "none")
	}
	spec := table.OutputSpec{Prefix: prefix}
	err := table.Merge(context.Background(), []table.InputSpec{{File: old, Key: key}, {File: cur, Key: key}}, spec, fn, true)
	if err != nil {
		return err
	}
	if out == "" {
		return nil
	}
	if err := os.Rename(spec.Name(0), out); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	return nil
}

func sameGroup(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

// filterOut copies the lines of in whose column col is not in drop to
// out.
func filterOut(in, out string, col int, drop map[string]bool) error {
	return writeTo(out, func(w *bufio.Writer) error {
		var werr error
		err := eachLine(in, func(r []byte) bool {
			if drop[string(f(r, col))] {
				return true
			}
			_, werr = w.Write(r)
			if werr == nil {
				werr = w.WriteByte('\n')
			}
			return werr == nil
		})
		if err != nil {
			return err
		}
		return werr
	})
}

func writeLines(w *bufio.Writer, lines [][]byte) error {
	for _, l := range lines {
		if _, err := w.Write(l); err != nil {
			return err
		}
		if err := w.WriteByte('\n'); err != nil {
			return err
		}
	}
	return nil
}

// writeTo writes path through fn (via a temporary file, so that path
// appears only complete).
func writeTo(path string, fn func(w *bufio.Writer) error) error {
	tmp := path + ".tmp"
	fh, err := os.Create(tmp)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	w := bufio.NewWriterSize(fh, 1<<16)
	if err := fn(w); err != nil {
		fh.Close()
		os.Remove(tmp)
		return err
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
