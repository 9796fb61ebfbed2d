package stats

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/marshal"
)

// wireCounters are a node scheduler's counters of every kind.
func wireCounters() map[string]int64 {
	return map[string]int64{"processed": 120, "fetched": 118, "stored": 90, "modified": 3, "deleted": 2,
		"unchanged": 5, "retries": 1, "uris_to_multinode": 7, "links_other": 40, "links_local": 900,
		"bytes": 1 << 20, "bytes_sent": 30000, "doc_bytes": 900000, "doc_bytes_n": 95, "doc_bytes_max": 65536,
		"dl_time_us": 12_345_678, "dl_time_us_n": 118, "dl_time_us_max": 2_000_001,
		"http_200": 100, "http_404": 18, "mime_text/html": 110, "mime_application/pdf": 8,
		"robots_denied": 4, "uris_seen_before": 300, "excluded": 2, "uris_screened_out": 1,
		"errors_timeout": 2, "errors_dns": 1, "errors_connect-refused": 1, "duplicates": 6,
		"pp_added": 80, "pp_modified": 3, "pp_fed": 83, "pp_succeeded": 82, "pp_failed": 1, "pp_deleted": 2,
		"has_etag": 70, "has_lastmod": 71, "robots_fetched": 3, "active_sites": 4, "pp_checksums": 77}
}

// TestStatWire: the CMD_UM_STAT structure carries the members of
// MS-FSCADM 2.2.5 with the spec's names and types, and decodes (after a
// marshal round trip) to the counters it was made of.
func TestStatWire(t *testing.T) {
	c := wireCounters()
	d := EncodeStat(c)
	b, err := marshal.Encode(d)
	if err != nil {
		t.Fatal(err)
	}
	v, err := marshal.Decode(b)
	if err != nil {
		t.Fatal(err)
	}
	back := v.(marshal.Dict)
	for _, m := range []struct {
		name string
		want marshal.Value
	}{
		{"ActiveSites", marshal.Int(4)}, {"Processed", marshal.Float(120)}, {"Downloaded", marshal.Float(118)},
		{"Stored", marshal.Float(90)}, {"Modified", marshal.Float(3)}, {"Deleted", marshal.Float(2)},
		{"ReadNet", marshal.Float(1 << 20)}, {"WriteNet", marshal.Float(30000)}, {"DocSize", marshal.Float(900000)},
		{"DocSizeAvg", marshal.Float(9473)}, {"DocSizeMax", marshal.Float(65536)}, {"Retries", marshal.Float(1)},
		{"NodeSchedulerFwd", marshal.Float(7)}, {"LocalFwd", marshal.Float(40)}, {"Local", marshal.Float(900)},
		{"DLTime", marshal.Float(12.345678)}, {"DLTimeMax", marshal.Float(2.000001)},
		{"PPAdded", marshal.Float(80)}, {"PPFed", marshal.Float(83)}, {"PPURLsChange", marshal.Float(0)},
		{"HTTPResponse", marshal.Dict{{Key: marshal.Str("200"), Value: marshal.Float(100)}, {Key: marshal.Str("404"), Value: marshal.Float(18)}}},
		{"URISkip", marshal.Dict{{Key: marshal.Str(SkipCache), Value: marshal.Float(300)}, {Key: marshal.Str(SkipRobots), Value: marshal.Float(4)},
			{Key: marshal.Str(SkipURIRule), Value: marshal.Float(3)}}},
	} {
		got, ok := back.Get(m.name)
		if !ok {
			t.Errorf("no %s", m.name)
			continue
		}
		if h, isDict := m.want.(marshal.Dict); isDict {
			gd, _ := got.(marshal.Dict)
			want := map[string]marshal.Value{}
			for _, p := range h {
				want[string(p.Key.(marshal.Bytes))] = p.Value
			}
			have := map[string]marshal.Value{}
			for _, p := range gd {
				have[string(p.Key.(marshal.Bytes))] = p.Value
			}
			if diff := cmp.Diff(want, have); diff != "" {
				t.Errorf("%s (-want +got):\n%s", m.name, diff)
			}
			continue
		}
		if !marshal.Equal(got, m.want) {
			t.Errorf("%s = %s, want %s", m.name, marshal.FormatPython(got), marshal.FormatPython(m.want))
		}
	}
	if diff := cmp.Diff(c, DecodeStat(back)); diff != "" {
		t.Errorf("decoded counters (-sent +got):\n%s", diff)
	}
	r := ParseCounterReport(append(back, marshal.Pair{Key: marshal.Str("queued"), Value: marshal.Int(9)},
		marshal.Pair{Key: marshal.Str("sites"), Value: marshal.Dict{{Key: marshal.Str("a.test"), Value: EncodeStat(map[string]int64{"fetched": 3})}}}))
	if r.Counters["fetched"] != 118 || r.Counters["queued"] != 9 || r.Sites["a.test"]["fetched"] != 3 {
		t.Errorf("ParseCounterReport: %v, sites %v", r.Counters, r.Sites)
	}
}

// TestStatWireStandardOnly: a structure with the 2.2.5 members only (from
// an implementation that knows nothing of "trawl") gives the statistics
// the same totals, histograms and skip codes.
func TestStatWireStandardOnly(t *testing.T) {
	c := wireCounters()
	d := EncodeStat(c)
	std := d[:len(d)-1] // without "trawl"
	if k, _ := text(d[len(d)-1].Key); k != StatExtra {
		t.Fatalf("last member %q, want %q", k, StatExtra)
	}
	flat := func(counters map[string]int64) *CollectionFlat {
		r := NewRecord(CollectionSchema(), "web")
		ApplyCounters(r, counters, counters)
		f := FlattenCollection(r, FlattenParams{})
		return &f
	}
	want, got := flat(c), flat(DecodeStat(std))
	for _, x := range []struct {
		name string
		a, b any
	}{{"Downloaded", want.Downloaded, got.Downloaded}, {"Stored", want.Stored, got.Stored}, {"DocSize", want.DocSize, got.DocSize},
		{"DocSizeMax", want.DocSizeMax, got.DocSizeMax}, {"DLTimeMax", want.DLTimeMax, got.DLTimeMax},
		{"HTTPResponse", want.HTTPResponse, got.HTTPResponse}, {"URISkip", want.URISkip, got.URISkip},
		{"DocSkip", want.DocSkip, got.DocSkip}, {"PPFed", want.PPFed, got.PPFed}} {
		if diff := cmp.Diff(x.a, x.b); diff != "" {
			t.Errorf("%s from the standard members only (-all +standard):\n%s", x.name, diff)
		}
	}
}

// FuzzDecodeStat: the CMD_UM_STAT decoder reads any marshal value without
// panicking; seeds are EncodeStat's structures.
func FuzzDecodeStat(f *testing.F) {
	for _, c := range []map[string]int64{{}, wireCounters(), {"fetched": 1, "http_200": 1}} {
		if b, err := marshal.Encode(EncodeStat(c)); err == nil {
			f.Add(b)
		}
	}
	f.Add([]byte("{0"))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, err := marshal.Decode(b)
		if err != nil {
			return
		}
		if d, ok := v.(marshal.Dict); ok {
			_ = IsStat(d)
			_ = DecodeStat(d)
			_ = ParseCounterReport(d)
		}
	})
}
