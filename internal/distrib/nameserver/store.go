package nameserver

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/trawl/trawl/internal/distrib/wire"
)

// Store is the name server's append-only file of bind and unbind records.
type Store struct {
	f    *os.File
	path string
}

// OpenStore reads DIR/bindings.log, rewrites it compacted and returns the
// store and the bindings it held. With dir "" the store keeps nothing: the
// bindings live as long as the process (an in-process chain, whose
// objects listen on new ports at every start).
func OpenStore(dir string) (*Store, []wire.AOR, error) {
	if dir == "" {
		return &Store{}, nil, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, nil, fmt.Errorf("nameserver: %w", err)
	}
	path := filepath.Join(dir, "bindings.log")
	bindings := map[string]wire.AOR{}
	if f, err := os.Open(path); err == nil {
		r := bufio.NewReader(f)
		for {
			fr, err := wire.ReadFrame(r)
			if err != nil {
				if !errors.Is(err, io.EOF) {
					// A torn last record: what came before stands.
					fmt.Fprintf(os.Stderr, "nameserver: %s: dropping a bad record at the end: %v\n", path, err)
				}
				break
			}
			rec, err := decodeRecord(fr)
			if err != nil {
				f.Close()
				return nil, nil, fmt.Errorf("nameserver: %s: %w", path, err)
			}
			if rec.Bind {
				bindings[rec.AOR.Key()] = rec.AOR
			} else {
				delete(bindings, rec.AOR.Key())
			}
		}
		f.Close()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, fmt.Errorf("nameserver: %w", err)
	}
	out := make([]wire.AOR, 0, len(bindings))
	for _, a := range bindings {
		out = append(out, a)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Key() < out[j].Key() })
	var buf []byte
	for _, a := range out {
		var err error
		if buf, err = wire.AppendFrame(buf, encodeRecord(Record{Bind: true, AOR: a})); err != nil {
			return nil, nil, fmt.Errorf("nameserver: %w", err)
		}
	}
	tmp := path + ".tmp"
	if err := writeSync(tmp, buf); err != nil {
		return nil, nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, nil, fmt.Errorf("nameserver: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("nameserver: %w", err)
	}
	return &Store{f: f, path: path}, out, nil
}

func writeSync(path string, b []byte) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("nameserver: %w", err)
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return fmt.Errorf("nameserver: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("nameserver: %w", err)
	}
	return f.Close()
}

func encodeRecord(r Record) *wire.Frame {
	if r.Bind {
		return &wire.Frame{Kind: wire.Oneway, Object: Object, Method: "bind", Args: []wire.Value{r.AOR.Value()}}
	}
	return &wire.Frame{Kind: wire.Oneway, Object: Object, Method: "unbind",
		Args: []wire.Value{wire.Str(r.AOR.Name), wire.Str(r.AOR.Type), wire.Str(r.AOR.Version)}}
}

func decodeRecord(f *wire.Frame) (Record, error) {
	switch f.Method {
	case "bind":
		a, err := wire.ParseAOR(f.Arg(0))
		return Record{Bind: true, AOR: a}, err
	case "unbind":
		if len(f.Args) == 3 {
			return Record{AOR: wire.AOR{Name: f.Args[0].S, Type: f.Args[1].S, Version: f.Args[2].S}}, nil
		}
	}
	return Record{}, fmt.Errorf("bad record %s", f)
}

// Apply appends records and syncs (loop.Storage).
func (s *Store) Apply(_ context.Context, records []any) error {
	if s.f == nil {
		return nil
	}
	var buf []byte
	for _, r := range records {
		rec, ok := r.(Record)
		if !ok {
			return fmt.Errorf("nameserver: cannot persist %T", r)
		}
		var err error
		if buf, err = wire.AppendFrame(buf, encodeRecord(rec)); err != nil {
			return fmt.Errorf("nameserver: %w", err)
		}
	}
	if _, err := s.f.Write(buf); err != nil {
		return fmt.Errorf("nameserver: %s: %w", s.path, err)
	}
	if err := s.f.Sync(); err != nil {
		return fmt.Errorf("nameserver: %s: %w", s.path, err)
	}
	return nil
}

// Close closes the file.
func (s *Store) Close() error {
	if s.f == nil {
		return nil
	}
	return s.f.Close()
}
