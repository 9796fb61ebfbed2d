package stats

import (
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/trawl/trawl/internal/marshal"
)

// ErrFormat reports a marshalled statistics value of the wrong shape.
var ErrFormat = errors.New("stats: malformed statistics")

// CompleteKey is the key of the all-time cycle in a cycles dictionary, as
// printed in MS-FSCADM 2.2.4.3 and 2.2.4.5 (with a capital I). The parser
// also accepts CompleteKeyAlt, the lower-case-L spelling the alternating case
// suggests, and "complete".
const (
	CompleteKey    = "cOmPIEtE"
	CompleteKeyAlt = "cOmPlEtE"
)

// reserved is the value of the reserved elements [1] and [2] of histogram
// and multidimension values (2.2.4.6.3, 2.2.4.6.4).
var reserved = marshal.Str("None")

// MarshalValue returns r as a schema dictionary (2.2.4.7), every attribute
// included, in marshal's value model.
func (r *Record) MarshalValue() marshal.Dict {
	d := marshal.Dict{
		{Key: marshal.Str("__schemaname__"), Value: marshal.Str(r.schema.Name)},
		{Key: marshal.Str("name"), Value: marshal.Str(r.Name)},
	}
	if r.Start != 0 {
		d = append(d, marshal.Pair{Key: marshal.Str("__startts__"), Value: marshal.Float(r.Start)})
	}
	if r.Stop != 0 {
		d = append(d, marshal.Pair{Key: marshal.Str("__stoptts__"), Value: marshal.Float(r.Stop)})
	}
	for _, k := range kinds {
		var list marshal.List
		for i, a := range r.schema.Attrs {
			if a.Kind != k {
				continue
			}
			list = append(list, marshal.List{marshal.Str(a.Name), r.slotValue(i)})
		}
		if list != nil {
			d = append(d, marshal.Pair{Key: marshal.Str(k.String()), Value: list})
		}
	}
	return d
}

func (r *Record) slotValue(i int) marshal.Value {
	a, s := r.schema.Attrs[i], &r.slots[i]
	n := marshal.Int(s.n)
	switch a.Kind {
	case Histogram:
		keys := sortedKeys(s.hist)
		h := make(marshal.Dict, 0, len(keys))
		for _, k := range keys {
			h = append(h, marshal.Pair{Key: marshal.Str(k), Value: number(Count, s.hist[k])})
		}
		return marshal.List{h, reserved, reserved, n}
	case MultiDimension:
		keys := sortedKeys(s.dim)
		h := make(marshal.Dict, 0, len(keys))
		for _, k := range keys {
			h = append(h, marshal.Pair{Key: marshal.Str(k), Value: marshal.List(s.dim[k])})
		}
		return marshal.List{h, reserved, reserved, n}
	}
	if a.Type == Text {
		return marshal.List{marshal.Str(s.str), reserved, reserved, n}
	}
	return marshal.List{number(a.Type, s.cur), number(a.Type, s.min), number(a.Type, s.max), n}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func text(v marshal.Value) (string, bool) {
	switch x := v.(type) {
	case marshal.Bytes:
		return string(x), true
	case marshal.Unicode:
		return string(x), true
	}
	return "", false
}

func float(v marshal.Value) (float64, bool) {
	switch x := v.(type) {
	case marshal.Int:
		return float64(x), true
	case marshal.Float:
		return float64(x), true
	case marshal.Long:
		f, _ := x.Float64()
		return f, true
	case marshal.Bool:
		if x {
			return 1, true
		}
		return 0, true
	}
	return 0, false
}

func seq(v marshal.Value) ([]marshal.Value, bool) {
	switch x := v.(type) {
	case marshal.List:
		return x, true
	case marshal.Tuple:
		return x, true
	}
	return nil, false
}

func formatErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrFormat, fmt.Sprintf(format, args...))
}

// ParseRecord reads a schema dictionary written by MarshalValue (or by
// another implementation). Attributes the schema does not know are ignored.
func ParseRecord(v marshal.Value) (*Record, error) {
	d, ok := v.(marshal.Dict)
	if !ok {
		return nil, formatErr("record is %s, want dict", v.Kind())
	}
	sv, _ := d.Get("__schemaname__")
	sn, _ := text(sv)
	schema := SchemaByName(sn)
	if schema == nil {
		return nil, formatErr("unknown __schemaname__ %q", sn)
	}
	nv, _ := d.Get("name")
	name, _ := text(nv)
	r := NewRecord(schema, name)
	if t, ok := d.Get("__startts__"); ok {
		r.Start, _ = float(t)
	}
	if t, ok := d.Get("__stoptts__"); ok {
		r.Stop, _ = float(t)
	}
	for _, k := range kinds {
		lv, ok := d.Get(k.String())
		if !ok {
			continue
		}
		list, ok := seq(lv)
		if !ok {
			return nil, formatErr("%s: %s is %s, want list", sn, k, lv.Kind())
		}
		for _, e := range list {
			pair, ok := seq(e)
			if !ok || len(pair) != 2 {
				return nil, formatErr("%s: %s entry is not [name, value]", sn, k)
			}
			an, ok := text(pair[0])
			if !ok {
				return nil, formatErr("%s: %s attribute name is not a string", sn, k)
			}
			i := schema.Index(an)
			if i < 0 {
				continue
			}
			if schema.Attrs[i].Kind != k {
				return nil, formatErr("%s: %s is %s, not %s", sn, an, schema.Attrs[i].Kind, k)
			}
			if err := r.parseSlot(i, pair[1]); err != nil {
				return nil, err
			}
		}
	}
	return r, nil
}

func (r *Record) parseSlot(i int, v marshal.Value) error {
	a, s := r.schema.Attrs[i], &r.slots[i]
	vals, ok := seq(v)
	if !ok || len(vals) != 4 {
		return formatErr("%s: value is not a 4-element array", a.Name)
	}
	n, ok := float(vals[3])
	if !ok || n < 0 || n > math.MaxInt64/2 {
		return formatErr("%s: bad update count", a.Name)
	}
	s.n = int64(n)
	switch a.Kind {
	case Histogram:
		h, ok := vals[0].(marshal.Dict)
		if !ok {
			return formatErr("%s: histogram is not a dict", a.Name)
		}
		s.hist = make(map[string]float64, len(h))
		for _, p := range h {
			k, ok1 := text(p.Key)
			if !ok1 { // an integer key, such as an RCODE written as a number
				k = marshal.FormatPython(p.Key)
			}
			c, ok2 := float(p.Value)
			if !ok2 {
				return formatErr("%s: count of %q is not a number", a.Name, k)
			}
			s.hist[k] += c
		}
		return nil
	case MultiDimension:
		h, ok := vals[0].(marshal.Dict)
		if !ok {
			return formatErr("%s: multidimension value is not a dict", a.Name)
		}
		s.dim = make(map[string][]marshal.Value, len(h))
		for _, p := range h {
			k, ok1 := text(p.Key)
			l, ok2 := seq(p.Value)
			if !ok1 || !ok2 {
				return formatErr("%s: entry is not string -> array", a.Name)
			}
			s.dim[k] = append([]marshal.Value(nil), l...)
		}
		return nil
	}
	if a.Type == Text {
		s.str, _ = text(vals[0])
		return nil
	}
	var ok0, ok1, ok2 bool
	s.cur, ok0 = float(vals[0])
	s.min, ok1 = float(vals[1])
	s.max, ok2 = float(vals[2])
	if !ok0 || !ok1 || !ok2 {
		return formatErr("%s: value, min or max is not a number", a.Name)
	}
	return nil
}

// MarshalValue returns the statistics tuple (delta, cycles) of 2.2.4.3.
func (s *Series) MarshalValue() marshal.Tuple {
	cycles := make(marshal.Dict, 0, len(s.cycles)+1)
	for _, c := range s.cycles {
		cycles = append(cycles, marshal.Pair{Key: marshal.Int(c.num), Value: c.rec.MarshalValue()})
	}
	cycles = append(cycles, marshal.Pair{Key: marshal.Str(CompleteKey), Value: s.complete.MarshalValue()})
	return marshal.Tuple{s.delta.MarshalValue(), cycles}
}

// ParseSeries reads a statistics tuple (delta, cycles).
func ParseSeries(v marshal.Value) (*Series, error) {
	t, ok := seq(v)
	if !ok || len(t) != 2 {
		return nil, formatErr("statistics tuple is not (delta, cycles)")
	}
	delta, err := ParseRecord(t[0])
	if err != nil {
		return nil, fmt.Errorf("delta: %w", err)
	}
	cd, ok := t[1].(marshal.Dict)
	if !ok {
		return nil, formatErr("cycles is %s, want dict", t[1].Kind())
	}
	s := &Series{schema: delta.schema, name: delta.Name, delta: delta, keep: DefaultKeep}
	for _, p := range cd {
		rec, err := ParseRecord(p.Value)
		if err != nil {
			return nil, fmt.Errorf("cycle %s: %w", marshal.FormatPython(p.Key), err)
		}
		if rec.schema != s.schema {
			return nil, formatErr("cycle of schema %s in a %s series", rec.schema.Name, s.schema.Name)
		}
		if k, ok := text(p.Key); ok {
			if k != CompleteKey && k != CompleteKeyAlt && k != "complete" {
				return nil, formatErr("unknown cycle key %q", k)
			}
			s.complete = rec
			continue
		}
		n, ok := p.Key.(marshal.Int)
		if !ok || n < 0 || n > math.MaxInt32 {
			return nil, formatErr("cycle key %s is not a cycle number", marshal.FormatPython(p.Key))
		}
		s.cycles = append(s.cycles, cycle{num: int(n), rec: rec})
	}
	sort.Slice(s.cycles, func(i, j int) bool { return s.cycles[i].num < s.cycles[j].num })
	for i := 1; i < len(s.cycles); i++ {
		if s.cycles[i].num == s.cycles[i-1].num {
			return nil, formatErr("cycle %d twice", s.cycles[i].num)
		}
	}
	if s.complete == nil {
		return nil, formatErr("cycles without %q", CompleteKey)
	}
	if len(s.cycles) > s.keep {
		s.keep = len(s.cycles)
	}
	return s, nil
}
