package multinode

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// TestDNSStats drives the machine's DNS database through lookups that
// succeed, fail, time out and are retried, and through requests answered
// from the cache, and checks the counters of the global statistics.
func TestDNSStats(t *testing.T) {
	h := newHarness(t, Config{DNSTTL: 100 * time.Second, DNSNegativeTTL: 10 * time.Second})
	h.join("n1", true)
	ask := func(host string) []Action { return h.recv("n1", &cmt.UMDNSRequest{Collection: "example", Site: host}) }
	steps := []struct {
		host string
		err  error
	}{
		{"a.example", nil},
		{"b.example", fmt.Errorf("%w: b.example", ErrNotFound)},
		{"c.example", &net.DNSError{Err: "i/o timeout", Name: "c.example", IsTimeout: true}},
		{"d.example", &net.DNSError{Err: "server misbehaving", Name: "d.example", Server: "127.0.0.1:53"}},
		{"e.example", context.DeadlineExceeded},
	}
	for _, s := range steps {
		if got := actionsOf[Lookup](ask(s.host)); len(got) != 1 {
			t.Fatalf("%s: lookups %v", s.host, got)
		}
		var addrs = addrs("192.0.2.1")
		if s.err != nil {
			addrs = nil
		}
		h.m.DNSResult(s.host, addrs, s.err, h.now)
	}
	ask("a.example") // from the cache
	h.now = h.now.Add(11 * time.Second)
	if got := actionsOf[Lookup](ask("b.example")); len(got) != 1 { // negative entry expired: a retry
		t.Fatalf("retry: lookups %v", got)
	}
	h.m.DNSResult("b.example", addrs("192.0.2.2"), nil, h.now)

	want := DNSStats{Requests: 6, Retries: 1, Responses: 4, Timeouts: 2, CacheHits: 1, MaxRate: 5,
		RCodes: map[int]int64{0: 2, 2: 1, 3: 1}}
	if diff := cmp.Diff(want, h.m.DNSStats()); diff != "" {
		t.Errorf("DNS statistics (-want +got):\n%s", diff)
	}
}
