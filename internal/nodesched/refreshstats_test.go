package nodesched

import (
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
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

func statInt(d marshal.Dict, key string) int64 {
	for _, p := range d {
		if k, ok := p.Key.(marshal.Bytes); ok && string(k) == key {
			if v, ok := p.Value.(marshal.Int); ok {
				return int64(v)
			}
		}
	}
	return 0
}

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
