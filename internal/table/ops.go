package table

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"math/big"
	"os"
	"path/filepath"
)

// Bucket maps a value to one of n files (3.3.5.1.2.1): the CRC32 (IEEE) of
// the value read as a signed 32-bit integer, modulo n with the sign of the
// divisor, so in [0, n). This is Python 2's zlib.crc32(v) % n.
func Bucket(v []byte, n int) int {
	if n <= 1 {
		return 0
	}
	h := int64(int32(crc32.ChecksumIEEE(v)))
	m := h % int64(n)
	if m < 0 {
		m += int64(n)
	}
	return int(m)
}

// LongBucket is the long_split function (2.2.21.1.4): the value is a
// decimal integer and is its own hash; modulo n with the divisor's sign. A
// value that is not an integer goes to file 0.
func LongBucket(v []byte, n int) int {
	if n <= 1 {
		return 0
	}
	var x big.Int
	if _, ok := x.SetString(string(v), 10); !ok {
		return 0
	}
	return int(x.Mod(&x, big.NewInt(int64(n))).Int64()) // Euclidean: >= 0 for n > 0
}

// Output writes records to the files of one tableoutputspec, each record to
// the file its key column hashes to. Files are written under temporary
// names; Commit renames them all into place, Abort removes them.
type Output struct {
	spec   OutputSpec
	long   bool
	files  []*os.File
	ws     []*bufio.Writer
	closed bool
}

// NewOutput creates the files prefix.0 .. prefix.(n-1) (under temporary
// names). long selects long_split instead of CRC32.
func NewOutput(spec OutputSpec, long bool) (*Output, error) {
	o := &Output{spec: spec, long: long}
	for i := 0; i < spec.Files(); i++ {
		name := spec.Name(i)
		f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".tmp-*")
		if err != nil {
			o.Abort()
			return nil, fmt.Errorf("table: %w", err)
		}
		o.files = append(o.files, f)
		o.ws = append(o.ws, bufio.NewWriterSize(f, 1<<16))
	}
	return o, nil
}

// Write adds one record (without LF).
func (o *Output) Write(rec []byte) error {
	i := 0
	if n := len(o.ws); n > 1 {
		v := rec
		if o.spec.Key > 0 {
			v = Field(rec, o.spec.Key)
		}
		if o.long {
			i = LongBucket(v, n)
		} else {
			i = Bucket(v, n)
		}
	}
	o.ws[i].Write(rec)
	return o.ws[i].WriteByte('\n')
}

// Commit flushes every file and renames it to its final name.
func (o *Output) Commit() error {
	var err error
	for i, f := range o.files {
		if e := o.ws[i].Flush(); err == nil && e != nil {
			err = e
		}
		if e := f.Close(); err == nil && e != nil {
			err = e
		}
	}
	o.closed = true
	if err == nil {
		for i, f := range o.files {
			if err = os.Chmod(f.Name(), 0o644); err != nil {
				break
			}
			if err = os.Rename(f.Name(), o.spec.Name(i)); err != nil {
				break
			}
		}
	}
	if err != nil {
		o.Abort()
		return fmt.Errorf("table: writing %s.*: %w", o.spec.Prefix, err)
	}
	return nil
}

// Abort closes and removes the temporary files.
func (o *Output) Abort() {
	for _, f := range o.files {
		if !o.closed {
			f.Close()
		}
		os.Remove(f.Name())
	}
	o.closed = true
}

// Split copies every record of input into the files of each output spec
// (each spec gets a full split of the input, 3.6.5.4). long selects the
// long_split function.
func Split(ctx context.Context, input string, outs []OutputSpec, long bool) error {
	var os_ []*Output
	abort := func() {
		for _, o := range os_ {
			o.Abort()
		}
	}
	for _, spec := range outs {
		o, err := NewOutput(spec, long)
		if err != nil {
			abort()
			return err
		}
		os_ = append(os_, o)
	}
	err := forEachRecord(ctx, input, func(rec []byte) error {
		for _, o := range os_ {
			if err := o.Write(rec); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		abort()
		return err
	}
	for _, o := range os_ {
		if err := o.Commit(); err != nil {
			abort()
			return err
		}
	}
	return nil
}

// groupReader yields the runs of consecutive records with the same key
// column of a sorted table.
type groupReader struct {
	lr   *lineReader
	f    *os.File
	key  int
	next []byte // the first record of the next group, owned
	nkey []byte // its key column (a slice of next)
	done bool
	name string
	// slab is where records are copied to: one allocation for many
	// records, never reused, so a record stays valid as long as it is
	// referenced.
	slab []byte
}

func openGroups(spec InputSpec) (*groupReader, error) {
	f, err := os.Open(spec.File)
	if err != nil {
		return nil, fmt.Errorf("table: %w", err)
	}
	g := &groupReader{lr: newLineReader(f), f: f, key: spec.Key, name: spec.File}
	if err := g.advance(); err != nil {
		f.Close()
		return nil, err
	}
	return g, nil
}

// slabSize is the size of the blocks records are copied to.
const slabSize = 64 << 10

func (g *groupReader) advance() error {
	rec, err := g.lr.next()
	if err == io.EOF {
		g.done, g.next, g.nkey = true, nil, nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("table: %s: %w", g.name, err)
	}
	if cap(g.slab)-len(g.slab) < len(rec) {
		g.slab = make([]byte, 0, max(slabSize, len(rec)))
	}
	s := len(g.slab)
	g.slab = append(g.slab, rec...)
	g.next = g.slab[s:len(g.slab):len(g.slab)]
	g.nkey = Field(g.next, g.key)
	return nil
}

// peekKey returns the key of the next group.
func (g *groupReader) peekKey() []byte { return g.nkey }

// group returns the records of the next group.
func (g *groupReader) group() ([][]byte, error) {
	key := g.nkey // the record it points into is never overwritten
	var recs [][]byte
	for !g.done && bytes.Equal(g.nkey, key) {
		recs = append(recs, g.next)
		if err := g.advance(); err != nil {
			return nil, err
		}
	}
	return recs, nil
}

// Merge joins 2 or 3 tables sorted on their key columns (3.6.5.1): for
// every key present in any input it calls fn with the groups of records of
// each input that carry the key (the first input is the main table). In
// reduce mode fn is called once per key with the whole groups; otherwise
// once per combination of one record from each non-empty group (an empty
// group stays empty), which is once per duplicate when one table has
// duplicates. Keys are visited in ascending byte order.
func Merge(ctx context.Context, inputs []InputSpec, out OutputSpec, fn MergeFunc, reduceMode bool) error {
	if len(inputs) < 2 || len(inputs) > 3 {
		return fmt.Errorf("table: merge takes 2 or 3 input tables, not %d", len(inputs))
	}
	gs := make([]*groupReader, len(inputs))
	for i, in := range inputs {
		g, err := openGroups(in)
		if err != nil {
			return err
		}
		defer g.f.Close()
		gs[i] = g
	}
	o, err := NewOutput(out, false)
	if err != nil {
		return err
	}
	groups := make([][][]byte, len(gs))
	// single and ones are the groups of one record handed to fn outside
	// reduce mode, reused from call to call.
	single, ones := make([][][]byte, len(gs)), make([][]byte, len(gs))
	for n := 0; ; n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			o.Abort()
			return ctx.Err()
		}
		var key []byte
		for _, g := range gs {
			if !g.done && (key == nil || bytes.Compare(g.peekKey(), key) < 0) {
				key = g.peekKey()
			}
		}
		if key == nil {
			break
		}
		// key points into a record that is never overwritten.
		for i, g := range gs {
			groups[i] = nil
			if !g.done && bytes.Equal(g.peekKey(), key) {
				if groups[i], err = g.group(); err != nil {
					o.Abort()
					return err
				}
			}
		}
		if reduceMode {
			err = fn(key, groups, o.Write)
		} else {
			err = combinations(groups, func(one [][]byte) error {
				for i, r := range one {
					single[i], ones[i] = nil, r
					if r != nil {
						single[i] = ones[i : i+1 : i+1]
					}
				}
				return fn(key, single, o.Write)
			})
		}
		if err != nil {
			o.Abort()
			return err
		}
	}
	return o.Commit()
}

// combinations calls fn with one record (or nil for an empty group) from
// each group, for every combination, in order.
func combinations(groups [][][]byte, fn func([][]byte) error) error {
	pick := make([][]byte, len(groups))
	var rec func(i int) error
	rec = func(i int) error {
		if i == len(groups) {
			return fn(pick)
		}
		if len(groups[i]) == 0 {
			pick[i] = nil
			return rec(i + 1)
		}
		for _, r := range groups[i] {
			pick[i] = r
			if err := rec(i + 1); err != nil {
				return err
			}
		}
		return nil
	}
	return rec(0)
}

// Reduce applies fn to every run of consecutive records with the same key
// (3.6.5.3) and writes what it emits to the output files.
func Reduce(ctx context.Context, input InputSpec, out OutputSpec, fn ReduceFunc) error {
	g, err := openGroups(input)
	if err != nil {
		return err
	}
	defer g.f.Close()
	o, err := NewOutput(out, false)
	if err != nil {
		return err
	}
	for n := 0; !g.done; n++ {
		if n&0xfff == 0 && ctx.Err() != nil {
			o.Abort()
			return ctx.Err()
		}
		key := g.peekKey()
		recs, err := g.group()
		if err == nil {
			err = fn(key, recs, o.Write)
		}
		if err != nil {
			o.Abort()
			return err
		}
	}
	return o.Commit()
}
