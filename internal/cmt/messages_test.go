package cmt

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/marshal"
)

func sampleEntry() Entry {
	return Entry{
		URI: URIStructure{
			URI: "https://user:pw@www.example.com:8443/a/b;p?q=1#frag", Scheme: "https",
			Netloc: "user:pw@www.example.com:8443", Host: "www.example.com", Port: 8443,
			Path: "/a/b", Query: "q=1", Params: "p", Fragment: "frag", Credentials: "user:pw",
			DefaultScheme: "http", SkipFragments: true, Parsed: true, HostIDNA: "www.example.com",
		},
		Referrer:   URIStructure{URI: "not parsed", Port: NoPort, DefaultScheme: "http"},
		Flags:      URIFStartURI | URIFRedirect301 | URIFUnscreened | URIFUpdateCargo,
		FrameFlags: FrameChild,
		Redirects: []RedirectHop{
			{URI: "http://example.com/", Type: URIFRedirect301},
			{URI: "http://www.example.com/", Type: URIFMetaRefresh},
		},
		QueueFlags: QFPrepend | QFUrgent,
		Cycle:      1 << 40,
		Extra: []ExtraItem{
			{IntScalar(16), NoneScalar()},
			{StrScalar("title"), StrScalar("caf\xc3\xa9")},
			{IntScalar(-7), FloatScalar(0.5)},
			{StrScalar("n"), IntScalar(-1 << 33)},
		},
	}
}

func sampleConfig() CrawlConfig {
	return CrawlConfig{Collections: []Collection{{
		Name: "web",
		Params: Params{
			Attribs: []Attrib{
				IntAttrib("refresh", 1440), StrAttrib("refresh_mode", "scratch"),
				ListAttrib("start_uris", "http://a.example/", "http://b.example/"),
				BoolAttrib("robots", true), RealAttrib("delay", 60.5), ListAttrib("empty"),
			},
			Sections: []Section{
				{Name: "include_domains", Params: Params{
					Sections: []Section{{Name: "prefix", Params: Params{Attribs: []Attrib{ListAttrib("x", "a")}}}},
				}},
				{Name: LinkExtractionSection, Params: Params{Attribs: []Attrib{
					BoolAttrib("a", true), BoolAttrib("img", false), BoolAttrib("card", true)}}},
			},
		},
		SubDomains: []Named{{Name: "sub", Params: Params{Attribs: []Attrib{IntAttrib("max_doc", 5)},
			Sections: []Section{{Name: LinkExtractionSection, Params: Params{Attribs: []Attrib{BoolAttrib("meta_refresh", true)}}}}}}},
		Logins: []Named{{Name: "login1", Params: Params{Attribs: []Attrib{StrAttrib("preload", "http://x/")}}}},
		Nodes:  []Named{{Name: "node1", Params: Params{Attribs: []Attrib{IntAttrib("max_sites", 10)}}}, {Name: "node2"}},
	}, {
		Name: "second", Params: Params{Attribs: []Attrib{StrAttrib("format", "gigabase")}},
	}}}
}

// decodedConfig is sampleConfig as it comes back from the wire: booleans
// travel as integers.
func decodedConfig() CrawlConfig {
	c := sampleConfig()
	var fix func(p *Params)
	fix = func(p *Params) {
		for i := range p.Attribs {
			if p.Attribs[i].Type == AttribBoolean {
				p.Attribs[i].Type = AttribInteger
			}
		}
		for i := range p.Sections {
			fix(&p.Sections[i].Params)
		}
	}
	for i := range c.Collections {
		col := &c.Collections[i]
		fix(&col.Params)
		for _, g := range [][]Named{col.SubDomains, col.Logins, col.Nodes} {
			for j := range g {
				fix(&g[j].Params)
			}
		}
	}
	return c
}

var cs1 = Checksum{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// allMessages has one message of every type, every field set; want is
// what decoding gives back when it differs from the message itself.
func allMessages() []struct {
	msg  Message
	want Message
} {
	addrs := []AddrInfo{{Family: 2, SockType: 1, Protocol: 6, CanonName: "www.example.com", IP: "10.0.0.1"},
		{Family: 10, SockType: 1, IP: "::1", Port: 0}}
	stats := marshal.Dict{{Key: marshal.Str("Processed"), Value: marshal.Float(12.5)}, {Key: marshal.Str("ActiveSites"), Value: marshal.Int(3)}}
	cfg, dcfg := sampleConfig(), decodedConfig()
	type pair = struct {
		msg  Message
		want Message
	}
	return []pair{
		{&AdmConfUpdate{Collection: "web", Config: cfg, Epoch: 7}, &AdmConfUpdate{Collection: "web", Config: dcfg, Epoch: 7}},
		{&AdmConfAdd{Collection: "web", Config: cfg, Epoch: 1}, &AdmConfAdd{Collection: "web", Config: dcfg, Epoch: 1}},
		{&AdmConfRemove{Collection: "web"}, nil},
		{&AdmConfSuspend{Collection: "web", State: StateSuspendedDisk}, nil},
		{&AdmConfResume{Collection: "web"}, nil},
		{&AdmConfRefresh{Collection: "web", SubCollection: "sub", Flags: RefreshSubCollection | RefreshStartURIsOnly}, nil},
		{&AdmPreemptSite{Collection: "web", Site: "www.example.com", Requeue: true}, nil},
		{&UMAddRoute{Collection: "web", NodeID: "n1", RouteAttr: "example.com", Site: "www.example.com", Addrs: addrs, TTL: 86400}, nil},
		{&UMAddRouteReply{Collection: "web", Routes: []Route{{"example.com", "n1"}, {"example.org", "n2"}}}, nil},
		{&UMAskRoute{Collection: "web"}, nil},
		{&UMLastRoute{Collection: "web"}, nil},
		{&UMKeepalive{}, nil},
		{&UMKeepaliveAck{}, nil},
		{&UMDNSRequest{Collection: "web", Site: "www.example.com"}, nil},
		{&UMDNSReply{Collection: "", Host: "www.example.com", Addrs: addrs, Time: 1245064336, TTL: 3600}, nil},
		{&UMReprocessSite{Collection: "web", Site: "www.example.com", Prefix: "http://www.example.com/a/", Destination: "default:web", Exact: true}, nil},
		{&UMQuarantineSite{Collection: "web", Site: "www.example.com", Seconds: 300}, nil},
		{&UMStartCrawlIP{Collection: "web", IP: "10.0.0.1", Site: "www.example.com", StoreID: 2}, nil},
		{&UMStartCrawlIPReply{Collection: "web", IP: "10.0.0.1", Site: "www.example.com", StoreID: 2, Allowed: true}, nil},
		{&UMStopCrawlIP{Collection: "web", IP: "10.0.0.1", Site: "www.example.com"}, nil},
		{&UMDeleteSite{Collection: "web", Site: "www.example.com"}, nil},
		{&UMDeleteURIs{Collection: "web", Sites: []SiteURIs{{"a.example", []string{"http://a.example/1", "http://a.example/2"}}, {"b.example", []string{"http://b.example/"}}}, ErrCode: ErrCodeUser}, nil},
		{&UMConfStateRequest{Collection: "web"}, nil},
		{&UMConfState{Collection: "web", State: StateCompacting}, nil},
		{&UMQuarantineSiteRequeue{Collection: "web", Site: "www.example.com", Seconds: 60}, nil},
		{&UMDeleteOK{Collection: "web"}, nil},
		{&AdmConfFeedingSuspend{Collection: "web", Suspend: true, Destinations: []string{"dest1", "default:web"}}, nil},
		{&UMInit{NodeID: "70-86-12-20", AdminHost: "node1.example", AdminPort: 13000}, nil},
		{&UMURI{Collection: "web", Entry: sampleEntry()}, nil},
		{&UMURIUrg{Collection: "web", Entry: sampleEntry()}, nil},
		{&UMStat{Collection: "web", Stats: stats}, nil},
		{&UMLog{Collection: "web", File: LogFetch, Text: "200 http://www.example.com/"}, nil},
		{&PPDUPAddOK{Collection: "web", NodeID: "n1", URI: "http://a/", OwnerURI: "http://b/", PPDUPID: "ds1", DBName: "/data/web.db", Checksum: cs1}, nil},
		{&PPDUPError{Collection: "web", Why: "no such collection"}, nil},
		{&PPDUPAdd{Collection: "web", NodeID: "n1", URI: "http://a/", Checksum: cs1, PPDUPID: "ds1", DBName: "/data/web.db"}, nil},
		{&PPDUPRemove{Collection: "web", NodeID: "n1", URI: "http://a/", Checksum: cs1, PPDUPID: "ds1", DBName: "/data/web.db"}, nil},
		{&PPDUPRemoveOK{Collection: "web", URI: "http://a/", PPDUPID: "ds1", DBName: "/data/web.db", NodeID: "n1", Checksum: cs1}, nil},
		{&PPDUPKeepalive{}, nil},
		{&PPDUPKeepalive{Epoch: 3}, nil},
		{&PPDUPKeepaliveAck{}, nil},
		{&PPDUPPromoteReq{Collection: "web", Checksum: cs1}, nil},
		{&PPDUPConfRemove{Collection: "web", PPDUPID: "ds1"}, nil},
		{&PPDUPSetConfig{Collection: "web", Config: cfg, VClock: 1 << 35}, &PPDUPSetConfig{Collection: "web", Config: dcfg, VClock: 1 << 35}},
		{&PPDUPConfigAck{VClock: 1 << 35}, nil},
		{&PPDUPConfRemove2{Collection: "web"}, nil},
	}
}

func TestRoundTripEveryMessage(t *testing.T) {
	seen := map[string]bool{}
	codes := map[Command]bool{}
	for _, tt := range allMessages() {
		name := reflect.TypeOf(tt.msg).Elem().Name()
		seen[name] = true
		codes[tt.msg.Code()] = true
		t.Run(name, func(t *testing.T) {
			want := tt.want
			if want == nil {
				want = tt.msg
			}
			for _, p := range []Priority{PriorityNormal, PriorityHigh} {
				frame, err := EncodeFrame(tt.msg, p)
				if err != nil {
					t.Fatal(err)
				}
				got, err := DecodeFrame(frame[HeaderLen:])
				if err != nil {
					t.Fatal(err)
				}
				if diff := cmp.Diff(Frame{p, want}, got); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
				again, err := EncodeFrame(got.Message, got.Priority)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(again, frame) {
					t.Errorf("re-encoding differs:\n got %X\nwant %X", again, frame)
				}
			}
			// The dictionary view agrees with the frame.
			d, err := MessageDict(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			if c, ok := d.Get(KeyCmd); !ok || c != marshal.Int(tt.msg.Code()) {
				t.Errorf("dict cm = %v", c)
			}
			back, err := MessageFromDict(d)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, back); diff != "" {
				t.Errorf("MessageFromDict (-want +got):\n%s", diff)
			}
			checkKeyOrder(t, d)
		})
	}
	if len(seen) != 44 {
		t.Errorf("%d message types tested, want 44", len(seen))
	}
	for c := Command(0); c <= 61; c++ {
		if c.Known() != codes[c] {
			t.Errorf("command %v: known %v, tested %v", c, c.Known(), codes[c])
		}
	}
}

// checkKeyOrder checks that a dictionary follows trawl's key order.
func checkKeyOrder(t *testing.T, d marshal.Dict) {
	t.Helper()
	order := strings.Fields("cs dn xp si ou vc pi mi db ds ep id pd wy cm ur st")
	last := -1
	for _, p := range d {
		k := string(p.Key.(marshal.Bytes))
		i := -1
		for j, o := range order {
			if o == k {
				i = j
			}
		}
		if i <= last {
			t.Errorf("key %q out of order in %v", k, d)
		}
		last = i
	}
}

func TestOptionalFieldsLeftOut(t *testing.T) {
	tests := []struct {
		msg  Message
		keys string
	}{
		{&PPDUPAddOK{Collection: "c", NodeID: "n", URI: "u"}, "dn id cm ur"},
		{&PPDUPRemoveOK{Collection: "c", URI: "u"}, "dn cm ur"},
		{&PPDUPConfRemove{Collection: "c"}, "dn cm"},
		{&PPDUPSetConfig{VClock: 1}, "vc pd cm"},
		{&AdmConfAdd{Collection: "c"}, "dn ds cm"},
		{&UMKeepalive{}, "cm"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%T", tt.msg), func(t *testing.T) {
			d, err := MessageDict(tt.msg)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, p := range d {
				got = append(got, string(p.Key.(marshal.Bytes)))
			}
			if g := strings.Join(got, " "); g != tt.keys {
				t.Errorf("keys %q, want %q", g, tt.keys)
			}
		})
	}
}

// Decoding is lenient where the spec and its examples disagree.
func TestDecodeLenient(t *testing.T) {
	s := marshal.Str
	tests := []struct {
		name string
		dict marshal.Dict
		want Message
	}{
		{"single addrinfo, not a list", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(7)}, {Key: s("dn"), Value: s("c")},
			{Key: s("pd"), Value: marshal.Tuple{s("n"), s("a"), s("site"),
				marshal.Tuple{marshal.Int(2), marshal.Int(1), marshal.Int(0), s(""), marshal.Tuple{s("1.2.3.4"), marshal.Int(0)}},
				marshal.Int(5)}}},
			&UMAddRoute{Collection: "c", NodeID: "n", RouteAttr: "a", Site: "site", Addrs: []AddrInfo{{Family: 2, SockType: 1, IP: "1.2.3.4"}}, TTL: 5}},
		{"None addrinfo", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(7)}, {Key: s("dn"), Value: s("c")},
			{Key: s("pd"), Value: marshal.Tuple{s("n"), s("a"), s("site"), marshal.None{}, marshal.Int(5)}}},
			&UMAddRoute{Collection: "c", NodeID: "n", RouteAttr: "a", Site: "site", TTL: 5}},
		{"xp as a bare port, unicode strings, unknown keys", marshal.Dict{
			{Key: marshal.Unicode("mi"), Value: marshal.Unicode("n")}, {Key: s("xp"), Value: marshal.Int(10000)},
			{Key: s("zz"), Value: marshal.List{marshal.Int(1)}}, {Key: marshal.Int(5), Value: marshal.None{}},
			{Key: s("cm"), Value: marshal.Int(24)}},
			&UMInit{NodeID: "n", AdminPort: 10000}},
		{"checksum as 32 hex digits, bool for int", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(57)}, {Key: s("dn"), Value: s("c")},
			{Key: s("cs"), Value: s("0102030405060708090a0b0c0d0e0f10")}},
			&PPDUPPromoteReq{Collection: "c", Checksum: cs1}},
		{"bool priority-like fields", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(6)}, {Key: s("dn"), Value: s("c")},
			{Key: s("pd"), Value: marshal.List{s("site"), marshal.Bool(true)}}},
			&AdmPreemptSite{Collection: "c", Site: "site", Requeue: true}},
		{"refresh of the whole collection (None)", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(5)}, {Key: s("dn"), Value: s("c")},
			{Key: s("pd"), Value: marshal.Tuple{marshal.None{}, marshal.Int(2)}}},
			&AdmConfRefresh{Collection: "c", Flags: RefreshCollection}},
		{"feeding suspend of every destination (None)", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(23)}, {Key: s("dn"), Value: s("c")},
			{Key: s("pd"), Value: marshal.Tuple{marshal.Int(0), marshal.None{}}}},
			&AdmConfFeedingSuspend{Collection: "c"}},
		{"DNS failure (None)", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(13)}, {Key: s("dn"), Value: s("")},
			{Key: s("pd"), Value: marshal.Tuple{s("h"), marshal.Tuple{marshal.None{}, marshal.Int(1), marshal.Int(2)}}}},
			&UMDNSReply{Host: "h", Time: 1, TTL: 2}},
		{"flags with bit 31 as a negative int32", marshal.Dict{
			{Key: s("cm"), Value: marshal.Int(25)}, {Key: s("dn"), Value: s("c")},
			{Key: s("pd"), Value: marshal.Tuple{s("WQE"), EmptyURIStructure().valueForTest(), EmptyURIStructure().valueForTest(),
				marshal.Int(-1 << 31), marshal.Int(0), marshal.Tuple{}, marshal.Int(0), marshal.Int(0), marshal.Dict{}}}},
			&UMURI{Collection: "c", Entry: Entry{URI: EmptyURIStructure(), Referrer: EmptyURIStructure(), Flags: 0x80000000}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := MessageFromDict(tt.dict)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func (u URIStructure) valueForTest() marshal.Value { return u.Value() }

func TestDecodeErrors(t *testing.T) {
	s := marshal.Str
	enc := func(v marshal.Value) []byte {
		b, err := marshal.Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	msg := func(pairs ...marshal.Pair) []byte { return enc(marshal.Tuple{marshal.Dict(pairs), marshal.Int(0)}) }
	cm := func(c int64) marshal.Pair { return marshal.Pair{Key: s("cm"), Value: marshal.Int(c)} }
	dn := marshal.Pair{Key: s("dn"), Value: s("c")}
	tests := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"empty", nil, "not a tuple"},
		{"not a tuple", enc(marshal.Int(1)), "not a tuple"},
		{"tuple of 3", enc(marshal.Tuple{marshal.Dict{}, marshal.Int(0), marshal.Int(0)}), "tuple of 3"},
		{"not a dict", enc(marshal.Tuple{marshal.Int(0), marshal.Int(0)}), "not a dictionary"},
		{"priority 2", enc(marshal.Tuple{marshal.Dict{cm(10)}, marshal.Int(2)}), "priority 2"},
		{"priority a string", enc(marshal.Tuple{marshal.Dict{cm(10)}, s("1")}), "priority"},
		{"trailing", append(msg(cm(10)), 'N'), "1 bytes after"},
		{"no cm", msg(dn), "no PKT_CMD"},
		{"cm a string", msg(marshal.Pair{Key: s("cm"), Value: s("25")}, dn), "PKT_CMD"},
		{"missing dn", msg(cm(2)), `missing key "dn"`},
		{"missing pd", msg(cm(25), dn), `missing key "pd"`},
		{"dn an int", msg(cm(2), marshal.Pair{Key: s("dn"), Value: marshal.Int(1)}), "PKT_DSPECNAME"},
		{"short checksum", msg(cm(57), dn, marshal.Pair{Key: s("cs"), Value: s("abc")}), "16 bytes"},
		{"bad WQE tag", msg(cm(25), dn, marshal.Pair{Key: s("pd"), Value: marshal.Tuple{s("XQE"), marshal.None{}, marshal.None{}, marshal.None{}, marshal.None{}, marshal.None{}, marshal.None{}, marshal.None{}, marshal.None{}}}), "tag"},
		{"WQE of 8", msg(cm(26), dn, marshal.Pair{Key: s("pd"), Value: marshal.Tuple{s("WQE")}}), "tuple of 9"},
		{"routes not a list", msg(cm(7), dn, marshal.Pair{Key: s("pd"), Value: s("x")}), "want a list"},
		{"state too big", msg(cm(20), dn, marshal.Pair{Key: s("pd"), Value: marshal.Int(1 << 40)}), "32-bit"},
		{"truncated", msg(cm(2), dn)[:10], "marshal"},
		{"config int key", msg(cm(1), dn, marshal.Pair{Key: s("ds"), Value: marshal.Dict{{Key: s("c"), Value: marshal.Dict{{Key: marshal.Int(1), Value: marshal.Int(1)}}}}}), "key of type int"},
		{"link_extraction unknown key", msg(cm(1), dn, marshal.Pair{Key: s("ds"), Value: marshal.Dict{{Key: s("c"), Value: marshal.Dict{{Key: s("link_extraction"), Value: marshal.Dict{{Key: marshal.Int(8), Value: marshal.Int(1)}}}}}}}), "unknown link_extraction key 0x8"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeFrame(tt.payload)
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("err %v, want ErrMalformed", err)
			}
			if errors.Is(err, ErrUnknownCommand) {
				t.Errorf("err %v is also ErrUnknownCommand", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err %q, want it to mention %q", err, tt.want)
			}
		})
	}
}

func TestUnknownCommand(t *testing.T) {
	d := marshal.Dict{{Key: marshal.Str("cm"), Value: marshal.Int(99)}, {Key: marshal.Str("dn"), Value: marshal.Str("c")}}
	b, err := marshal.Encode(marshal.Tuple{d, marshal.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	_, err = DecodeFrame(b)
	if !errors.Is(err, ErrUnknownCommand) || errors.Is(err, ErrMalformed) {
		t.Fatalf("err %v, want ErrUnknownCommand only", err)
	}
	var uce *UnknownCommandError
	if !errors.As(err, &uce) {
		t.Fatalf("err %T", err)
	}
	if diff := cmp.Diff(&UnknownCommandError{Code: 99, Priority: PriorityHigh, Dict: d}, uce); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got := err.Error(); got != "cmt: unknown command 99" {
		t.Errorf("Error() = %q", got)
	}
}

func TestEncodeErrors(t *testing.T) {
	tests := []struct {
		name string
		msg  Message
		p    Priority
		want string
	}{
		{"priority", &UMKeepalive{}, 2, "priority 2"},
		{"nil", nil, 0, "nil message"},
		{"too many routes", &UMAddRouteReply{Routes: make([]Route, 257)}, 0, "257 routes"},
		{"attrib without type", &AdmConfAdd{Config: CrawlConfig{Collections: []Collection{{Name: "c", Params: Params{Attribs: []Attrib{{Name: "x"}}}}}}}, 0, "no type"},
		{"unknown link_extraction attrib", &PPDUPSetConfig{Config: CrawlConfig{Collections: []Collection{{Name: "c", Params: Params{
			Sections: []Section{{Name: LinkExtractionSection, Params: Params{Attribs: []Attrib{BoolAttrib("blink", true)}}}}}}}}}, 0, `unknown link_extraction attrib "blink"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dst := []byte("keep")
			out, err := AppendFrame(dst, tt.msg, tt.p)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err %v, want %q", err, tt.want)
			}
			if string(out) != "keep" {
				t.Errorf("dst changed to %q", out)
			}
		})
	}
}

// The marshal.Value view of the complex types agrees with the streaming
// codec the messages use.
func TestEntryValueAgreesWithStream(t *testing.T) {
	for _, e := range []Entry{sampleEntry(), {URI: contosoURI, Referrer: EmptyURIStructure(), Cycle: -1}} {
		b := AppendEntry(nil, &e)
		v, err := marshal.Encode(e.Value())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, v) {
			t.Errorf("AppendEntry and Entry.Value differ:\n%X\n%X", b, v)
		}
		dv, err := marshal.Decode(b)
		if err != nil {
			t.Fatal(err)
		}
		got, err := EntryFromValue(dv)
		if err != nil {
			t.Fatal(err)
		}
		var streamed Entry
		if err := ReadEntry(marshal.NewReader(b, marshal.Limits{}), &streamed); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(got, streamed); diff != "" {
			t.Errorf("EntryFromValue vs ReadEntry (-value +stream):\n%s", diff)
		}
		if diff := cmp.Diff(e, streamed); diff != "" {
			t.Errorf("round trip (-want +got):\n%s", diff)
		}
	}
}

func TestCrawlConfigValue(t *testing.T) {
	c := sampleConfig()
	v, err := c.Value()
	if err != nil {
		t.Fatal(err)
	}
	// link_extraction attribs travel as integer keys.
	web, _ := v.Get("web")
	le, _ := web.(marshal.Dict).Get(LinkExtractionSection)
	wantLE := marshal.Dict{{Key: marshal.Int(0x1), Value: marshal.Int(1)}, {Key: marshal.Int(0x80), Value: marshal.Int(0)}, {Key: marshal.Int(0x400000), Value: marshal.Int(1)}}
	if diff := cmp.Diff(wantLE, le); diff != "" {
		t.Errorf("link_extraction (-want +got):\n%s", diff)
	}
	nodes, _ := web.(marshal.Dict).Get("nodes")
	if n, ok := nodes.(marshal.Dict).Get("node2"); !ok || len(n.(marshal.Dict)) != 0 {
		t.Errorf("nodes = %v", nodes)
	}
	got, err := CrawlConfigFromValue(v)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(decodedConfig(), got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	col, ok := got.Collection("web")
	if !ok {
		t.Fatal("no collection web")
	}
	if a, ok := col.Attrib("refresh"); !ok || a.Int != 1440 {
		t.Errorf("refresh = %v", a)
	}
	if s, ok := col.Section(LinkExtractionSection); !ok || len(s.Attribs) != 3 {
		t.Errorf("link_extraction = %v", s)
	}
	for _, name := range []string{"a", "action", "area", "comment", "frame", "go", "img", "layer", "link", "meta",
		"script", "script_java", "style", "object", "meta_refresh", "embed", "card"} {
		k, ok := LinkExtractionKey(name)
		if n, ok2 := LinkExtractionName(k); !ok || !ok2 || n != name {
			t.Errorf("link_extraction %q -> %x -> %q", name, k, n)
		}
	}
}

func TestStrings(t *testing.T) {
	tests := []struct{ got, want string }{
		{CmdUMURI.String(), "CMD_UM_URI"},
		{CmdPPDUPConfRemove2.String(), "PPDUP_CONF_REMOVE2"},
		{Command(99).String(), "Command(99)"},
		{URIFlags(0).String(), "URIF_NOFLAGS"},
		{(URIFStartURI | URIFUnscreened | 0x800).String(), "URIF_STARTURI|URIF_UNSCREENED|0x800"},
		{URIFUpdateCargo.String(), "URIF_UPDATE_CARGO"},
		{(QFPrepend | QFUrgent | 0x10).String(), "QF_PREPEND|QF_URGENT|0x10"},
		{QueueFlags(0).String(), "0"},
		{FrameChild.String(), "URI_STATE_FRAME_CHILD"},
		{StateSuspendedDelay.String(), "8 (suspended-variable-delay)"},
		{CollectionState(9).String(), "CollectionState(9)"},
		{PriorityHigh.String(), "high"},
		{cs1.String(), "0102030405060708090a0b0c0d0e0f10"},
		{AttribListString.String(), "list-string"},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
}

func TestVectorClock(t *testing.T) {
	var c VectorClock
	if c.Acked(0) {
		t.Error("a fresh clock acks 0")
	}
	v1 := c.Next()
	v2 := c.Next()
	if v1 != 1 || v2 != 2 || c.Current() != 2 {
		t.Errorf("clock %d %d %d", v1, v2, c.Current())
	}
	if c.Acked(v1) || !c.Acked(v2) {
		t.Error("only the latest SET_CONFIG is acked")
	}
}

func TestZeroDecoder(t *testing.T) {
	var d Decoder
	b, _ := EncodePayload(&UMDeleteOK{Collection: "c"}, PriorityNormal)
	f, err := d.Decode(b)
	if err != nil || f.Message.(*UMDeleteOK).Collection != "c" {
		t.Fatalf("%v %v", f, err)
	}
	if _, err := MessageDict(nil); err == nil {
		t.Error("nil message accepted")
	}
}
