package stats

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/trawl/trawl/internal/marshal"
)

// ErrAttr reports an unknown attribute, or an update that does not fit its
// kind or type.
var ErrAttr = errors.New("stats: bad attribute")

// slot is the value of one attribute.
type slot struct {
	cur, min, max float64
	n             int64
	str           string
	hist          map[string]float64
	dim           map[string][]marshal.Value
}

// Record holds a value for every attribute of a schema: one delta, one
// cycle, or the all-time cycle. The zero Record is not usable; call
// NewRecord. A Record is not safe for concurrent use.
type Record struct {
	schema *Schema
	// Name is the global, collection or site name (the "name" key).
	Name string
	// Start and Stop are the __startts__ and __stoptts__ timestamps, unix
	// seconds; 0 means unset.
	Start, Stop float64
	slots       []slot
}

// NewRecord returns an empty record of schema s.
func NewRecord(s *Schema, name string) *Record {
	return &Record{schema: s, Name: name, slots: make([]slot, len(s.Attrs))}
}

// Schema returns the record's schema.
func (r *Record) Schema() *Schema { return r.schema }

func (r *Record) lookup(name string, want ...Kind) (int, error) {
	i := r.schema.Index(name)
	if i < 0 {
		return -1, fmt.Errorf("%w: %s has no attribute %q", ErrAttr, r.schema.Name, name)
	}
	k := r.schema.Attrs[i].Kind
	if slices.Contains(want, k) {
		return i, nil
	}
	return -1, fmt.Errorf("%w: %s is %s", ErrAttr, name, k)
}

func (s *slot) observe(v float64) {
	if s.n == 0 || v < s.min {
		s.min = v
	}
	if s.n == 0 || v > s.max {
		s.max = v
	}
	s.n++
}

// Add adds v to a numeric attribute. For a continuous attribute v is one
// update (the sum grows by v; min and max follow the updates); for a
// discrete one the value grows by v.
func (r *Record) Add(name string, v float64) error {
	i, err := r.lookup(name, Continuous, Discrete, MultiDiscrete)
	if err != nil {
		return err
	}
	r.AddAt(i, v)
	return nil
}

// AddAt is Add by attribute index (Schema.Index), without the name lookup.
// It does nothing for an index out of range or a non-numeric attribute.
func (r *Record) AddAt(i int, v float64) {
	if i < 0 || i >= len(r.slots) || r.schema.Attrs[i].Type == Text {
		return
	}
	s := &r.slots[i]
	switch r.schema.Attrs[i].Kind {
	case Continuous:
		s.cur += v
		s.observe(v)
	case Discrete, MultiDiscrete:
		s.cur += v
		s.observe(s.cur)
	}
}

// Set sets a discrete numeric attribute to v.
func (r *Record) Set(name string, v float64) error {
	i, err := r.lookup(name, Discrete, MultiDiscrete)
	if err != nil {
		return err
	}
	if r.schema.Attrs[i].Type == Text {
		return fmt.Errorf("%w: %s is text", ErrAttr, name)
	}
	r.slots[i].cur = v
	r.slots[i].observe(v)
	return nil
}

// SetString sets a discrete text attribute (LastUri, CrawlMode).
func (r *Record) SetString(name, v string) error {
	i, err := r.lookup(name, Discrete)
	if err != nil {
		return err
	}
	if r.schema.Attrs[i].Type != Text {
		return fmt.Errorf("%w: %s is not text", ErrAttr, name)
	}
	r.slots[i].str = v
	r.slots[i].n++
	return nil
}

// Observe adds count occurrences of key to a histogram attribute.
func (r *Record) Observe(name, key string, count float64) error {
	i, err := r.lookup(name, Histogram)
	if err != nil {
		return err
	}
	s := &r.slots[i]
	if s.hist == nil {
		s.hist = make(map[string]float64)
	}
	s.hist[key] += count
	s.n++
	return nil
}

// SetDim sets the values of key in a multidimension attribute; with no
// values the key is removed.
func (r *Record) SetDim(name, key string, values ...marshal.Value) error {
	i, err := r.lookup(name, MultiDimension)
	if err != nil {
		return err
	}
	s := &r.slots[i]
	if len(values) == 0 {
		delete(s.dim, key)
	} else {
		if s.dim == nil {
			s.dim = make(map[string][]marshal.Value)
		}
		s.dim[key] = slices.Clone(values)
	}
	s.n++
	return nil
}

// Value returns a numeric attribute's value [0] (0 when never updated or
// unknown).
func (r *Record) Value(name string) float64 {
	if i := r.schema.Index(name); i >= 0 {
		return r.slots[i].cur
	}
	return 0
}

// Numbers returns a numeric attribute's [value, min, max, updates].
func (r *Record) Numbers(name string) (cur, min, max float64, n int64) {
	if i := r.schema.Index(name); i >= 0 {
		s := r.slots[i]
		return s.cur, s.min, s.max, s.n
	}
	return 0, 0, 0, 0
}

// String returns a text attribute's value.
func (r *Record) String(name string) string {
	if i := r.schema.Index(name); i >= 0 {
		return r.slots[i].str
	}
	return ""
}

// Hist returns a copy of a histogram attribute's counts (never nil).
func (r *Record) Hist(name string) map[string]float64 {
	out := map[string]float64{}
	if i := r.schema.Index(name); i >= 0 {
		maps.Copy(out, r.slots[i].hist)
	}
	return out
}

// Dim returns a copy of a multidimension attribute (never nil).
func (r *Record) Dim(name string) map[string][]marshal.Value {
	out := map[string][]marshal.Value{}
	if i := r.schema.Index(name); i >= 0 {
		for k, v := range r.slots[i].dim {
			out[k] = slices.Clone(v)
		}
	}
	return out
}

// Updates returns how many times an attribute was updated ([3]).
func (r *Record) Updates(name string) int64 {
	if i := r.schema.Index(name); i >= 0 {
		return r.slots[i].n
	}
	return 0
}

func (r *Record) checkSchema(o *Record) error {
	if o.schema != r.schema {
		return fmt.Errorf("stats: cannot combine a %s record with a %s record", o.schema.Name, r.schema.Name)
	}
	return nil
}

func (r *Record) mergeTimes(d *Record) {
	if d.Start != 0 && (r.Start == 0 || d.Start < r.Start) {
		r.Start = d.Start
	}
	if d.Stop > r.Stop {
		r.Stop = d.Stop
	}
}

// Merge folds a later delta d into r, in time order: continuous values and
// histograms add up, the updates counts add up, min and max combine, and a
// discrete value, a text or a multidimension key that d updated replaces
// r's.
func (r *Record) Merge(d *Record) error {
	if err := r.checkSchema(d); err != nil {
		return err
	}
	r.mergeTimes(d)
	for i := range r.slots {
		s, x := &r.slots[i], &d.slots[i]
		if x.n == 0 {
			continue
		}
		a := r.schema.Attrs[i]
		switch a.Kind {
		case Continuous:
			s.cur += x.cur
			combineMinMax(s, x)
		case Discrete, MultiDiscrete:
			if a.Type == Text {
				s.str = x.str
			} else {
				s.cur = x.cur
				combineMinMax(s, x)
			}
		case Histogram:
			addHist(s, x)
		case MultiDimension:
			if s.dim == nil && len(x.dim) > 0 {
				s.dim = make(map[string][]marshal.Value, len(x.dim))
			}
			for k, v := range x.dim {
				s.dim[k] = slices.Clone(v)
			}
		}
		s.n += x.n
	}
	return nil
}

// Sum adds the record o of another source (another node scheduler, another
// site) into r: every numeric value adds up, discrete ones too, so that
// ActiveSites of two nodes gives the sum; texts and multidimension keys of o
// replace r's.
func (r *Record) Sum(o *Record) error {
	if err := r.checkSchema(o); err != nil {
		return err
	}
	r.mergeTimes(o)
	for i := range r.slots {
		s, x := &r.slots[i], &o.slots[i]
		if x.n == 0 {
			continue
		}
		a := r.schema.Attrs[i]
		switch {
		case a.Type == Text && a.Kind == Discrete:
			s.str = x.str
		case a.Kind == Histogram:
			addHist(s, x)
		case a.Kind == MultiDimension:
			if s.dim == nil && len(x.dim) > 0 {
				s.dim = make(map[string][]marshal.Value, len(x.dim))
			}
			for k, v := range x.dim {
				s.dim[k] = slices.Clone(v)
			}
		default:
			s.cur += x.cur
			combineMinMax(s, x)
		}
		s.n += x.n
	}
	return nil
}

func combineMinMax(s, x *slot) {
	if s.n == 0 || x.min < s.min {
		s.min = x.min
	}
	if s.n == 0 || x.max > s.max {
		s.max = x.max
	}
}

func addHist(s, x *slot) {
	if s.hist == nil && len(x.hist) > 0 {
		s.hist = make(map[string]float64, len(x.hist))
	}
	for k, v := range x.hist {
		s.hist[k] += v
	}
}

// Reset zeroes every value, keeping the name and the maps' memory; Start
// becomes start and Stop 0.
func (r *Record) Reset(start float64) {
	r.Start, r.Stop = start, 0
	for i := range r.slots {
		s := &r.slots[i]
		clear(s.hist)
		clear(s.dim)
		*s = slot{hist: s.hist, dim: s.dim}
	}
}

// Clone returns a deep copy of r.
func (r *Record) Clone() *Record {
	c := &Record{schema: r.schema, Name: r.Name, Start: r.Start, Stop: r.Stop, slots: make([]slot, len(r.slots))}
	for i, s := range r.slots {
		c.slots[i] = slot{cur: s.cur, min: s.min, max: s.max, n: s.n, str: s.str}
		if s.hist != nil {
			c.slots[i].hist = maps.Clone(s.hist)
		}
		if s.dim != nil {
			c.slots[i].dim = make(map[string][]marshal.Value, len(s.dim))
			for k, v := range s.dim {
				c.slots[i].dim[k] = slices.Clone(v)
			}
		}
	}
	return c
}

// Empty reports whether no attribute was ever updated.
func (r *Record) Empty() bool {
	for _, s := range r.slots {
		if s.n != 0 {
			return false
		}
	}
	return true
}

// number returns v as an integer when the attribute type is integral and v
// is a whole number within int64, else as a float.
func number(t Type, v float64) marshal.Value {
	if (t == Count || t == Bytes) && v == math.Trunc(v) && math.Abs(v) < 1<<63 {
		return marshal.Int(int64(v))
	}
	return marshal.Float(v)
}
