package stats

import (
	"strings"

	"github.com/trawl/trawl/internal/marshal"
)

// CounterReport is a collection's crawl counters as an engine reports
// them: a node scheduler's cumulative counters, or the multinode
// scheduler's sums of its node schedulers' CMD_UM_STAT (MS-FSCMT
// 2.2.4.6), whose dictionary is
//
//	{member: value, ..., "queued": n, "last_uri": uri,
//	 "sites": {site: {member: value, ..., "last_uri": uri}, ...}}
//
// with the members of the statistics structure (statwire.go, decoded by
// DecodeStat) or, from older senders, counters by name ({counter: int}).
//
// Counters are named as the node scheduler counts them ("fetched",
// "stored", "http_404", "errors_timeout", the gauges "queued",
// "in_flight" and "active_sites"); Tracker.Update turns them into the
// MS-FSCADM statistics.
type CounterReport struct {
	Counters map[string]int64
	Sites    map[string]map[string]int64
	// LastURI is the collection's most recent request, SiteLastURI each
	// site's (MS-FSCADM LastUri); empty when not reported.
	LastURI     string
	SiteLastURI map[string]string
}

// ParseCounterReport decodes a statistics dictionary. Keys are strings
// (bytes or unicode), counters integers or floats (truncated); anything
// else is ignored, so a newer node scheduler's extra keys do no harm.
func ParseCounterReport(d marshal.Dict) CounterReport {
	r := CounterReport{Counters: map[string]int64{}, Sites: map[string]map[string]int64{}}
	for _, p := range d {
		k, ok := text(p.Key)
		if !ok {
			continue
		}
		switch k {
		case "sites":
			sd, _ := p.Value.(marshal.Dict)
			for _, sp := range sd {
				site, ok1 := text(sp.Key)
				sv, ok2 := sp.Value.(marshal.Dict)
				if !ok1 || !ok2 {
					continue
				}
				c, last := counters(sv)
				r.Sites[site] = c
				if last != "" {
					if r.SiteLastURI == nil {
						r.SiteLastURI = map[string]string{}
					}
					r.SiteLastURI[site] = last
				}
			}
		case "last_uri":
			r.LastURI, _ = text(p.Value)
		default:
			if n, ok := counter(p.Value); ok {
				r.Counters[k] = n
			}
		}
	}
	if IsStat(d) { // the structure of CMD_UM_STAT (statwire.go)
		q, hasQ := r.Counters["queued"]
		r.Counters = DecodeStat(d)
		if hasQ {
			r.Counters["queued"] = q
		}
	}
	return r
}

// counters decodes a site's dictionary: its counters and its last_uri.
func counters(d marshal.Dict) (map[string]int64, string) {
	out := make(map[string]int64, len(d))
	last := ""
	if IsStat(d) {
		out = DecodeStat(d)
		for _, p := range d {
			if k, _ := text(p.Key); k == "last_uri" {
				last, _ = text(p.Value)
			}
		}
		return out, last
	}
	for _, p := range d {
		k, ok := text(p.Key)
		if !ok {
			continue
		}
		if k == "last_uri" {
			last, _ = text(p.Value)
			continue
		}
		if n, ok := counter(p.Value); ok {
			out[k] = n
		}
	}
	return out, last
}

func counter(v marshal.Value) (int64, bool) {
	switch x := v.(type) {
	case marshal.Int:
		return int64(x), true
	case marshal.Float:
		return int64(x), true
	}
	return 0, false
}

// ErrorTotal counts the failed fetches ("errors_*") and the responses with
// a status of 400 or more ("http_4xx", "http_5xx") in counters.
func ErrorTotal(c map[string]int64) int64 {
	var n int64
	for k, v := range c {
		if strings.HasPrefix(k, "errors_") {
			n += v
		} else if code, ok := strings.CutPrefix(k, "http_"); ok && code >= "400" && len(code) == 3 {
			n += v
		}
	}
	return n
}
