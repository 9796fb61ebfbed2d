package nodesched

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestCrawlUseHTTP11 crawls the webfarm with use_http_1_1 on and off and
// reads the farm's request log: with it, every request is HTTP/1.1, asks
// for compression and connections carry several requests (keep-alive);
// without it, every request is HTTP/1.0 on a connection of its own and
// asks for no compression (accept_compression, on, has no effect). Both
// crawls fetch what Expect lists.
func TestCrawlUseHTTP11(t *testing.T) {
	for _, http11 := range []bool{true, false} {
		name := map[bool]string{true: "use_http_1_1=yes", false: "use_http_1_1=no"}[http11]
		t.Run(name, func(t *testing.T) {
			farm := startFarm(t, 3, 30)
			crawl := farm.DefaultCrawl()
			var b strings.Builder
			if err := webfarm.WriteCrawlXML(&b, crawl, webfarm.XMLOptions{Collection: "farm", Delay: 0.01, FetchTimeout: 8}); err != nil {
				t.Fatal(err)
			}
			yn := map[bool]string{true: "yes", false: "no"}[http11]
			xml := strings.Replace(b.String(), `<DomainSpecification name="farm">`, `<DomainSpecification name="farm">
    <attrib name="use_http_1_1" type="boolean"> `+yn+` </attrib>
    <attrib name="accept_compression" type="boolean"> yes </attrib>`, 1)
			cfg, err := config.Parse("farm.xml", []byte(xml), nil)
			if err != nil {
				t.Fatalf("%v\n%s", err, xml)
			}
			col := cfg.Collections[0]
			st, err := store.Open(t.TempDir(), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			mns := newFakeMNS(t, farm, "node1", col)
			d := New(Config{NodeID: "node1", Store: st, MNS: mns.dialer(ctx), Workers: 16})
			r := &crawlRun{farm: farm, crawl: crawl, mns: mns, d: d, st: st, cancel: cancel, done: make(chan error, 1)}
			go func() { r.done <- d.Run(ctx) }()
			t.Cleanup(func() { r.stop(t) })
			waitIdle(t, d, 90*time.Second)

			want, err := farm.Expect(crawl)
			if err != nil {
				t.Fatal(err)
			}
			missing, extra := diffSets(want, requestedURLs(farm, 0))
			if len(missing)+len(extra) > 0 {
				t.Errorf("fetched set differs from Expect: missing %v, extra %v", head(missing), head(extra))
			}
			reqs := farm.Requests()
			protos := map[string]int{}
			remotes := map[string]int{}
			reused := 0 // requests on a connection used before
			gzipAsked, gzipSent := 0, 0
			for _, q := range reqs {
				protos[q.Proto]++
				remotes[q.Remote]++
				if q.ConnSeq > 1 {
					reused++
				}
				if strings.Contains(q.AcceptEncoding, "gzip") {
					gzipAsked++
				}
				if q.ContentEncoding != "" {
					gzipSent++
				}
			}
			wantProto := map[bool]string{true: "HTTP/1.1", false: "HTTP/1.0"}[http11]
			if protos[wantProto] != len(reqs) || len(reqs) == 0 {
				t.Errorf("protocols %v over %d requests, want all %s", protos, len(reqs), wantProto)
			}
			if http11 {
				if reused == 0 || gzipAsked != len(reqs) || gzipSent == 0 {
					t.Errorf("HTTP/1.1: %d requests on reused connections, %d of %d asked for gzip, %d compressed answers", reused, gzipAsked, len(reqs), gzipSent)
				}
			} else if reused != 0 || gzipAsked != 0 || gzipSent != 0 {
				t.Errorf("HTTP/1.0: %d requests on reused connections (want 0), %d asked for gzip, %d compressed answers (want 0)", reused, gzipAsked, gzipSent)
			}
			t.Logf("%d requests on %d connections; protocols %v", len(reqs), len(remotes), protos)
		})
	}
}
