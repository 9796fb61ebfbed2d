// Package collstore keeps the crawl collections added or updated over the
// MS-FSCADM API (CollectionAdd) so that they survive a restart: one
// MS-FSCCFG file per collection, <dir>/<name>.xml, written atomically (a
// temporary file synced, then renamed over the old one, then the
// directory synced).
//
// At start a process reads them back (Load) and merges them with the
// collections of its --config files: the saved copy replaces the --config
// collection of the same name, because it was added or updated over the
// API after the process first read --config. A saved file that no longer
// parses is reported and skipped, never fatal. Deleting a
// collection over the API removes its file (Forget).
package collstore

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/trawl/trawl/internal/config"
)

// Dir is the directory under a process's --data where the collections are
// kept.
func Dir(data string) string { return filepath.Join(data, "collections") }

// Store is a directory of saved collections.
type Store struct{ Dir string }

// file is the file of collection name; names that cannot be a file name
// are refused.
func (s Store) file(name string) (string, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, "/\\\x00") {
		return "", fmt.Errorf("collstore: collection name %q cannot name a file", name)
	}
	return filepath.Join(s.Dir, name+".xml"), nil
}

// Save writes c's configuration to <dir>/<name>.xml atomically.
func (s Store) Save(c *config.Collection) error {
	path, err := s.file(c.Name)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := config.WriteCollections(&buf, []*config.Collection{c}); err != nil {
		return err
	}
	if err := os.MkdirAll(s.Dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(s.Dir, ".tmp-"+c.Name+"-*")
	if err != nil {
		return err
	}
	_, err = f.Write(buf.Bytes())
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	if d, err := os.Open(s.Dir); err == nil {
		d.Sync()
		d.Close()
	}
	return nil
}

// Forget removes the saved copy of collection name, if any.
func (s Store) Forget(name string) error {
	path, err := s.file(name)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !os.IsNotExist(err) {
		return err
	}
	return nil
}

// Load reads the saved collections; a file that no longer parses is
// reported and skipped.
func (s Store) Load(log *slog.Logger) []*config.Collection {
	entries, err := os.ReadDir(s.Dir)
	if err != nil {
		if !os.IsNotExist(err) {
			log.Error("admin: cannot read the saved collections", "dir", s.Dir, "err", err)
		}
		return nil
	}
	var out []*config.Collection
	for _, e := range entries {
		name := e.Name()
		if e.IsDir() || strings.HasPrefix(name, ".") || !strings.HasSuffix(name, ".xml") {
			continue
		}
		path := filepath.Join(s.Dir, name)
		cfg, err := config.ParseFile(path, nil)
		if err != nil {
			log.Error("admin: saved collection skipped", "file", path, "err", err)
			continue
		}
		out = append(out, cfg.Collections...)
	}
	return out
}
