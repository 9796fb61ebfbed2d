// Package datadir is the layout of a crawl's data directory and the
// commands that inspect it without a running crawler (trawl store, trawl
// export).
//
// The inspecting commands (store, search, export) take the same --data as
// trawl run: the run's top directory, holding node/ (the crawl store),
// index/ (the full-text index), multinode/ and dupserver/. They also accept
// the sub-directory itself (the older form, and what trawl node --data
// holds). They only read: a directory that is not a crawl's is refused
// before anything is opened, and the store and index are opened read-only.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/trawl/trawl/internal/store"
)

// notCrawlHint is the advice every refusal ends with.
const notCrawlHint = "give --data the directory you gave trawl run --data (default ./data), or crawl into it first with trawl run --data DIR"

// statDir checks that data is an existing directory.
func statDir(data string) error {
	fi, err := os.Stat(data)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%s does not exist: %s", data, notCrawlHint)
	case err != nil:
		return err
	case !fi.IsDir():
		return fmt.Errorf("%s is a file, not a crawl's data directory: %s", data, notCrawlHint)
	}
	return nil
}

// isPebbleDir reports whether dir holds a Pebble database (the crawl store).
func isPebbleDir(dir string) bool {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range ents {
		n := e.Name()
		if n == "CURRENT" || strings.HasPrefix(n, "marker.manifest.") {
			return true
		}
	}
	return false
}

// StoreDir returns the crawl store directory of --data: DATA/node, or
// DATA itself when it is a store.
func StoreDir(data string) (string, error) {
	if err := statDir(data); err != nil {
		return "", err
	}
	if d := filepath.Join(data, "node"); isPebbleDir(d) {
		return d, nil
	}
	if isPebbleDir(data) {
		return data, nil
	}
	return "", fmt.Errorf("%s is not a crawl's data directory: expected %s (the crawl store trawl run writes) or a crawl store itself; %s",
		data, filepath.Join(data, "node"), notCrawlHint)
}

// IndexDir returns the full-text index directory of --data:
// DATA/index, or DATA itself when it is an index.
func IndexDir(data string) (string, error) {
	if err := statDir(data); err != nil {
		return "", err
	}
	isIndex := func(d string) bool {
		_, err := os.Stat(filepath.Join(d, "index_meta.json"))
		return err == nil
	}
	if d := filepath.Join(data, "index"); isIndex(d) {
		return d, nil
	}
	if isIndex(data) {
		return data, nil
	}
	if isPebbleDir(filepath.Join(data, "node")) {
		return "", fmt.Errorf("no index in %s: the crawl in %s ran with --index=false; run trawl run --data %s again without it to index what it crawls",
			filepath.Join(data, "index"), data, data)
	}
	return "", fmt.Errorf("no index: %s is not a crawl's data directory: expected %s (the full-text index trawl run writes); %s",
		data, filepath.Join(data, "index"), notCrawlHint)
}

// OpenStore opens the crawl store of --data read-only.
func OpenStore(data string) (*store.Store, error) {
	dir, err := StoreDir(data)
	if err != nil {
		return nil, err
	}
	st, err := store.Open(dir, store.Options{ReadOnly: true})
	if err != nil && (errors.Is(err, syscall.EWOULDBLOCK) || strings.Contains(err.Error(), "temporarily unavailable")) {
		return nil, fmt.Errorf("the crawl store %s is locked: a crawl is running on %s; stop it first, or use its HTTP interface (search page, status page, admin API)", dir, data)
	}
	return st, err
}
