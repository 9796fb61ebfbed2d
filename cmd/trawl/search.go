package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/index"
)

func init() {
	register(&command{name: "search", summary: "search the full-text index of crawled documents", run: runSearch})
}

func runSearch(ctx context.Context, env *cmdEnv, args []string) error {
	fs := newFlagSet(env, "search", "search [flags] QUERY...",
		"Search the index under --data and print the results, best first: for each, its URL, title and a\n"+
			"snippet with the query's words between *stars*. The query language: words (all must match),\n"+
			"\"quoted phrases\", -word or -\"phrase\" to exclude, site:example.com (the host or its subdomains),\n"+
			"type:html|pdf|text|office|xml|other or type:<MIME type>; a - before site: or type: excludes.\n"+
			"With --serve ADDR, serve the search page (/search) and the JSON API (/api/search?q=...) instead.")
	data := fs.String("data", "./data", "data directory (the index is in DIR/index)")
	indexDir := fs.String("index", "", "index directory (default: DIR/index of --data)")
	collection := fs.String("collection", "", "search only this content collection")
	site := fs.String("site", "", "keep only documents from this site (as site:)")
	typ := fs.String("type", "", "keep only documents of this type (as type:)")
	asJSON := fs.Bool("json", false, "print the results as JSON")
	from := fs.Int("from", 0, "skip this many results")
	size := fs.Int("size", 10, fmt.Sprintf("results per page (at most %d)", index.MaxPageSize))
	serve := fs.String("serve", "", "serve the search page and API on this address (host:port) until interrupted")
	var auth admin.Auth
	fs.StringVar(&auth.Token, "admin-token", "", "with --serve, require this token (Authorization: Bearer, or as a basic-auth password) on the page and API, as the admin API does")
	fs.StringVar(&auth.User, "admin-user", "", "with --serve, require basic authentication with this user (and --admin-password)")
	fs.StringVar(&auth.Password, "admin-password", "", "password for --admin-user")
	if err := parseFlags(fs, args); err != nil {
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
	dir := *indexDir
	if dir == "" {
		dir = filepath.Join(*data, "index")
	}
	idx, err := index.Open(dir, index.Options{ReadOnly: *serve == ""})
	if err != nil {
		return err
	}
	defer idx.Close()

	if *serve != "" {
		return serveSearch(ctx, env, idx, *serve, auth)
	}
	res, err := idx.Search(ctx, query, index.SearchOptions{Collection: *collection, Site: *site, Type: *typ, From: *from, Size: *size})
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(env.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	if len(res.Hits) == 0 {
		fmt.Fprintf(env.stdout, "no results for %s (%d documents matched)\n", res.Parsed, res.Total)
		return nil
	}
	for i, h := range res.Hits {
		title := h.Title
		if title == "" {
			title = "(no title)"
		}
		fmt.Fprintf(env.stdout, "%d. %s\n   %s\n", res.From+i+1, h.URL, oneLine(title))
		if s := oneLine(index.PlainSnippet(h.Snippet, "*", "*")); s != "" {
			fmt.Fprintf(env.stdout, "   %s\n", s)
		}
	}
	fmt.Fprintf(env.stdout, "\nresults %d-%d of %d for %s\n", res.From+1, res.From+len(res.Hits), res.Total, res.Parsed)
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func serveSearch(ctx context.Context, env *cmdEnv, idx *index.Index, addr string, auth admin.Auth) error {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return err
	}
	srv := &http.Server{Handler: auth.Wrap(index.Handler(idx)), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(env.stdout, "serving search on http://%s/search\n", ln.Addr())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}
