package nodesched

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

const testXML = `<?xml version="1.0"?>
<CrawlerConfig><DomainSpecification name="c1">
<attrib name="start_uris" type="list-string"><member>http://a.test/</member><member>http://b.test/</member></attrib>
<attrib name="delay" type="real">0</attrib>
<section name="pp"><attrib name="use_dupservers" type="boolean">yes</attrib></section>
<section name="ppdup"><attrib name="format" type="string">gigabase</attrib><attrib name="compact" type="boolean">no</attrib></section>
</DomainSpecification></CrawlerConfig>`

func newTestMachine(t *testing.T) (*Machine, time.Time) {
	t.Helper()
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Unix(1_700_000_000, 0)
	m, err := NewMachine(MachineConfig{NodeID: "n1", DupServers: 2, Store: st, Env: crawlpipe.Env{NodeID: "n1"}}, now)
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse("t.xml", []byte(testXML), nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.AddCollection(cfg.Collections[0], now); err != nil {
		t.Fatal(err)
	}
	m.Outputs()
	return m, now
}

// sent summarizes outputs as "peer CMD prio".
func sent(outs []Output) []string {
	var s []string
	for _, o := range outs {
		s = append(s, fmt.Sprintf("%s %s %d", o.To, o.Msg.Code(), o.Priority))
	}
	return s
}

func TestMachineMessages(t *testing.T) {
	for _, tc := range []struct {
		name  string
		from  Peer
		msg   cmt.Message
		want  []string
		check func(t *testing.T, m *Machine)
	}{
		{name: "keepalive", from: MNS, msg: &cmt.UMKeepalive{}, want: []string{"multinode CMD_UM_KEEPALIVE_ACK 1"}},
		{name: "ppdup keepalive", from: DS(1), msg: &cmt.PPDUPKeepalive{}, want: []string{"dupserver 1 PPDUP_KEEPALIVE_ACK 1"}},
		{name: "update of unknown collection ignored", from: MNS, msg: &cmt.AdmConfUpdate{Collection: "zz", Config: cmt.CrawlConfig{Collections: []cmt.Collection{{Name: "zz"}}}}},
		{name: "update sends ppdup section to each DS", from: MNS,
			msg:  &cmt.AdmConfUpdate{Collection: "c1", Config: cmt.CrawlConfig{Collections: []cmt.Collection{{Name: "c1", Params: cmt.Params{Sections: []cmt.Section{{Name: "pp", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.BoolAttrib("use_dupservers", true)}}}}}}}}},
			want: []string{"dupserver 0 PPDUP_SET_CONFIG 1", "dupserver 1 PPDUP_SET_CONFIG 1"}},
		{name: "remove", from: MNS, msg: &cmt.AdmConfRemove{Collection: "c1"},
			want: []string{"dupserver 0 PPDUP_CONF_REMOVE 1", "dupserver 0 PPDUP_CONF_REMOVE2 0", "dupserver 1 PPDUP_CONF_REMOVE 1", "dupserver 1 PPDUP_CONF_REMOVE2 0", "multinode CMD_UM_DELETE_OK 0"},
			check: func(t *testing.T, m *Machine) {
				if m.State("c1") != 0 {
					t.Error("collection still there")
				}
			}},
		{name: "suspend", from: MNS, msg: &cmt.AdmConfSuspend{Collection: "c1", State: cmt.StateSuspendedDisk},
			check: func(t *testing.T, m *Machine) {
				if m.State("c1") != cmt.StateSuspendedDisk {
					t.Errorf("state %v", m.State("c1"))
				}
				if _, ok, _ := m.Next(time.Unix(1_700_000_100, 0)); ok {
					t.Error("a suspended collection served a fetch")
				}
			}},
		{name: "conf state", from: MNS, msg: &cmt.UMConfState{Collection: "c1", State: cmt.StateBlocked},
			check: func(t *testing.T, m *Machine) {
				if m.State("c1") != cmt.StateBlocked {
					t.Errorf("state %v", m.State("c1"))
				}
			}},
		{name: "feeding suspend", from: MNS, msg: &cmt.AdmConfFeedingSuspend{Collection: "c1", Suspend: true, Destinations: []string{"default:x"}},
			check: func(t *testing.T, m *Machine) {
				if !m.Feeding("c1").Destinations["default:x"] {
					t.Errorf("feeding %+v", m.Feeding("c1"))
				}
			}},
		{name: "quarantine", from: MNS, msg: &cmt.UMQuarantineSite{Collection: "c1", Site: "a.test", Seconds: 10},
			check: func(t *testing.T, m *Machine) {
				if len(m.Quarantined("c1")) != 1 {
					t.Error("not quarantined")
				}
				if err := m.Tick(time.Unix(1_700_000_011, 0)); err != nil {
					t.Fatal(err)
				}
				if len(m.Quarantined("c1")) != 0 {
					t.Error("quarantine did not expire on the 5 s timer")
				}
			}},
		{name: "dns reply stored", from: MNS, msg: &cmt.UMDNSReply{Host: "a.test", Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "127.0.0.9"}}, TTL: 60},
			check: func(t *testing.T, m *Machine) {
				if ip, ok := m.LookupHost("a.test", time.Unix(1_700_000_001, 0)); !ok || ip != "127.0.0.9" {
					t.Errorf("lookup %q %v", ip, ok)
				}
			}},
		{name: "reprocess recorded", from: MNS, msg: &cmt.UMReprocessSite{Collection: "c1", Site: "a.test", Prefix: "http://a.test/"},
			check: func(t *testing.T, m *Machine) {
				if len(m.Reprocessing("c1")) != 1 {
					t.Error("not recorded")
				}
			}},
		{name: "ppdup error logged", from: DS(0), msg: &cmt.PPDUPError{Collection: "c1", Why: "x"},
			check: func(t *testing.T, m *Machine) {
				if m.Stats("c1")["dupserver_errors"] != 1 {
					t.Error("not counted")
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, now := newTestMachine(t)
			if err := m.Handle(tc.from, tc.msg, now); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, sent(m.Outputs())); diff != "" {
				t.Errorf("outputs (-want +got):\n%s", diff)
			}
			if tc.check != nil {
				tc.check(t, m)
			}
		})
	}
}

func TestMachineConfigAckVectorClock(t *testing.T) {
	m, now := newTestMachine(t)
	m.Connected(DS(0), true, now)
	outs := m.Outputs()
	if len(outs) != 1 {
		t.Fatalf("want one SET_CONFIG on connect, got %v", sent(outs))
	}
	sc := outs[0].Msg.(*cmt.PPDUPSetConfig)
	if got := sc.Config.Collections[0]; len(got.Attribs) != 2 || len(got.Sections) != 0 {
		t.Errorf("SET_CONFIG must carry only the ppdup section: %+v", got)
	}
	_ = m.Handle(DS(0), &cmt.PPDUPConfigAck{VClock: sc.VClock - 1}, now)
	if m.DSUpdated(0) {
		t.Error("stale ACK accepted")
	}
	_ = m.Handle(DS(0), &cmt.PPDUPConfigAck{VClock: sc.VClock}, now)
	if !m.DSUpdated(0) {
		t.Error("ACK with the current clock refused")
	}
}

func TestMachineAskRouteBatches(t *testing.T) {
	m, now := newTestMachine(t)
	for i := 0; i < 300; i++ {
		if err := m.Handle(MNS, &cmt.UMAddRoute{Collection: "c1", NodeID: "n2", Site: fmt.Sprintf("s%03d.test", i), TTL: 60}, now); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Handle(MNS, &cmt.UMAskRoute{Collection: "c1"}, now); err != nil {
		t.Fatal(err)
	}
	outs := m.Outputs()
	want := []string{"multinode CMD_UM_ADD_ROUTE 0", "multinode CMD_UM_ADD_ROUTE 0", "multinode CMD_UM_LAST_ROUTE 0"}
	if diff := cmp.Diff(want, sent(outs)); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	if n := len(outs[0].Msg.(*cmt.UMAddRouteReply).Routes) + len(outs[1].Msg.(*cmt.UMAddRouteReply).Routes); n != 300 {
		t.Errorf("%d routes sent", n)
	}
}

func TestMachineGrantDeniedAndURIRouting(t *testing.T) {
	m, now := newTestMachine(t)
	// Start URIs of unrouted sites go to the multinode scheduler.
	if err := m.Handle(MNS, &cmt.AdmConfUpdate{Collection: "c1", Config: cmt.CrawlConfig{Collections: []cmt.Collection{{Name: "c1", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.ListAttrib("start_uris", "http://a.test/")}}}}}}, now); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"multinode CMD_UM_URI 0"}, sent(m.Outputs())); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	// Routed here: the URI comes back and is queued; serving it needs DNS
	// and a grant.
	_ = m.Handle(MNS, &cmt.UMAddRoute{Collection: "c1", NodeID: "n1", Site: "a.test", Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "127.0.0.7"}}, TTL: 60}, now)
	_ = m.Handle(MNS, &cmt.UMURI{Collection: "c1", Entry: wireEntry(crawlpipe.Link{URI: "http://a.test/"}, "", 0)}, now)
	if _, ok, _ := m.Next(now); ok {
		t.Fatal("served before the grant")
	}
	outs := sent(m.Outputs())
	if diff := cmp.Diff([]string{"multinode CMD_UM_START_CRAWL_IP 1"}, outs); diff != "" {
		t.Fatalf("(-want +got):\n%s", diff)
	}
	_ = m.Handle(MNS, &cmt.UMStartCrawlIPReply{Collection: "c1", IP: "127.0.0.7", Site: "a.test", Allowed: false}, now)
	if _, ok, _ := m.Next(now.Add(time.Minute)); ok {
		t.Fatal("served after a denied grant (must be blocked 30 min)")
	}
	j, ok, _ := m.Next(now.Add(31 * time.Minute))
	for i := 0; !ok && i < 3; i++ {
		for _, o := range m.Outputs() {
			if g, isG := o.Msg.(*cmt.UMStartCrawlIP); isG {
				_ = m.Handle(MNS, &cmt.UMStartCrawlIPReply{Collection: "c1", IP: g.IP, Site: g.Site, Allowed: true}, now.Add(31*time.Minute))
			}
		}
		j, ok, _ = m.Next(now.Add(31 * time.Minute))
	}
	if !ok || j.Fetch.URI != "http://a.test/" {
		t.Fatalf("not served after the block: %v %+v", ok, j)
	}
}
