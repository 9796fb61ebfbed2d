package table

import (
	"bytes"
	"compress/zlib"
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strconv"

	"github.com/trawl/trawl/internal/marshal"
)

// Emit writes one output record (without LF).
type Emit func(rec []byte) error

// MergeFunc is a merge function: key, the groups of records of each input
// table carrying it (index 0 the main table), and where to write.
type MergeFunc func(key []byte, groups [][][]byte, emit Emit) error

// ReduceFunc is a reduce function: key, its records, and where to write.
type ReduceFunc func(key []byte, recs [][]byte, emit Emit) error

// Vars are the funcvars of reduce.pyc (2.2.21.1.3), decoded.
type Vars = marshal.Dict

// MergeFactory makes a merge function.
type MergeFactory func(vars Vars) (MergeFunc, error)

// ReduceFactory makes a reduce function for the given funcvars.
type ReduceFactory func(vars Vars) (ReduceFunc, error)

// TaskFunc is a pythontasks.pyc function: its positional parameters, run in
// the current directory.
type TaskFunc func(args []string) error

// Registry looks merge, reduce and pythontasks functions up by their spec
// name (2.2.2.3-2.2.2.5). It is built, not global: NewRegistry registers
// the generic functions, and the web analyzer adds its own.
type Registry struct {
	merge  map[string]MergeFactory
	reduce map[string]ReduceFactory
	tasks  map[string]TaskFunc
}

// NewRegistry returns a registry holding the generic functions of this
// package (see the package comment).
func NewRegistry() *Registry {
	r := &Registry{merge: map[string]MergeFactory{}, reduce: map[string]ReduceFactory{}, tasks: map[string]TaskFunc{}}
	r.RegisterMerge("table.join", func(Vars) (MergeFunc, error) { return join, nil })
	r.RegisterReduce("table.count", func(Vars) (ReduceFunc, error) { return count, nil })
	r.RegisterReduce("table.first", func(Vars) (ReduceFunc, error) { return first, nil })
	r.RegisterReduce("table.sum", func(Vars) (ReduceFunc, error) { return sum, nil })
	registerTasks(r)
	return r
}

// RegisterMerge adds (or replaces) a merge function.
func (r *Registry) RegisterMerge(name string, f MergeFactory) { r.merge[name] = f }

// RegisterReduce adds (or replaces) a reduce function.
func (r *Registry) RegisterReduce(name string, f ReduceFactory) { r.reduce[name] = f }

// RegisterTask adds (or replaces) a pythontasks function.
func (r *Registry) RegisterTask(name string, f TaskFunc) { r.tasks[name] = f }

// Merge returns the merge function name.
func (r *Registry) Merge(name string, vars Vars) (MergeFunc, error) {
	f, ok := r.merge[name]
	if !ok {
		return nil, fmt.Errorf("table: unknown merge function %q (have %v)", name, keys(r.merge))
	}
	return f(vars)
}

// Reduce returns the reduce function name.
func (r *Registry) Reduce(name string, vars Vars) (ReduceFunc, error) {
	f, ok := r.reduce[name]
	if !ok {
		return nil, fmt.Errorf("table: unknown reduce function %q (have %v)", name, keys(r.reduce))
	}
	return f(vars)
}

// Task returns the pythontasks function name.
func (r *Registry) Task(name string) (TaskFunc, error) {
	f, ok := r.tasks[name]
	if !ok {
		return nil, fmt.Errorf("table: unknown pythontasks function %q (have %v)", name, keys(r.tasks))
	}
	return f, nil
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// DecodeFuncvars decodes a funcvars parameter: URL-safe base64 (RFC 3548
// section 4) of a zlib stream of an MS-FSWCU dictionary.
func DecodeFuncvars(s string) (Vars, error) {
	raw, err := base64.URLEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("table: funcvars: %w", err)
	}
	zr, err := zlib.NewReader(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("table: funcvars: %w", err)
	}
	data, err := io.ReadAll(io.LimitReader(zr, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("table: funcvars: %w", err)
	}
	v, err := marshal.Decode(data)
	if err != nil {
		return nil, fmt.Errorf("table: funcvars: %w", err)
	}
	d, ok := v.(marshal.Dict)
	if !ok {
		return nil, fmt.Errorf("table: funcvars is not a dictionary")
	}
	return d, nil
}

// EncodeFuncvars is DecodeFuncvars' inverse.
func EncodeFuncvars(d Vars) (string, error) {
	data, err := marshal.Encode(d)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	zw := zlib.NewWriter(&b)
	zw.Write(data)
	zw.Close()
	return base64.URLEncoding.EncodeToString(b.Bytes()), nil
}

// join (table.join) is an inner join: when every input has a record for
// the key, it writes the main record followed by the fields of the other
// records except their key column (the key is column 1 of each, by
// convention of this function: the merge is on column 1).
func join(key []byte, groups [][][]byte, emit Emit) error {
	for _, g := range groups {
		if len(g) == 0 {
			return nil
		}
	}
	var out []byte
	out = append(out, groups[0][0]...)
	for _, g := range groups[1:] {
		rec := g[0]
		if i := bytes.IndexByte(rec, ' '); i >= 0 {
			out = append(out, ' ')
			out = append(out, rec[i+1:]...)
		}
	}
	return emit(out)
}

// count (table.count) writes "key n", n the number of records of the key.
func count(key []byte, recs [][]byte, emit Emit) error {
	out := append(append([]byte(nil), key...), ' ')
	return emit(strconv.AppendInt(out, int64(len(recs)), 10))
}

// first (table.first) writes the first record of each key.
func first(_ []byte, recs [][]byte, emit Emit) error { return emit(recs[0]) }

// sum (table.sum) writes "key s", s the sum of the last column of the
// key's records read as integers (a non-integer counts 0).
func sum(key []byte, recs [][]byte, emit Emit) error {
	var s int64
	for _, r := range recs {
		last := r[bytes.LastIndexByte(r, ' ')+1:]
		n, _ := strconv.ParseInt(string(last), 10, 64)
		s += n
	}
	out := append(append([]byte(nil), key...), ' ')
	return emit(strconv.AppendInt(out, s, 10))
}
