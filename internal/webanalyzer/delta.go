package webanalyzer

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
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
	if len(a) != 7 {
		return fmt.Errorf("webanalyzer: links_delta: want OLDLINKS NEWLINKS OLDURIEQ NEWURIEQ OLDFINAL TOUCHED KEPT, got %d parameters", len(a))
	}
	members := map[string]bool{}
	err := diffAllGroups(a[2], a[3], 2, func(key []byte, _ [][]byte, differ bool) error {
		if differ {
			members[string(key)] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	touched := map[string]bool{}
	err = writeTo(a[5], func(w *bufio.Writer) error {
		return diffAllGroups(a[0], a[1], 1, func(key []byte, cur [][]byte, differ bool) error {
			if !differ {
				for _, r := range cur {
					if members[string(f(r, 2))] {
						differ = true
						break
					}
				}
			}
			if !differ {
				return nil
			}
			touched[string(key)] = true
			return writeLines(w, cur)
		})
	})
	if err != nil {
		return err
	}
	return filterOut(a[4], a[6], 1, touched)
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
	if len(a) != 7 {
		return fmt.Errorf("webanalyzer: inter_delta: want OLDFINAL NEWFINAL OLDSITEMAP NEWSITEMAP OLDINTER TOUCHED KEPT, got %d parameters", len(a))
	}
	sites := map[string]bool{}
	err := diffAllGroups(a[2], a[3], 1, func(key []byte, _ [][]byte, differ bool) error {
		if differ {
			sites[string(key)] = true
		}
		return nil
	})
	if err != nil {
		return err
	}
	touched := map[string]bool{}
	err = writeTo(a[5], func(w *bufio.Writer) error {
		return diffAllGroups(a[0], a[1], 1, func(key []byte, cur [][]byte, differ bool) error {
			if !differ && len(sites) > 0 {
				for _, r := range cur {
					if sites[string(f(r, 1))] || sites[string(f(r, 2))] {
						differ = true
						break
					}
				}
			}
			if !differ {
				return nil
			}
			touched[string(key)] = true
			return writeLines(w, cur)
		})
	})
	if err != nil {
		return err
	}
	return filterOut(a[4], a[6], 1, touched)
}

// lineGroups reads the runs of consecutive lines with the same key column
// of a table sorted on that column first (bytewise).
type lineGroups struct {
	r    *bufio.Reader
	f    *os.File
	col  int
	name string
	next []byte // the first line of the next group; nil at the end
	// slab is where lines are copied to: one allocation for many lines,
	// never reused, so a line stays valid while it is referenced.
	slab []byte
}

func openLineGroups(name string, col int) (*lineGroups, error) {
	fh, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("webanalyzer: %w", err)
	}
	g := &lineGroups{r: bufio.NewReaderSize(fh, 1<<16), f: fh, col: col, name: name}
	if err := g.advance(); err != nil {
		fh.Close()
		return nil, err
	}
	return g, nil
}

func (g *lineGroups) advance() error {
	for {
		line, err := g.r.ReadSlice('\n')
		if err == bufio.ErrBufferFull {
			long := bytes.Clone(line)
			for err == bufio.ErrBufferFull {
				line, err = g.r.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("webanalyzer: %s: %w", g.name, err)
		}
		line = bytes.TrimSuffix(line, []byte{'\n'})
		if len(line) > 0 {
			if cap(g.slab)-len(g.slab) < len(line) {
				g.slab = make([]byte, 0, max(1<<16, len(line)))
			}
			s := len(g.slab)
			g.slab = append(g.slab, line...)
			g.next = g.slab[s:len(g.slab):len(g.slab)]
			return nil
		}
		if err == io.EOF {
			g.next = nil
			return nil
		}
	}
}

// key is the key of the next group (nil at the end).
func (g *lineGroups) key() []byte {
	if g.next == nil {
		return nil
	}
	return f(g.next, g.col)
}

// group returns the next group's lines.
func (g *lineGroups) group() ([][]byte, error) {
	key := g.key()
	var out [][]byte
	for g.next != nil && bytes.Equal(f(g.next, g.col), key) {
		out = append(out, g.next)
		if err := g.advance(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// diffAllGroups walks two tables sorted on column col in step and calls fn
// for every key of either, with its lines in the new table (nil when
// absent) and whether they differ from the old table's.
func diffAllGroups(oldName, newName string, col int, fn func(key []byte, cur [][]byte, differ bool) error) error {
	o, err := openLineGroups(oldName, col)
	if err != nil {
		return err
	}
	defer o.f.Close()
	n, err := openLineGroups(newName, col)
	if err != nil {
		return err
	}
	defer n.f.Close()
	for o.next != nil || n.next != nil {
		var c int
		switch {
		case o.next == nil:
			c = 1
		case n.next == nil:
			c = -1
		default:
			c = bytes.Compare(o.key(), n.key())
		}
		var key []byte
		var og, ng [][]byte
		if c <= 0 {
			key = o.key()
			if og, err = o.group(); err != nil {
				return err
			}
		}
		if c >= 0 {
			key = n.key()
			if ng, err = n.group(); err != nil {
				return err
			}
		}
		if err := fn(key, ng, !sameGroup(og, ng)); err != nil {
			return err
		}
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
