package robots

import (
	"context"
	"time"

	"github.com/trawl/trawl/internal/fetch"
)

// FetcherOptions derives, from the crawler's fetch options, the options of
// the fetcher that downloads robots.txt files: same user agent, headers,
// dialer and transport, robots_timeout as the timeout, every content type
// accepted, the body truncated at MaxFileSize, and at most MaxRedirects
// redirects (RFC 9309 section 2.3.1.2).
func FetcherOptions(base fetch.Options, robotsTimeout time.Duration) fetch.Options {
	o := base
	o.Timeout = robotsTimeout
	o.AllowedTypes = nil
	o.ForceMimeDetection = false
	o.CutOff = MaxFileSize
	o.Truncate = true
	o.MaxRedirects = MaxRedirects
	o.CheckRedirect = nil
	o.ExcludeHeaders = nil
	return o
}

// FetchLoader returns a Loader that downloads robots.txt with f (built
// from FetcherOptions).
func FetchLoader(f *fetch.Fetcher) Loader {
	return func(ctx context.Context, robotsURL string) FetchResult {
		res := FetchResult{URL: robotsURL}
		resp, err := f.Fetch(ctx, fetch.Request{URL: robotsURL})
		if resp != nil {
			res.Status = resp.Status
			res.Body = resp.Body
		}
		if err != nil {
			res.Err = err
			switch fetch.KindOf(err) {
			case fetch.KindTimeout:
				res.TimedOut = true
			case fetch.KindTooManyRedirects, fetch.KindRedirectLoop:
				res.TooManyRedirects = true
			}
		}
		return res
	}
}
