package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestApplyDNS feeds two snapshots of a resolver's counters into a
// global record and checks the attributes of 2.2.4.8.
func TestApplyDNS(t *testing.T) {
	tr := NewTracker(0, 100)
	tr.UpdateGlobal(DNSCounters{Requests: 4, Responses: 3, Timeouts: 1, Written: 160, Read: 400, RCodes: map[int]int64{0: 2, 3: 1}, MaxRate: 4})
	tr.UpdateGlobal(DNSCounters{Requests: 6, Responses: 5, Retries: 1, Timeouts: 1, Written: 240, Read: 600, RCodes: map[int]int64{0: 4, 3: 1}, MaxRate: 4})
	tr.Fold(200)
	g := tr.Global().Complete()
	got := FlattenGlobal(g)
	want := GlobalFlat{DNSWrite: 240, DNSRead: 600, DNSRequests: 6, DNSResponses: 5, DNSRetries: 1, DNSTimeout: 1,
		DNSResponse: map[string]float64{"0": 4, "3": 1}, DNSRateLimit: 4}
	got.DNSRate, got.DNSDataRateIn, got.DNSDataRateOut = 0, 0, 0
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("global statistics (-want +got):\n%s", diff)
	}
	if _, _, _, n := g.Numbers("DNSRequests"); n != 6 {
		t.Errorf("DNSRequests updated %d times, want one per request", n)
	}
}

// TestApplyCountersFeeding checks the attributes fed from the counters
// trawl added for WriteNet and the PP statistics.
func TestApplyCountersFeeding(t *testing.T) {
	for _, tc := range []struct {
		name   string
		schema *Schema
		want   map[string]float64
	}{
		{"collection", CollectionSchema(), map[string]float64{"WriteNet": 900, "PPAdded": 5, "PPModified": 1, "PPFed": 6,
			"PPSucceeded": 5, "PPFailed": 1, "PPDeleted": 2, "PPURLsChange": 0, "PPChecksums": 0}},
		{"site", SiteSchema(), map[string]float64{"WriteNet": 900}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := NewRecord(tc.schema, "x")
			ApplyCounters(r, map[string]int64{"processed": 9, "bytes_sent": 900, "pp_added": 5, "pp_modified": 1,
				"pp_fed": 6, "pp_succeeded": 5, "pp_failed": 1, "pp_deleted": 2}, nil)
			got := map[string]float64{}
			for k := range tc.want {
				got[k] = r.Value(k)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
