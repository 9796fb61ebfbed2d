package stats

import (
	"fmt"
	"slices"
)

// DefaultKeep is how many refresh cycles a Series keeps besides the
// all-time cycle (MS-FSCADM 3.3.1 leaves the number to the implementation).
const DefaultKeep = 4

type cycle struct {
	num int
	rec *Record
}

// Series is the statistics of one global, collection or site scope: the
// delta not yet merged, the last refresh cycles and the all-time cycle
// (2.2.4.3-2.2.4.5). Cycle numbers start at 0 and grow by one. A Series is
// not safe for concurrent use.
type Series struct {
	schema   *Schema
	name     string
	delta    *Record
	cycles   []cycle
	complete *Record
	keep     int
}

// NewSeries returns a series of schema s named name whose delta and cycle 0
// start at now (unix seconds), keeping keep cycles (DefaultKeep when keep <=
// 0).
func NewSeries(s *Schema, name string, keep int, now float64) *Series {
	if keep <= 0 {
		keep = DefaultKeep
	}
	se := &Series{schema: s, name: name, delta: NewRecord(s, name), complete: NewRecord(s, name), keep: keep}
	se.delta.Start = now
	se.complete.Start = now
	c0 := NewRecord(s, name)
	c0.Start = now
	se.cycles = []cycle{{num: 0, rec: c0}}
	return se
}

// Name returns the series' name.
func (s *Series) Name() string { return s.name }

// Schema returns the series' schema.
func (s *Series) Schema() *Schema { return s.schema }

// Delta returns the delta record that the engine updates.
func (s *Series) Delta() *Record { return s.delta }

// Complete returns the all-time cycle.
func (s *Series) Complete() *Record { return s.complete }

// Current returns the most recent cycle.
func (s *Series) Current() *Record {
	if len(s.cycles) == 0 {
		return nil
	}
	return s.cycles[len(s.cycles)-1].rec
}

// CurrentCycle returns the number of the most recent cycle (-1 if none).
func (s *Series) CurrentCycle() int {
	if len(s.cycles) == 0 {
		return -1
	}
	return s.cycles[len(s.cycles)-1].num
}

// Previous returns the cycle before the current one, or nil when there is
// none (CollectionGetStatistics2 then leaves out "prev").
func (s *Series) Previous() *Record {
	if len(s.cycles) < 2 {
		return nil
	}
	return s.cycles[len(s.cycles)-2].rec
}

// Cycle returns cycle n, or nil if it is not kept.
func (s *Series) Cycle(n int) *Record {
	for _, c := range s.cycles {
		if c.num == n {
			return c.rec
		}
	}
	return nil
}

// Cycles returns the numbers of the kept cycles, oldest first.
func (s *Series) Cycles() []int {
	out := make([]int, len(s.cycles))
	for i, c := range s.cycles {
		out[i] = c.num
	}
	return out
}

// Apply merges an incoming delta (from a node scheduler) into the series'
// delta.
func (s *Series) Apply(d *Record) error {
	if d.schema != s.schema {
		return fmt.Errorf("stats: %s delta for %s series %q", d.schema.Name, s.schema.Name, s.name)
	}
	return s.delta.Merge(d)
}

// Fold merges the delta into the current cycle and the all-time cycle at
// time now, and starts a new, empty delta (2.2.4.4: every delta value is
// re-initialized). Call it every minute or two and before NewCycle.
func (s *Series) Fold(now float64) {
	s.delta.Stop = now
	if len(s.cycles) == 0 {
		c := NewRecord(s.schema, s.name)
		c.Start = s.delta.Start
		s.cycles = append(s.cycles, cycle{num: 0, rec: c})
	}
	// Same schema by construction: Merge cannot fail.
	_ = s.Current().Merge(s.delta)
	_ = s.complete.Merge(s.delta)
	s.delta.Reset(now)
}

// NewCycle folds the delta and starts the next refresh cycle at now,
// dropping the oldest cycles beyond the series' keep count. The all-time
// cycle keeps everything.
func (s *Series) NewCycle(now float64) int {
	s.Fold(now)
	next := 0
	if len(s.cycles) > 0 {
		next = s.cycles[len(s.cycles)-1].num + 1
	}
	c := NewRecord(s.schema, s.name)
	c.Start = now
	s.cycles = append(s.cycles, cycle{num: next, rec: c})
	if over := len(s.cycles) - s.keep; over > 0 {
		s.cycles = slices.Delete(s.cycles, 0, over)
	}
	return next
}

// Clone returns a deep copy of s.
func (s *Series) Clone() *Series {
	c := &Series{schema: s.schema, name: s.name, delta: s.delta.Clone(), complete: s.complete.Clone(), keep: s.keep}
	c.cycles = make([]cycle, len(s.cycles))
	for i, cy := range s.cycles {
		c.cycles[i] = cycle{num: cy.num, rec: cy.rec.Clone()}
	}
	return c
}
