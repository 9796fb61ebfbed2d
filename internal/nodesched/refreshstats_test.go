package nodesched

import (
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
)

// statsOf returns the CMD_UM_STAT dictionaries among outs.
func statsOf(outs []Output) []marshal.Dict {
	var ds []marshal.Dict
	for _, o := range outs {
		if s, ok := o.Msg.(*cmt.UMStat); ok {
			ds = append(ds, s.Stats)
		}
	}
	return ds
}

// statInt returns a counter of a CMD_UM_STAT dictionary (the MS-FSCADM
// structure and its "trawl" member, decoded as the multinode scheduler
// does).
func statInt(d marshal.Dict, key string) int64 { return stats.DecodeStat(d)[key] }

// TestRefreshReportsTheOldCycleFirst: when a refresh cycle starts (an
// operator's refetch, CMD_ADM_CONF_REFRESH), the node scheduler first
// reports what it counted in the cycle that ends, so that the multinode
// scheduler, which starts a new cycle when refresh_cycles grows, files
// none of it under the new one; the cycle's start comes in a later report.
func TestRefreshReportsTheOldCycleFirst(t *testing.T) {
	m, now := newTestMachine(t)
	if err := m.Handle(MNS, &cmt.UMURI{Collection: "c1", Entry: cmt.Entry{URI: uriStructure("http://a.test/x"),
		Referrer: cmt.EmptyURIStructure(), Flags: cmt.URIFUnscreened}}, now); err != nil {
		t.Fatal(err)
	}
	m.Outputs()
	if err := m.Handle(MNS, &cmt.AdmConfRefresh{Collection: "c1", Flags: cmt.RefreshCollection}, now); err != nil {
		t.Fatal(err)
	}
	ds := statsOf(m.Outputs())
	if len(ds) != 1 {
		t.Fatalf("want one CMD_UM_STAT when the refresh starts, got %d", len(ds))
	}
	if n := statInt(ds[0], "refresh_cycles"); n != 0 {
		t.Errorf("the report of the cycle that ends carries refresh_cycles %d", n)
	}
	if n := statInt(ds[0], "uris_queued"); n != 1 {
		t.Errorf("the report of the cycle that ends: uris_queued %d, want 1 (%v)", n, ds[0])
	}
	if m.Stats("c1")["refresh_cycles"] != 1 {
		t.Fatalf("refresh_cycles %d", m.Stats("c1")["refresh_cycles"])
	}
	if err := m.Tick(now.Add(StatsInterval + time.Second)); err != nil {
		t.Fatal(err)
	}
	ds = statsOf(m.Outputs())
	if len(ds) != 1 || statInt(ds[0], "refresh_cycles") != 1 {
		t.Errorf("the next report should carry the new cycle: %v", ds)
	}
}

// TestStatsInterval: MachineConfig.StatsInterval sets how often the
// statistics go out (StatsInterval when 0).
func TestStatsInterval(t *testing.T) {
	st, err := store.Open(t.TempDir(), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	now := time.Unix(1_700_000_000, 0)
	m, err := NewMachine(MachineConfig{NodeID: "n1", Store: st, StatsInterval: 2 * time.Second}, now)
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
	for i, tc := range []struct {
		after time.Duration
		want  int
	}{{time.Second, 0}, {2 * time.Second, 1}, {3 * time.Second, 0}, {4 * time.Second, 1}} {
		if err := m.Tick(now.Add(tc.after)); err != nil {
			t.Fatal(err)
		}
		if got := len(statsOf(m.Outputs())); got != tc.want {
			t.Errorf("tick %d at +%v: %d CMD_UM_STAT, want %d", i, tc.after, got, tc.want)
		}
	}
}
