package multinode

import (
	"context"
	"errors"
	"net/netip"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

func TestParseHosts(t *testing.T) {
	r, err := ParseHosts([]byte("# comment\n127.0.0.1 localhost\n\n127.1.0.2  site2.farm.test  Alias.Farm.Test. # trailing\n::1 localhost\n127.1.0.3 site2.farm.test\n::ffff:10.0.0.1 mapped\n"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		host string
		want []netip.Addr
		err  error
	}{
		{"localhost", addrs("127.0.0.1", "::1"), nil},
		{"SITE2.farm.test", addrs("127.1.0.2", "127.1.0.3"), nil},
		{"alias.farm.test", addrs("127.1.0.2"), nil},
		{"mapped", addrs("10.0.0.1"), nil},
		{"missing.test", nil, ErrNotFound},
	}
	for _, tc := range tests {
		t.Run(tc.host, func(t *testing.T) {
			got, err := r.LookupHost(context.Background(), tc.host)
			if !errors.Is(err, tc.err) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			if diff := cmp.Diff(tc.want, got, cmp.Comparer(func(a, b netip.Addr) bool { return a == b })); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	for _, bad := range []string{"notanip name\n", "127.0.0.1\n"} {
		if _, err := ParseHosts([]byte(bad)); err == nil {
			t.Errorf("ParseHosts(%q) accepted", bad)
		}
	}
	// The fallback answers what the table lacks.
	r.Fallback = mapResolver{"other.test": addrs("10.9.9.9")}
	if got, err := r.LookupHost(context.Background(), "other.test"); err != nil || len(got) != 1 {
		t.Errorf("fallback: %v %v", got, err)
	}
}

type mapResolver map[string][]netip.Addr

func (m mapResolver) LookupHost(_ context.Context, h string) ([]netip.Addr, error) {
	if a, ok := m[h]; ok {
		return a, nil
	}
	return nil, ErrNotFound
}

func FuzzParseHosts(f *testing.F) {
	f.Add([]byte("127.0.0.1 localhost\n::1 ip6-localhost ip6-loopback # x\n"))
	f.Add([]byte("127.1.0.2 site2.farm.test\n\n#\n"))
	f.Add([]byte("fe80::1%eth0 linklocal\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseHosts(data)
		if err != nil {
			return
		}
		for n := range r.names {
			if got, err := r.LookupHost(context.Background(), n); err != nil || len(got) == 0 {
				t.Fatalf("name %q listed but not found: %v", n, err)
			}
		}
	})
}

func TestRouteStore(t *testing.T) {
	fs := vfs.NewMem()
	s, err := OpenRouteStore("db", fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	acts := []Action{
		PersistRoute{Collection: "a", Attr: "x.com", NodeID: "n1", Site: "www.x.com"},
		LogLine{Msg: "ignored"},
		PersistRoute{Collection: "a", Attr: "y.com", NodeID: "n2"},
		PersistRoute{Collection: "ab", Attr: "z.com", NodeID: "n3", Site: "z.com"},
	}
	if err := s.Apply(acts); err != nil {
		t.Fatal(err)
	}
	if err := s.Apply([]Action{DropRoutes{Collection: "a"}, PersistRoute{Collection: "a", Attr: "w.com", NodeID: "n4"}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = OpenRouteStore("db", fs, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var got []StoredRoute
	if err := s.Load(func(r StoredRoute) { got = append(got, r) }); err != nil {
		t.Fatal(err)
	}
	want := []StoredRoute{
		{Collection: "a", Attr: "w.com", NodeID: "n4"},
		{Collection: "ab", Attr: "z.com", NodeID: "n3"},
		{Collection: "ab", Attr: "z.com", Site: "z.com"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestNormHostAndAttr(t *testing.T) {
	hosts := map[string]string{
		"WWW.Example.COM.":   "www.example.com",
		"www.example.com:80": "www.example.com",
		"[::1]:8080":         "::1",
		"::1":                "::1",
		"bücher.example":     "xn--bcher-kva.example",
		"  ":                 "",
		"::ffff:127.0.0.1":   "127.0.0.1",
	}
	for in, want := range hosts {
		if got := normHost(in); got != want {
			t.Errorf("normHost(%q) = %q, want %q", in, got, want)
		}
	}
	spec := &CollectionSpec{DomainClustering: true}
	attrs := map[string]string{
		"www.a.com":       "a.com",
		"b.a.com":         "a.com",
		"a.com":           "a.com",
		"x.y.example.uk":  "example.uk",
		"www.bbc.co.uk":   "bbc.co.uk",
		"127.0.0.1":       "127.0.0.1",
		"localhost":       "localhost",
		"co.uk":           "co.uk",
		"site1.farm.test": "farm.test",
	}
	for in, want := range attrs {
		if got := routeAttr(spec, in); got != want {
			t.Errorf("routeAttr(%q) = %q, want %q", in, got, want)
		}
	}
	if got := routeAttr(&CollectionSpec{}, "www.a.com"); got != "www.a.com" {
		t.Errorf("without clustering: %q", got)
	}
}

func TestRendezvousStable(t *testing.T) {
	nodes := []string{"n1", "n2", "n3", "n4"}
	moved := 0
	for i := range 1000 {
		attr := "site" + string(rune('a'+i%26)) + string(rune('0'+i/26%10)) + string(rune('0'+i/260))
		before := rendezvous(attr, nodes)
		after := rendezvous(attr, append(nodes[:4:4], "n5"))
		if before != after {
			if after != "n5" {
				t.Fatalf("%s moved from %s to %s, not to the new node", attr, before, after)
			}
			moved++
		}
	}
	if moved < 100 || moved > 320 {
		t.Errorf("%d of 1000 attributes moved to a fifth node, want about 200", moved)
	}
}

func TestCrawlConfigDictSubcollectionsAndLogins(t *testing.T) {
	spec := testSpec(t, "c", `
		<attrib name="refresh" type="real">60</attrib>
		<section name="include_domains"><attrib name="suffix" type="list-string"><member>.example</member></attrib></section>
		<SubDomain name="news">
			<attrib name="refresh" type="real">10</attrib>
			<section name="include_uris"><attrib name="prefix" type="list-string"><member>http://news.example/</member></attrib></section>
		</SubDomain>
		<Login name="l1">
			<attrib name="preload" type="string">http://a.example/login</attrib>
			<attrib name="scheme" type="string">https</attrib>
			<attrib name="site" type="string">a.example</attrib>
			<attrib name="form" type="string">/login</attrib>
			<attrib name="action" type="string">POST</attrib>
			<section name="parameters"><attrib name="user" type="string">me</attrib></section>
			<attrib name="sites" type="list-string"><member>a.example</member></attrib>
			<attrib name="ttl" type="integer">7200</attrib>
			<attrib name="html_form" type="string">http://a.example/login</attrib>
			<attrib name="autofill" type="boolean">no</attrib>
		</Login>`)
	d := spec.Dict
	if len(d.SubDomains) != 1 || d.SubDomains[0].Name != "news" || len(d.Logins) != 1 || d.Logins[0].Name != "l1" {
		t.Fatalf("dict = %+v", d)
	}
	if a, ok := d.SubDomains[0].Attrib("refresh"); !ok || a.Real != 10 {
		t.Errorf("subcollection refresh = %+v", a)
	}
	// The whole structure encodes and decodes back.
	cc := cmt.CrawlConfig{Collections: []cmt.Collection{d}}
	v, err := cc.Value()
	if err != nil {
		t.Fatal(err)
	}
	b, err := marshal.Encode(v)
	if err != nil {
		t.Fatal(err)
	}
	back, err := marshal.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	got, err := cmt.CrawlConfigFromValue(back)
	if err != nil {
		t.Fatal(err)
	}
	c, _ := got.Collection("c")
	if a, ok := c.Attrib("refresh"); !ok || a.Real != 60 {
		t.Errorf("refresh after round trip = %+v", a)
	}
	if s, ok := c.Section("include_domains"); !ok || len(s.Attribs) != 1 || s.Attribs[0].List[0] != ".example" {
		t.Errorf("include_domains after round trip = %+v", s)
	}
}

func TestStatsIntOverflowBecomesFloat(t *testing.T) {
	var s marshal.Dict
	var idx map[string]int
	k := marshal.Str("n")
	for range 3 {
		s, idx = sumDict(s, idx, marshal.Dict{{Key: k, Value: marshal.Int(1 << 62)}})
	}
	v, _ := s.Get("n")
	if f, ok := v.(marshal.Float); !ok || float64(f) != 3*float64(1<<62) {
		t.Errorf("sum = %#v", v)
	}
}

// FuzzMachine feeds arbitrary frames to a machine with registered nodes:
// it must never panic, and every frame it answers must encode.
func FuzzMachine(f *testing.F) {
	for _, m := range []cmt.Message{
		&cmt.UMInit{NodeID: "n1", AdminHost: "h", AdminPort: 1},
		&cmt.UMURI{Collection: "c", Entry: cmt.Entry{URI: cmt.URIStructure{URI: "http://a.example/", Host: "a.example", Parsed: true}, Referrer: cmt.EmptyURIStructure(), Cycle: -1}},
		&cmt.UMURIUrg{Collection: "c", Entry: cmt.Entry{URI: cmt.URIStructure{URI: "http://b.example/", HostIDNA: "b.example"}}},
		&cmt.UMDNSRequest{Collection: "c", Site: "www.contoso.com"},
		&cmt.UMAddRouteReply{Collection: "c", Routes: []cmt.Route{{Attr: "a.example", NodeID: "n2"}}},
		&cmt.UMLastRoute{Collection: "c"},
		&cmt.UMStartCrawlIP{Collection: "c", IP: "10.0.0.1", Site: "a.example"},
		&cmt.UMStopCrawlIP{Collection: "c", IP: "10.0.0.1", Site: "a.example"},
		&cmt.UMStat{Collection: "c", Stats: marshal.Dict{{Key: marshal.Str("x"), Value: marshal.Int(1)}}},
		&cmt.UMLog{Collection: "c", File: cmt.LogSite, Text: "x"},
		&cmt.UMConfStateRequest{Collection: "c"},
		&cmt.UMDeleteOK{Collection: "c"},
		&cmt.UMKeepalive{},
	} {
		b, err := cmt.EncodePayload(m, cmt.PriorityNormal)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(1), b)
	}
	spec := testSpec(f, "c", startURIs("http://a.example/")+`<attrib name="mufilter" type="integer">1000</attrib>`)
	f.Fuzz(func(t *testing.T, conn uint8, payload []byte) {
		m := New(Config{QueueLimit: 100})
		var check func(acts []Action)
		check = func(acts []Action) {
			for _, a := range acts {
				if s, ok := a.(Send); ok {
					if _, err := cmt.EncodeFrame(s.Message, s.Priority); err != nil {
						t.Fatalf("unencodable %s: %v", s.Message.Code(), err)
					}
				}
				if l, ok := a.(Lookup); ok {
					check(m.DNSResult(l.Host, addrs("127.0.0.1"), nil, t0))
				}
			}
		}
		acts, _ := m.AddCollection(spec, t0)
		check(acts)
		for _, id := range []ConnID{1, 2} {
			check(m.Receive(id, &cmt.UMInit{NodeID: string(rune('a' + id))}, t0))
		}
		msg, err := cmt.DecodeMessage(payload)
		if err != nil {
			return
		}
		check(m.Receive(ConnID(conn%4), msg, t0))
		check(m.Receive(ConnID(conn%4), msg, t0))
		check(m.Tick(t0.Add(DefaultKeepAlive)))
		check(m.Disconnect(ConnID(conn%4), t0))
	})
}
