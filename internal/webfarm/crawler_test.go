package webfarm

import (
	"bytes"
	"encoding/xml"
	"errors"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/temoto/robotstxt"
	"golang.org/x/net/html"
)

// refCrawler is an independent implementation of the Expect contract: it
// crawls the farm over real HTTP, parses what it gets with
// golang.org/x/net/html and github.com/temoto/robotstxt, and records the
// URLs it requests. Only the crawl parameters are shared with Expect.
type refCrawler struct {
	t       *testing.T
	c       Crawl
	f       *Farm
	client  *http.Client
	fetched map[string]bool
	best    map[string]state
	queue   []item
	robots  map[string]*robotstxt.RobotsData
	inc     []string // include_domains suffixes
	exclude []*regexp.Regexp
}

func newRefCrawler(t *testing.T, f *Farm, c Crawl) *refCrawler {
	r := &refCrawler{
		t: t, c: c, f: f, client: farmClient(t, f, 2*time.Second),
		fetched: map[string]bool{}, best: map[string]state{}, robots: map[string]*robotstxt.RobotsData{},
		inc: c.IncludeDomains.Suffix,
	}
	for _, e := range c.ExcludeURIs.Regexp {
		r.exclude = append(r.exclude, regexp.MustCompile(e))
	}
	return r
}

func (r *refCrawler) norm(base *url.URL, ref string) (string, bool) {
	ref = strings.TrimSpace(ref)
	u, err := base.Parse(ref)
	if err != nil || u.Scheme != "http" {
		return "", false
	}
	u.Fragment = ""
	u.Host = strings.ToLower(u.Host)
	if u.Path == "" {
		u.Path = "/"
	}
	s := u.String()
	if r.c.SortQueryParams {
		s = SortQuery(s)
	}
	return s, true
}

func (r *refCrawler) push(u string, s state) {
	if old, ok := r.best[u]; ok {
		if old.depth <= s.depth && old.redirs <= s.redirs {
			return
		}
		s = state{min(old.depth, s.depth), min(old.redirs, s.redirs)}
	}
	r.best[u] = s
	r.queue = append(r.queue, item{u, s})
}

func (r *refCrawler) get(u string) (*http.Response, []byte, error) {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return nil, nil, err
	}
	req.Header.Set("User-Agent", r.c.UserAgent+"/1.0 (reference crawler)")
	r.fetched[u] = true
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	var rd io.Reader = resp.Body
	if r.c.CutOff > 0 {
		rd = io.LimitReader(resp.Body, r.c.CutOff+1)
	}
	body, err := io.ReadAll(rd)
	return resp, body, err
}

func (r *refCrawler) inScope(u *url.URL, s state) bool {
	if r.c.MaxDepth >= 0 && s.depth > r.c.MaxDepth || s.redirs > r.c.MaxRedirects {
		return false
	}
	host := u.Hostname()
	if _, ok := r.f.Lookup(host); !ok || u.Port() != strconv.Itoa(r.f.Port()) {
		return false
	}
	if len(r.inc) > 0 {
		ok := false
		for _, sfx := range r.inc {
			ok = ok || strings.HasSuffix(host, sfx)
		}
		if !ok {
			return false
		}
	}
	for _, re := range r.exclude {
		if re.MatchString(u.String()) {
			return false
		}
	}
	for _, x := range r.c.ExcludeExts {
		if strings.HasSuffix(strings.ToLower(u.Path), strings.ToLower(x)) {
			return false
		}
	}
	if r.c.MaxURIRecursion >= 0 {
		// Independent check: count repeated runs of segments naively.
		segs := strings.FieldsFunc(u.Path, func(c rune) bool { return c == '/' })
		for l := 1; l <= len(segs); l++ {
			for i := 0; i+l <= len(segs); i++ {
				n := 1
				for j := i + l; j+l <= len(segs) && strings.Join(segs[j:j+l], "/") == strings.Join(segs[i:i+l], "/"); j += l {
					n++
				}
				if n > r.c.MaxURIRecursion {
					return false
				}
			}
		}
	}
	return true
}

func (r *refCrawler) robotsFor(u *url.URL) *robotstxt.RobotsData {
	if rd, ok := r.robots[u.Host]; ok {
		return rd
	}
	ru := "http://" + u.Host + "/robots.txt"
	resp, body, err := r.get(ru)
	var rd *robotstxt.RobotsData
	if err == nil {
		rd, err = robotstxt.FromStatusAndBytes(resp.StatusCode, body)
	}
	if err != nil {
		r.t.Fatalf("robots %s: %v", ru, err)
	}
	r.robots[u.Host] = rd
	if r.c.UseSitemaps {
		for _, sm := range rd.Sitemaps {
			su, err := url.Parse(sm)
			if err != nil || su.Host != u.Host || !r.inScope(su, state{}) {
				continue
			}
			if r.c.Robots && !rd.TestAgent(su.RequestURI(), r.c.UserAgent) {
				continue
			}
			resp, body, err := r.get(sm)
			if err != nil || resp.StatusCode != 200 {
				continue
			}
			var set struct {
				URLs []struct {
					Loc string `xml:"loc"`
				} `xml:"url"`
			}
			if err := xml.Unmarshal(body, &set); err != nil {
				r.t.Fatalf("sitemap %s: %v", sm, err)
			}
			for _, e := range set.URLs {
				if n, ok := r.norm(su, e.Loc); ok {
					r.push(n, state{})
				}
			}
		}
	}
	return rd
}

var (
	cssURL     = regexp.MustCompile(`url\(\s*["']?([^"')]+)["']?\s*\)`)
	commentURL = regexp.MustCompile(`https?://[^\s"'<>]+`)
	refreshURL = regexp.MustCompile(`(?i)^\s*(\d+)\s*;\s*url\s*=\s*['"]?([^'"]+)`)
)

type refLink struct {
	kind  LinkKind
	url   string
	delay int
}

// extract parses HTML the way a link extractor does.
func (r *refCrawler) extract(page *url.URL, body []byte) (links []refLink, nofollow bool) {
	base := page
	z := html.NewTokenizer(bytes.NewReader(body))
	inStyle := false
	add := func(kind LinkKind, ref string, delay int) {
		if n, ok := r.norm(base, ref); ok {
			links = append(links, refLink{kind, n, delay})
		}
	}
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return links, nofollow
		case html.CommentToken:
			for _, m := range commentURL.FindAllString(string(z.Text()), -1) {
				add(KindComment, m, 0)
			}
		case html.TextToken:
			if inStyle {
				for _, m := range cssURL.FindAllStringSubmatch(string(z.Text()), -1) {
					add(KindStyle, m[1], 0)
				}
			}
		case html.EndTagToken:
			if name, _ := z.TagName(); string(name) == "style" {
				inStyle = false
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			attrs := map[string]string{}
			for hasAttr {
				var k, v []byte
				k, v, hasAttr = z.TagAttr()
				if _, dup := attrs[string(k)]; !dup {
					attrs[string(k)] = string(v)
				}
			}
			switch string(name) {
			case "base":
				if b, err := page.Parse(attrs["href"]); err == nil && base == page {
					base = b
				}
			case "a":
				add(KindA, attrs["href"], 0)
			case "area":
				add(KindArea, attrs["href"], 0)
			case "link":
				add(KindLink, attrs["href"], 0)
			case "img":
				add(KindImg, attrs["src"], 0)
			case "frame", "iframe":
				add(KindFrame, attrs["src"], 0)
			case "script":
				if s, ok := attrs["src"]; ok {
					add(KindScript, s, 0)
				}
			case "embed":
				add(KindEmbed, attrs["src"], 0)
			case "object":
				add(KindObject, attrs["data"], 0)
			case "style":
				inStyle = true
			case "meta":
				if strings.EqualFold(attrs["http-equiv"], "refresh") {
					if m := refreshURL.FindStringSubmatch(attrs["content"]); m != nil {
						d, _ := strconv.Atoi(m[1])
						add(KindMetaRefresh, m[2], d)
					}
				}
				if strings.EqualFold(attrs["name"], "robots") {
					for _, tok := range strings.Split(strings.ToLower(attrs["content"]), ",") {
						if t := strings.TrimSpace(tok); t == "nofollow" || t == "none" {
							nofollow = true
						}
					}
				}
			}
		}
	}
}

func (r *refCrawler) crawl() []string {
	for _, s := range r.c.StartURLs {
		r.push(s, state{})
	}
	for len(r.queue) > 0 {
		it := r.queue[0]
		r.queue = r.queue[1:]
		if r.best[it.url] != it.state {
			continue
		}
		u, err := url.Parse(it.url)
		if err != nil {
			r.t.Fatal(err)
		}
		if !r.inScope(u, it.state) {
			continue
		}
		var rd *robotstxt.RobotsData
		if r.c.Robots || r.c.UseSitemaps {
			rd = r.robotsFor(u)
		}
		if r.c.Robots && !rd.TestAgent(u.RequestURI(), r.c.UserAgent) {
			continue
		}
		resp, body, err := r.get(it.url)
		if err != nil {
			var ne interface{ Timeout() bool }
			if errors.As(err, &ne) && ne.Timeout() {
				continue // the stalled page
			}
			r.t.Fatalf("GET %s: %v", it.url, err)
		}
		if resp.StatusCode >= 300 && resp.StatusCode < 400 {
			if n, ok := r.norm(u, resp.Header.Get("Location")); ok {
				r.follow(u, n, it.state, true)
			}
			continue
		}
		ct := resp.Header.Get("Content-Type")
		if resp.StatusCode != 200 || !strings.HasPrefix(ct, "text/html") {
			continue
		}
		if r.c.CutOff > 0 && int64(len(body)) > r.c.CutOff {
			if !r.c.Truncate {
				continue
			}
			body = body[:r.c.CutOff]
		}
		links, nofollow := r.extract(u, body)
		redirected := false
		for _, l := range links {
			if r.c.HTMLRedirIsRedir && l.kind == KindMetaRefresh && l.delay <= r.c.HTMLRedirThreshold {
				r.follow(u, l.url, it.state, true)
				redirected = true
				break
			}
		}
		if redirected || (r.c.CheckMetaRobots && nofollow) {
			continue
		}
		for _, l := range links {
			if r.c.LinkKinds.Has(l.kind) {
				r.follow(u, l.url, it.state, false)
			}
		}
	}
	out := make([]string, 0, len(r.fetched))
	for u := range r.fetched {
		out = append(out, u)
	}
	sort.Strings(out)
	return out
}

func (r *refCrawler) follow(from *url.URL, to string, s state, redirect bool) {
	tu, err := url.Parse(to)
	if err != nil {
		return
	}
	other := tu.Host != from.Host
	if redirect {
		if other && !r.c.FwdRedirects {
			return
		}
		r.push(to, state{s.depth, s.redirs + 1})
		return
	}
	if other && !r.c.FwdLinks {
		return
	}
	ns := state{depth: s.depth + 1}
	if other && r.c.ResetLevel {
		ns.depth = 0
	}
	r.push(to, ns)
}

func TestExpectMatchesReferenceCrawl(t *testing.T) {
	f := startFarm(t, smallConfig(7))
	def := f.DefaultCrawl()

	deep := f.DefaultCrawl()
	deep.MaxDepth = 2
	deep.ResetLevel = false
	deep.LinkKinds = deep.LinkKinds.With(KindImg, true)
	deep.ExcludeExts = nil
	deep.UseSitemaps = true
	deep.SortQueryParams = true
	deep.HTMLRedirIsRedir = false
	deep.CutOff = 100 << 10
	deep.MaxRedirects = 3

	bare := f.DefaultCrawl()
	bare.Robots = false
	bare.CheckMetaRobots = false
	bare.FwdLinks = false
	bare.FwdRedirects = true
	bare.CutOff = 100 << 10
	bare.Truncate = false
	bare.MaxURIRecursion = 2
	bare.LinkKinds = 0
	bare.LinkKinds = bare.LinkKinds.With(KindA, true).With(KindMetaRefresh, true)
	bare.StartURLs = bare.StartURLs[:3]

	sitemapsOnly := f.DefaultCrawl()
	sitemapsOnly.UseSitemaps = true
	sitemapsOnly.MaxDepth = 0
	sitemapsOnly.MaxRedirects = 0
	sitemapsOnly.HTMLRedirThreshold = 20

	for _, tc := range []struct {
		name string
		c    Crawl
	}{{"default", def}, {"depth2-sitemaps-img", deep}, {"no-robots-no-fwdlinks", bare}, {"sitemaps-depth0", sitemapsOnly}} {
		t.Run(tc.name, func(t *testing.T) {
			want, err := f.Expect(tc.c)
			if err != nil {
				t.Fatal(err)
			}
			got := newRefCrawler(t, f, tc.c).crawl()
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Expect vs reference crawl over HTTP (-expect +crawl):\n%s", diff)
			}
			if len(want) < 20 {
				t.Errorf("only %d URLs expected", len(want))
			}
			t.Logf("%d URLs", len(want))
		})
	}
}
