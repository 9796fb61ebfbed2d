package clicks

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Rel is the click relevance of one URL for one query.
type Rel struct {
	LCount, GCount int64 // the URL's clicks for the query; the query's clicks
	Place          int   // the URL's place among the query's by clicks (1 = most)
}

// Boost returns the factor a URL's score is multiplied by for the query:
// 1 + share*log2(1+LCOUNT), share = LCOUNT/GCOUNT, the URL's part of the
// query's clicks. A URL that takes every click of a query clicked 3 times
// gets 3, once 2; one taking half of 10 clicks gets about 2.3.
func (r Rel) Boost() float64 {
	if r.LCount <= 0 || r.GCount <= 0 {
		return 1
	}
	share := min(float64(r.LCount)/float64(r.GCount), 1)
	return 1 + share*math.Log2(1+float64(r.LCount))
}

// Table is a relevance table in memory: per query key (Key), per URL
// (CID), its relevance.
type Table map[string]map[string]Rel

// ReadRelevance reads an OutRelevance table.
func ReadRelevance(path string) (Table, error) {
	fh, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("clicks: %w", err)
	}
	defer fh.Close()
	return ParseRelevance(fh, path)
}

// MaxRecordBytes caps a record of a relevance table.
const MaxRecordBytes = 1 << 20

// ParseRelevance reads an OutRelevance table from r (name is for errors).
func ParseRelevance(r io.Reader, name string) (Table, error) {
	t := Table{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), MaxRecordBytes)
	for line := 1; sc.Scan(); line++ {
		fs := strings.Split(sc.Text(), " ")
		if len(fs) != 6 {
			return nil, fmt.Errorf("clicks: %s:%d: %d fields, want 6", name, line, len(fs))
		}
		var n [4]int64
		for i := range n {
			var err error
			if n[i], err = strconv.ParseInt(fs[1+i], 10, 64); err != nil || n[i] < 0 {
				return nil, fmt.Errorf("clicks: %s:%d: bad count %q", name, line, fs[1+i])
			}
		}
		q := unescape(fs[5])
		if t[q] == nil {
			t[q] = map[string]Rel{}
		}
		t[q][fs[0]] = Rel{LCount: n[0], GCount: n[1], Place: int(min(n[2], math.MaxInt32))}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("clicks: %s: %w", name, err)
	}
	return t, nil
}

// Relevance is the relevance table of a file, read again when the file
// changes (a click build replaced it), checked at most once a second.
// Its methods are safe for concurrent use.
type Relevance struct {
	path string
	mu   sync.Mutex
	t    Table
	mod  time.Time
	size int64
	seen time.Time // last check
	err  error
}

// NewRelevance returns the relevance of the table at path (which need not
// exist yet: no click relevance until it does).
func NewRelevance(path string) *Relevance { return &Relevance{path: path} }

// For returns the relevance of the URLs clicked for query q (nil if none).
func (r *Relevance) For(q string) map[string]Rel {
	if r == nil {
		return nil
	}
	key, ok := Key(q)
	if !ok {
		return nil
	}
	return r.table(time.Now())[key]
}

// Err returns the error of the last read, if it failed.
func (r *Relevance) Err() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.err
}

func (r *Relevance) table(now time.Time) Table {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.seen.IsZero() && now.Sub(r.seen) < time.Second && now.After(r.seen) {
		return r.t
	}
	r.seen = now
	st, err := os.Stat(r.path)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			r.t, r.mod, r.size, r.err = nil, time.Time{}, 0, nil
		}
		return r.t
	}
	if st.ModTime().Equal(r.mod) && st.Size() == r.size && r.t != nil {
		return r.t
	}
	t, err := ReadRelevance(r.path)
	if err != nil {
		r.err = err
		return r.t // keep the last good table
	}
	r.t, r.mod, r.size, r.err = t, st.ModTime(), st.Size(), nil
	return r.t
}

// Reload makes the next For read the file again (tests, and a process
// that just ran the build).
func (r *Relevance) Reload() {
	r.mu.Lock()
	r.seen, r.mod = time.Time{}, time.Time{}
	r.mu.Unlock()
}
