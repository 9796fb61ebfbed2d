package stats

import (
	"fmt"
	"maps"
	"math"

	"github.com/trawl/trawl/internal/marshal"
)

// CollectionFlat is the flattened crawl collection statistics structure
// (MS-FSCADM 2.2.5), the value of "cur", "prev" and "complete" in
// CollectionGetStatistics2. Besides the table of 2.2.5 it carries the four
// keys the 4.3 example adds (Unchanged, PPPartialUpdate, LastUpdate,
// StatUpdated).
type CollectionFlat struct {
	ActiveSites      int64
	Processed        float64
	Downloaded       float64
	Modified         float64
	Stored           float64
	Deleted          float64
	Unchanged        float64
	ReadNet          float64
	WriteNet         float64
	DocSize          float64
	DocSizeAvg       float64
	DocSizeMax       float64
	Retries          float64
	NodeSchedulerFwd float64
	LocalFwd         float64
	Local            float64
	Epoch            int64
	LastRefresh      int64
	Feeding          int64
	CrawlMode        string
	MimeType         map[string]float64
	HTTPResponse     map[string]float64
	URISkip          map[string]float64
	DocSkip          map[string]float64
	Uptime           float64
	DLTime           float64
	DLTimeAvg        float64
	DLTimeMax        float64
	Status           string
	DocumentStore    int64
	// Progress is [percent of the refresh cycle done, time left].
	ProgressPercent int64
	ProgressText    string
	FirstUpdate     float64
	StatUpdate      float64
	LastUpdate      float64
	StatUpdated     string
	DocRate         float64
	DataRateIn      float64
	DataRateOut     float64
	PPFailed        float64
	PPSucceeded     float64
	PPFed           float64
	PPDeleted       float64
	PPAdded         float64
	PPModified      float64
	PPURLsChange    float64
	PPPartialUpdate float64
	PPChecksums     float64
}

// FlattenParams is what flattening needs besides the record.
type FlattenParams struct {
	// Now is the time of the request, unix seconds (for StatUpdated).
	Now float64
	// Refresh is the refresh cycle length in minutes, RefreshMode its
	// mode name ("scratch", ...), for Progress.
	Refresh     float64
	RefreshMode string
}

// FlattenCollection computes the flattened structure of a collection
// record (a cycle or the all-time cycle):
//
//   - counters are the continuous values; DocSizeAvg is DocSize over its
//     updates, rounded down, DocSizeMax its largest update, and likewise
//     DLTimeAvg (not rounded) and DLTimeMax;
//   - FirstUpdate is CrawlStarted (the record's start when unset),
//     LastUpdate the record's stop time, StatUpdate CrawlEnded, and
//     StatUpdated the age of the record at p.Now ("26.2s");
//   - DocRate, DataRateIn and DataRateOut are Downloaded, ReadNet and
//     WriteNet over LastUpdate - FirstUpdate;
//   - DocumentStore is Stored - Modified - Deleted (2.2.5);
//   - Progress is the part of the refresh cycle since LastRefresh done at
//     LastUpdate, and the time left.
//
// With these rules the 4.3 example is reproduced exactly.
func FlattenCollection(r *Record, p FlattenParams) CollectionFlat {
	v := r.Value
	f := CollectionFlat{
		ActiveSites:      int64(v("ActiveSites")),
		Processed:        v("Processed"),
		Downloaded:       v("Downloaded"),
		Modified:         v("Modified"),
		Stored:           v("Stored"),
		Deleted:          v("Deleted"),
		Unchanged:        v("Unchanged"),
		ReadNet:          v("ReadNet"),
		WriteNet:         v("WriteNet"),
		Retries:          v("Retries"),
		NodeSchedulerFwd: v("NodeSchedulerFwd"),
		LocalFwd:         v("LocalFwd"),
		Local:            v("Local"),
		Epoch:            int64(v("Epoch")),
		LastRefresh:      int64(v("LastRefresh")),
		Feeding:          int64(v("Feeding")),
		CrawlMode:        r.String("CrawlMode"),
		MimeType:         r.Hist("MimeType"),
		HTTPResponse:     r.Hist("HTTPResponse"),
		URISkip:          r.Hist("URISkip"),
		DocSkip:          r.Hist("DocSkip"),
		Uptime:           v("Uptime"),
		Status:           Status(v("Status")).String(),
		PPFailed:         v("PPFailed"),
		PPSucceeded:      v("PPSucceeded"),
		PPFed:            v("PPFed"),
		PPDeleted:        v("PPDeleted"),
		PPAdded:          v("PPAdded"),
		PPModified:       v("PPModified"),
		PPURLsChange:     v("PPURLsChange"),
		PPPartialUpdate:  0, // reserved, MUST be 0
		PPChecksums:      v("PPChecksums"),
		StatUpdate:       v("CrawlEnded"),
	}
	var n int64
	f.DocSize, _, f.DocSizeMax, n = r.Numbers("DocSize")
	if n > 0 {
		f.DocSizeAvg = math.Floor(f.DocSize / float64(n))
	}
	f.DLTime, _, f.DLTimeMax, n = r.Numbers("DLTime")
	if n > 0 {
		f.DLTimeAvg = f.DLTime / float64(n)
	}
	f.DocumentStore = int64(f.Stored - f.Modified - f.Deleted)
	f.FirstUpdate = v("CrawlStarted")
	if f.FirstUpdate == 0 {
		f.FirstUpdate = r.Start
	}
	f.LastUpdate = r.Stop
	if f.LastUpdate == 0 {
		f.LastUpdate = p.Now
	}
	if elapsed := f.LastUpdate - f.FirstUpdate; elapsed > 0 {
		f.DocRate = f.Downloaded / elapsed
		f.DataRateIn = f.ReadNet / elapsed
		f.DataRateOut = f.WriteNet / elapsed
	}
	if age := p.Now - f.LastUpdate; p.Now != 0 && age >= 0 {
		f.StatUpdated = fmt.Sprintf("%.1fs", age)
	} else {
		f.StatUpdated = "0.0s"
	}
	f.ProgressPercent, f.ProgressText = progress(v("LastRefresh"), f.LastUpdate, p.Refresh, p.RefreshMode)
	return f
}

// progress returns the Progress pair: the percentage of the refresh cycle
// that began at lastRefresh done at now, and "<d> days <h>h <m>m <s>s until
// <mode> refresh".
func progress(lastRefresh, now, refreshMinutes float64, mode string) (int64, string) {
	if refreshMinutes <= 0 || lastRefresh <= 0 {
		return 0, "no refresh scheduled"
	}
	cycle := refreshMinutes * 60
	done := now - lastRefresh
	pct := math.Floor(done / cycle * 100)
	pct = math.Max(0, math.Min(100, pct))
	left := math.Max(0, lastRefresh+cycle-now)
	s := int64(left)
	if mode == "" {
		mode = "scratch"
	}
	return int64(pct), fmt.Sprintf("%d days %dh %dm %ds until %s refresh", s/86400, s%86400/3600, s%3600/60, s%60, mode)
}

func histDict(h map[string]float64) marshal.Dict {
	keys := sortedKeys(h)
	d := make(marshal.Dict, 0, len(keys))
	for _, k := range keys {
		d = append(d, marshal.Pair{Key: marshal.Str(k), Value: marshal.Float(h[k])})
	}
	return d
}

type dictBuilder struct{ d marshal.Dict }

func (b *dictBuilder) f(k string, v float64) {
	b.d = append(b.d, marshal.Pair{Key: marshal.Str(k), Value: marshal.Float(v)})
}
func (b *dictBuilder) i(k string, v int64) {
	b.d = append(b.d, marshal.Pair{Key: marshal.Str(k), Value: marshal.Int(v)})
}
func (b *dictBuilder) s(k, v string) {
	b.d = append(b.d, marshal.Pair{Key: marshal.Str(k), Value: marshal.Str(v)})
}
func (b *dictBuilder) h(k string, v map[string]float64) {
	b.d = append(b.d, marshal.Pair{Key: marshal.Str(k), Value: histDict(v)})
}

// Dict returns f with the types of 2.2.5 (int, double, string, dictionary,
// array), in marshal's value model; admin writes it as an XML-RPC struct.
func (f *CollectionFlat) Dict() marshal.Dict {
	b := &dictBuilder{d: make(marshal.Dict, 0, 48)}
	b.i("ActiveSites", f.ActiveSites)
	b.f("Processed", f.Processed)
	b.f("Downloaded", f.Downloaded)
	b.f("Modified", f.Modified)
	b.f("Stored", f.Stored)
	b.f("Deleted", f.Deleted)
	b.f("Unchanged", f.Unchanged)
	b.f("ReadNet", f.ReadNet)
	b.f("WriteNet", f.WriteNet)
	b.f("DocSize", f.DocSize)
	b.f("DocSizeAvg", f.DocSizeAvg)
	b.f("DocSizeMax", f.DocSizeMax)
	b.f("Retries", f.Retries)
	b.f("NodeSchedulerFwd", f.NodeSchedulerFwd)
	b.f("LocalFwd", f.LocalFwd)
	b.f("Local", f.Local)
	b.i("Epoch", f.Epoch)
	b.i("LastRefresh", f.LastRefresh)
	b.i("Feeding", f.Feeding)
	b.s("CrawlMode", f.CrawlMode)
	b.h("MimeType", f.MimeType)
	b.h("HTTPResponse", f.HTTPResponse)
	b.f("Uptime", f.Uptime)
	b.f("DLTime", f.DLTime)
	b.f("DLTimeAvg", f.DLTimeAvg)
	b.f("DLTimeMax", f.DLTimeMax)
	b.s("Status", f.Status)
	b.h("URISkip", f.URISkip)
	b.h("DocSkip", f.DocSkip)
	b.i("DocumentStore", f.DocumentStore)
	b.d = append(b.d, marshal.Pair{Key: marshal.Str("Progress"),
		Value: marshal.List{marshal.Int(f.ProgressPercent), marshal.Str(f.ProgressText)}})
	b.f("FirstUpdate", f.FirstUpdate)
	b.f("StatUpdate", f.StatUpdate)
	b.f("LastUpdate", f.LastUpdate)
	b.s("StatUpdated", f.StatUpdated)
	b.f("DocRate", f.DocRate)
	b.f("DataRateIn", f.DataRateIn)
	b.f("DataRateOut", f.DataRateOut)
	b.f("PPFailed", f.PPFailed)
	b.f("PPSucceeded", f.PPSucceeded)
	b.f("PPFed", f.PPFed)
	b.f("PPDeleted", f.PPDeleted)
	b.f("PPAdded", f.PPAdded)
	b.f("PPModified", f.PPModified)
	b.f("PPURLsChange", f.PPURLsChange)
	b.f("PPPartialUpdate", f.PPPartialUpdate)
	b.f("PPChecksums", f.PPChecksums)
	return b.d
}

type dictReader struct {
	d   marshal.Dict
	err error
}

func (r *dictReader) num(k string) float64 {
	v, ok := r.d.Get(k)
	if !ok {
		return 0
	}
	f, ok := float(v)
	if !ok && r.err == nil {
		r.err = formatErr("%s is %s, want a number", k, v.Kind())
	}
	return f
}

func (r *dictReader) str(k string) string {
	v, ok := r.d.Get(k)
	if !ok {
		return ""
	}
	s, ok := text(v)
	if !ok && r.err == nil {
		r.err = formatErr("%s is %s, want a string", k, v.Kind())
	}
	return s
}

func (r *dictReader) hist(k string) map[string]float64 {
	out := map[string]float64{}
	v, ok := r.d.Get(k)
	if !ok {
		return out
	}
	d, ok := v.(marshal.Dict)
	if !ok {
		if r.err == nil {
			r.err = formatErr("%s is %s, want a dict", k, v.Kind())
		}
		return out
	}
	for _, p := range d {
		key, ok1 := text(p.Key)
		n, ok2 := float(p.Value)
		if !ok1 || !ok2 {
			if r.err == nil {
				r.err = formatErr("%s entry is not string -> number", k)
			}
			continue
		}
		out[key] = n
	}
	return out
}

// ParseCollectionFlat reads a flattened collection structure; numbers may
// be int or double, missing keys are zero and unknown keys (the global DNS
// fields the 4.3 example mixes in) are ignored.
func ParseCollectionFlat(d marshal.Dict) (CollectionFlat, error) {
	r := &dictReader{d: d}
	f := CollectionFlat{
		ActiveSites: int64(r.num("ActiveSites")), Processed: r.num("Processed"), Downloaded: r.num("Downloaded"),
		Modified: r.num("Modified"), Stored: r.num("Stored"), Deleted: r.num("Deleted"), Unchanged: r.num("Unchanged"),
		ReadNet: r.num("ReadNet"), WriteNet: r.num("WriteNet"), DocSize: r.num("DocSize"),
		DocSizeAvg: r.num("DocSizeAvg"), DocSizeMax: r.num("DocSizeMax"), Retries: r.num("Retries"),
		NodeSchedulerFwd: r.num("NodeSchedulerFwd"), LocalFwd: r.num("LocalFwd"), Local: r.num("Local"),
		Epoch: int64(r.num("Epoch")), LastRefresh: int64(r.num("LastRefresh")), Feeding: int64(r.num("Feeding")),
		CrawlMode: r.str("CrawlMode"), MimeType: r.hist("MimeType"), HTTPResponse: r.hist("HTTPResponse"),
		URISkip: r.hist("URISkip"), DocSkip: r.hist("DocSkip"), Uptime: r.num("Uptime"), DLTime: r.num("DLTime"),
		DLTimeAvg: r.num("DLTimeAvg"), DLTimeMax: r.num("DLTimeMax"), Status: r.str("Status"),
		DocumentStore: int64(r.num("DocumentStore")), FirstUpdate: r.num("FirstUpdate"),
		StatUpdate: r.num("StatUpdate"), LastUpdate: r.num("LastUpdate"), StatUpdated: r.str("StatUpdated"),
		DocRate: r.num("DocRate"), DataRateIn: r.num("DataRateIn"), DataRateOut: r.num("DataRateOut"),
		PPFailed: r.num("PPFailed"), PPSucceeded: r.num("PPSucceeded"), PPFed: r.num("PPFed"),
		PPDeleted: r.num("PPDeleted"), PPAdded: r.num("PPAdded"), PPModified: r.num("PPModified"),
		PPURLsChange: r.num("PPURLsChange"), PPPartialUpdate: r.num("PPPartialUpdate"), PPChecksums: r.num("PPChecksums"),
	}
	if v, ok := d.Get("Progress"); ok {
		l, ok := seq(v)
		if !ok || len(l) != 2 {
			return f, formatErr("Progress is not a 2-element array")
		}
		p, _ := float(l[0])
		f.ProgressPercent = int64(p)
		f.ProgressText, _ = text(l[1])
	}
	return f, r.err
}

// GlobalFlat is the flattened global statistics structure (2.2.6), the
// value of "delta" and "complete" in GetGlobalStatistics. The names and
// types follow the 4.3 example and the schema of 2.2.4.8 where 2.2.6
// disagrees: DNSRequests, DNSResponses a count, DNSResponse the RCODE
// histogram.
type GlobalFlat struct {
	DNSWrite       float64
	DNSRead        float64
	DNSRequests    float64
	DNSResponse    map[string]float64
	DNSResponses   float64
	DNSRetries     float64
	DNSTimeout     float64
	DNSRateLimit   float64
	DNSRate        float64
	DNSDataRateIn  float64
	DNSDataRateOut float64
}

// FlattenGlobal computes the flattened global structure of a global
// record; the rates are over the record's span (Stop - Start).
func FlattenGlobal(r *Record) GlobalFlat {
	v := r.Value
	f := GlobalFlat{
		DNSWrite: v("DNSWrite"), DNSRead: v("DNSRead"), DNSRequests: v("DNSRequests"),
		DNSResponse: r.Hist("DNSResponse"), DNSResponses: v("DNSResponses"), DNSRetries: v("DNSRetries"),
		DNSTimeout: v("DNSTimeout"), DNSRateLimit: v("DNSRateLimit"),
	}
	if span := r.Stop - r.Start; r.Start > 0 && span > 0 {
		f.DNSRate = f.DNSRequests / span
		f.DNSDataRateIn = f.DNSRead / span
		f.DNSDataRateOut = f.DNSWrite / span
	}
	return f
}

// Dict returns f with the types of 2.2.6 in marshal's value model.
func (f *GlobalFlat) Dict() marshal.Dict {
	b := &dictBuilder{d: make(marshal.Dict, 0, 11)}
	b.f("DNSWrite", f.DNSWrite)
	b.f("DNSRead", f.DNSRead)
	b.f("DNSRequests", f.DNSRequests)
	b.h("DNSResponse", f.DNSResponse)
	b.f("DNSResponses", f.DNSResponses)
	b.f("DNSRetries", f.DNSRetries)
	b.f("DNSTimeout", f.DNSTimeout)
	b.f("DNSRateLimit", f.DNSRateLimit)
	b.f("DNSRate", f.DNSRate)
	b.f("DNSDataRateIn", f.DNSDataRateIn)
	b.f("DNSDataRateOut", f.DNSDataRateOut)
	return b.d
}

// ParseGlobalFlat reads a flattened global structure; "DNSRequest" (the
// 2.2.6 spelling) is read as DNSRequests.
func ParseGlobalFlat(d marshal.Dict) (GlobalFlat, error) {
	r := &dictReader{d: d}
	f := GlobalFlat{
		DNSWrite: r.num("DNSWrite"), DNSRead: r.num("DNSRead"), DNSRequests: r.num("DNSRequests"),
		DNSResponse: r.hist("DNSResponse"), DNSResponses: r.num("DNSResponses"), DNSRetries: r.num("DNSRetries"),
		DNSTimeout: r.num("DNSTimeout"), DNSRateLimit: r.num("DNSRateLimit"), DNSRate: r.num("DNSRate"),
		DNSDataRateIn: r.num("DNSDataRateIn"), DNSDataRateOut: r.num("DNSDataRateOut"),
	}
	if _, ok := d.Get("DNSRequests"); !ok {
		f.DNSRequests = r.num("DNSRequest")
	}
	return f, r.err
}

// Clone returns a deep copy of f.
func (f CollectionFlat) Clone() CollectionFlat {
	f.MimeType = maps.Clone(f.MimeType)
	f.HTTPResponse = maps.Clone(f.HTTPResponse)
	f.URISkip = maps.Clone(f.URISkip)
	f.DocSkip = maps.Clone(f.DocSkip)
	return f
}
