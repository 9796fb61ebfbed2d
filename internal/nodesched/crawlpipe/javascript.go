package crawlpipe

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"runtime"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/render"
)

// JavaScript is use_javascript: HTML pages are rendered in a headless
// Chromium (internal/render) and their links extracted from the DOM the
// scripts leave. With javascript_keep_html the document stored and fed is
// the rendered DOM, else the HTML as fetched (MS-FSCCFG 2.2.3).
//
// The browser never goes to the network itself: it is given the page the
// crawl fetched, and every request its scripts make (scripts, style
// sheets, XHR, frames) is answered by the crawl: checked against
// robots.txt (robots=yes), paced by javascript_delay (default: delay),
// fetched by Fetcher (the collection's resolver, cookies, proxies,
// credentials and client certificate), or refused. javascript_delay is
// also waited after the load event, for late scripts.
type JavaScript struct {
	Pool     *render.Pool
	Fetcher  *fetch.Fetcher
	Delay    time.Duration // after the load event
	Pace     time.Duration // between two requests of one render
	KeepHTML bool
}

// JSMaxTabs bounds the browser tabs of one collection.
const JSMaxTabs = 4

// errRobotsDisallowed refuses a browser request robots.txt disallows.
var errRobotsDisallowed = errors.New("nodesched: robots.txt disallows it")

func compileJavaScript(s *Settings, eff *config.Effective) error {
	if !eff.UseJavascript() {
		return nil
	}
	js := &JavaScript{KeepHTML: eff.JavascriptKeepHTML(), Pace: s.Delay}
	if d, ok := eff.JavascriptDelay(); ok && d >= 0 {
		js.Delay = time.Duration(d * float64(time.Second))
		js.Pace = js.Delay
	}
	fo := s.FetchOptions
	fo.AllowedTypes = nil // scripts, style sheets, images, JSON
	fo.ExcludeHeaders = nil
	fo.MaxRedirects = 5 // the browser expects redirects followed
	fo.CheckRedirect = nil
	f, err := fetch.New(fo)
	if err != nil {
		return fmt.Errorf("javascript fetcher: %w", err)
	}
	js.Fetcher = f
	timeout := s.FetchOptions.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	js.Pool = &render.Pool{MaxTabs: JSMaxTabs, Timeout: timeout + js.Delay, Isolated: true}
	s.JS = js
	// The browser goes when no settings (or copies of them) refer to js.
	runtime.AddCleanup(js, func(p *render.Pool) { p.Close() }, js.Pool)
	return nil
}

// render returns the page's DOM after its scripts ran, or body when the
// browser failed (the step goes on with the HTML as fetched). With
// javascript_keep_html the DOM becomes the document stored and fed.
func (p *Pipeline) render(ctx context.Context, out *Outcome, js *JavaScript, body []byte) []byte {
	job := render.Job{URL: out.Job.Fetch.URI, Body: body, ContentType: out.ContentType, Fetch: p.jsFetch(out.Job.S, js), Settle: js.Delay}
	dom, err := js.Pool.RenderJob(ctx, job)
	if err != nil {
		out.RenderErr = err
		return body
	}
	if js.KeepHTML {
		out.Body = []byte(dom)
		return out.Body // the DOM parsed is the document stored and fed
	}
	return []byte(dom)
}

// jsFetch answers the browser's requests of one render through the crawl.
func (p *Pipeline) jsFetch(s *Settings, js *JavaScript) render.FetchFunc {
	var (
		mu   sync.Mutex
		next time.Time
	)
	return func(ctx context.Context, r *render.Request) (*render.Response, error) {
		u, err := url.Parse(r.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("nodesched: browser request %q: not http(s)", r.URL)
		}
		if s.Robots && s.RobotsCache != nil {
			rules, err := s.RobotsCache.Get(ctx, r.URL)
			if err != nil {
				return nil, err
			}
			if !rules.Allowed(r.URL) {
				return nil, errRobotsDisallowed
			}
		}
		// One request at a time, javascript_delay apart.
		mu.Lock()
		defer mu.Unlock()
		if w := next.Sub(p.Now()); w > 0 {
			if err := p.Sleep(ctx, w); err != nil {
				return nil, err
			}
		}
		req := fetch.Request{URL: r.URL, Method: r.Method, Body: r.Body}
		if ct := r.Header.Get("Content-Type"); ct != "" && len(r.Body) > 0 {
			req.Header = map[string][]string{"Content-Type": {ct}}
		}
		resp, err := js.Fetcher.Fetch(ctx, req)
		next = p.Now().Add(js.Pace)
		if err != nil {
			return nil, err
		}
		h := map[string][]string{}
		if ct := resp.Header.Get("Content-Type"); ct != "" {
			h["Content-Type"] = []string{ct}
		}
		if loc := resp.Header.Get("Location"); loc != "" {
			h["Location"] = []string{loc}
		}
		return &render.Response{Status: resp.Status, Header: h, Body: resp.Body}, nil
	}
}
