package crawlpipe

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/store"
)

// TestWorkqueueLevels compiles workqueue_priority sections (put_scheme,
// pop_scheme, the level sections' include rules and shares) and checks the
// order in which the compiled frontier serves one site's URIs.
func TestWorkqueueLevels(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	const levels = `
      <section name="1">
        <attrib name="share" type="integer"> 3 </attrib>
        <section name="include_uris"><attrib name="prefix" type="list-string"><member> http://a.test/news/ </member></attrib></section>
      </section>
      <section name="2">
        <attrib name="share" type="integer"> 1 </attrib>
        <section name="include_uris"><attrib name="regexp" type="list-string"><member> .*\.pdf$ </member></attrib></section>
      </section>`
	add := []string{"p1", "news/1", "x.pdf", "news/2", "p2", "news/3", "y.pdf", "news/4", "news/5", "news/6"}
	for _, tc := range []struct {
		name, put, pop string
		want           []string
	}{
		// include + pri: level 1 (news), then 2 (pdf), then the default 3.
		{"include pri", "include", "pri", []string{"news/1", "news/2", "news/3", "news/4", "news/5", "news/6", "x.pdf", "y.pdf", "p1", "p2"}},
		// include + wrr 3:1:1 (level 3 has no share: 1): smooth weighted
		// round robin serves 3 news, 1 pdf and 1 other per 5.
		{"include wrr", "include", "wrr", []string{"news/1", "x.pdf", "news/2", "p1", "news/3", "news/4", "y.pdf", "news/5", "p2", "news/6"}},
		// default put_scheme: everything at the default level, in order.
		{"default", "default", "pri", add},
	} {
		t.Run(tc.name, func(t *testing.T) {
			xml := fmt.Sprintf(`<?xml version="1.0"?>
<CrawlerConfig><DomainSpecification name="wq">
  <section name="workqueue_priority">
    <attrib name="levels" type="integer"> 3 </attrib>
    <attrib name="default" type="integer"> 3 </attrib>
    <attrib name="put_scheme" type="string"> %s </attrib>
    <attrib name="pop_scheme" type="string"> %s </attrib>%s
  </section>
</DomainSpecification></CrawlerConfig>`, tc.put, tc.pop, levels)
			cfg, err := config.Parse("wq.xml", []byte(xml), nil)
			if err != nil {
				t.Fatal(err)
			}
			s, err := Compile(cfg.Collections[0], Env{NodeID: "n"})
			if err != nil {
				t.Fatal(err)
			}
			fc := s.Frontier
			fc.RequireIP, fc.RequireGrant, fc.EnforceDelayPerIP, fc.Delay, fc.MaxPending = false, false, false, 0, 1
			st, err := store.Open(t.TempDir(), store.Options{})
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			f, err := frontier.Open(st, fc, nil, t0)
			if err != nil {
				t.Fatal(err)
			}
			var es []frontier.Entry
			for _, p := range add {
				es = append(es, frontier.Entry{URI: "http://a.test/" + p, Site: "a.test"})
			}
			if _, err := f.Add(t0, es...); err != nil {
				t.Fatal(err)
			}
			var got []string
			for {
				fe, ok, _ := f.Next(t0)
				if !ok {
					break
				}
				got = append(got, strings.TrimPrefix(fe.URI, "http://a.test/"))
				if err := f.Done(fe, frontier.Result{Outcome: frontier.Fetched}, t0); err != nil {
					t.Fatal(err)
				}
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("served order (-want +got):\n%s", d)
			}
		})
	}
}
