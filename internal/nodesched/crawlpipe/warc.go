package crawlpipe

import (
	"context"

	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/warc"
)

// archive hands a step's HTTP exchanges to the collection's WARC writer,
// waiting while its queue is full. It runs on the worker, off the event
// loop.
func archive(ctx context.Context, w *warc.Writer, out *Outcome, resp *fetch.Response) {
	if w == nil || resp == nil || len(resp.Exchanges) == 0 {
		return
	}
	c := &warc.Capture{Collection: out.Job.S.Name, FetchTime: out.Duration}
	for _, x := range resp.Exchanges {
		c.Exchanges = append(c.Exchanges, warc.Exchange{URL: x.URL, Date: x.Date, IP: x.IP, Status: x.Status,
			Request: x.Request, Header: x.Header, Body: x.Body, Truncated: x.Truncated})
	}
	for _, l := range out.Links {
		c.Outlinks = append(c.Outlinks, l.URI)
	}
	// Add fails only once the crawl is stopping (ctx) or the writer has
	// stopped, which it does after the workers.
	_ = w.Add(ctx, c)
}
