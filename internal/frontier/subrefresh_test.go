package frontier

import (
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/go-cmp/cmp"
)

// newsSub is a configuration with one subcollection, "news": the URIs
// with "/news" in them.
func newsSub(mode RefreshMode, period time.Duration) Config {
	cfg := testConfig()
	cfg.DBSwitch = 0
	cfg.MaxPending = 1
	cfg.Subs = []SubRefresh{{Name: "news", Period: period, Mode: mode}}
	cfg.SubOf = func(uri string) int {
		if strings.Contains(uri, "/news") {
			return 0
		}
		return -1
	}
	return cfg
}

// serveN serves n entries (Next then Done) and returns their URIs.
func serveN(t *testing.T, f *Frontier, now time.Time, n int) []string {
	t.Helper()
	var out []string
	for len(out) < n {
		for _, a := range f.Actions() {
			if a.Kind == ActResolve {
				f.SetIP(a.Site, "10.0.0.1", now)
			}
		}
		fe, ok, _ := f.Next(now)
		if !ok {
			t.Fatalf("only %d of %d served", len(out), n)
		}
		if err := f.Done(fe, Result{Outcome: Fetched}, now); err != nil {
			t.Fatal(err)
		}
		out = append(out, fe.URI)
	}
	return out
}

func TestSubRefreshModes(t *testing.T) {
	seeds := append(uris("a", "news0", "home"), uris("b", "news9")...)
	for _, tc := range []struct {
		name string
		mode RefreshMode
		// before: a/news1..3 and a/o1..3 queued alternately, four served
		// (news1 o1 news2 o2), then news2 and o2 found again after the round
		want    []string // site a's URIs served after the round (site b: news9)
		wantRep SubRefreshReport
	}{
		{"scratch", RefreshScratch, []string{"o3", "news0", "news2"}, SubRefreshReport{Sub: "news", Seeded: 2, Truncated: 1}},
		{"append", RefreshAppend, []string{"news3", "o3", "news0", "news2"}, SubRefreshReport{Sub: "news", Seeded: 2}},
		{"prepend", RefreshPrepend, []string{"news0", "news3", "o3", "news2"}, SubRefreshReport{Sub: "news", Seeded: 2}},
		{"adaptive", RefreshAdaptive, []string{"news1", "news2", "news3", "o3", "news0"}, SubRefreshReport{Sub: "news", Seeded: 2, Rescheduled: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, _ := newFrontier(t, newsSub(tc.mode, time.Hour))
			mustAdd(t, f, t0, uris("a", "news1", "o1", "news2", "o2", "news3", "o3")...)
			if got := short(serveN(t, f, t0, 4)); !cmp.Equal(got, []string{"news1", "o1", "news2", "o2"}) {
				t.Fatalf("served before the round: %v", got)
			}
			// Seen this cycle: nothing new.
			if r := mustAdd(t, f, t0, uris("a", "news2", "o2")...); r.Queued != 0 {
				t.Fatalf("before the round: %+v", r)
			}
			rep, err := f.RefreshSub(t0, 0, seeds, false)
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(tc.wantRep, rep); d != "" {
				t.Errorf("report (-want +got):\n%s", d)
			}
			// The subcollection's URIs are new again, the others are not
			// (adaptive: a plain link to a known URI waits for its score).
			r := mustAdd(t, f, t0, uris("a", "news2", "o2")...)
			wantQueued := 1
			if tc.mode == RefreshAdaptive {
				wantQueued = 0
			}
			if r.Queued != wantQueued {
				t.Errorf("after the round: %+v, want %d queued", r, wantQueued)
			}
			var onA, onB []string
			for _, u := range serveAll(t, f, t0) {
				if strings.HasPrefix(u, "http://a/") {
					onA = append(onA, u)
				} else {
					onB = append(onB, u)
				}
			}
			if d := cmp.Diff(tc.want, short(onA)); d != "" {
				t.Errorf("site a after the round (-want +got):\n%s", d)
			}
			if d := cmp.Diff([]string{"news9"}, short(onB)); d != "" {
				t.Errorf("site b after the round (-want +got):\n%s", d)
			}
			if f.Cycle() != 1 {
				t.Errorf("cycle %d: a round is not a cycle", f.Cycle())
			}
		})
	}
}

func TestSubRefreshSoftWaitsForItsQueue(t *testing.T) {
	f, _ := newFrontier(t, newsSub(RefreshSoft, 10*time.Minute))
	mustAdd(t, f, t0, uris("a", "news1", "o1", "news2")...)
	serveN(t, f, t0, 1) // news1
	now := t0.Add(10 * time.Minute)
	if got := f.SubRefreshDue(now); !cmp.Equal(got, []int{0}) {
		t.Fatalf("due %v", got)
	}
	rep, err := f.RefreshSub(now, 0, uris("a", "news0"), false)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.Postponed || rep.Seeded != 0 {
		t.Fatalf("news2 still queued: %+v", rep)
	}
	if got := f.SubRefreshDue(now); len(got) != 0 {
		t.Errorf("due again at once after a postponement: %v", got)
	}
	// o1 is not the subcollection's: serving news2 is what lets it start.
	serveN(t, f, now, 2)
	later := now.Add(softRetry(10 * time.Minute))
	if got := f.SubRefreshDue(later); !cmp.Equal(got, []int{0}) {
		t.Fatalf("not due after the retry time: %v", got)
	}
	rep, err = f.RefreshSub(later, 0, uris("a", "news0"), false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Postponed || rep.Seeded != 1 {
		t.Errorf("report %+v", rep)
	}
	if r := mustAdd(t, f, later, uris("a", "news1", "o1")...); r.Queued != 1 {
		t.Errorf("news1 new again, o1 not: %+v", r)
	}
	// An operator's refetch (force) does not wait.
	rep, err = f.RefreshSub(later, 0, nil, true)
	if err != nil || rep.Postponed {
		t.Errorf("forced round: %+v %v", rep, err)
	}
}

func TestSubRefreshDuePersistsAndCycleResets(t *testing.T) {
	fs := vfs.NewMem()
	st := openStore(t, fs)
	cfg := newsSub(RefreshAppend, 10*time.Minute)
	cfg.Refresh = time.Hour
	f, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.SubRefreshDue(t0.Add(9 * time.Minute)); len(got) != 0 {
		t.Errorf("due at 9 min: %v", got)
	}
	mustAdd(t, f, t0, uris("a", "news1", "o1")...)
	serveN(t, f, t0, 2)
	at := t0.Add(10 * time.Minute)
	if got := f.SubRefreshDue(at); !cmp.Equal(got, []int{0}) {
		t.Fatalf("due at 10 min: %v", got)
	}
	if _, err := f.RefreshSub(at, 0, nil, false); err != nil {
		t.Fatal(err)
	}
	if got := f.SubRefreshDue(at.Add(9 * time.Minute)); len(got) != 0 {
		t.Errorf("due 9 min after its round: %v", got)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	st.Close()

	// Reopened: the round and the generation are where they were.
	st = openStore(t, fs)
	defer st.Close()
	f, err = Open(st, cfg, nil, at)
	if err != nil {
		t.Fatal(err)
	}
	if got := f.SubRefreshDue(at.Add(9 * time.Minute)); len(got) != 0 {
		t.Errorf("after reopening, due 9 min after its round: %v", got)
	}
	if got := f.SubRefreshDue(at.Add(10 * time.Minute)); !cmp.Equal(got, []int{0}) {
		t.Errorf("after reopening, due 10 min after its round: %v", got)
	}
	r := mustAdd(t, f, at, uris("a", "news1", "o1")...)
	if r.Queued != 1 {
		t.Errorf("after reopening: news1 new in its round, o1 seen: %+v", r)
	}
	serveN(t, f, at, 1)
	if r := mustAdd(t, f, at, uris("a", "news1")...); r.Queued != 0 {
		t.Errorf("news1 fetched in this round is seen: %+v", r)
	}
	// A collection cycle starts a round of every subcollection too.
	cyc := at.Add(5 * time.Minute)
	if _, err := f.Refresh(cyc, nil, nil); err != nil {
		t.Fatal(err)
	}
	if got := f.SubRefreshDue(cyc.Add(9 * time.Minute)); len(got) != 0 {
		t.Errorf("due 9 min after the collection's cycle: %v", got)
	}
}

func TestSubRefreshUnknownSubcollection(t *testing.T) {
	f, _ := newFrontier(t, newsSub(RefreshAppend, 0))
	if _, err := f.RefreshSub(t0, 1, nil, true); err == nil {
		t.Error("subcollection 1 of 1 accepted")
	}
	if got := f.SubRefreshDue(t0.Add(1000 * time.Hour)); len(got) != 0 {
		t.Errorf("a subcollection without its own period is never due: %v", got)
	}
	if f.SubIndex("news") != 0 || f.SubIndex("x") != -1 {
		t.Error("SubIndex")
	}
}

func TestSeenValueGenRoundTrip(t *testing.T) {
	for _, v := range []seenValue{
		{cycle: 3, hops: 2, class: 1, seq: 9, full: true},
		{cycle: 3, hops: 2, class: 1, seq: 9, redirects: 2, full: true},
		{cycle: 3, hops: 2, class: 1, seq: 9, gen: 7, full: true},
		{cycle: 3, hops: 2, class: 1, seq: 9, redirects: 1, gen: 1 << 40, full: true},
	} {
		got, ok := decodeSeen(appendSeen(nil, v))
		if !ok || got != v {
			t.Errorf("%+v: got %+v", v, got)
		}
	}
}

func FuzzDecodeSeen(f *testing.F) {
	f.Add(appendSeen(nil, seenValue{cycle: 3, hops: 2, class: 1, seq: 9, redirects: 1, gen: 4}))
	f.Add(appendSeen(nil, seenValue{cycle: 1}))
	f.Fuzz(func(t *testing.T, b []byte) {
		v, ok := decodeSeen(b)
		if !ok || !v.full {
			return
		}
		if v2, ok := decodeSeen(appendSeen(nil, v)); !ok || v2 != v {
			t.Fatalf("re-encode: %+v %+v", v, v2)
		}
	})
}

func FuzzReadSubs(f *testing.F) {
	fr := &Frontier{cfg: newsSub(RefreshSoft, time.Minute), gen: 5, subs: []subState{{last: 5, start: t0}}}
	f.Add(fr.appendSubs(nil))
	f.Fuzz(func(t *testing.T, b []byte) {
		g := &Frontier{cfg: fr.cfg, cycleStart: t0}
		r := reader{b: b}
		g.readSubs(&r)
		if len(g.subs) != len(g.cfg.Subs) {
			t.Fatalf("%d states for %d subcollections", len(g.subs), len(g.cfg.Subs))
		}
		if r.end() == nil {
			g.appendSubs(nil) // whatever decoded encodes again
		}
	})
}
