package table

import (
	"bufio"
	"bytes"
	"container/heap"
	"context"
	"encoding/binary"
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
func (o *SortOptions) compare(a, b []byte) int { return o.compareFrom(a, b, 0) }

// compareFrom is compare when the keys before Keys[from] are known equal.
func (o *SortOptions) compareFrom(a, b []byte, from int) int {
	if len(o.Keys) == 0 {
		return bytes.Compare(a, b)
	}
	for _, k := range o.Keys[from:] {
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

// sortRec is a record held in a chunk: offsets into the chunk's buffer
// (no pointers, so the collector never scans the index), its first key's
// place found once, the first 8 bytes of that key (the whole record
// without keys) as a big-endian number padded with zeros, and its input
// order, the last tie-breaker, which makes the unstable sort stable.
// With one key and no -u, rpfx is the same for the whole record, the
// tie-breaker of equal keys (many: a site, an anchor text).
//
// Two prefixes that differ order their keys as bytes.Compare does (a
// shorter key is padded with zeros, and is a prefix of the other where the
// padding meets a byte above zero), so most comparisons are one integer
// comparison; equal prefixes fall back to the bytes.
type sortRec struct {
	pfx, rpfx             uint64
	off, n, koff, kn, idx uint32
}

// chunk is the records in memory between two spills.
type chunk struct {
	buf  []byte
	recs []sortRec
	opt  *SortOptions
	// usePfx: the first key is compared bytewise (not numerically).
	usePfx bool
	// useRpfx: one key, not -u: equal keys are ordered by the whole record.
	useRpfx bool
}

func (c *chunk) add(rec []byte) {
	off := len(c.buf)
	c.buf = append(c.buf, rec...)
	r := sortRec{off: uint32(off), n: uint32(len(rec)), koff: uint32(off), kn: uint32(len(rec)), idx: uint32(len(c.recs))}
	if len(c.opt.Keys) > 0 {
		r.kn = 0
		full := c.buf[off:]
		if k := span(full[:len(rec)], c.opt.Keys[0].Start, c.opt.Keys[0].End); k != nil {
			r.koff, r.kn = uint32(off+cap(full)-cap(k)), uint32(len(k))
		}
	}
	if c.usePfx {
		r.pfx = prefix8(c.buf[r.koff : r.koff+r.kn])
	}
	if c.useRpfx {
		r.rpfx = prefix8(rec)
	}
	c.recs = append(c.recs, r)
}

// prefix8 is the first 8 bytes of k, big-endian, padded with zeros.
func prefix8(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var b [8]byte
	copy(b[:], k)
	return binary.BigEndian.Uint64(b[:])
}

func (c *chunk) rec(r sortRec) []byte { return c.buf[r.off : r.off+r.n] }

func (c *chunk) sort() {
	if c.usePfx && c.useRpfx && !c.opt.Keys[0].Reverse {
		slices.SortFunc(c.recs, c.compareOneKey)
		return
	}
	if c.usePfx && (len(c.opt.Keys) == 0 || !c.opt.Keys[0].Reverse) {
		slices.SortFunc(c.recs, c.compareAsc)
		return
	}
	slices.SortFunc(c.recs, c.compare)
}

// compareAsc is compare for a first key compared bytewise in ascending
// order (or no keys): the prefixes first.
func (c *chunk) compareAsc(a, b sortRec) int {
	if a.pfx != b.pfx {
		if a.pfx < b.pfx {
			return -1
		}
		return 1
	}
	return c.compare(a, b)
}

// compareOneKey is compare for one key compared bytewise in ascending
// order, without -u: the key's prefixes, the key, the records' prefixes,
// the records, the input order.
func (c *chunk) compareOneKey(a, b sortRec) int {
	if a.pfx != b.pfx {
		if a.pfx < b.pfx {
			return -1
		}
		return 1
	}
	// Equal prefixes of keys of at most 8 bytes and the same length are
	// equal keys.
	if !(a.kn == b.kn && a.kn <= 8) {
		if x := bytes.Compare(c.buf[a.koff:a.koff+a.kn], c.buf[b.koff:b.koff+b.kn]); x != 0 {
			return x
		}
	}
	if a.rpfx != b.rpfx {
		if a.rpfx < b.rpfx {
			return -1
		}
		return 1
	}
	if x := bytes.Compare(c.rec(a), c.rec(b)); x != 0 {
		return x
	}
	return int(a.idx) - int(b.idx)
}

func (c *chunk) compare(a, b sortRec) int {
	o := c.opt
	if len(o.Keys) == 0 {
		if x := bytes.Compare(c.rec(a), c.rec(b)); x != 0 {
			return x
		}
		return int(a.idx) - int(b.idx)
	}
	k := o.Keys[0]
	ka, kb := c.buf[a.koff:a.koff+a.kn], c.buf[b.koff:b.koff+b.kn]
	var x int
	if k.Numeric {
		x = numCompare(ka, kb)
	} else {
		x = bytes.Compare(ka, kb)
	}
	if k.Reverse {
		x = -x
	}
	if x == 0 {
		x = o.compareFrom(c.rec(a), c.rec(b), 1)
	}
	if x == 0 {
		x = int(a.idx) - int(b.idx)
	}
	return x
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
const recOverhead = 40

// maxSortMem bounds -S: chunk offsets are 32-bit.
const maxSortMem = 2 << 30

// Sort sorts the records of inputs into output with the options of
// jsort2. It never holds more than opt.Mem bytes of records: beyond that
// it writes sorted runs to temporary files in output's directory and
// merges them. The output appears under its name only when complete.
func Sort(ctx context.Context, inputs []string, output string, opt SortOptions) error {
	if opt.Mem <= 0 {
		opt.Mem = DefaultSortMem
	}
	opt.Mem = min(opt.Mem, maxSortMem)
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
		var last *chunk
		runs, last, err = makeRuns(ctx, inputs, dir, &opt)
		if err != nil {
			return err
		}
		if len(runs) == 0 {
			return writeAtomic(output, func(w *bufio.Writer) error {
				return last.write(w)
			})
		}
		sources = runs
	}
	return writeAtomic(output, func(w *bufio.Writer) error {
		return mergeRuns(ctx, sources, w, &opt)
	})
}

// makeRuns reads the inputs in chunks of at most opt.Mem bytes (records
// and index), sorts each and spills it to a run file. When everything fits
// in one chunk nothing is spilled and the sorted chunk is returned instead.
func makeRuns(ctx context.Context, inputs []string, dir string, opt *SortOptions) ([]string, *chunk, error) {
	var runs []string
	c := &chunk{opt: opt, usePfx: len(opt.Keys) == 0 || !opt.Keys[0].Numeric, useRpfx: len(opt.Keys) == 1 && !opt.Unique}
	c.buf, c.recs = sizeChunk(inputs, opt.Mem)
	var used int64
	flush := func() error {
		c.sort()
		f, err := os.CreateTemp(dir, ".sortrun-*")
		if err != nil {
			return fmt.Errorf("table: sort: %w", err)
		}
		runs = append(runs, f.Name())
		w := bufio.NewWriterSize(f, 1<<16)
		err = c.write(w)
		if err == nil {
			err = w.Flush()
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		c.buf, c.recs, used = c.buf[:0], c.recs[:0], 0
		return err
	}
	for _, in := range inputs {
		if err := forEachRecord(ctx, in, func(rec []byte) error {
			if len(rec) >= maxSortMem/2 {
				return fmt.Errorf("table: sort: a record of %d bytes", len(rec))
			}
			need := int64(len(rec)) + recOverhead
			if used+need > opt.Mem && len(c.recs) > 0 {
				if err := flush(); err != nil {
					return err
				}
			}
			c.add(rec)
			used += need
			return nil
		}); err != nil {
			return runs, nil, err
		}
	}
	if len(runs) == 0 {
		c.sort()
		return nil, c, nil
	}
	if len(c.recs) > 0 {
		if err := flush(); err != nil {
			return runs, nil, err
		}
	}
	return runs, nil, nil
}

// sizeChunk makes a chunk's buffers once, for the records a chunk of mem
// bytes holds: from the inputs' total size and their average record
// length (sampled from the first input's start), with a margin; append
// grows them if the records turn out shorter. Sizing for the most records
// mem could hold (32-byte ones) instead made the index alone 1.25 times
// mem: untouched, and so not resident, in a process of its own, but
// resident in a table server (trawl table serve), whose runtime zeroes
// the memory an earlier program used before handing it out again.
func sizeChunk(inputs []string, mem int64) ([]byte, []sortRec) {
	var total int64
	for _, in := range inputs {
		if fi, err := os.Stat(in); err == nil {
			total += fi.Size()
		}
	}
	avg := int64(32)
	if len(inputs) > 0 {
		if f, err := os.Open(inputs[0]); err == nil {
			b := make([]byte, 64<<10)
			n, _ := io.ReadFull(f, b)
			f.Close()
			if lines := int64(bytes.Count(b[:n], []byte{'\n'})); lines > 0 {
				avg = max(1, int64(n)/lines)
			} else if n > 0 {
				avg = int64(n)
			}
		}
	}
	recs := min(total/avg, mem/(avg+recOverhead)) + 1
	recs += recs/8 + 64
	size := min(total+1, mem, recs*avg)
	return make([]byte, 0, size), make([]sortRec, 0, recs)
}

// write writes the chunk's records in their order (dropping, with Unique,
// those whose keys equal the previous one's).
func (c *chunk) write(w *bufio.Writer) error {
	var prev []byte
	for i, r := range c.recs {
		b := c.rec(r)
		if c.opt.Unique && i > 0 && c.opt.compare(prev, b) == 0 {
			continue
		}
		w.Write(b)
		if err := w.WriteByte('\n'); err != nil {
			return fmt.Errorf("table: sort: %w", err)
		}
		prev = b
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
