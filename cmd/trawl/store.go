package main

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/urls"
)

func init() {
	register(&command{name: "store", summary: "inspect a node scheduler's crawl store (list, get)", run: runStore})
}

func runStore(ctx context.Context, env *cmdEnv, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "get") {
		fs := newFlagSet(env, "store", "store list|get [flags]", "Inspect a crawl store:\n  list  one line per URI: status, HTTP code, checksum, last fetch time, URI\n  get   a URI's record, then its stored document")
		if err := parseFlags(fs, args); err != nil {
			return err
		}
		fs.Usage()
		return errUsage
	}
	sub := args[0]
	usage := "store list --data DIR [--collection C] [--site S]"
	summary := "List the URIs of a crawl store, one line each: status, HTTP code, checksum (hex), last fetch time (RFC 3339), URI."
	if sub == "get" {
		usage, summary = "store get --data DIR [--collection C] URI", "Print a URI's stored record, a blank line, then its stored document body."
	}
	fs := newFlagSet(env, "store "+sub, usage, summary)
	data := fs.String("data", "./data", "the crawl's data directory (trawl run --data; the store is DIR/node), or a crawl store")
	coll := fs.String("collection", "", "collection (default: the only one in the store)")
	site := fs.String("site", "", "list only this crawl site (host[:port])")
	if err := parseFlags(fs, args[1:]); err != nil {
		return err
	}
	if sub == "get" && fs.NArg() != 1 || sub == "list" && fs.NArg() != 0 {
		fs.Usage()
		return errUsage
	}
	st, err := openCrawlStore(*data)
	if err != nil {
		return err
	}
	defer st.Close()
	c := *coll
	if c == "" {
		if c, err = onlyCollection(st); err != nil {
			return err
		}
	}
	if sub == "list" {
		print := func(r *store.URIRecord) error {
			cs := "-"
			if r.HasChecksum {
				cs = hex.EncodeToString(r.Checksum[:])
			}
			t := "-"
			if !r.LastFetched.IsZero() {
				t = r.LastFetched.UTC().Format(time.RFC3339)
			}
			_, err := fmt.Fprintf(env.stdout, "%-12s %3d %-32s %-20s %s\n", r.Status, r.HTTPCode, cs, t, r.URI)
			return err
		}
		if *site != "" {
			return st.SiteURIs(c, *site, func(uri string) error {
				r, ok, err := st.URI(c, uri)
				if err != nil || !ok {
					return err
				}
				return print(r)
			})
		}
		return st.URIs(c, "", print)
	}
	uri := fs.Arg(0)
	if n, err := urls.Normalize(uri, nil); err == nil {
		if _, ok, _ := st.URI(c, n.String()); ok {
			uri = n.String()
		}
	}
	r, ok, err := st.URI(c, uri)
	if err != nil {
		return err
	}
	if !ok {
		return fmt.Errorf("%s: not in collection %s", uri, c)
	}
	w := env.stdout
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
	if hdr, ok, err := st.Header(c, r.URI); err != nil {
		return err
	} else if ok {
		// The response header kept under storage/store_http_header.
		fmt.Fprintln(w, "http_header:")
		for _, line := range strings.Split(strings.TrimRight(string(hdr), "\r\n"), "\n") {
			fmt.Fprintf(w, "  %s\n", strings.TrimRight(line, "\r"))
		}
	}
	body, ok, err := st.Document(c, r.URI)
	if err != nil {
		return err
	}
	fmt.Fprintln(w)
	if ok {
		_, err = w.Write(body)
	}
	return err
}

// onlyCollection returns the collection of a store holding exactly one.
func onlyCollection(st *store.Store) (string, error) {
	names := map[string]bool{}
	err := st.IterRaw(store.SpaceURI, nil, func(k, _ []byte) error {
		name, _, err := store.ReadLP(k)
		if err != nil {
			return err
		}
		names[name] = true
		if len(names) > 1 {
			return store.ErrStop
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
