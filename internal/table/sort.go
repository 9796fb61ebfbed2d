package table

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
)

// SortOptions are jsort2's (2.2.21.2.2): the memory budget (-S), merge of
// already sorted inputs (-m), unique (-u) and the key fields (-k).
type SortOptions struct {
	// Mem bounds the bytes of records (and their index) held in memory;
	// beyond it sorted runs are spilled to disk next to the output.
	Mem int64
	// Merge says the inputs are sorted already; they are only merged.
	Merge bool
	// Unique keeps one record of each set whose keys are all equal.
	Unique bool
	Keys   []SortKey
}

// DefaultSortMem is jsort2's default -S, 200M.
const DefaultSortMem = 200 << 20

// compare orders two records (without LF): key by key, then, unless
// Unique, by the whole record bytewise (GNU sort's last resort), so the
// output does not depend on the order of the input.
func (o *SortOptions) compare(a, b []byte) int {
	if len(o.Keys) == 0 {
		return bytes.Compare(a, b)
	}
	for _, k := range o.Keys {
		x, y := span(a, k.Start, k.End), span(b, k.Start, k.End)
		var c int
		if k.Numeric {
			c = numCompare(x, y)
		} else {
			c = bytes.Compare(x, y)
		}
		if k.Reverse {
			c = -c
		}
		if c != 0 {
			return c
		}
	}
	if o.Unique {
		return 0
	}
	return bytes.Compare(a, b)
}

// numCompare compares two numbers as GNU sort -n does in the C locale: an
// optional '-', digits, an optional '.' and digits; whatever follows is
// ignored and a field without a number is 0.
func numCompare(a, b []byte) int {
	an, ai, af := parseNum(a)
	bn, bi, bf := parseNum(b)
	aZero, bZero := len(ai) == 0 && len(af) == 0, len(bi) == 0 && len(bf) == 0
	if aZero {
		an = false
	}
	if bZero {
		bn = false
	}
	if an != bn {
		if an {
			return -1
		}
		return 1
	}
	c := len(ai) - len(bi)
	if c == 0 {
		c = bytes.Compare(ai, bi)
	}
	if c == 0 {
		c = bytes.Compare(af, bf)
	}
	if c > 0 {
		c = 1
	} else if c < 0 {
		c = -1
	}
	if an {
		c = -c
	}
	return c
}

func parseNum(s []byte) (neg bool, intPart, frac []byte) {
	for len(s) > 0 && (s[0] == ' ' || s[0] == '\t') {
		s = s[1:]
	}
	if len(s) > 0 && s[0] == '-' {
		neg = true
		s = s[1:]
	}
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	intPart = bytes.TrimLeft(s[:i], "0")
	if i < len(s) && s[i] == '.' {
		j := i + 1
		for j < len(s) && s[j] >= '0' && s[j] <= '9' {
			j++
		}
		frac = bytes.TrimRight(s[i+1:j], "0")
	}
	return neg, intPart, frac
}

// recOverhead is what one record costs in memory beyond its bytes.
const recOverhead = 24

// Sort sorts the records of inputs into output with the options of
// jsort2. It never holds more than opt.Mem bytes of records: beyond that
// it writes sorted runs to temporary files in output's directory and
// merges them. The output appears under its name only when complete.
func Sort(ctx context.Context, inputs []string, output string, opt SortOptions) error {
	if opt.Mem <= 0 {
		opt.Mem = DefaultSortMem
	}
	dir := filepath.Dir(output)
	var runs []string
	defer func() {
		for _, r := range runs {
			os.Remove(r)
		}
	}()
	var sources []string
	if opt.Merge {
		sources = inputs
	} else {
		var err error
		var last [][]byte
		runs, last, err = makeRuns(ctx, inputs, dir, &opt)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return writeAtomic(output, func(w *bufio.Writer) error {
				return writeRecs(w, last, &opt)
			})
		}
		sources = runs
	}
	return writeAtomic(output, func(w *bufio.Writer) error {
		return mergeRuns(ctx, sources, w, &opt)
	})
}

// makeRuns reads the inputs in chunks of at most opt.Mem bytes, sorts each
// and spills it to a run file. When everything fits in one chunk nothing
// is spilled and the sorted records are returned instead.
func makeRuns(ctx context.Context, inputs []string, dir string, opt *SortOptions) ([]string, [][]byte, error) {
	var runs []string
	var recs [][]byte
	chunk := make([]byte, 0, min(opt.Mem, 64<<20))
	var used int64
	flush := func() error {
		slices.SortStableFunc(recs, opt.compare)
		f, err := os.CreateTemp(dir, ".sortrun-*")
		if err != nil {
			return fmt.Errorf("table: sort: %w", err)
		}
		runs = append(runs, f.Name())
		w := bufio.NewWriterSize(f, 1<<16)
		err = writeRecs(w, recs, opt)
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		recs, used = recs[:0], 0
		chunk = make([]byte, 0, cap(chunk))
		return err
	}
	for _, in := range inputs {
		if err := forEachRecord(ctx, in, func(rec []byte) error {
			need := int64(len(rec)) + recOverhead
			if used+need > opt.Mem && len(recs) > 0 {
				if err := flush(); err != nil {
					return err
				}
			}
			if len(chunk)+len(rec) > cap(chunk) {
				chunk = make([]byte, 0, max(cap(chunk), len(rec)))
			}
			start := len(chunk)
			chunk = append(chunk, rec...)
			recs = append(recs, chunk[start:len(chunk):len(chunk)])
			used += need
			return nil
		}); err != nil {
			return runs, nil, err
		}
	}
	if len(runs) == 0 {
		slices.SortStableFunc(recs, opt.compare)
		return nil, recs, nil
	}
	if len(recs) > 0 {
		if err := flush(); err != nil {
			return runs, nil, err
		}
	}
	return runs, nil, nil
}

func writeRecs(w *bufio.Writer, recs [][]byte, opt *SortOptions) error {
	var prev []byte
	for i, r := range recs {
		if opt.Unique && i > 0 && opt.compare(prev, r) == 0 {
			continue
		}
		w.Write(r)
		if err := w.WriteByte('\n'); err != nil {
			return fmt.Errorf("table: sort: %w", err)
		}
		prev = r
	}
	return nil
}

// lineReader reads LF-terminated records; a last record without LF is
// returned as if it had one.
type lineReader struct {
	r   *bufio.Reader
	buf []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: bufio.NewReaderSize(r, 1<<16)}
}

// next returns the next record without its LF, valid until the next call.
func (l *lineReader) next() ([]byte, error) {
	line, err := l.r.ReadSlice('\n')
	if err == nil {
		return line[:len(line)-1], nil
	}
	if errors.Is(err, bufio.ErrBufferFull) {
		l.buf = append(l.buf[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = l.r.ReadSlice('\n')
			l.buf = append(l.buf, line...)
		}
		if err == nil {
			return l.buf[:len(l.buf)-1], nil
		}
		line = l.buf
	}
	if err == io.EOF && len(line) > 0 {
		return line, nil
	}
	return nil, err
}

// forEachRecord calls fn with every record of the file (no LF; the slice
// is only valid during the call).
func forEachRecord(ctx context.Context, name string, fn func([]byte) error) error {
	f, err := os.Open(name)
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	defer f.Close()
	lr := newLineReader(f)
	for n := 0; ; n++ {
		if n&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		rec, err := lr.next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return fmt.Errorf("table: %s: %w", name, err)
		}
		if err := fn(rec); err != nil {
			return err
		}
	}
}

type runHead struct {
	rec []byte
	idx int
	lr  *lineReader
}

type runHeap struct {
	h   []*runHead
	opt *SortOptions
}

func (h *runHeap) Len() int { return len(h.h) }
func (h *runHeap) Less(i, j int) bool {
	c := h.opt.compare(h.h[i].rec, h.h[j].rec)
	if c == 0 {
		return h.h[i].idx < h.h[j].idx // earlier run first: stable
	}
	return c < 0
}
func (h *runHeap) Swap(i, j int) { h.h[i], h.h[j] = h.h[j], h.h[i] }
func (h *runHeap) Push(x any)    { h.h = append(h.h, x.(*runHead)) }
func (h *runHeap) Pop() any {
	x := h.h[len(h.h)-1]
	h.h = h.h[:len(h.h)-1]
	return x
}

// mergeRuns merges sorted files into w.
func mergeRuns(ctx context.Context, files []string, w *bufio.Writer, opt *SortOptions) error {
	h := &runHeap{opt: opt}
	for i, name := range files {
		f, err := os.Open(name)
		if err != nil {
			return fmt.Errorf("table: %w", err)
		}
		defer f.Close()
		lr := newLineReader(f)
		rec, err := lr.next()
		if err == io.EOF {
			continue
		}
		if err != nil {
			return fmt.Errorf("table: %s: %w", name, err)
		}
		h.h = append(h.h, &runHead{rec: append([]byte(nil), rec...), idx: i, lr: lr})
	}
	heap.Init(h)
	var prev []byte
	havePrev := false
	for n := 0; h.Len() > 0; n++ {
		if n&0xffff == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		top := h.h[0]
		if !(opt.Unique && havePrev && opt.compare(prev, top.rec) == 0) {
			w.Write(top.rec)
			if err := w.WriteByte('\n'); err != nil {
				return fmt.Errorf("table: %w", err)
			}
			if opt.Unique {
				prev = append(prev[:0], top.rec...)
				havePrev = true
			}
		}
		rec, err := top.lr.next()
		if err == io.EOF {
			heap.Pop(h)
			continue
		}
		if err != nil {
			return fmt.Errorf("table: %w", err)
		}
		top.rec = append(top.rec[:0], rec...)
		heap.Fix(h, 0)
	}
	return nil
}

// writeAtomic writes a file through a temporary name in its directory and
// renames it into place when fill succeeds, so that a killed task never
// leaves a partial output under the final name.
func writeAtomic(name string, fill func(*bufio.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
	if err != nil {
		return fmt.Errorf("table: %w", err)
	}
	tmp := f.Name()
	w := bufio.NewWriterSize(f, 1<<16)
	err = fill(w)
	if err == nil {
		err = w.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o644)
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err != nil {
		os.Remove(tmp)
		return fmt.Errorf("table: writing %s: %w", name, err)
	}
	return nil
}

// ParseSize parses jsort2's -S value: a number of megabytes followed by M
// (a plain number is taken as megabytes too).
func ParseSize(s string) (int64, error) {
	t := s
	if len(t) > 0 && (t[len(t)-1] == 'M' || t[len(t)-1] == 'm') {
		t = t[:len(t)-1]
	}
	n, err := strconv.ParseInt(t, 10, 64)
	if err != nil || n <= 0 || n > 1<<20 {
		return 0, fmt.Errorf("table: bad sort size %q (want <megabytes>M)", s)
	}
	return n << 20, nil
}
