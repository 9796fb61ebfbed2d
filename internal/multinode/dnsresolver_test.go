package multinode

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// testDNS is a DNS server on loopback whose records a test can change.
type testDNS struct {
	mu      sync.Mutex
	a       map[string][]string // fqdn -> IPv4 addresses
	cname   map[string]string
	ttl     uint32
	queries int
	addr    string
}

func startTestDNS(t *testing.T) *testDNS {
	t.Helper()
	d := &testDNS{a: map[string][]string{}, cname: map[string]string{}, ttl: 1}
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d.addr = pc.LocalAddr().String()
	srv := &dns.Server{PacketConn: pc, Handler: d}
	started := make(chan struct{})
	srv.NotifyStartedFunc = func() { close(started) }
	go srv.ActivateAndServe()
	<-started
	t.Cleanup(func() { srv.Shutdown() })
	return d
}

func (d *testDNS) set(name string, ttl uint32, addrs ...string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.a[dns.Fqdn(name)] = addrs
	d.ttl = ttl
}

func (d *testDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.queries++
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	name := q.Name
	if c, ok := d.cname[name]; ok {
		m.Answer = append(m.Answer, &dns.CNAME{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: 300}, Target: c})
		name = c
	}
	addrs, ok := d.a[name]
	if !ok {
		m.Rcode = dns.RcodeNameError
	} else if q.Qtype == dns.TypeA {
		for _, a := range addrs {
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: d.ttl}, A: net.ParseIP(a)})
		}
	}
	w.WriteMsg(m)
}

func TestDNSResolverTTL(t *testing.T) {
	d := startTestDNS(t)
	d.set("www.example.test", 7, "127.0.0.5", "127.0.0.6")
	d.mu.Lock()
	d.cname["alias.example.test."] = "www.example.test."
	d.mu.Unlock()
	r := &DNSResolver{Servers: []string{d.addr}, Timeout: time.Second}
	ctx := context.Background()

	addrs, ttl, err := r.LookupHostTTL(ctx, "WWW.example.test")
	if err != nil {
		t.Fatal(err)
	}
	want := []netip.Addr{netip.MustParseAddr("127.0.0.5"), netip.MustParseAddr("127.0.0.6")}
	if len(addrs) != 2 || addrs[0] != want[0] || addrs[1] != want[1] || ttl != 7*time.Second {
		t.Fatalf("got %v ttl %v, want %v ttl 7s", addrs, ttl, want)
	}
	// Through a CNAME, the least TTL of the chain.
	addrs, ttl, err = r.LookupHostTTL(ctx, "alias.example.test")
	if err != nil || len(addrs) != 2 || ttl != 7*time.Second {
		t.Fatalf("alias: %v ttl %v err %v", addrs, ttl, err)
	}
	d.set("www.example.test", 3600, "127.0.0.9")
	addrs, ttl, err = r.LookupHostTTL(ctx, "alias.example.test")
	if err != nil || len(addrs) != 1 || addrs[0] != netip.MustParseAddr("127.0.0.9") || ttl != 300*time.Second {
		t.Fatalf("alias after change: %v ttl %v err %v", addrs, ttl, err)
	}
	if _, _, err := r.LookupHostTTL(ctx, "nosuch.example.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown name: %v", err)
	}
	// A server that does not answer is an error, not "not found".
	dead := &DNSResolver{Servers: []string{"127.0.0.1:1"}, Timeout: 200 * time.Millisecond}
	if _, _, err := dead.LookupHostTTL(ctx, "www.example.test"); err == nil || errors.Is(err, ErrNotFound) {
		t.Fatalf("dead server: %v", err)
	}
	// A hosts table answers first, without a TTL, and falls back with one.
	h, err := ParseHosts([]byte("127.0.0.3 fixed.example.test\n"))
	if err != nil {
		t.Fatal(err)
	}
	h.Fallback = r
	if a, ttl, err := h.LookupHostTTL(ctx, "fixed.example.test"); err != nil || len(a) != 1 || ttl != 0 {
		t.Fatalf("hosts: %v %v %v", a, ttl, err)
	}
	if a, ttl, err := h.LookupHostTTL(ctx, "www.example.test"); err != nil || len(a) != 1 || ttl != 3600*time.Second {
		t.Fatalf("hosts fallback: %v %v %v", a, ttl, err)
	}
}
