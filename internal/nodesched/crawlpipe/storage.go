package crawlpipe

import (
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/store"
)

// This file applies what MS-FSCCFG says about keeping documents:
//
//   - diffcheck (2.2.3): without it no duplicate detection is done; every
//     document is its own (its checksum still detects changes).
//   - storage (2.2.4.6): store_dupes keeps the bodies of duplicates (by
//     default they are not kept: the owner's body is the content);
//     compress stores bodies compressed (snappy, the store's codec) except
//     those whose media type compress_exclude_mime lists (stored as they
//     are); store_http_header keeps the response's status line and header
//     with the body (store.Store.Header, shown by `trawl store get`);
//     remove_docs drops a body from the crawl store once its add or update
//     is in the feeding outbox (which holds the content until the index
//     acknowledges it), so a submitted document is kept by the index only.
//   - uri_dir: a file of the URIs extracted from each crawled document
//     (uridir.go).
//   - limits (2.2.4.18): limits.go.
//
// datastore, clusters and defrag_threshold describe FAST's own file layout
// and have no equivalent in the Pebble store (docs/decisions/store.md).
type StorageSettings struct {
	DiffCheck       bool
	StoreDupes      bool
	compress        bool
	compressExclude []string // media type patterns (fetch.TypeAllowed syntax)
	StoreHeader     bool
	RemoveDocs      bool
	// URIDir is uri_dir as configured ("" when none); the machine's
	// files for it are the collection's (collection.files, uridir.go).
	URIDir string
}

// compileStorage compiles the storage options into s.
func compileStorage(s *Settings, eff *config.Effective) error {
	st := eff.Storage()
	ss := &StorageSettings{DiffCheck: eff.Diffcheck(), StoreDupes: st.StoreDupes, compress: st.Compress,
		StoreHeader: st.StoreHTTPHeader, RemoveDocs: st.RemoveDocs, URIDir: uriDirValue(st.URIDir)}
	for _, m := range st.CompressExcludeMIME {
		if m != "" && m != "none" { // the table's default "none": no type
			ss.compressExclude = append(ss.compressExclude, m)
		}
	}
	s.Storage = ss
	return nil
}

// StorageOrDefault returns the storage settings of s (the spec's defaults for
// settings made without Compile).
func (s *Settings) StorageOrDefault() *StorageSettings {
	if s.Storage != nil {
		return s.Storage
	}
	return &StorageSettings{DiffCheck: true, compress: true, StoreHeader: true}
}

// CodecFor is the codec of a document of media type ct.
func (ss *StorageSettings) CodecFor(ct string) (store.Codec, bool) {
	if !ss.compress {
		return store.CodecNone, true
	}
	if len(ss.compressExclude) > 0 && ct != "" && fetch.TypeAllowed(ss.compressExclude, ct) {
		return store.CodecNone, true
	}
	return 0, false // the store's codec
}
