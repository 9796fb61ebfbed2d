package nodesched

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// TestDNSStats: a node scheduler counts the lookups it asks its multinode
// scheduler for (CMD_UM_DNS_REQUEST), the replies by outcome, and a
// request for a name whose last reply had no address as a retry; an
// answer from the DNS database is no request.
func TestDNSStats(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Unix(1_700_000_000, 0)
	m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	lookup := func(host string) {
		if _, ok := m.LookupHost(host, now); ok {
			t.Fatalf("%s answered without a request", host)
		}
	}
	reply := func(host string, addrs ...string) {
		x := &cmt.UMDNSReply{Host: host, TTL: 60}
		for _, a := range addrs {
			x.Addrs = append(x.Addrs, cmt.AddrInfo{IP: a})
		}
		if err := m.Handle(MNS, x, now); err != nil {
			t.Fatal(err)
		}
	}
	lookup("a.test")
	lookup("b.test")
	reply("a.test", "127.0.0.2")
	reply("b.test")
	if _, ok := m.LookupHost("a.test", now); !ok {
		t.Fatal("a.test not answered from the DNS database")
	}
	now = now.Add(6 * time.Minute) // b.test's failure expired
	lookup("b.test")
	reply("b.test", "127.0.0.3")
	got := m.DNSStats()
	if got.Written == 0 || got.Read == 0 {
		t.Errorf("bytes written %d, read %d", got.Written, got.Read)
	}
	got.Written, got.Read = 0, 0
	want := DNSCounts{Requests: 3, Responses: 3, Retries: 1, RCodes: map[int]int64{0: 2, 3: 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("DNS statistics (-want +got):\n%s", diff)
	}
}
