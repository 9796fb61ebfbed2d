package stats

import (
	"math"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
)

// The statistics a node scheduler sends in CMD_UM_STAT (MS-FSCMT 2.2.4.6:
// PKT_DATA is "the statistics structure of [MS-FSCADM] section 2.2.5"):
// the flattened crawl collection statistics structure, with the members,
// names and types of CollectionFlat.Dict, filled from the engine's
// cumulative counters:
//
//	Processed, Downloaded, Modified, Stored, Deleted, Unchanged, Retries,
//	NodeSchedulerFwd, LocalFwd, Local, PPFailed, PPSucceeded, PPFed,
//	PPDeleted, PPAdded, PPModified   double, a count of events
//	ReadNet, WriteNet, DocSize        double, bytes
//	DocSizeAvg, DocSizeMax            double, bytes per document, largest
//	DLTime, DLTimeAvg, DLTimeMax      double, seconds
//	ActiveSites                       int
//	PPChecksums                       double, unique checksums owned
//	MimeType, HTTPResponse, URISkip,  {name: double}
//	DocSkip
//	(the other members of 2.2.5 are 0 or empty: the node scheduler does
//	not know them, the receiver computes them)
//
// and one member 2.2.5 does not have, "trawl": {counter: int}, the
// engine's counters the structure cannot carry exactly (the update counts
// behind the averages, the skip and error counters behind URISkip and
// DocSkip, has_etag, robots_fetched...). DecodeStat reads both: a receiver
// that knows only 2.2.5 reads the standard members; trawl's multinode
// scheduler gets every counter back.

// StatExtra is the key of the counters the structure has no member for.
const StatExtra = "trawl"

// statExact maps the standard members that carry one counter exactly
// (besides DocSize, DLTime and their maxima, and the histograms).
var statExact = func() map[string]string {
	m := map[string]string{"ReadNet": "bytes", "WriteNet": "bytes_sent"}
	for _, c := range counterCounts {
		switch c.attr {
		case "HasLastMod", "HasETag", "HasSitemap":
			continue // not members of 2.2.5
		}
		m[c.attr] = c.counter
	}
	return m
}()

// inStructure reports whether a counter travels in a standard member.
func inStructure(k string) bool {
	switch k {
	case "doc_bytes", "doc_bytes_max", "dl_time_us", "dl_time_us_max", "active_sites", "pp_checksums":
		return true
	}
	if strings.HasPrefix(k, "http_") || strings.HasPrefix(k, "mime_") {
		return true
	}
	for _, c := range statExact {
		if c == k {
			return true
		}
	}
	return false
}

// EncodeStat returns the statistics structure of cumulative counters c
// (see above), keys in the order of CollectionFlat.Dict, then "trawl".
func EncodeStat(c map[string]int64) marshal.Dict {
	f := CollectionFlat{ActiveSites: c["active_sites"], MimeType: map[string]float64{}, HTTPResponse: map[string]float64{},
		URISkip: map[string]float64{}, DocSkip: map[string]float64{}}
	set := map[string]*float64{"Processed": &f.Processed, "Downloaded": &f.Downloaded, "Modified": &f.Modified,
		"Stored": &f.Stored, "Deleted": &f.Deleted, "Unchanged": &f.Unchanged, "Retries": &f.Retries,
		"NodeSchedulerFwd": &f.NodeSchedulerFwd, "LocalFwd": &f.LocalFwd, "Local": &f.Local,
		"PPFailed": &f.PPFailed, "PPSucceeded": &f.PPSucceeded, "PPFed": &f.PPFed, "PPDeleted": &f.PPDeleted,
		"PPAdded": &f.PPAdded, "PPModified": &f.PPModified, "ReadNet": &f.ReadNet, "WriteNet": &f.WriteNet}
	for attr, counter := range statExact {
		if p := set[attr]; p != nil {
			*p = float64(c[counter])
		}
	}
	f.PPChecksums = float64(c["pp_checksums"])
	f.DocSize, f.DocSizeMax = float64(c["doc_bytes"]), float64(c["doc_bytes_max"])
	if n := c["doc_bytes_n"]; n > 0 {
		f.DocSizeAvg = math.Floor(f.DocSize / float64(n))
	}
	f.DLTime, f.DLTimeMax = float64(c["dl_time_us"])/1e6, float64(c["dl_time_us_max"])/1e6
	if n := c["dl_time_us_n"]; n > 0 {
		f.DLTimeAvg = f.DLTime / float64(n)
	}
	for k, v := range c {
		switch {
		case strings.HasPrefix(k, "http_"):
			f.HTTPResponse[k[len("http_"):]] = float64(v)
		case strings.HasPrefix(k, "mime_"):
			f.MimeType[k[len("mime_"):]] = float64(v)
		}
	}
	for _, m := range []struct {
		h     map[string]float64
		codes map[string][]string
	}{{f.URISkip, URISkipCounters}, {f.DocSkip, DocSkipCounters}} {
		for code, keys := range m.codes {
			var n int64
			for _, k := range keys {
				n += c[k]
			}
			if n > 0 {
				m.h[code] = float64(n)
			}
		}
	}
	d := f.Dict()
	extra := marshal.Dict{}
	for _, k := range sortedKeys(c) {
		if !inStructure(k) {
			extra = append(extra, marshal.Pair{Key: marshal.Str(k), Value: marshal.Int(c[k])})
		}
	}
	return append(d, marshal.Pair{Key: marshal.Str(StatExtra), Value: extra})
}

// IsStat reports whether d is a statistics structure (it has Downloaded
// or the "trawl" member) rather than a dictionary of counters.
func IsStat(d marshal.Dict) bool {
	for _, p := range d {
		if k, ok := text(p.Key); ok && (k == "Downloaded" || k == StatExtra) {
			return true
		}
	}
	return false
}

// maxStatCount bounds a decoded count (a double beyond it is not a count).
const maxStatCount = 1 << 62

// DecodeStat returns the counters of a statistics structure (EncodeStat's
// or another node scheduler's): the standard members as counters, then
// the "trawl" member's counters over them. A skip histogram whose counters
// are not among them counts under the first counter of its code. Counters
// at 0 are left out, values that are not numbers or not finite ignored; it
// never fails.
func DecodeStat(d marshal.Dict) map[string]int64 {
	out := map[string]int64{}
	num := func(v marshal.Value) (float64, bool) {
		var x float64
		switch n := v.(type) {
		case marshal.Int:
			x = float64(n)
		case marshal.Float:
			x = float64(n)
		default:
			return 0, false
		}
		if math.IsNaN(x) || math.IsInf(x, 0) || math.Abs(x) > maxStatCount {
			return 0, false
		}
		return x, true
	}
	hists := map[string]marshal.Dict{}
	var extra marshal.Dict
	var sizeAvg, timeAvg float64
	for _, p := range d {
		k, ok := text(p.Key)
		if !ok {
			continue
		}
		if h, ok := p.Value.(marshal.Dict); ok {
			if k == StatExtra {
				extra = h
			} else {
				hists[k] = h
			}
			continue
		}
		x, ok := num(p.Value)
		if !ok {
			continue
		}
		if c, ok := statExact[k]; ok {
			out[c] = int64(math.Round(x))
			continue
		}
		switch k {
		case "DocSize":
			out["doc_bytes"] = int64(math.Round(x))
		case "DocSizeMax":
			out["doc_bytes_max"] = int64(math.Round(x))
		case "DLTime":
			out["dl_time_us"] = int64(math.Round(x * 1e6))
		case "DLTimeMax":
			out["dl_time_us_max"] = int64(math.Round(x * 1e6))
		case "ActiveSites":
			out["active_sites"] = int64(math.Round(x))
		case "PPChecksums":
			out["pp_checksums"] = int64(math.Round(x))
		case "DocSizeAvg":
			sizeAvg = x
		case "DLTimeAvg":
			timeAvg = x
		}
	}
	for attr, prefix := range map[string]string{"HTTPResponse": "http_", "MimeType": "mime_"} {
		for _, p := range hists[attr] {
			k, ok1 := text(p.Key)
			x, ok2 := num(p.Value)
			if ok1 && ok2 && len(k) <= 64 {
				out[prefix+k] = int64(math.Round(x))
			}
		}
	}
	// Without the update counts ("trawl"), the averages give them.
	if sizeAvg > 0 {
		out["doc_bytes_n"] = max(1, int64(math.Round(float64(out["doc_bytes"])/sizeAvg)))
	}
	if timeAvg > 0 {
		out["dl_time_us_n"] = max(1, int64(math.Round(float64(out["dl_time_us"])/1e6/timeAvg)))
	}
	for _, p := range extra {
		k, ok1 := text(p.Key)
		x, ok2 := num(p.Value)
		if ok1 && ok2 {
			out[k] = int64(math.Round(x))
		}
	}
	for attr, codes := range map[string]map[string][]string{"URISkip": URISkipCounters, "DocSkip": DocSkipCounters} {
		for _, p := range hists[attr] {
			code, ok1 := text(p.Key)
			x, ok2 := num(p.Value)
			keys := codes[code]
			if !ok1 || !ok2 || len(keys) == 0 {
				continue
			}
			var have int64
			for _, k := range keys {
				have += out[k]
			}
			if have == 0 {
				out[keys[0]] = int64(math.Round(x))
			}
		}
	}
	for k, v := range out {
		if v == 0 {
			delete(out, k) // a counter never counted
		}
	}
	return out
}
