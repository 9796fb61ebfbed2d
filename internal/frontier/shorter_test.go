package frontier

import (
	"encoding/binary"
	"fmt"
	"testing"

	"github.com/cockroachdb/pebble/vfs"
	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/store"
)

// hopsOf serves everything and returns each URI's hops as served.
func hopsOf(t *testing.T, f *Frontier) map[string][]int {
	t.Helper()
	out := map[string][]int{}
	for i := 0; i < 1000; i++ {
		fe, ok, _ := f.Next(t0)
		if !ok {
			return out
		}
		out[short([]string{fe.URI})[0]] = append(out[short([]string{fe.URI})[0]], fe.Hops)
		if err := f.Done(fe, Result{Outcome: Fetched}, t0); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no end")
	return nil
}

func TestShorterPathLowersDepth(t *testing.T) {
	e := func(name string, hops int) Entry { return Entry{URI: "http://a/" + name, Site: "a", Hops: hops} }
	for _, tc := range []struct {
		name     string
		maxHops  int
		adds     [][]Entry
		serveMid bool // serve everything between the first Add and the rest
		want     map[string][]int
		shorter  int64
	}{
		{name: "queued entry rewritten in place", maxHops: 3,
			adds: [][]Entry{{e("x", 3), e("y", 2)}, {e("x", 1)}, {e("y", 2), e("x", 2)}},
			want: map[string][]int{"x": {1}, "y": {2}}, shorter: 1},
		{name: "same call keeps the shortest", maxHops: 3,
			adds: [][]Entry{{e("x", 3), e("x", 1), e("x", 2)}},
			want: map[string][]int{"x": {1}}},
		{name: "served URI queued again", maxHops: 3, serveMid: true,
			adds: [][]Entry{{e("x", 3)}, {e("x", 0), e("x", 2)}},
			want: map[string][]int{"x": {3, 0}}, shorter: 1},
		{name: "FULL ignores depth", maxHops: -1,
			adds: [][]Entry{{e("x", 3)}, {e("x", 1)}},
			want: map[string][]int{"x": {3}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxHops = tc.maxHops
			cfg.HeadSize = 1 // the rewritten entry is on disk, not only in memory
			f, _ := newFrontier(t, cfg)
			got := map[string][]int{}
			for i, es := range tc.adds {
				mustAdd(t, f, t0, es...)
				if tc.serveMid && i == 0 {
					for k, v := range hopsOf(t, f) {
						got[k] = append(got[k], v...)
					}
				}
			}
			for k, v := range hopsOf(t, f) {
				got[k] = append(got[k], v...)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("hops served (-want +got):\n%s", d)
			}
			if s := f.Stats(); s.Shorter != tc.shorter || s.Queued != 0 {
				t.Errorf("stats: shorter %d (want %d), queued %d", s.Shorter, tc.shorter, s.Queued)
			}
		})
	}
}

func TestShorterPathInHead(t *testing.T) {
	// The entries are in the in-memory head: the head copy gets the new depth.
	cfg := testConfig()
	cfg.MaxHops = 5
	f, _ := newFrontier(t, cfg)
	es := uris("a", "1", "2", "3")
	for i := range es {
		es[i].Hops = 3
	}
	mustAdd(t, f, t0, es...)
	if r := mustAdd(t, f, t0, Entry{URI: "http://a/2", Site: "a", Hops: 3}); r.Duplicate != 1 || r.Shorter != 0 {
		t.Errorf("an equal path: %+v", r)
	}
	if r := mustAdd(t, f, t0, Entry{URI: "http://a/2", Site: "a", Hops: 1, Referrer: "http://a/"}); r.Shorter != 1 {
		t.Errorf("a shorter path: %+v", r)
	}
	if got := hopsOf(t, f); !cmp.Equal(got, map[string][]int{"1": {3}, "2": {1}, "3": {3}}) {
		t.Errorf("served %v", got)
	}
}

func TestOldSeenValueNeverShorter(t *testing.T) {
	cfg := testConfig()
	cfg.MaxHops = 5
	f, st := newFrontier(t, cfg)
	// A seen-set value of the first format holds only the cycle.
	b := st.NewBatch()
	if err := b.SetRaw(store.SpaceSeen, f.seenKey("http://a/x"), binary.AppendVarint(nil, 1)); err != nil {
		t.Fatal(err)
	}
	if err := b.Commit(); err != nil {
		t.Fatal(err)
	}
	f2, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if r := mustAdd(t, f2, t0, Entry{URI: "http://a/x", Site: "a", Hops: 0}); r.Duplicate != 1 {
		t.Errorf("old seen value: %+v", r)
	}
}

func TestFresh(t *testing.T) {
	cfg := testConfig()
	cfg.RefreshMode = RefreshAppend
	f, _ := newFrontier(t, cfg)
	mustAdd(t, f, t0, Entry{URI: "http://a/1", Site: "a"}, Entry{URI: "http://a/2", Site: "a", QueueFlags: QFForce})
	fresh := map[string]bool{}
	serve := func() {
		for {
			fe, ok, _ := f.Next(t0)
			if !ok {
				return
			}
			fresh[fe.URI] = fe.Fresh
			if err := f.Done(fe, Result{Outcome: Fetched}, t0); err != nil {
				t.Fatal(err)
			}
		}
	}
	serve()
	if d := cmp.Diff(map[string]bool{"http://a/1": true, "http://a/2": false}, fresh); d != "" {
		t.Errorf("first cycle (-want +got):\n%s", d)
	}
	if _, err := f.Refresh(t0, nil, nil); err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f, t0, Entry{URI: "http://a/1", Site: "a"})
	serve()
	if fresh["http://a/1"] {
		t.Error("a URI served in an earlier cycle is fresh")
	}
	k, ok, err := f.st.GetRaw(store.SpaceKnown, f.knownKey("a", "http://a/1"))
	if err != nil || !ok {
		t.Fatal("no known record", err)
	}
	if ku, _ := decodeKnown("a", "http://a/1", k); ku.Fetches != 2 {
		t.Errorf("known record after two fetches: %+v", ku)
	}
}

func TestDecodeEntryVersion1(t *testing.T) {
	e := Entry{URI: "http://a/", Site: "a", Referrer: "r", Hops: 2, Level: 1, URIFlags: URIFStartURI, QueueFlags: QFPrepend, Extra: []byte{9}}
	b := []byte{entryVersion, 1, e.QueueFlags}
	b = binary.AppendUvarint(b, uint64(e.URIFlags))
	b = binary.AppendUvarint(b, uint64(e.Hops))
	b = binary.AppendUvarint(b, uint64(e.Level))
	for _, s := range []string{e.URI, e.Site, e.Referrer, string(e.Extra)} {
		b = store.AppendLP(b, s)
	}
	got, class, fresh, err := decodeQueued(b)
	if err != nil || class != 1 || fresh || !cmp.Equal(e, got) {
		t.Errorf("version 1: %v %d %v %+v", err, class, fresh, got)
	}
	v2 := appendQueued(nil, &e, 1, true)
	if got, _, fresh, err := decodeQueued(v2); err != nil || !fresh || !cmp.Equal(e, got) {
		t.Errorf("version 2: %v %v %+v", err, fresh, got)
	}
	er := e
	er.Redirects = 4
	if got, _, _, err := decodeQueued(appendQueued(nil, &er, 1, false)); err != nil || !cmp.Equal(er, got) {
		t.Errorf("version 2 with redirects: %v %+v", err, got)
	}
	v2[3] = 0x80
	if _, _, _, err := decodeQueued(v2); err == nil {
		t.Error("unknown internal flag accepted")
	}
}

func TestSeenValueRoundTrip(t *testing.T) {
	v := seenValue{cycle: 7, hops: 3, class: 2, seq: seqMid + 5, full: true}
	b := appendSeen(nil, v)
	got, ok := decodeSeen(b)
	if !ok || got != v {
		t.Errorf("round trip %+v %v", got, ok)
	}
	vr := v
	vr.redirects = 3
	if got, ok := decodeSeen(appendSeen(nil, vr)); !ok || got != vr {
		t.Errorf("round trip with redirects %+v %v", got, ok)
	}
	for i := 0; i < len(b); i++ {
		got, ok := decodeSeen(b[:i])
		if got.full || (i == 0 && ok) {
			t.Errorf("truncated to %d: %+v %v", i, got, ok)
		}
	}
}

func TestAutoBloomGrows(t *testing.T) {
	f, _ := newFrontier(t, testConfig())
	if !f.bloomAuto || f.bloomCap != autoBloomMin {
		t.Fatalf("no automatic filter: auto %v cap %d", f.bloomAuto, f.bloomCap)
	}
	if err := f.resizeBloom(16); err != nil {
		t.Fatal(err)
	}
	var es []Entry
	for i := 0; i < 100; i++ {
		es = append(es, Entry{URI: fmt.Sprintf("http://a/%d", i), Site: "a"})
	}
	mustAdd(t, f, t0, es...)
	if f.bloomCap < 100 || f.bloomN != 100 {
		t.Errorf("filter not grown: cap %d, n %d", f.bloomCap, f.bloomN)
	}
	if r := mustAdd(t, f, t0, es...); r.Duplicate != 100 {
		t.Errorf("after growing: %+v", r)
	}
}

func TestDropURIsAndSite(t *testing.T) {
	fs := vfs.NewMem()
	st := openStore(t, fs)
	defer st.Close()
	cfg := testConfig()
	cfg.MaxPending = 1
	cfg.HeadSize = 1
	f, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	mustAdd(t, f, t0, uris("a", "1", "2", "3", "4")...)
	mustAdd(t, f, t0, uris("b", "1", "2")...)
	// One entry of a in flight while the others are dropped.
	var fly Fetch
	for {
		fe, ok, _ := f.Next(t0)
		if !ok {
			t.Fatal("nothing served")
		}
		if fe.Site == "a" {
			fly = fe
			break
		}
		if err := f.Done(fe, Result{Outcome: Fetched}, t0); err != nil {
			t.Fatal(err)
		}
	}
	n, err := f.DropURIs(t0, "a", []string{"http://a/3", "http://a/9", fly.URI})
	if err != nil || n != 1 {
		t.Fatalf("DropURIs = %d, %v (want 1: the in-flight one finishes)", n, err)
	}
	if err := f.Done(fly, Result{Outcome: Fetched}, t0); err != nil {
		t.Fatal(err)
	}
	if n, err := f.DropSite(t0, "b", []string{"http://b/old"}); err != nil {
		t.Fatal(err)
	} else if n != 1 && n != 2 {
		t.Fatalf("DropSite = %d", n)
	}
	rest := serveAll(t, f, t0)
	for _, u := range rest {
		if u == "http://a/3" || u[:8] == "http://b" {
			t.Errorf("dropped %s served", u)
		}
	}
	if s := f.Stats(); s.Queued != 0 {
		t.Errorf("queued %d after serving all", s.Queued)
	}
	// Forgotten: they can be queued again, and a reopened frontier agrees.
	if r := mustAdd(t, f, t0, Entry{URI: "http://a/3", Site: "a"}, Entry{URI: "http://b/1", Site: "b"}, Entry{URI: "http://b/old", Site: "b"}); r.Queued != 3 {
		t.Errorf("re-added: %+v", r)
	}
	f2, err := Open(st, cfg, nil, t0)
	if err != nil {
		t.Fatal(err)
	}
	if got := serveAll(t, f2, t0); len(got) != 3 {
		t.Errorf("after reopen served %v", got)
	}
}

// servedPaths serves everything and returns each URI's hops, redirects and
// QFReextract flag as served, in serving order.
func servedPaths(t *testing.T, f *Frontier) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for i := 0; i < 1000; i++ {
		fe, ok, _ := f.Next(t0)
		if !ok {
			return out
		}
		k := short([]string{fe.URI})[0]
		out[k] = append(out[k], fmt.Sprintf("h%d r%d re=%v", fe.Hops, fe.Redirects, fe.QueueFlags&QFReextract != 0))
		if err := f.Done(fe, Result{Outcome: Fetched}, t0); err != nil {
			t.Fatal(err)
		}
	}
	t.Fatal("no end")
	return nil
}

// TestShorterPathRedirects: the redirect count of a URI is the minimum
// over its paths too (crawlmode FULL and DEPTH), a path shorter in one
// measure and longer in the other changes nothing, and a URI served
// already is queued again flagged QFReextract.
func TestShorterPathRedirects(t *testing.T) {
	e := func(name string, hops, redirects int) Entry {
		return Entry{URI: "http://a/" + name, Site: "a", Hops: hops, Redirects: redirects}
	}
	for _, tc := range []struct {
		name     string
		maxHops  int
		adds     [][]Entry
		serveMid bool
		want     map[string][]string
	}{
		{name: "FULL: fewer redirects rewrite the queued entry", maxHops: -1,
			adds: [][]Entry{{e("x", 1, 3)}, {e("x", 5, 1)}},
			want: map[string][]string{"x": {"h5 r1 re=false"}}},
		{name: "DEPTH: fewer redirects, same hops", maxHops: 5,
			adds: [][]Entry{{e("x", 2, 3)}, {e("x", 2, 1)}},
			want: map[string][]string{"x": {"h2 r1 re=false"}}},
		{name: "DEPTH: fewer hops but more redirects is not shorter", maxHops: 5,
			adds: [][]Entry{{e("x", 3, 0)}, {e("x", 1, 2)}},
			want: map[string][]string{"x": {"h3 r0 re=false"}}},
		{name: "same call keeps the fewest redirects", maxHops: -1,
			adds: [][]Entry{{e("x", 0, 4), e("x", 0, 2), e("x", 0, 3)}},
			want: map[string][]string{"x": {"h0 r2 re=false"}}},
		{name: "served URI queued again for re-extraction", maxHops: -1, serveMid: true,
			adds: [][]Entry{{e("x", 0, 3)}, {e("x", 0, 1), e("x", 0, 2)}},
			want: map[string][]string{"x": {"h0 r3 re=false", "h0 r1 re=true"}}},
		{name: "served URI at a shorter depth", maxHops: 3, serveMid: true,
			adds: [][]Entry{{e("x", 3, 0)}, {e("x", 1, 0)}},
			want: map[string][]string{"x": {"h3 r0 re=false", "h1 r0 re=true"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.MaxHops = tc.maxHops
			cfg.HeadSize = 1
			f, _ := newFrontier(t, cfg)
			got := map[string][]string{}
			for i, es := range tc.adds {
				mustAdd(t, f, t0, es...)
				if tc.serveMid && i == 0 {
					for k, v := range servedPaths(t, f) {
						got[k] = append(got[k], v...)
					}
				}
			}
			for k, v := range servedPaths(t, f) {
				got[k] = append(got[k], v...)
			}
			if d := cmp.Diff(tc.want, got); d != "" {
				t.Errorf("served (-want +got):\n%s", d)
			}
		})
	}
}
