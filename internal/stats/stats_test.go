package stats

import (
	"bytes"
	"errors"
	"math"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/xmlrpc"
)

func TestSchemas(t *testing.T) {
	tests := []struct {
		s    *Schema
		name string
		n    int
	}{
		{GlobalSchema(), "globalschema", 9},
		{SiteSchema(), "siteschema", 28},
		{CollectionSchema(), "collectionschema", 46},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.s.Name != tt.name || len(tt.s.Attrs) != tt.n {
				t.Errorf("%s has %d attributes, want %d", tt.s.Name, len(tt.s.Attrs), tt.n)
			}
			if SchemaByName(tt.name) != tt.s {
				t.Error("SchemaByName")
			}
			for i, a := range tt.s.Attrs {
				if tt.s.Index(a.Name) != i || a.Kind == 0 || a.Type == 0 || a.Doc == "" {
					t.Errorf("attribute %d %+v", i, a)
				}
			}
		})
	}
	if a, _ := CollectionSchema().Attr("DocSize"); a.Unit != "bytes" || a.Kind != Continuous {
		t.Errorf("DocSize: %+v", a)
	}
	if len(URISkipCodes()) != 8 || len(DocSkipCodes()) != 19 {
		t.Error("skip code counts")
	}
}

func TestCodes(t *testing.T) {
	for _, tt := range []struct {
		s          Status
		code, flat string
	}{
		{StatusCrawling, "crawling", "Crawling"}, {StatusDeleting, "zombie", "Zombie"},
		{StatusSuspended, "suspended", "Suspended"}, {StatusDiskFull, "suspended", "Disk full"},
		{StatusCompacting, "compacting", "Compacting"}, {StatusVariableDelay, "suspended", "Variable delay suspended"},
	} {
		if !tt.s.Valid() || tt.s.Code() != tt.code || tt.s.String() != tt.flat {
			t.Errorf("status %d: %q %q", tt.s, tt.s.Code(), tt.s.String())
		}
	}
	if Status(2).Valid() || Status(7).Valid() {
		t.Error("reserved status codes valid")
	}
	for _, m := range []string{"append", "prepend", "scratch", "soft", "adaptive"} {
		c, ok := RefreshModeCode(m)
		if !ok || RefreshModeName(c) != m {
			t.Errorf("refresh mode %s", m)
		}
	}
}

func TestRecordUpdates(t *testing.T) {
	r := NewRecord(CollectionSchema(), "web")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, size := range []float64{100, 300, 200} {
		must(r.Add("DocSize", size))
	}
	must(r.Set("QueueLength", 10))
	must(r.Set("QueueLength", 4))
	must(r.Add("ActiveSites", 2))
	must(r.SetString("LastUri", "http://a/"))
	must(r.Observe("HTTPResponse", "200", 1))
	must(r.Observe("HTTPResponse", "200", 1))
	must(r.Observe("HTTPResponse", "404", 1))
	must(r.SetDim("FeedingDestinations", "default", marshal.Str("1")))
	cur, lo, hi, n := r.Numbers("DocSize")
	if cur != 600 || lo != 100 || hi != 300 || n != 3 {
		t.Errorf("DocSize = %v %v %v %v", cur, lo, hi, n)
	}
	cur, lo, hi, n = r.Numbers("QueueLength")
	if cur != 4 || lo != 4 || hi != 10 || n != 2 {
		t.Errorf("QueueLength = %v %v %v %v", cur, lo, hi, n)
	}
	if diff := cmp.Diff(map[string]float64{"200": 2, "404": 1}, r.Hist("HTTPResponse")); diff != "" {
		t.Error(diff)
	}
	for _, err := range []error{
		r.Add("NoSuch", 1), r.Add("HTTPResponse", 1), r.Set("Processed", 1), r.SetString("QueueLength", "x"),
		r.Set("LastUri", 1), r.Observe("Processed", "x", 1), r.SetDim("Processed", "x"),
	} {
		if !errors.Is(err, ErrAttr) {
			t.Errorf("got %v, want ErrAttr", err)
		}
	}
	i := r.Schema().Index("Processed")
	allocs := testing.AllocsPerRun(100, func() {
		r.AddAt(i, 1)
		_ = r.Add("ReadNet", 512)
		_ = r.Observe("HTTPResponse", "200", 1)
	})
	if allocs != 0 {
		t.Errorf("updates allocate %v times", allocs)
	}
}

func TestMergeAndSum(t *testing.T) {
	a := NewRecord(CollectionSchema(), "c")
	a.Start, a.Stop = 100, 160
	_ = a.Add("Processed", 5)
	_ = a.Set("ActiveSites", 3)
	_ = a.Observe("MimeType", "text/html", 5)
	_ = a.SetString("CrawlMode", "")
	b := NewRecord(CollectionSchema(), "c")
	b.Start, b.Stop = 160, 220
	_ = b.Add("Processed", 7)
	_ = b.Set("ActiveSites", 1)
	_ = b.Observe("MimeType", "text/html", 2)
	_ = b.Observe("MimeType", "image/png", 1)
	_ = b.SetString("CrawlMode", CrawlModeUserRefresh)

	m := a.Clone()
	if err := m.Merge(b); err != nil {
		t.Fatal(err)
	}
	if m.Value("Processed") != 12 || m.Value("ActiveSites") != 1 || m.String("CrawlMode") != CrawlModeUserRefresh ||
		m.Start != 100 || m.Stop != 220 || m.Updates("Processed") != 2 {
		t.Errorf("merge: Processed %v ActiveSites %v CrawlMode %q span %v-%v",
			m.Value("Processed"), m.Value("ActiveSites"), m.String("CrawlMode"), m.Start, m.Stop)
	}
	if diff := cmp.Diff(map[string]float64{"text/html": 7, "image/png": 1}, m.Hist("MimeType")); diff != "" {
		t.Error(diff)
	}
	s := a.Clone()
	if err := s.Sum(b); err != nil {
		t.Fatal(err)
	}
	if s.Value("ActiveSites") != 4 || s.Value("Processed") != 12 {
		t.Errorf("sum: ActiveSites %v Processed %v", s.Value("ActiveSites"), s.Value("Processed"))
	}
	// An untouched delta changes nothing.
	before := m.MarshalValue()
	_ = m.Merge(NewRecord(CollectionSchema(), "c"))
	if !marshal.Equal(before, m.MarshalValue()) {
		t.Error("merging an empty delta changed the record")
	}
	if err := m.Merge(NewRecord(SiteSchema(), "x")); err == nil {
		t.Error("merging another schema succeeded")
	}
	m.Reset(500)
	if !m.Empty() || m.Start != 500 || len(m.Hist("MimeType")) != 0 {
		t.Error("Reset left values")
	}
}

func TestSeriesCycles(t *testing.T) {
	s := NewSeries(SiteSchema(), "www.example.com:80", 2, 1000)
	_ = s.Delta().Add("Processed", 3)
	s.Fold(1060)
	if s.Current().Value("Processed") != 3 || s.Complete().Value("Processed") != 3 || !s.Delta().Empty() {
		t.Fatal("fold did not move the delta")
	}
	if s.Delta().Start != 1060 || s.Current().Stop != 1060 {
		t.Errorf("times: delta start %v, cycle stop %v", s.Delta().Start, s.Current().Stop)
	}
	if s.Previous() != nil {
		t.Error("previous cycle in the first cycle")
	}
	_ = s.Delta().Add("Processed", 4)
	if n := s.NewCycle(1100); n != 1 {
		t.Errorf("NewCycle = %d", n)
	}
	_ = s.Delta().Add("Processed", 5)
	s.Fold(1200)
	if s.Current().Value("Processed") != 5 || s.Previous().Value("Processed") != 7 || s.Complete().Value("Processed") != 12 {
		t.Errorf("cycles: cur %v prev %v complete %v", s.Current().Value("Processed"), s.Previous().Value("Processed"), s.Complete().Value("Processed"))
	}
	s.NewCycle(1300)
	s.NewCycle(1400)
	if diff := cmp.Diff([]int{2, 3}, s.Cycles()); diff != "" {
		t.Errorf("kept cycles: %s", diff)
	}
	if s.Complete().Value("Processed") != 12 || s.Cycle(0) != nil {
		t.Error("eviction lost the all-time cycle or kept cycle 0")
	}
	d := NewRecord(SiteSchema(), "x")
	_ = d.Add("Downloaded", 2)
	if err := s.Apply(d); err != nil || s.Delta().Value("Downloaded") != 2 {
		t.Errorf("Apply: %v", err)
	}
	if err := s.Apply(NewRecord(GlobalSchema(), "g")); err == nil {
		t.Error("Apply of another schema succeeded")
	}
}

func sampleStatistics() *Statistics {
	g := NewSeries(GlobalSchema(), "global", 0, 1000)
	_ = g.Delta().Set("Uptime", 1000)
	_ = g.Delta().Add("DNSRequests", 12)
	_ = g.Delta().Observe("DNSResponse", "0", 11)
	_ = g.Delta().Observe("DNSResponse", "3", 1)
	g.Fold(1060)
	c := NewSeries(CollectionSchema(), "web", 0, 1000)
	_ = c.Delta().Add("Processed", 40)
	_ = c.Delta().Add("DLTime", 0.25)
	_ = c.Delta().Add("ReadNet", 1<<40)
	_ = c.Delta().SetString("LastUri", "http://www.example.com/ü")
	_ = c.Delta().SetDim("StartUriStatus", "/tmp/start.txt", marshal.Str("1000 500"))
	_ = c.Delta().Set("Status", float64(StatusCrawling))
	c.NewCycle(1100)
	_ = c.Delta().Add("Processed", 2)
	return &Statistics{DSpec: []DSpec{{Collection: "web", Refresh: 2000, RefreshMode: RefreshScratch}}, Global: g, Series: []*Series{c}}
}

func TestStatisticsRoundTrip(t *testing.T) {
	st := sampleStatistics()
	b, err := st.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	got, err := UnmarshalStatistics(b)
	if err != nil {
		t.Fatal(err)
	}
	if !marshal.Equal(st.MarshalValue(), got.MarshalValue()) {
		t.Errorf("round trip differs:\n%s\n%s", marshal.FormatPython(st.MarshalValue()), marshal.FormatPython(got.MarshalValue()))
	}
	web := got.Get("web")
	if web == nil || web.Complete().Value("Processed") != 40 || web.Delta().Value("Processed") != 2 ||
		web.Current().Value("Processed") != 0 || web.Previous().Value("Processed") != 40 {
		t.Fatal("parsed series values")
	}
	if v := web.Complete().Value("ReadNet"); v != 1<<40 {
		t.Errorf("ReadNet %v", v)
	}
	// The wire form carries integers as int/long and the reserved "None".
	rec := st.Series[0].Complete().MarshalValue()
	hist, _ := rec.Get("histogram")
	first := hist.(marshal.List)[0].(marshal.List)
	if !marshal.Equal(first[1].(marshal.List)[1], marshal.Str("None")) {
		t.Errorf("histogram reserved element: %s", marshal.FormatPython(first))
	}
	// The alternative spellings of the all-time key parse.
	for _, key := range []string{CompleteKeyAlt, "complete"} {
		v := st.Series[0].MarshalValue()
		cycles := v[1].(marshal.Dict)
		cycles[len(cycles)-1].Key = marshal.Str(key)
		if _, err := ParseSeries(v); err != nil {
			t.Errorf("key %s: %v", key, err)
		}
	}
}

func TestParseErrors(t *testing.T) {
	bad := []marshal.Value{
		marshal.Int(1),
		marshal.Dict{},
		marshal.Dict{{Key: marshal.Str("global"), Value: marshal.Tuple{}}},
		marshal.Dict{{Key: marshal.Str("dspec"), Value: marshal.Dict{}}, {Key: marshal.Str("web"), Value: marshal.Tuple{marshal.Dict{}, marshal.Dict{}}}},
		marshal.Dict{{Key: marshal.Int(1), Value: marshal.Int(1)}},
	}
	for _, v := range bad {
		if _, err := ParseStatistics(v); err == nil {
			t.Errorf("ParseStatistics(%s) succeeded", marshal.FormatPython(v))
		}
	}
	rec := NewRecord(SiteSchema(), "s").MarshalValue()
	rec = append(rec, marshal.Pair{Key: marshal.Str("continuous"), Value: marshal.Int(3)})
	// Get finds the first "continuous"; replace it instead.
	for i := range rec {
		if k, _ := text(rec[i].Key); k == "continuous" {
			rec[i].Value = marshal.List{marshal.List{marshal.Str("Processed"), marshal.List{marshal.Int(1)}}}
			break
		}
	}
	if _, err := ParseRecord(rec); !errors.Is(err, ErrFormat) {
		t.Errorf("short value: got %v", err)
	}
}

// TestFlattenSpecExample rebuilds the "cur" structure of MS-FSCADM 4.3 from
// a record and checks every member the example has, value and type.
func TestFlattenSpecExample(t *testing.T) {
	num := func(cur, lo, hi float64, n int) marshal.List {
		return marshal.List{marshal.Float(cur), marshal.Float(lo), marshal.Float(hi), marshal.Int(n)}
	}
	pair := func(name string, v marshal.Value) marshal.List { return marshal.List{marshal.Str(name), v} }
	hist := func(kv ...any) marshal.List {
		d := marshal.Dict{}
		for i := 0; i < len(kv); i += 2 {
			d = append(d, marshal.Pair{Key: marshal.Str(kv[i].(string)), Value: marshal.Int(kv[i+1].(int))})
		}
		return marshal.List{d, marshal.Str("None"), marshal.Str("None"), marshal.Int(len(kv) / 2)}
	}
	const lastUpdate = 1234197855.7882121
	src := marshal.Dict{
		{Key: marshal.Str("__schemaname__"), Value: marshal.Str("collectionschema")},
		{Key: marshal.Str("name"), Value: marshal.Str("contoso")},
		{Key: marshal.Str("__startts__"), Value: marshal.Float(1234195119.4230039)},
		{Key: marshal.Str("__stoptts__"), Value: marshal.Float(lastUpdate)},
		{Key: marshal.Str("continuous"), Value: marshal.List{
			pair("Processed", num(40, 1, 1, 40)), pair("Downloaded", num(40, 1, 1, 40)),
			pair("Stored", num(40, 1, 1, 40)), pair("PPAdded", num(40, 1, 1, 40)),
			pair("ReadNet", num(174367, 0, 0, 40)), pair("WriteNet", num(12790, 0, 0, 40)),
			pair("Local", num(320, 0, 0, 40)),
			pair("DocSize", num(162862, 700, 8460, 40)),
			pair("DLTime", num(0.30214595794677734, 0.001, 0.20227789878845215, 40)),
		}},
		{Key: marshal.Str("discrete"), Value: marshal.List{
			pair("Uptime", num(1234197854.7414169, 0, 0, 1)),
			pair("CrawlStarted", num(1234195119.4230039, 0, 0, 1)),
			pair("LastRefresh", num(1234195119.4230039, 0, 0, 1)),
			pair("Feeding", num(1, 1, 1, 1)), pair("Status", num(1, 1, 1, 1)),
			pair("PPChecksums", num(40, 40, 40, 1)),
			pair("CrawlMode", marshal.List{marshal.Str(""), marshal.Str("None"), marshal.Str("None"), marshal.Int(1)}),
		}},
		{Key: marshal.Str("histogram"), Value: marshal.List{
			pair("HTTPResponse", hist("200", 41, "404", 1)),
			pair("MimeType", hist("text/html", 40)),
		}},
	}
	rec, err := ParseRecord(src)
	if err != nil {
		t.Fatal(err)
	}
	flat := FlattenCollection(rec, FlattenParams{Now: lastUpdate + 26.2, Refresh: 2000, RefreshMode: "scratch"})
	got := flat.Dict()

	body, err := os.ReadFile("../xmlrpc/testdata/spec-43-response.xml")
	if err != nil {
		t.Fatal(err)
	}
	v, err := xmlrpc.DecodeResponse(bytes.NewReader(body), xmlrpc.Limits{})
	if err != nil {
		t.Fatal(err)
	}
	cur, _ := v.(xmlrpc.Array)[1].(xmlrpc.Struct).Get("cur")
	for _, m := range cur.(xmlrpc.Struct) {
		g, ok := got.Get(m.Name)
		if !ok {
			t.Errorf("%s missing", m.Name)
			continue
		}
		if !sameValue(m.Value, g) {
			t.Errorf("%s = %s, example has %#v", m.Name, marshal.FormatPython(g), m.Value)
		}
	}
	back, err := ParseCollectionFlat(got)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(flat, back); diff != "" {
		t.Errorf("ParseCollectionFlat (-want +got):\n%s", diff)
	}
}

// sameValue compares an XML-RPC value of the example with a marshal value,
// type included (int vs double).
func sameValue(x xmlrpc.Value, m marshal.Value) bool {
	switch v := x.(type) {
	case xmlrpc.Int:
		i, ok := m.(marshal.Int)
		return ok && int64(i) == int64(v)
	case xmlrpc.Double:
		f, ok := m.(marshal.Float)
		return ok && float64(f) == float64(v)
	case xmlrpc.String:
		s, ok := text(m)
		return ok && s == string(v)
	case xmlrpc.Array:
		l, ok := seq(m)
		if !ok || len(l) != len(v) {
			return false
		}
		for i := range v {
			if !sameValue(v[i], l[i]) {
				return false
			}
		}
		return true
	case xmlrpc.Struct:
		d, ok := m.(marshal.Dict)
		if !ok || len(d) != len(v) {
			return false
		}
		for _, mem := range v {
			e, ok := d.Get(mem.Name)
			if !ok || !sameValue(mem.Value, e) {
				return false
			}
		}
		return true
	}
	return false
}

func TestFlattenGlobal(t *testing.T) {
	r := NewRecord(GlobalSchema(), "global")
	r.Start, r.Stop = 1000, 1010
	_ = r.Add("DNSRequests", 20)
	_ = r.Add("DNSRead", 1000)
	_ = r.Add("DNSWrite", 500)
	_ = r.Observe("DNSResponse", "0", 19)
	_ = r.Set("DNSRateLimit", 10)
	f := FlattenGlobal(r)
	if f.DNSRate != 2 || f.DNSDataRateIn != 100 || f.DNSDataRateOut != 50 || f.DNSRateLimit != 10 || f.DNSResponse["0"] != 19 {
		t.Errorf("%+v", f)
	}
	back, err := ParseGlobalFlat(f.Dict())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f, back); diff != "" {
		t.Error(diff)
	}
	// 2.2.6 spells DNSRequest.
	old, _ := ParseGlobalFlat(marshal.Dict{{Key: marshal.Str("DNSRequest"), Value: marshal.Float(3)}})
	if old.DNSRequests != 3 {
		t.Errorf("DNSRequest not read: %+v", old)
	}
	if f := FlattenGlobal(NewRecord(GlobalSchema(), "g")); math.IsNaN(f.DNSRate) || f.DNSRate != 0 {
		t.Error("empty record rate")
	}
}

func TestProgress(t *testing.T) {
	tests := []struct {
		last, now, refresh float64
		pct                int64
		text               string
	}{
		{1000, 1000 + 60, 10, 10, "0 days 0h 9m 0s until scratch refresh"},
		{1000, 1000 + 700, 10, 100, "0 days 0h 0m 0s until scratch refresh"},
		{0, 5, 10, 0, "no refresh scheduled"},
		{1000, 1000, 0, 0, "no refresh scheduled"},
	}
	for _, tt := range tests {
		pct, text := progress(tt.last, tt.now, tt.refresh, "")
		if pct != tt.pct || text != tt.text {
			t.Errorf("progress(%v, %v, %v) = %d %q", tt.last, tt.now, tt.refresh, pct, text)
		}
	}
}

func TestParseCounterReport(t *testing.T) {
	d := marshal.Dict{
		{Key: marshal.Str("fetched"), Value: marshal.Int(7)},
		{Key: marshal.Unicode("bytes"), Value: marshal.Float(1024.9)},
		{Key: marshal.Int(3), Value: marshal.Int(1)},        // not a string key: ignored
		{Key: marshal.Str("note"), Value: marshal.Str("x")}, // not a counter: ignored
		{Key: marshal.Str("last_uri"), Value: marshal.Str("http://a.example/2")},
		{Key: marshal.Str("sites"), Value: marshal.Dict{
			{Key: marshal.Str("a.example"), Value: marshal.Dict{
				{Key: marshal.Str("fetched"), Value: marshal.Int(5)},
				{Key: marshal.Str("last_uri"), Value: marshal.Str("http://a.example/2")},
			}},
			{Key: marshal.Str("b.example"), Value: marshal.Dict{{Key: marshal.Str("http_404"), Value: marshal.Int(2)}}},
			{Key: marshal.Str("c.example"), Value: marshal.Int(1)}, // not a dictionary: ignored
		}},
	}
	want := CounterReport{
		Counters: map[string]int64{"fetched": 7, "bytes": 1024},
		Sites:    map[string]map[string]int64{"a.example": {"fetched": 5}, "b.example": {"http_404": 2}},
		LastURI:  "http://a.example/2", SiteLastURI: map[string]string{"a.example": "http://a.example/2"},
	}
	if diff := cmp.Diff(want, ParseCounterReport(d)); diff != "" {
		t.Errorf("ParseCounterReport (-want +got):\n%s", diff)
	}
	if got := ErrorTotal(map[string]int64{"errors_timeout": 2, "http_404": 3, "http_200": 9, "http_301": 1, "http_503": 4}); got != 9 {
		t.Errorf("ErrorTotal = %d, want 9", got)
	}
}
