package index

import (
	"encoding/json"
	"html/template"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/clicks"
)

// Handler serves the search API and the search page over idx (the
// embedded Index, another Searcher (internal/opensearch), or the indexer
// partitions of a distributed feeding chain merged,
// internal/distrib/indexer.Searcher):
//
//	GET /api/search?q=QUERY&collection=C&site=S&type=T&from=N&size=N
//	    JSON Results (400 on a bad number, 500 on an index error)
//	GET /search?q=...   (same parameters) an HTML page: a query box, the
//	    results with titles, URLs and highlighted snippets, site and type
//	    filters and paging links
//	GET /               redirects to /search
//	GET /api/doc?url=U&collection=C
//	    when idx is a Looker: JSON DocInfo, the document of URL U in
//	    content collection C as stored (without its body) and the last
//	    version applied to it, also after a remove (found false); 400
//	    without url, 500 on an index error
//
// The handler is meant to be mounted at the root of a server (trawl run
// mounts it next to its other pages). It logs nothing; NewHandler with a
// click log does.
func Handler(idx Searcher) http.Handler { return NewHandler(idx, HandlerOptions{}) }

// HandlerOptions configure NewHandler.
type HandlerOptions struct {
	// Clicks, if set, logs every search (the query as the page or the API
	// understood it: the site and type fields as filters) and makes every
	// result link go through
	//
	//	GET /click?q=QUERYID&u=URL&pos=N&s=SIGNATURE
	//
	// which logs the click and redirects (302) to URL. The signature ties
	// the URL to the query ID, so the redirect is not open: a link with a
	// bad signature (or from before a restart) gets a page with a plain
	// link to URL instead, and no click is logged. Results carry the
	// query's ID (query_id) and each hit its redirect (click_url).
	Clicks *clicks.Log
	// Logger reports click logging errors (nil: none).
	Logger *slog.Logger
}

// NewHandler is Handler with options.
func NewHandler(idx Searcher, ho HandlerOptions) http.Handler {
	mux := http.NewServeMux()
	search := func(r *http.Request, q string, opts SearchOptions) (*Results, error) {
		res, err := idx.Search(r.Context(), q, opts)
		if err != nil || ho.Clicks == nil || strings.TrimSpace(q) == "" {
			return res, err
		}
		id, lerr := ho.Clicks.Query(ClickQuery(q, opts))
		if lerr != nil {
			if ho.Logger != nil {
				ho.Logger.Warn("logging a query", "err", lerr)
			}
			return res, nil
		}
		res.QueryID = id
		for i := range res.Hits {
			u := res.Hits[i].URL
			res.Hits[i].ClickURL = "/click?" + url.Values{"q": {id}, "u": {u}, "pos": {strconv.Itoa(res.From + i + 1)},
				"s": {ho.Clicks.Sign(id, u)}}.Encode()
		}
		return res, nil
	}
	mux.HandleFunc("GET /api/search", func(w http.ResponseWriter, r *http.Request) {
		q, opts, err := searchParams(r.URL.Query())
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		if err != nil {
			w.WriteHeader(http.StatusBadRequest)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		opts.Facets = true
		res, err := search(r, q, opts)
		if err != nil {
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
			return
		}
		_ = json.NewEncoder(w).Encode(res)
	})
	if l, ok := idx.(Looker); ok {
		mux.HandleFunc("GET /api/doc", func(w http.ResponseWriter, r *http.Request) { serveDoc(w, r, l) })
	}
	mux.HandleFunc("GET /search", func(w http.ResponseWriter, r *http.Request) {
		values := r.URL.Query()
		q, opts, err := searchParams(values)
		page := pageData{Query: q, Collection: opts.Collection, Site: opts.Site, Type: opts.Type, Types: pageTypes}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		if err != nil {
			page.Error = err.Error()
			w.WriteHeader(http.StatusBadRequest)
		} else if strings.TrimSpace(q) != "" || opts.Site != "" || opts.Type != "" {
			opts.Facets = true
			res, err := search(r, q, opts)
			if err != nil {
				page.Error = err.Error()
				w.WriteHeader(http.StatusInternalServerError)
			} else {
				page.fill(res, values)
			}
		}
		_ = pageTemplate.Execute(w, &page)
	})
	if ho.Clicks != nil {
		mux.HandleFunc("GET /click", func(w http.ResponseWriter, r *http.Request) {
			v := r.URL.Query()
			id, u := v.Get("q"), v.Get("u")
			pos, _ := strconv.Atoi(v.Get("pos"))
			pu, err := url.Parse(u)
			if err != nil || (pu.Scheme != "http" && pu.Scheme != "https") {
				http.Error(w, "index: bad click URL", http.StatusBadRequest)
				return
			}
			if !ho.Clicks.Verify(id, u, v.Get("s")) {
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				_ = continueTemplate.Execute(w, u)
				return
			}
			if err := ho.Clicks.Click(id, u, pos); err != nil && ho.Logger != nil {
				ho.Logger.Warn("logging a click", "err", err)
			}
			http.Redirect(w, r, u, http.StatusFound)
		})
	}
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/search", http.StatusFound)
	})
	return mux
}

var continueTemplate = template.Must(template.New("continue").Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>trawl search</title></head>
<body><p>Continue to <a href="{{.}}">{{.}}</a></p></body></html>
`))

type paramError string

func (e paramError) Error() string { return string(e) }

func searchParams(v url.Values) (string, SearchOptions, error) {
	o := SearchOptions{Collection: v.Get("collection"), Site: v.Get("site"), Type: v.Get("type")}
	for _, p := range []struct {
		name string
		dst  *int
	}{{"from", &o.From}, {"size", &o.Size}} {
		s := v.Get(p.name)
		if s == "" {
			continue
		}
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return "", o, paramError("index: bad " + p.name + " " + strconv.Quote(s))
		}
		*p.dst = n
	}
	return v.Get("q"), o, nil
}

// pageTypes are the choices of the type filter on the page.
var pageTypes = []string{"html", "pdf", "text", "office", "xml", "other"}

type pageLink struct {
	Label string
	Href  string
	On    bool
}

type pageData struct {
	Query, Collection, Site, Type string
	Types                         []string
	Error                         string
	Searched                      bool
	Res                           *Results
	First, Last                   int
	Prev, Next                    string
	Pages                         []pageLink
	SiteLinks, TypeLinks          []pageLink
}

func (p *pageData) fill(res *Results, v url.Values) {
	p.Searched = true
	p.Res = res
	p.First = res.From + 1
	p.Last = res.From + len(res.Hits)
	link := func(set map[string]string) string {
		u := url.Values{}
		for k, vals := range v {
			u[k] = append([]string(nil), vals...)
		}
		for k, val := range set {
			if val == "" {
				u.Del(k)
			} else {
				u.Set(k, val)
			}
		}
		return "/search?" + u.Encode()
	}
	size := res.Size
	if res.From > 0 {
		p.Prev = link(map[string]string{"from": strconv.Itoa(max(res.From-size, 0))})
	}
	total := min(int(min(res.Total, uint64(MaxFrom+size))), MaxFrom+size)
	if res.From+size < total {
		p.Next = link(map[string]string{"from": strconv.Itoa(res.From + size)})
	}
	cur := res.From / size
	for i := max(cur-4, 0); i*size < total && i <= cur+5; i++ {
		p.Pages = append(p.Pages, pageLink{Label: strconv.Itoa(i + 1), Href: link(map[string]string{"from": strconv.Itoa(i * size)}), On: i == cur})
	}
	for _, f := range res.Sites {
		p.SiteLinks = append(p.SiteLinks, pageLink{Label: f.Value + " (" + strconv.Itoa(f.Count) + ")", Href: link(map[string]string{"site": f.Value, "from": ""}), On: f.Value == p.Site})
	}
	for _, f := range res.Types {
		p.TypeLinks = append(p.TypeLinks, pageLink{Label: f.Value + " (" + strconv.Itoa(f.Count) + ")", Href: link(map[string]string{"type": f.Value, "from": ""}), On: f.Value == p.Type})
	}
}

var pageTemplate = template.Must(template.New("search").Funcs(template.FuncMap{
	"safe": func(s string) template.HTML { return template.HTML(s) }, // already escaped by the highlighter
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{if .Query}}{{.Query}} - {{end}}trawl search</title>
<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; max-width: 60em; padding: 0 1em; color: #222; }
form { display: flex; gap: .5em; flex-wrap: wrap; margin-bottom: 1em; }
input[name=q] { flex: 1 1 20em; font-size: 1.1em; padding: .3em; }
.hit { margin: 1.2em 0; }
.hit a.title { font-size: 1.15em; color: #1a0dab; text-decoration: none; }
.hit .url { color: #006621; font-size: .9em; word-break: break-all; }
.hit .snippet { margin-top: .2em; line-height: 1.4; }
mark { background: #fff3a0; font-weight: bold; }
.facets { font-size: .9em; margin: .5em 0; }
.facets a { margin-right: .8em; }
.facets a.on, .pages a.on { font-weight: bold; }
.pages a { margin: 0 .3em; }
.error { color: #b00; }
.meta { color: #666; font-size: .9em; }
</style>
</head>
<body>
<form id="search" action="/search" method="get" role="search">
<input type="search" name="q" value="{{.Query}}" placeholder="words, &quot;a phrase&quot;, a OR b, -exclude, site:example.com, type:pdf" autofocus>
<input type="text" name="site" value="{{.Site}}" placeholder="site" size="16">
<select name="type"><option value="">any type</option>{{range .Types}}<option value="{{.}}"{{if eq . $.Type}} selected{{end}}>{{.}}</option>{{end}}</select>
{{if .Collection}}<input type="hidden" name="collection" value="{{.Collection}}">{{end}}
<button type="submit">Search</button>
</form>
{{if .Error}}<p class="error">{{.Error}}</p>{{end}}
{{if .Searched}}
<p class="meta" id="count">{{if .Res.Hits}}Results {{.First}}-{{.Last}} of {{.Res.Total}}{{else}}No results{{end}} for <b>{{.Res.Parsed}}</b></p>
{{if .SiteLinks}}<div class="facets" id="sites">Sites: {{range .SiteLinks}}<a href="{{.Href}}"{{if .On}} class="on"{{end}}>{{.Label}}</a>{{end}}</div>{{end}}
{{if .TypeLinks}}<div class="facets" id="types">Types: {{range .TypeLinks}}<a href="{{.Href}}"{{if .On}} class="on"{{end}}>{{.Label}}</a>{{end}}</div>{{end}}
<ol class="results" id="results" start="{{.First}}">
{{range .Res.Hits}}<li class="hit">
<a class="title" href="{{if .ClickURL}}{{.ClickURL}}{{else}}{{.URL}}{{end}}">{{if .Title}}{{safe .TitleHTML}}{{else}}{{.URL}}{{end}}</a>
<div class="url">{{.URL}}</div>
<div class="snippet">{{safe .Snippet}}</div>
</li>
{{end}}</ol>
{{if or .Prev .Next}}<nav class="pages" id="pages">
{{if .Prev}}<a href="{{.Prev}}" rel="prev">« Previous</a>{{end}}
{{range .Pages}}<a href="{{.Href}}"{{if .On}} class="on"{{end}}>{{.Label}}</a>{{end}}
{{if .Next}}<a href="{{.Next}}" rel="next">Next »</a>{{end}}
</nav>{{end}}
{{end}}
</body>
</html>
`))

// DocInfo is the answer of GET /api/doc: what Lookup returns, but the
// body.
type DocInfo struct {
	URL        string    `json:"url"`
	Collection string    `json:"collection"`
	Found      bool      `json:"found"`
	Version    uint64    `json:"version"`
	Title      string    `json:"title,omitempty"`
	Site       string    `json:"site,omitempty"`
	MIME       string    `json:"mime,omitempty"`
	Type       string    `json:"type,omitempty"`
	Modified   time.Time `json:"modified,omitzero"`
	Rank       float64   `json:"rank,omitempty"`
}

func serveDoc(w http.ResponseWriter, r *http.Request, l Looker) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	v := r.URL.Query()
	u, coll := v.Get("url"), v.Get("collection")
	if u == "" {
		w.WriteHeader(http.StatusBadRequest)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": "no url"})
		return
	}
	st, err := l.Lookup(r.Context(), coll, u)
	if err != nil {
		w.WriteHeader(http.StatusInternalServerError)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": err.Error()})
		return
	}
	_ = json.NewEncoder(w).Encode(DocInfo{URL: u, Collection: coll, Found: st.Found, Version: st.Version, Title: st.Title,
		Site: st.Site, MIME: st.MIME, Type: st.Type, Modified: st.Modified, Rank: st.Rank})
}
