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
package render

import (
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sync"
	"time"

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
// scripts that run late: javascript_delay) and returns the document's
// HTML as the scripts left it.
func (p *Pool) Render(ctx context.Context, url string, delay time.Duration) (string, error) {
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
	var html string
	actions := []chromedp.Action{chromedp.Navigate(url)}
	if delay > 0 {
		actions = append(actions, chromedp.Sleep(delay))
	}
	actions = append(actions, chromedp.OuterHTML("html", &html, chromedp.ByQuery))
	if err := chromedp.Run(tctx, actions...); err != nil {
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		if b.Err() != nil || errors.Is(tctx.Err(), context.DeadlineExceeded) {
			// A crashed or hung browser: start afresh for the next page.
			p.restart(b)
		}
		return "", fmt.Errorf("render: %s: %w", url, err)
	}
	return html, nil
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
