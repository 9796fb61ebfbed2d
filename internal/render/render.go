// Package render renders web pages in a headless Chromium for
// use_javascript (MS-FSCCFG): a page's scripts run and the DOM they leave
// is returned as HTML, so links that only exist after scripts run can be
// extracted.
//
// A Pool drives one browser process (github.com/chromedp/chromedp) with at
// most MaxTabs tabs open at once. Every render has its own timeout; a
// render that fails in the browser (timeout, crash, lost connection) makes
// the pool restart the browser, so a browser that hangs or dies never
// hangs the crawl: the caller gets an error and goes on.
//
// A Job with a Fetch function keeps the browser off the network: every
// request the page makes is paused with the DevTools Fetch domain and
// answered by Fetch (the crawler's own fetcher, with its robots.txt,
// pacing, resolver, cookies and proxies) or failed when Fetch refuses it.
// The page itself is answered with the body the crawler already fetched.
// A Pool with Isolated set also gives the browser a host resolver that
// resolves nothing, so a request that escaped interception could not reach
// any host by name.
package render

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"os/exec"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
)

// Pool renders pages in one headless browser, MaxTabs at a time.
type Pool struct {
	// ExecPath is the browser binary (default: /usr/bin/chromium, else
	// chromium or google-chrome on PATH).
	ExecPath string
	// MaxTabs bounds the tabs open at once (default 4).
	MaxTabs int
	// Timeout bounds one render, load and delay included (default 30 s).
	Timeout time.Duration
	// Isolated starts the browser with a host resolver that resolves no
	// name (--host-resolver-rules): it can only get what Job.Fetch gives.
	Isolated bool
	// MaxRequests bounds the requests one render may make through
	// Job.Fetch; the rest fail in the browser (default 256).
	MaxRequests int

	once sync.Once
	sem  chan struct{}

	mu       sync.Mutex
	browser  context.Context
	cancel   context.CancelFunc
	restarts int
	closed   bool
}

// ErrClosed is returned by Render after Close.
var ErrClosed = errors.New("render: pool closed")

// FindBrowser returns the path of a Chromium binary on the machine.
func FindBrowser() (string, error) {
	for _, p := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if path, err := exec.LookPath(p); err == nil {
			return path, nil
		}
	}
	return "", errors.New("render: no chromium binary found")
}

func (p *Pool) init() {
	p.once.Do(func() {
		if p.MaxTabs <= 0 {
			p.MaxTabs = 4
		}
		if p.Timeout <= 0 {
			p.Timeout = 30 * time.Second
		}
		if p.MaxRequests <= 0 {
			p.MaxRequests = 256
		}
		p.sem = make(chan struct{}, p.MaxTabs)
	})
}

// browserCtx returns the running browser's context, starting it if needed.
func (p *Pool) browserCtx() (context.Context, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, ErrClosed
	}
	if p.browser != nil && p.browser.Err() == nil {
		return p.browser, nil
	}
	path := p.ExecPath
	if path == "" {
		var err error
		if path, err = FindBrowser(); err != nil {
			return nil, err
		}
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-dev-shm-usage", true),
	)
	if p.Isolated {
		opts = append(opts, chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND"), chromedp.Flag("dns-prefetch-disable", true))
	}
	actx, acancel := chromedp.NewExecAllocator(context.Background(), opts...)
	bctx, bcancel := chromedp.NewContext(actx)
	if err := chromedp.Run(bctx); err != nil { // starts the browser
		bcancel()
		acancel()
		return nil, fmt.Errorf("render: start browser: %w", err)
	}
	p.browser = bctx
	p.cancel = func() { bcancel(); acancel() }
	return bctx, nil
}

// restart stops the browser behind ctx (if it is still the current one);
// the next render starts a new one.
func (p *Pool) restart(b context.Context) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.browser == b && p.cancel != nil {
		p.cancel()
		p.browser, p.cancel = nil, nil
		p.restarts++
	}
}

// Restarts is how many times the browser was restarted after a failure.
func (p *Pool) Restarts() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.restarts
}

// Render loads url in a new tab, waits delay after the load event (for
// scripts that run late) and returns the document's HTML as the scripts
// left it. The browser fetches the page and what it needs itself.
func (p *Pool) Render(ctx context.Context, url string, delay time.Duration) (string, error) {
	return p.RenderJob(ctx, Job{URL: url, Settle: delay})
}

// Request is a request of the browser, handed to Job.Fetch.
type Request struct {
	URL, Method string
	Header      http.Header
	Body        []byte
	// Type is the resource type as the browser names it ("Script",
	// "Stylesheet", "Image", "XHR", "Document", ...).
	Type string
}

// Response answers a Request.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// FetchFunc fulfils a browser request; an error fails the request in the
// browser (as if the network had refused it).
type FetchFunc func(ctx context.Context, r *Request) (*Response, error)

// Job is one page to render.
type Job struct {
	URL string
	// Body, when not nil, is the page as the crawler fetched it, with its
	// ContentType: the browser is given it instead of fetching URL (only
	// with Fetch set).
	Body        []byte
	ContentType string
	// Fetch, when set, answers every other request of the browser.
	Fetch FetchFunc
	// Settle is how long to wait after the load event, for scripts that
	// run late.
	Settle time.Duration
}

// RenderJob renders one page (see Job).
func (p *Pool) RenderJob(ctx context.Context, job Job) (string, error) {
	p.init()
	select {
	case p.sem <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-p.sem }()
	b, err := p.browserCtx()
	if err != nil {
		return "", err
	}
	tab, tcancel := chromedp.NewContext(b)
	defer tcancel()
	tctx, cancel := context.WithTimeout(tab, p.Timeout)
	defer cancel()
	stop := context.AfterFunc(ctx, cancel)
	defer stop()
	var actions []chromedp.Action
	if job.Fetch != nil {
		it := &interceptor{pool: p, job: job, ctx: tctx, left: p.MaxRequests}
		chromedp.ListenTarget(tctx, it.event)
		defer it.close(cancel)
		actions = append(actions, fetch.Enable().WithPatterns([]*fetch.RequestPattern{{URLPattern: "*", RequestStage: fetch.RequestStageRequest}}))
	}
	var html string
	actions = append(actions, chromedp.Navigate(job.URL))
	if job.Settle > 0 {
		actions = append(actions, chromedp.Sleep(job.Settle))
	}
	actions = append(actions, chromedp.OuterHTML("html", &html, chromedp.ByQuery))
	if err := chromedp.Run(tctx, actions...); err != nil {
		cancel()
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if b.Err() != nil || errors.Is(tctx.Err(), context.DeadlineExceeded) {
			// A crashed or hung browser: start afresh for the next page.
			p.restart(b)
		}
		return "", fmt.Errorf("render: %s: %w", job.URL, err)
	}
	return html, nil
}

// interceptor answers the paused requests of one render.
type interceptor struct {
	pool *Pool
	job  Job
	ctx  context.Context
	wg   sync.WaitGroup

	mu      sync.Mutex
	left    int
	docDone bool
	closed  bool
}

// close ends the render's context (the requests still being fetched are
// abandoned) and waits for their goroutines.
func (it *interceptor) close(cancel context.CancelFunc) {
	cancel()
	it.mu.Lock()
	it.closed = true
	it.mu.Unlock()
	it.wg.Wait()
}

func (it *interceptor) event(ev any) {
	e, ok := ev.(*fetch.EventRequestPaused)
	if !ok || e.Request == nil {
		return
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	if it.closed {
		return
	}
	it.wg.Add(1)
	go func() {
		defer it.wg.Done()
		it.answer(e)
	}()
}

func (it *interceptor) answer(e *fetch.EventRequestPaused) {
	c := chromedp.FromContext(it.ctx)
	if c == nil || c.Target == nil {
		return
	}
	exec := cdp.WithExecutor(it.ctx, c.Target)
	fail := func() { _ = fetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(exec) }
	it.mu.Lock()
	page := !it.docDone && it.job.Body != nil && e.ResourceType == network.ResourceTypeDocument && sameURL(e.Request.URL, it.job.URL)
	if page {
		it.docDone = true
	}
	budget := it.left > 0
	if !page && budget {
		it.left--
	}
	it.mu.Unlock()
	if page {
		ct := it.job.ContentType
		if ct == "" {
			ct = "text/html"
		}
		_ = fetch.FulfillRequest(e.RequestID, 200).
			WithResponseHeaders([]*fetch.HeaderEntry{{Name: "Content-Type", Value: ct}}).
			WithBody(base64.StdEncoding.EncodeToString(it.job.Body)).Do(exec)
		return
	}
	if !budget || isFavicon(e) {
		fail()
		return
	}
	r := &Request{URL: e.Request.URL, Method: e.Request.Method, Header: http.Header{}, Type: string(e.ResourceType)}
	for k, v := range e.Request.Headers {
		if s, ok := v.(string); ok {
			r.Header.Set(k, s)
		}
	}
	for _, pd := range e.Request.PostDataEntries {
		if b, err := base64.StdEncoding.DecodeString(pd.Bytes); err == nil {
			r.Body = append(r.Body, b...)
		}
	}
	resp, err := it.job.Fetch(it.ctx, r)
	if err != nil || resp == nil {
		fail()
		return
	}
	var hs []*fetch.HeaderEntry
	for k, vs := range resp.Header {
		for _, v := range vs {
			hs = append(hs, &fetch.HeaderEntry{Name: k, Value: v})
		}
	}
	status := resp.Status
	if status < 100 || status > 599 {
		status = 200
	}
	_ = fetch.FulfillRequest(e.RequestID, int64(status)).WithResponseHeaders(hs).
		WithBody(base64.StdEncoding.EncodeToString(resp.Body)).Do(exec)
}

// isFavicon tells the browser's own request for a site icon, which no
// page asked for and rendering does not need.
func isFavicon(e *fetch.EventRequestPaused) bool {
	if e.ResourceType != network.ResourceTypeOther {
		return false
	}
	u, _, _ := strings.Cut(e.Request.URL, "?")
	return strings.HasSuffix(u, "/favicon.ico")
}

// sameURL compares URLs without their fragments.
func sameURL(a, b string) bool {
	a, _, _ = strings.Cut(a, "#")
	b, _, _ = strings.Cut(b, "#")
	return a == b
}

// Close stops the browser.
func (p *Pool) Close() {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.closed = true
	if p.cancel != nil {
		p.cancel()
		p.browser, p.cancel = nil, nil
	}
}
