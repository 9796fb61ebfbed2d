package nodesched

import (
	"context"
	"runtime"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/render"
)

// JavaScript is use_javascript: HTML pages are rendered in a headless
// Chromium (internal/render) and their links extracted from the DOM the
// scripts leave. With javascript_keep_html the document stored and fed is
// the HTML as fetched, else the rendered DOM. javascript_delay waits after
// the load event for late scripts.
type JavaScript struct {
	Pool     *render.Pool
	Delay    time.Duration
	KeepHTML bool
}

// JSMaxTabs bounds the browser tabs of one collection.
const JSMaxTabs = 4

func compileJavaScript(s *Settings, eff *config.Effective) {
	if !eff.UseJavascript() {
		return
	}
	js := &JavaScript{KeepHTML: eff.JavascriptKeepHTML()}
	if d, ok := eff.JavascriptDelay(); ok && d > 0 {
		js.Delay = time.Duration(d * float64(time.Second))
	}
	timeout := s.FetchOptions.Timeout
	if timeout <= 0 {
		timeout = 60 * time.Second
	}
	js.Pool = &render.Pool{MaxTabs: JSMaxTabs, Timeout: timeout + js.Delay}
	s.JS = js
	// The browser goes when no settings (or copies of them) refer to js.
	runtime.AddCleanup(js, func(p *render.Pool) { p.Close() }, js.Pool)
}

// render returns the page's DOM after its scripts ran, or body when the
// browser failed (the step goes on with the HTML as fetched).
func (p *Pipeline) render(ctx context.Context, out *Outcome, body []byte) []byte {
	js := out.Job.S.JS
	dom, err := js.Pool.Render(ctx, out.Job.Fetch.URI, js.Delay)
	if err != nil {
		out.RenderErr = err
		return body
	}
	if !js.KeepHTML {
		out.Body = []byte(dom)
	}
	return []byte(dom)
}
