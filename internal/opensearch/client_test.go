package opensearch

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
)

func TestParseURL(t *testing.T) {
	for _, tc := range []struct {
		in, err string
		want    Config
	}{
		{in: "opensearch://127.0.0.1:9200/crawl", want: Config{Addresses: []string{"http://127.0.0.1:9200"}, Index: "crawl"}},
		{in: "opensearchs://a.example:443,b.example:9200/web-2026", want: Config{Addresses: []string{"https://a.example:443", "https://b.example:9200"}, Index: "web-2026"}},
		{in: "opensearch://[::1]:9200/x", want: Config{Addresses: []string{"http://[::1]:9200"}, Index: "x"}},
		{in: "http://127.0.0.1:9200/crawl", err: "does not start with"},
		{in: "opensearch://127.0.0.1:9200", err: "want opensearch://HOST:PORT/INDEX"},
		{in: "opensearch://127.0.0.1/crawl", err: "bad node address"},
		{in: "opensearch://127.0.0.1:0/crawl", err: "bad port"},
		{in: "opensearch://127.0.0.1:9200/Crawl", err: "not lower case"},
		{in: "opensearch://127.0.0.1:9200/_crawl", err: "starts with"},
		{in: "opensearch://127.0.0.1:9200/a/b", err: "holds one of"},
		{in: "opensearch://127.0.0.1:9200/", err: "no index name"},
	} {
		got, err := ParseURL(tc.in)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("ParseURL(%q) = %v, %v; want error with %q", tc.in, got, err, tc.err)
			}
			continue
		}
		if err != nil || strings.Join(got.Addresses, " ") != strings.Join(tc.want.Addresses, " ") || got.Index != tc.want.Index {
			t.Errorf("ParseURL(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
}

func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"opensearch://127.0.0.1:9200/crawl", "opensearchs://a:1,b:2/x", "opensearch://:/", "opensearch://[::1]:9200/x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseURL(s)
		if err == nil && (len(c.Addresses) == 0 || c.Index == "") {
			t.Fatalf("ParseURL(%q) = %+v without an error", s, c)
		}
	})
}

func TestDocID(t *testing.T) {
	if id := DocID("c", "http://a/"); id != "c\x1fhttp://a/" {
		t.Errorf("DocID = %q", id)
	}
	long := "http://a/" + strings.Repeat("x", 600)
	if id := DocID("c", long); !strings.HasPrefix(id, "sha256:") || len(id) != 7+64 || id == DocID("d", long) {
		t.Errorf("DocID of a long URL = %q", id)
	}
}

// TestCluster checks that both nodes of the test cluster are in it.
func TestCluster(t *testing.T) {
	start := time.Now()
	c := clusterFor(t)
	var nodes []struct {
		Name string `json:"name"`
		Role string `json:"node.role"`
	}
	c.must(t, "GET", "/_cat/nodes?format=json&h=name,node.role", nil, &nodes)
	if len(nodes) != 2 {
		t.Fatalf("nodes %+v, want n1 and n2", nodes)
	}
	t.Logf("nodes %+v (%v)", nodes, time.Since(start))
}

// TestSearchPage feeds 70 pages and queries them through the search
// page's JSON API (index.Handler over the Client): phrases, site:, type:,
// exclusions, facets and highlighting.
func TestSearchPage(t *testing.T) {
	c := clusterFor(t)
	const idx = "searchpage"
	defer c.call(context.Background(), 0, "DELETE", "/"+idx, nil, nil)
	r := newFeedRig(t, c.url(idx))
	r.feedRange(t, feed.Add, 0, 70)
	r.waitDrained(t, time.Minute)
	if err := r.c.Refresh(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := r.c.Count(context.Background()); err != nil || n != 70 {
		t.Fatalf("Count = %d, %v; want 70", n, err)
	}
	srv := httptest.NewServer(index.Handler(r.c))
	defer srv.Close()
	search := func(q string, extra url.Values) index.Results {
		t.Helper()
		v := url.Values{"q": {q}}
		for k, vs := range extra {
			v[k] = vs
		}
		resp, err := http.Get(srv.URL + "/api/search?" + v.Encode())
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var res index.Results
		if err := json.NewDecoder(resp.Body).Decode(&res); err != nil || resp.StatusCode != 200 {
			t.Fatalf("search %q: %d %v", q, resp.StatusCode, err)
		}
		return res
	}
	res := search(`"lantern harbour 21"`, nil)
	if len(res.Hits) == 0 || res.Hits[0].URL != pageURI(3) || !strings.Contains(res.Hits[0].Snippet, "<mark>") {
		t.Errorf("phrase: %+v", res.Hits)
	}
	if res.Total != 1 {
		t.Errorf("phrase: %d hits, want 1", res.Total)
	}
	res = search("lantern site:site3.farm.test", url.Values{"size": {"100"}})
	if res.Total != 10 {
		t.Errorf("site:site3.farm.test: %d hits, want 10", res.Total)
	}
	for _, h := range res.Hits {
		if h.Site != "site3.farm.test" {
			t.Errorf("site: hit %s", h.URL)
		}
	}
	if res = search("lantern -site:site3.farm.test -harbour", nil); res.Total != 0 {
		t.Errorf("exclusion: %d hits", res.Total)
	}
	if res = search("lantern -site:site3.farm.test", nil); res.Total != 60 {
		t.Errorf("-site: %d hits, want 60", res.Total)
	}
	if res = search("lantern", url.Values{"type": {"pdf"}}); res.Total != 0 {
		t.Errorf("type pdf: %d hits", res.Total)
	}
	res = search("type:html", nil)
	if res.Total != 70 || len(res.Sites) != 7 || len(res.Types) != 1 || res.Types[0] != (index.Facet{Value: "html", Count: 70}) {
		t.Errorf("type:html: total %d, sites %v, types %v", res.Total, res.Sites, res.Types)
	}
	if res = search("type:html", url.Values{"collection": {"other"}}); res.Total != 0 {
		t.Errorf("other collection: %d hits", res.Total)
	}
}
