package frontier

import (
	"testing"
	"time"
)

func TestDelayAt(t *testing.T) {
	mon := func(h, m int) time.Time { return time.Date(2026, 11, 16, h, m, 30, 0, time.UTC) } // a Monday
	min := func(day time.Weekday, h, m int) int { return int(day)*24*60 + h*60 + m }
	slots := []DelaySlot{
		{Start: min(time.Monday, 9, 0), End: min(time.Monday, 17, 0), Suspend: true},
		{Start: min(time.Monday, 8, 0), End: min(time.Monday, 18, 30), Delay: 20 * time.Second},
		{Start: min(time.Saturday, 22, 0), End: min(time.Monday, 6, 0), Delay: time.Second}, // wraps over the week end
	}
	for _, c := range []struct {
		name    string
		at      time.Time
		delay   time.Duration
		ok      bool
		endsIn  time.Duration
		inSlot  bool
		suspend bool
	}{
		{"outside every slot", mon(7, 0), 60 * time.Second, true, 0, false, false},
		{"second slot before the first starts", mon(8, 59), 20 * time.Second, true, 9*time.Hour + 31*time.Minute, true, false},
		{"first slot wins where both hold", mon(9, 0), 0, false, 8 * time.Hour, true, true},
		{"last minute of the suspension", mon(16, 59), 0, false, time.Minute, true, true},
		{"end is exclusive", mon(17, 0), 20 * time.Second, true, 90 * time.Minute, true, false},
		{"wrapped slot, Monday morning", mon(5, 0), time.Second, true, time.Hour, true, false},
		{"wrapped slot, Sunday", time.Date(2026, 11, 15, 12, 0, 0, 0, time.UTC), time.Second, true, 18 * time.Hour, true, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			d, ok := DelayAt(slots, 60*time.Second, c.at)
			if d != c.delay || ok != c.ok {
				t.Errorf("DelayAt = %v, %v; want %v, %v", d, ok, c.delay, c.ok)
			}
			s, end, in := slotAt(slots, c.at)
			if in != c.inSlot || s.Suspend != c.suspend {
				t.Errorf("slotAt = %+v, in %v", s, in)
			}
			if in {
				if got := end.Sub(c.at.Truncate(time.Minute)); got != c.endsIn {
					t.Errorf("slot ends in %v, want %v", got, c.endsIn)
				}
			}
		})
	}
}

func TestNextSuspendedSlot(t *testing.T) {
	cfg := testConfig()
	cfg.Delay = time.Second
	// t0 is a Monday 11:12 UTC: suspend Monday 11:00-12:00, delay 5 s on Monday 12:00-13:00.
	cfg.Slots = []DelaySlot{
		{Start: 1*24*60 + 11*60, End: 1*24*60 + 12*60, Suspend: true},
		{Start: 1*24*60 + 12*60, End: 1*24*60 + 13*60, Delay: 5 * time.Second},
	}
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, uris("a", "1", "2", "3")...)
	if _, ok, wake := f.Next(t0); ok || !wake.Equal(time.Date(2009, 6, 15, 12, 0, 0, 0, time.UTC)) {
		t.Fatalf("Next in a suspended slot: ok %v, wake %v; want nothing until 12:00", ok, wake)
	}
	noon := time.Date(2009, 6, 15, 12, 0, 0, 0, time.UTC)
	fe, ok, _ := f.Next(noon)
	if !ok {
		t.Fatal("nothing served after the suspension")
	}
	if err := f.Done(fe, Result{Outcome: Fetched}, noon); err != nil {
		t.Fatal(err)
	}
	if _, ok, wake := f.Next(noon.Add(time.Second)); ok || !wake.Equal(noon.Add(5*time.Second)) {
		t.Fatalf("second fetch: ok %v, wake %v; want the slot's 5 s delay", ok, wake)
	}
	at := time.Date(2009, 6, 15, 13, 0, 0, 0, time.UTC)
	fe, ok, _ = f.Next(at)
	if !ok {
		t.Fatal("nothing served at 13:00")
	}
	if err := f.Done(fe, Result{Outcome: Fetched}, at); err != nil {
		t.Fatal(err)
	}
	if _, ok, wake := f.Next(at); ok || !wake.Equal(at.Add(time.Second)) {
		t.Fatalf("after the slot: ok %v, wake %v; want the 1 s delay", ok, wake)
	}
}
