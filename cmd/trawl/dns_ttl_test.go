package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/trawl/trawl/internal/admin"
)

// ttlDNS is a DNS server on loopback answering one name with one A record
// whose address and TTL the test changes.
type ttlDNS struct {
	mu   sync.Mutex
	name string
	ip   string
	ttl  uint32
}

func (d *ttlDNS) set(ip string, ttl uint32) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.ip, d.ttl = ip, ttl
}

func (d *ttlDNS) ServeDNS(w dns.ResponseWriter, r *dns.Msg) {
	d.mu.Lock()
	defer d.mu.Unlock()
	m := new(dns.Msg)
	m.SetReply(r)
	q := r.Question[0]
	switch {
	case q.Name != d.name:
		m.Rcode = dns.RcodeNameError
	case q.Qtype == dns.TypeA:
		m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: q.Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: d.ttl},
			A: net.ParseIP(d.ip)})
	}
	w.WriteMsg(m)
}

// hitServer serves on addr and records the paths it was asked for.
type hitServer struct {
	mu    sync.Mutex
	paths []string
}

func (h *hitServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.mu.Lock()
	h.paths = append(h.paths, r.URL.Path)
	h.mu.Unlock()
	fmt.Fprintf(w, "<html><head><title>%s</title></head><body>page %s</body></html>", r.URL.Path, r.URL.Path)
}

func (h *hitServer) has(path string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, p := range h.paths {
		if p == path {
			return true
		}
	}
	return false
}

// TestMultinodeFollowsDNSChange: a site's address comes from a DNS server
// whose record has a short TTL (#18). After the record moves the site to
// another address, the crawl follows it once the TTL has passed: a URI
// added then is fetched from the new address, none from the old one.
func TestMultinodeFollowsDNSChange(t *testing.T) {
	// The site listens on 127.0.0.2 and 127.0.0.3, on the same port.
	var oldSrv, newSrv hitServer
	var port int
	var lnOld, lnNew net.Listener
	for try := 0; ; try++ {
		var err error
		if lnOld, err = net.Listen("tcp", "127.0.0.2:0"); err != nil {
			t.Fatal(err)
		}
		port = lnOld.Addr().(*net.TCPAddr).Port
		if lnNew, err = net.Listen("tcp", fmt.Sprintf("127.0.0.3:%d", port)); err == nil {
			break
		}
		lnOld.Close()
		if try > 20 {
			t.Fatal(err)
		}
	}
	for _, s := range []struct {
		ln net.Listener
		h  *hitServer
	}{{lnOld, &oldSrv}, {lnNew, &newSrv}} {
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 5 * time.Second}
		go srv.Serve(s.ln)
		t.Cleanup(func() { srv.Close() })
	}

	d := &ttlDNS{name: "moved.test."}
	d.set("127.0.0.2", 1)
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dsrv := &dns.Server{PacketConn: pc, Handler: d}
	go dsrv.ActivateAndServe()
	t.Cleanup(func() { dsrv.Shutdown() })

	dir := t.TempDir()
	cfg := filepath.Join(dir, "dns.xml")
	site := fmt.Sprintf("http://moved.test:%d", port)
	xml := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig><DomainSpecification name="dns">
<attrib name="start_uris" type="list-string"><member>%s/</member></attrib>
<attrib name="delay" type="real">0</attrib>
<attrib name="robots" type="boolean">no</attrib>
<section name="include_domains"><attrib name="exact" type="list-string"><member>moved.test</member></attrib></section>
</DomainSpecification></CrawlerConfig>`, site)
	if err := os.WriteFile(cfg, []byte(xml), 0o644); err != nil {
		t.Fatal(err)
	}

	_, got := startRole(t, []string{"multinode", "--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0",
		"--data", filepath.Join(dir, "mns"), "--config", cfg, "--dns-server", pc.LocalAddr().String(),
		"--dns-min-ttl", "1s", "--log-level", "info"},
		`trawl multinode: HTTP interface on http://([0-9.:]+)/`,
		`listening for node schedulers" addr=([0-9.:]+)`)
	startRole(t, []string{"node", "--id", "n1", "--multinode", got[1], "--data", filepath.Join(dir, "node"),
		"--listen", "off", "--log-level", "info", "--workers", "4"})

	waitFor(t, "the start page fetched from the first address", 60*time.Second, func() bool { return oldSrv.has("/") })
	d.set("127.0.0.3", 1)
	time.Sleep(2500 * time.Millisecond) // the record's TTL (1 s), and the node's copy of it, run out
	cl := admin.NewClient(got[0], nil)
	if _, err := cl.AddURIs(context.Background(), "dns", true, []string{site + "/after-move"}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(60 * time.Second)
	for !newSrv.has("/after-move") {
		if time.Now().After(deadline) {
			oldSrv.mu.Lock()
			newSrv.mu.Lock()
			t.Fatalf("the URI added after the move was not fetched from the new address; old address served %q, new %q",
				oldSrv.paths, newSrv.paths)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if oldSrv.has("/after-move") {
		t.Error("the URI added after the move was also fetched from the old address")
	}
}
