package store

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/urls"
)

// WriteList writes the URIs of a collection (of one crawl site when site
// is not empty), one line each: status, HTTP code, checksum (hex), last
// fetch time (RFC 3339), URI (trawl store list).
func (s *Store) WriteList(w io.Writer, c, site string) error {
	print := func(r *URIRecord) error {
		cs := "-"
		if r.HasChecksum {
			cs = hex.EncodeToString(r.Checksum[:])
		}
		t := "-"
		if !r.LastFetched.IsZero() {
			t = r.LastFetched.UTC().Format(time.RFC3339)
		}
		_, err := fmt.Fprintf(w, "%-12s %3d %-32s %-20s %s\n", r.Status, r.HTTPCode, cs, t, r.URI)
		return err
	}
	if site != "" {
		return s.SiteURIs(c, site, func(uri string) error {
			r, ok, err := s.URI(c, uri)
			if err != nil || !ok {
				return err
			}
			return print(r)
		})
	}
	return s.URIs(c, "", print)
}

// WriteRecord writes a URI's stored record, a blank line, then its stored
// document body (trawl store get). The URI is normalized when the store
// has it only that way.
func (s *Store) WriteRecord(w io.Writer, c, uri string) error {
	if n, err := urls.Normalize(uri, nil); err == nil {
		if _, ok, _ := s.URI(c, n.String()); ok {
			uri = n.String()
		}
	}
	r, ok, err := s.URI(c, uri)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: not in collection %s", uri, c)
	}
	fmt.Fprintf(w, "uri: %s\nsite: %s\nstatus: %s\nhttp_code: %d\n", r.URI, r.Site, r.Status, r.HTTPCode)
	if r.HasChecksum {
		fmt.Fprintf(w, "checksum: %s\n", hex.EncodeToString(r.Checksum[:]))
	}
	for _, kv := range [][2]string{{"owner", r.Owner}, {"location", r.Location}, {"content_type", r.ContentType},
		{"etag", r.ETag}, {"last_modified", r.LastModified}, {"referrer", r.Referrer}} {
		if kv[1] != "" {
			fmt.Fprintf(w, "%s: %s\n", kv[0], kv[1])
		}
	}
	fmt.Fprintf(w, "size: %d\nhops: %d\nfetch_count: %d\nchange_count: %d\nerror_count: %d\n", r.Size, r.Hops, r.FetchCount, r.ChangeCount, r.ErrorCount)
	if !r.LastFetched.IsZero() {
		fmt.Fprintf(w, "last_fetched: %s (cycle %d)\n", r.LastFetched.UTC().Format(time.RFC3339Nano), r.LastFetchedCycle)
	}
	if hdr, ok, err := s.Header(c, r.URI); err != nil {
		return err
	} else if ok {
		// The response header kept under storage/store_http_header.
		fmt.Fprintln(w, "http_header:")
		for _, line := range strings.Split(strings.TrimRight(string(hdr), "\r\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", strings.TrimRight(line, "\r"))
		}
	}
	body, ok, err := s.Document(c, r.URI)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if ok {
		_, err = w.Write(body)
	}
	return err
}

// OnlyCollection returns the collection of a store holding exactly one.
func (s *Store) OnlyCollection() (string, error) {
	names := map[string]bool{}
	err := s.IterRaw(SpaceURI, nil, func(k, _ []byte) error {
		name, _, err := ReadLP(k)
		if err != nil {
			return err
		}
		names[name] = true
		if len(names) > 1 {
			return ErrStop
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	if len(names) != 1 {
		if len(names) == 0 {
			return "", errors.New("the crawl store holds no collection yet: nothing was crawled")
		}
		return "", fmt.Errorf("the store holds %d collections: name one with --collection", len(names))
	}
	for n := range names {
		return n, nil
	}
	return "", nil
}
