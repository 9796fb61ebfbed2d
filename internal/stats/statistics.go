package stats

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// DSpec is one collection's entry of the dspec dictionary (2.2.4.2): the
// configuration a client needs to compute progress.
type DSpec struct {
	Collection string
	// Refresh is the refresh cycle length in minutes.
	Refresh int
	// RefreshMode is RefreshAppend, RefreshScratch, ...
	RefreshMode int
}

// Statistics is the statistics dictionary CollectionGetStatistics returns
// (2.2.4.1), or, with Global nil and site series, the one
// CollectionGetSiteStatistics returns.
type Statistics struct {
	DSpec  []DSpec
	Global *Series
	// Series are the collection (or site) series, one per name.
	Series []*Series
}

// MarshalValue returns the statistics dictionary in marshal's value model.
func (st *Statistics) MarshalValue() marshal.Dict {
	ds := make(marshal.Dict, 0, len(st.DSpec))
	for _, d := range st.DSpec {
		ds = append(ds, marshal.Pair{Key: marshal.Str(d.Collection), Value: marshal.Dict{
			{Key: marshal.Str("refresh"), Value: marshal.Int(d.Refresh)},
			{Key: marshal.Str("refresh_mode"), Value: marshal.Int(d.RefreshMode)},
		}})
	}
	out := marshal.Dict{{Key: marshal.Str("dspec"), Value: ds}}
	if st.Global != nil {
		out = append(out, marshal.Pair{Key: marshal.Str("global"), Value: st.Global.MarshalValue()})
	}
	for _, s := range st.Series {
		out = append(out, marshal.Pair{Key: marshal.Str(s.name), Value: s.MarshalValue()})
	}
	return out
}

// Marshal returns the statistics dictionary as MS-FSWCU (marshal) bytes.
func (st *Statistics) Marshal() ([]byte, error) {
	return marshal.Encode(st.MarshalValue())
}

// Get returns the series named name.
func (st *Statistics) Get(name string) *Series {
	for _, s := range st.Series {
		if s.name == name {
			return s
		}
	}
	return nil
}

// ParseStatistics reads a statistics dictionary.
func ParseStatistics(v marshal.Value) (*Statistics, error) {
	d, ok := v.(marshal.Dict)
	if !ok {
		return nil, formatErr("statistics is %s, want dict", v.Kind())
	}
	st := &Statistics{}
	seenDSpec := false
	for _, p := range d {
		key, ok := text(p.Key)
		if !ok {
			return nil, formatErr("statistics key %s is not a string", marshal.FormatPython(p.Key))
		}
		switch key {
		case "dspec":
			seenDSpec = true
			ds, ok := p.Value.(marshal.Dict)
			if !ok {
				return nil, formatErr("dspec is %s, want dict", p.Value.Kind())
			}
			for _, e := range ds {
				name, ok1 := text(e.Key)
				opts, ok2 := e.Value.(marshal.Dict)
				if !ok1 || !ok2 {
					return nil, formatErr("dspec entry is not collection -> dict")
				}
				spec := DSpec{Collection: name}
				if v, ok := opts.Get("refresh"); ok {
					f, _ := float(v)
					spec.Refresh = int(f)
				}
				if v, ok := opts.Get("refresh_mode"); ok {
					f, _ := float(v)
					spec.RefreshMode = int(f)
				}
				st.DSpec = append(st.DSpec, spec)
			}
		default:
			s, err := ParseSeries(p.Value)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", key, err)
			}
			s.name = key
			if key == "global" {
				st.Global = s
			} else {
				st.Series = append(st.Series, s)
			}
		}
	}
	if !seenDSpec {
		return nil, formatErr("no dspec key")
	}
	return st, nil
}

// UnmarshalStatistics decodes marshal bytes into a Statistics.
func UnmarshalStatistics(b []byte) (*Statistics, error) {
	v, err := marshal.Decode(b)
	if err != nil {
		return nil, fmt.Errorf("stats: %w", err)
	}
	return ParseStatistics(v)
}
