package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/opensearch"
	"github.com/trawl/trawl/internal/tlsconf"
)

func init() {
	register(&command{name: "search", summary: "search the full-text index of crawled documents", run: runSearch})
}

func runSearch(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "search", "search [flags] QUERY...",
		"Search the index under --data and print the results, best first: for each, its URL, title and a\n"+
			"snippet with the query's words between *stars*. The query language: words (all must match; pages\n"+
			"holding them next to each other first), a OR b, \"quoted phrases\", -word or -\"phrase\" to exclude, site:example.com (the host or its subdomains),\n"+
			"type:html|pdf|text|office|xml|other or type:<MIME type>; a - before site: or type: excludes.\n"+
			"With --serve ADDR, serve the search page (/search) and the JSON API (/api/search?q=..., /api/doc?url=U&collection=C) instead;\n"+
			"with --data, the page logs searches and result clicks in DIR/clicks/log, and the click relevance of\n"+
			"the last trawl webanalyzer clicks run (DIR/clicks/state) boosts the URLs clicked for a query.")
	data := fs.String("data", "./data", "the crawl's data directory (trawl run --data; the index is DIR/index), or an index")
	indexDir := fs.String("index", "", "index directory (default: DIR/index of --data), or opensearch://HOST:PORT[,HOST:PORT]/INDEX: search that OpenSearch index")
	collection := fs.String("collection", "", "search only this content collection")
	site := fs.String("site", "", "keep only documents from this site (as site:)")
	typ := fs.String("type", "", "keep only documents of this type (as type:)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	from := fs.Int("from", 0, "skip this many results")
	size := fs.Int("size", 10, fmt.Sprintf("results per page (at most %d)", index.MaxPageSize))
	serve := fs.String("serve", "", "serve the search page and API on this address (host:port) until interrupted")
	logClicks := fs.Bool("log-clicks", true, "with --serve and --data, log searches and result clicks (DIR/clicks/log)")
	ns := fs.String("nameserver", "", "HOST:PORT of a name server: query every indexer partition bound there and merge the results by score\n(instead of the index under --data, whose click relevance still applies; with --serve too)")
	var auth admin.Auth
	fs.StringVar(&auth.Token, "admin-token", "", "with --serve, require this token (Authorization: Bearer, or as a basic-auth password) on the page and API, as the admin API does")
	fs.StringVar(&auth.User, "admin-user", "", "with --serve, require basic authentication with this user (and --admin-password)")
	fs.StringVar(&auth.Password, "admin-password", "", "password for --admin-user")
	tlsf := tlsconf.Register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	tc, err := loadTLS(env, "search", tlsf)
	if err != nil {
		return err
	}
	if *from < 0 || *size < 1 {
		fmt.Fprintln(env.stderr, "trawl search: --from must be >= 0 and --size >= 1")
		return errUsage
	}
	query := strings.Join(fs.Args(), " ")
	if *serve == "" && strings.TrimSpace(query) == "" && *site == "" && *typ == "" {
		fmt.Fprintln(env.stderr, "trawl search: no query (or use --serve ADDR)")
		return errUsage
	}
	var src index.Searcher
	var ho index.HandlerOptions // the click log: with --serve over --data's index
	if *ns != "" {
		// Every indexer partition bound in the name server, merged.
		cl := &wire.Client{Timeout: 30 * time.Second, Dialer: tc.Dialer(nil)}
		defer cl.Close()
		// --data's click relevance (and log, with --serve) applies too.
		src = indexer.Searcher{Registry: nameserver.NewClient(*ns, cl), Client: cl, Clicks: clicks.NewRelevance(clicks.RelevancePath(*data))}
		if *serve != "" && *logClicks && cli.Given(fs, "data") {
			if ho.Clicks, err = clicks.OpenLog(clicks.LogDir(*data), nil); err != nil {
				return err
			}
		}
	} else if opensearch.IsURL(*indexDir) {
		c, err := opensearch.New(*indexDir, opensearch.Options{})
		if err != nil {
			return err
		}
		defer c.Close()
		src = c
	} else {
		dir := *indexDir
		if dir == "" {
			var err error
			if dir, err = crawlIndexDir(*data); err != nil {
				return err
			}
		}
		opts := index.Options{ReadOnly: true}
		clickData := ""
		if *indexDir == "" && dir == filepath.Join(*data, "index") {
			clickData = *data
			opts.Clicks = clicks.NewRelevance(clicks.RelevancePath(clickData))
		}
		idx, err := index.Open(dir, opts)
		if err != nil {
			return err
		}
		defer idx.Close()
		if *serve != "" && clickData != "" && *logClicks {
			if ho.Clicks, err = clicks.OpenLog(clicks.LogDir(clickData), nil); err != nil {
				return err
			}
		}
		src = idx
	}
	if *serve != "" {
		return serveSearch(ctx, env, src, *serve, auth, ho, tc)
	}
	res, err := src.Search(ctx, query, index.SearchOptions{Collection: *collection, Site: *site, Type: *typ, From: *from, Size: *size})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.WriteText(env.stdout)
}

func serveSearch(ctx context.Context, env *cmdEnv, idx index.Searcher, addr string, auth admin.Auth, ho index.HandlerOptions, tc *tlsconf.Config) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.stdout, "serving search on %s://%s/search\n", tc.Scheme(), ln.Addr())
	return admin.Serve(ctx, tc.Listener(ln, nil), auth.Wrap(index.NewHandler(idx, ho)))
}
