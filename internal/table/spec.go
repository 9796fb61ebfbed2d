package table

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// InputSpec is a tableinputspec (2.2.3.9): "filename:numcolumns:key", key
// 1-based.
type InputSpec struct {
	File    string
	NumCols int
	Key     int
}

// OutputSpec is a tableoutputspec (2.2.3.10): "filename_prefix:key:split_factor".
// Key is the 1-based column hashed to choose the output file, 0 for the
// whole record; Split is the number of files (0 counts as 1).
type OutputSpec struct {
	Prefix string
	Key    int
	Split  int
}

// Files returns the number of output files.
func (o OutputSpec) Files() int {
	if o.Split < 1 {
		return 1
	}
	return o.Split
}

// Name returns the name of output file i: prefix.i.
func (o OutputSpec) Name(i int) string { return o.Prefix + "." + strconv.Itoa(i) }

const maxColumns = 1 << 16

// splitRight cuts s at its last two colons, so that a file name with a
// drive letter ("c:\x:3:1") keeps its colon.
func splitRight(s string) (string, string, string, bool) {
	i := strings.LastIndexByte(s, ':')
	if i < 0 {
		return "", "", "", false
	}
	j := strings.LastIndexByte(s[:i], ':')
	if j < 0 {
		return "", "", "", false
	}
	return s[:j], s[j+1 : i], s[i+1:], true
}

func atoiRange(s string, lo, hi int) (int, bool) {
	if s == "" || len(s) > 9 {
		return 0, false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, _ := strconv.Atoi(s)
	return n, n >= lo && n <= hi
}

// ParseInputSpec parses a tableinputspec.
func ParseInputSpec(s string) (InputSpec, error) {
	f, nc, k, ok := splitRight(s)
	if !ok || f == "" {
		return InputSpec{}, fmt.Errorf("table: input spec %q is not filename:numcolumns:key", s)
	}
	n, ok1 := atoiRange(nc, 1, maxColumns)
	key, ok2 := atoiRange(k, 1, maxColumns)
	if !ok1 || !ok2 || key > n {
		return InputSpec{}, fmt.Errorf("table: input spec %q: numcolumns > 0 and 0 < key <= numcolumns", s)
	}
	return InputSpec{File: f, NumCols: n, Key: key}, nil
}

// ParseOutputSpec parses a tableoutputspec.
func ParseOutputSpec(s string) (OutputSpec, error) {
	p, k, sf, ok := splitRight(s)
	if !ok || p == "" {
		return OutputSpec{}, fmt.Errorf("table: output spec %q is not prefix:key:split_factor", s)
	}
	key, ok1 := atoiRange(k, 0, maxColumns)
	n, ok2 := atoiRange(sf, 0, 1<<16)
	if !ok1 || !ok2 {
		return OutputSpec{}, fmt.Errorf("table: output spec %q: key and split_factor are integers >= 0", s)
	}
	return OutputSpec{Prefix: p, Key: key, Split: n}, nil
}

// SortKey is one sortkeyspec field (2.2.3.8): columns Start..End (End 0:
// to the end of the record), numeric, reversed.
type SortKey struct {
	Start, End int
	Numeric    bool
	Reverse    bool
}

// ParseSortKey parses one "-kS[,E][n][r]" field. n needs S == E.
func ParseSortKey(s string) (SortKey, error) {
	bad := fmt.Errorf("table: bad sort key %q", s)
	if !strings.HasPrefix(s, "-k") {
		return SortKey{}, bad
	}
	s = s[2:]
	var k SortKey
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	start, ok := atoiRange(s[:i], 1, maxColumns)
	if !ok {
		return SortKey{}, bad
	}
	k.Start = start
	s = s[i:]
	if strings.HasPrefix(s, ",") {
		s = s[1:]
		i = 0
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		end, ok := atoiRange(s[:i], 1, maxColumns)
		if !ok || end < start {
			return SortKey{}, bad
		}
		k.End = end
		s = s[i:]
		if strings.HasPrefix(s, "n") {
			if end != start {
				return SortKey{}, fmt.Errorf("table: sort key -k%d,%dn: numeric applies to a single column", start, end)
			}
			k.Numeric = true
			s = s[1:]
		}
	}
	if s == "r" {
		k.Reverse = true
		s = ""
	}
	if s != "" {
		return SortKey{}, bad
	}
	return k, nil
}

// Field returns column i (1-based) of a record (without its LF), or nil.
func Field(rec []byte, i int) []byte {
	for col := 1; ; col++ {
		j := bytes.IndexByte(rec, ' ')
		if col == i {
			if j < 0 {
				return rec
			}
			return rec[:j]
		}
		if j < 0 {
			return nil
		}
		rec = rec[j+1:]
	}
}

// span returns the bytes of columns start..end of rec (end 0: to the end),
// separators included, as GNU sort's -t ' ' -kS,E compares them.
func span(rec []byte, start, end int) []byte {
	b := 0
	for col := 1; col < start; col++ {
		j := bytes.IndexByte(rec[b:], ' ')
		if j < 0 {
			return nil
		}
		b += j + 1
	}
	if end == 0 {
		return rec[b:]
	}
	e := b
	for col := start; col <= end; col++ {
		j := bytes.IndexByte(rec[e:], ' ')
		if j < 0 {
			return rec[b:]
		}
		if col == end {
			return rec[b : e+j]
		}
		e += j + 1
	}
	return rec[b:e]
}
