package multinode

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
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

// TestFeedingSuspendResentAtRegistration suspends the feeding of a
// collection (all destinations, then one more named destination resumed
// and suspended) while no node scheduler is connected, and checks that a
// node scheduler registering afterwards gets the suspension.
func TestFeedingSuspendResentAtRegistration(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []func(m *MNS) ([]Action, error)
		want []cmt.Message
	}{
		{"all", []func(m *MNS) ([]Action, error){
			func(m *MNS) ([]Action, error) { return m.SuspendFeeding("c", true, nil) },
		}, []cmt.Message{&cmt.AdmConfFeedingSuspend{Collection: "c", Suspend: true}}},
		{"destinations", []func(m *MNS) ([]Action, error){
			func(m *MNS) ([]Action, error) { return m.SuspendFeeding("c", true, []string{"b", "a"}) },
			func(m *MNS) ([]Action, error) { return m.SuspendFeeding("c", false, []string{"b"}) },
		}, []cmt.Message{&cmt.AdmConfFeedingSuspend{Collection: "c", Suspend: true, Destinations: []string{"a"}}}},
		{"resumed", []func(m *MNS) ([]Action, error){
			func(m *MNS) ([]Action, error) { return m.SuspendFeeding("c", true, nil) },
			func(m *MNS) ([]Action, error) { return m.SuspendFeeding("c", false, nil) },
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newHarness(t, Config{}, testSpec(t, "c", ""))
			for _, op := range tc.ops {
				if _, err := op(h.m); err != nil {
					t.Fatal(err)
				}
			}
			var got []cmt.Message
			for _, s := range actionsOf[Send](h.join("n1", true)) {
				if _, ok := s.Message.(*cmt.AdmConfFeedingSuspend); ok && s.Conn == h.conn["n1"] {
					got = append(got, s.Message)
					// Not at its own high priority: it would overtake the
					// CMD_ADM_CONF_ADD of the collection.
					if s.Priority != cmt.DefaultPriority(cmt.CmdAdmConfAdd) {
						t.Errorf("sent at priority %v, CMD_ADM_CONF_ADD goes at %v", s.Priority, cmt.DefaultPriority(cmt.CmdAdmConfAdd))
					}
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("feeding messages at registration (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStatGaugesSumOverNodes sends CMD_UM_STAT reports (cumulative
// counters and the gauges queued and active_sites) from two node
// schedulers, twice, and checks that the collection's statistics are the
// sum of each node's last report, and forget a node's gauges (not its
// counters) when it disconnects.
func TestStatGaugesSumOverNodes(t *testing.T) {
	h := newHarness(t, Config{}, testSpec(t, "c", ""))
	h.join("n1", true)
	h.join("n2", true)
	stat := func(node string, fetched, queued, active int64) {
		h.recv(node, &cmt.UMStat{Collection: "c", Stats: marshal.Dict{
			{Key: marshal.Str("fetched"), Value: marshal.Int(fetched)},
			{Key: marshal.Str("queued"), Value: marshal.Int(queued)},
			{Key: marshal.Str("active_sites"), Value: marshal.Int(active)},
		}})
	}
	get := func() map[string]int64 {
		d, ok := h.m.Stats("c")
		if !ok {
			t.Fatal("no statistics")
		}
		out := map[string]int64{}
		for _, p := range d {
			out[string(p.Key.(marshal.Bytes))] = int64(p.Value.(marshal.Int))
		}
		return out
	}
	stat("n1", 10, 100, 3)
	stat("n2", 5, 50, 2)
	stat("n1", 20, 80, 2)
	stat("n2", 10, 40, 1)
	if diff := cmp.Diff(map[string]int64{"fetched": 30, "queued": 120, "active_sites": 3}, get()); diff != "" {
		t.Errorf("statistics (-want +got):\n%s", diff)
	}
	h.m.Disconnect(h.conn["n2"], h.now)
	if diff := cmp.Diff(map[string]int64{"fetched": 30, "queued": 80, "active_sites": 2}, get()); diff != "" {
		t.Errorf("after n2 left (-want +got):\n%s", diff)
	}
}
