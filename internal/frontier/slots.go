package frontier

import "time"

// DelaySlot is one time slot of variable_delay (MS-FSCCFG 2.2.4.23): from
// Start to End, in minutes since Sunday 00:00 of the clock's own time zone,
// the delay between fetches on a site is Delay, or nothing is fetched at all
// (Suspend). End <= Start wraps around the end of the week.
type DelaySlot struct {
	Start, End int
	Delay      time.Duration
	Suspend    bool
}

const weekMinutes = 7 * 24 * 60

// contains reports whether minute-of-week m is in the slot.
func (s DelaySlot) contains(m int) bool {
	if s.End > s.Start {
		return m >= s.Start && m < s.End
	}
	return m >= s.Start || m < s.End
}

// minuteOfWeek is t's minute since Sunday 00:00 in t's location.
func minuteOfWeek(t time.Time) int {
	return int(t.Weekday())*24*60 + t.Hour()*60 + t.Minute()
}

// slotAt returns the first slot that holds t (ok false: none) and the time
// it ends.
func slotAt(slots []DelaySlot, t time.Time) (DelaySlot, time.Time, bool) {
	m := minuteOfWeek(t)
	for _, s := range slots {
		if s.contains(m) {
			left := s.End - m
			if left <= 0 {
				left += weekMinutes
			}
			start := t.Truncate(time.Minute)
			if t.Location() != time.UTC {
				// Truncate works on absolute time; a zone with a
				// sub-minute offset is not worth more care.
				start = time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), 0, 0, t.Location())
			}
			return s, start.Add(time.Duration(left) * time.Minute), true
		}
	}
	return DelaySlot{}, time.Time{}, false
}

// applySlot sets the delay of the time slot now is in (Config.Delay outside
// every slot) and reports whether the slot suspends crawling, and until
// when.
func (f *Frontier) applySlot(now time.Time) (suspended bool, until time.Time) {
	f.curDelay, f.inSlot = f.cfg.Delay, false
	if len(f.cfg.Slots) == 0 {
		return false, time.Time{}
	}
	s, end, ok := slotAt(f.cfg.Slots, now)
	if !ok {
		return false, time.Time{}
	}
	if s.Suspend {
		return true, end
	}
	f.curDelay, f.inSlot = s.Delay, true
	return false, time.Time{}
}

// DelayAt is the delay between fetches on a site at now under the
// variable_delay slots (ok false: a slot suspends crawling at now).
func DelayAt(slots []DelaySlot, def time.Duration, now time.Time) (d time.Duration, ok bool) {
	s, _, in := slotAt(slots, now)
	switch {
	case !in:
		return def, true
	case s.Suspend:
		return 0, false
	}
	return s.Delay, true
}
