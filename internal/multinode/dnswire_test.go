package multinode

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"sync/atomic"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// dnsServer answers DNS queries over UDP on 127.0.0.1: A queries for
// names in table, an empty answer for other types of those names, and
// NXDOMAIN for the rest. It counts the bytes it reads and writes.
func dnsServer(t *testing.T, table map[string]netip.Addr) (addr string, read, written *atomic.Int64) {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	read, written = new(atomic.Int64), new(atomic.Int64)
	go func() {
		buf := make([]byte, 1500)
		for {
			n, from, err := pc.ReadFrom(buf)
			if err != nil {
				return
			}
			read.Add(int64(n))
			var p dnsmessage.Parser
			h, err := p.Start(buf[:n])
			if err != nil {
				continue
			}
			q, err := p.Question()
			if err != nil {
				continue
			}
			ip, known := table[q.Name.String()]
			rh := dnsmessage.Header{ID: h.ID, Response: true, RecursionAvailable: true, RCode: dnsmessage.RCodeSuccess}
			if !known {
				rh.RCode = dnsmessage.RCodeNameError
			}
			b := dnsmessage.NewBuilder(nil, rh)
			b.EnableCompression()
			_ = b.StartQuestions()
			_ = b.Question(q)
			_ = b.StartAnswers()
			if known && q.Type == dnsmessage.TypeA {
				_ = b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 60}, dnsmessage.AResource{A: ip.As4()})
			}
			out, err := b.Finish()
			if err != nil {
				continue
			}
			if n, err := pc.WriteTo(out, from); err == nil {
				written.Add(int64(n))
			}
		}
	}()
	return pc.LocalAddr().String(), read, written
}

// TestDNSWireCounts resolves through the built-in resolver's counting
// dialer against a real DNS server on 127.0.0.1 and checks that the bytes
// counted are the bytes the server received and sent, and that a name
// error is ErrNotFound.
func TestDNSWireCounts(t *testing.T) {
	addr, srvRead, srvWritten := dnsServer(t, map[string]netip.Addr{"www.contoso.test.": netip.MustParseAddr("127.0.0.9")})
	w := &dnsWire{server: addr}
	r := NetResolver{Resolver: &net.Resolver{PreferGo: true, Dial: w.dial}}
	ctx := context.Background()
	got, err := r.LookupHost(ctx, "www.contoso.test")
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.9") {
		t.Fatalf("LookupHost = %v, %v", got, err)
	}
	if _, err := r.LookupHost(ctx, "nowhere.contoso.test"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown name: %v, want ErrNotFound", err)
	}
	if w.written.Load() == 0 || w.written.Load() != srvRead.Load() || w.read.Load() != srvWritten.Load() {
		t.Errorf("counted %d bytes written, %d read; the server read %d and wrote %d",
			w.written.Load(), w.read.Load(), srvRead.Load(), srvWritten.Load())
	}
}
