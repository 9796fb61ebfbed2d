package feed

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/index"
)

// waitFor polls cond until it holds or a deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

func newIndex(t testing.TB, dir string) *index.Index {
	t.Helper()
	ix, err := index.Open(dir, index.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	return ix
}

// runFeeder runs f until the test ends.
func runFeeder(t *testing.T, f *Feeder) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- f.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
}

func htmlDoc(uri, title string) Operation {
	return Operation{Kind: Add, URI: uri, MIME: "text/html",
		Content: []byte("<html><head><title>" + title + "</title></head><body><p>body of " + title + " with common words</p></body></html>")}
}

// scenario is a deterministic set of operations and the index it should
// give: adds of n URIs, updates of the first quarter, removes of a slice.
type scenario struct{ n int }

func (s scenario) uri(i int) string { return fmt.Sprintf("http://site%d.test/doc/%d", i%7, i) }

func (s scenario) ops() [][]Operation {
	var chunks [][]Operation
	var cur []Operation
	flush := func() {
		if len(cur) > 0 {
			chunks = append(chunks, cur)
			cur = nil
		}
	}
	for i := range s.n {
		cur = append(cur, htmlDoc(s.uri(i), fmt.Sprintf("first %d", i)))
		if len(cur) == 25 {
			flush()
		}
	}
	flush()
	for i := range s.n / 4 {
		op := htmlDoc(s.uri(i), fmt.Sprintf("second %d", i))
		op.Kind = Update
		cur = append(cur, op)
	}
	flush()
	for i := s.n * 2 / 3; i < s.n*5/6; i++ {
		cur = append(cur, Operation{Kind: Remove, URI: s.uri(i)})
	}
	flush()
	return chunks
}

// check verifies that idx holds exactly the live documents with their last
// titles.
func (s scenario) check(t *testing.T, idx *index.Index, collection string) {
	t.Helper()
	live := 0
	for i := range s.n {
		st, err := idx.Lookup(context.Background(), collection, s.uri(i))
		if err != nil {
			t.Fatal(err)
		}
		removed := i >= s.n*2/3 && i < s.n*5/6
		want := fmt.Sprintf("first %d", i)
		if i < s.n/4 {
			want = fmt.Sprintf("second %d", i)
		}
		switch {
		case removed && st.Found:
			t.Errorf("%s: removed but found", s.uri(i))
		case !removed && !st.Found:
			t.Errorf("%s: missing", s.uri(i))
		case !removed && st.Title != want:
			t.Errorf("%s: title %q, want %q", s.uri(i), st.Title, want)
		}
		if !removed {
			live++
		}
	}
	res, err := idx.Search(context.Background(), "common", index.SearchOptions{Collection: collection})
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != uint64(live) {
		t.Errorf("search finds %d documents, want %d (one per live URI)", res.Total, live)
	}
}

func (s scenario) live() int { return s.n - (s.n*5/6 - s.n*2/3) }

func TestFeederEndToEnd(t *testing.T) {
	dir := t.TempDir()
	ob, err := OpenOutbox(filepath.Join(dir, "outbox"), OutboxOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	idx := newIndex(t, filepath.Join(dir, "index"))
	defer idx.Close()
	targets, err := Targets("web", nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	results := 0
	f, err := NewFeeder(ob, targets, IndexDialer(idx), FeederOptions{BatchOps: 16,
		OnResult: func(r Result) { mu.Lock(); results++; mu.Unlock() }})
	if err != nil {
		t.Fatal(err)
	}
	runFeeder(t, f)
	s := scenario{n: 200}
	for _, chunk := range s.ops() {
		if err := f.Feed(context.Background(), chunk...); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "outbox to drain", func() bool { return ob.Pending("default:web") == 0 })
	s.check(t, idx, "web")
	if n, _ := idx.Count(); n != uint64(s.live()) {
		t.Errorf("index count %d, want %d", n, s.live())
	}
	st := f.Stats()[0]
	mu.Lock()
	defer mu.Unlock()
	if st.Acked == 0 || st.Acked != results || st.Failures != 0 || st.Pending != 0 {
		t.Errorf("stats %+v, results %d", st, results)
	}
}

// flakyDialer wraps IndexDialer: every 3rd batch fails, by Submit error
// or by transient errors in the callbacks (for half of the ops, the other
// half being applied).
func flakyDialer(idx *index.Index, mode string, batches *atomic.Int64, dials *atomic.Int64) Dialer {
	inner := IndexDialer(idx)
	return func(ctx context.Context, t Target) (Session, error) {
		n := dials.Add(1)
		if mode == "dial" && n%2 == 0 {
			return nil, errors.New("distributor unreachable")
		}
		s, err := inner(ctx, t)
		if err != nil {
			return nil, err
		}
		return &flakySession{Session: s, mode: mode, batches: batches}, nil
	}
}

type flakySession struct {
	Session
	mode    string
	batches *atomic.Int64
}

func (s *flakySession) Submit(ctx context.Context, batch []Operation, cb Callback) error {
	if s.batches.Add(1)%3 != 0 {
		return s.Session.Submit(ctx, batch, cb)
	}
	if s.mode != "callback" {
		return errors.New("connection reset")
	}
	half := batch[:len(batch)/2]
	for _, op := range batch[len(batch)/2:] {
		go cb(op.Seq, errors.New("indexer busy"))
	}
	return s.Session.Submit(ctx, half, cb)
}

func TestFeederSessionFailures(t *testing.T) {
	for _, mode := range []string{"submit", "callback", "dial"} {
		t.Run(mode, func(t *testing.T) {
			dir := t.TempDir()
			ob, err := OpenOutbox(filepath.Join(dir, "outbox"), OutboxOptions{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer ob.Close()
			idx := newIndex(t, filepath.Join(dir, "index"))
			defer idx.Close()
			var batches, dials atomic.Int64
			f, err := NewFeeder(ob, []Target{{Name: "main", Collection: "web", Primary: true}}, flakyDialer(idx, mode, &batches, &dials),
				FeederOptions{BatchOps: 10, MinBackoff: time.Millisecond, MaxBackoff: 4 * time.Millisecond})
			if err != nil {
				t.Fatal(err)
			}
			runFeeder(t, f)
			s := scenario{n: 150}
			for _, chunk := range s.ops() {
				if err := f.Feed(context.Background(), chunk...); err != nil {
					t.Fatal(err)
				}
			}
			waitFor(t, "outbox to drain", func() bool { return ob.Pending("main") == 0 })
			s.check(t, idx, "web")
			st := f.Stats()[0]
			if st.Failures == 0 || dials.Load() < 2 {
				t.Errorf("no failure seen: stats %+v, dials %d", st, dials.Load())
			}
			if st.Retried == 0 {
				t.Errorf("nothing retried: %+v", st)
			}
		})
	}
}

// recorder is a dialer whose sessions record what they get and answer ok,
// or hold the answers when hold is set.
type recorder struct {
	mu       sync.Mutex
	uris     map[string][]string // target -> URIs in submission order
	sizes    map[string][]int    // target -> batch sizes in submission order
	hold     bool
	held     []func()
	inflight int
	maxIn    int
}

func newRecorder() *recorder {
	return &recorder{uris: map[string][]string{}, sizes: map[string][]int{}}
}

func (r *recorder) dial(_ context.Context, t Target) (Session, error) {
	return &recSession{r: r, target: t.Name}, nil
}

func (r *recorder) got(target string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.uris[target]...)
}

type recSession struct {
	r      *recorder
	target string
}

func (s *recSession) Submit(_ context.Context, batch []Operation, cb Callback) error {
	r := s.r
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, op := range batch {
		r.uris[s.target] = append(r.uris[s.target], op.URI)
	}
	r.sizes[s.target] = append(r.sizes[s.target], len(batch))
	answer := func() {
		for _, op := range batch {
			cb(op.Seq, nil)
		}
	}
	r.inflight++
	r.maxIn = max(r.maxIn, r.inflight)
	if r.hold {
		r.held = append(r.held, answer)
		return nil
	}
	r.inflight--
	go answer()
	return nil
}

func (s *recSession) Close() error { return nil }

// releaseOne answers the oldest held batch; it reports whether there was one.
func (r *recorder) releaseOne() bool {
	r.mu.Lock()
	if len(r.held) == 0 {
		r.mu.Unlock()
		return false
	}
	a := r.held[0]
	r.held = r.held[1:]
	r.inflight--
	r.mu.Unlock()
	a()
	return true
}

func TestFeederSuspendResume(t *testing.T) {
	ob, err := OpenOutbox(t.TempDir(), OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	targets, err := Targets("web", []config.Destination{
		{Name: "Global_News", Collection: "collection_A", Primary: true, Paused: true},
		{Name: "Local_News", Collection: "collection_B"},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := newRecorder()
	f, err := NewFeeder(ob, targets, rec.dial, FeederOptions{BatchOps: 5})
	if err != nil {
		t.Fatal(err)
	}
	runFeeder(t, f)
	feed := func(from, to int) {
		for i := from; i < to; i++ {
			if err := f.Feed(context.Background(), Operation{Kind: Add, URI: fmt.Sprint("u", i)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	feed(0, 20)
	waitFor(t, "Local_News to drain", func() bool { return ob.Pending("Local_News") == 0 })
	if got := rec.got("Global_News"); len(got) != 0 || ob.Pending("Global_News") != 20 {
		t.Fatalf("paused target got %d ops, pending %d", len(got), ob.Pending("Global_News"))
	}
	if !f.Stats()[0].Suspended {
		t.Error("Global_News not reported suspended")
	}
	// Resume by content collection, suspend the other by name.
	if err := f.SetSuspended(false, "default:collection_A"); err != nil {
		t.Fatal(err)
	}
	if err := f.SetSuspended(true, "Local_News", "nosuch"); err == nil {
		t.Error("unknown destination accepted")
	}
	waitFor(t, "Global_News to drain", func() bool { return ob.Pending("Global_News") == 0 })
	feed(20, 30)
	waitFor(t, "Global_News to drain again", func() bool { return ob.Pending("Global_News") == 0 })
	if n := ob.Pending("Local_News"); n != 10 || len(rec.got("Local_News")) != 20 {
		t.Errorf("suspended Local_News: pending %d, sent %d", n, len(rec.got("Local_News")))
	}
	// Resume all.
	if err := f.SetSuspended(false); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "Local_News to drain", func() bool { return ob.Pending("Local_News") == 0 })
	if a, b := len(rec.got("Global_News")), len(rec.got("Local_News")); a != 30 || b != 30 {
		t.Errorf("sent %d and %d, want 30 each", a, b)
	}
}

func TestFeederPriorityAndWindow(t *testing.T) {
	ob, err := OpenOutbox(t.TempDir(), OutboxOptions{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ob.Close()
	rec := newRecorder()
	rec.hold = true
	f, err := NewFeeder(ob, []Target{{Name: "d", Collection: "c"}}, rec.dial, FeederOptions{BatchOps: 2, Window: 3})
	if err != nil {
		t.Fatal(err)
	}
	var ops []Operation
	for i := range 8 {
		ops = append(ops, Operation{Kind: Add, URI: fmt.Sprint("n", i)})
	}
	for i := range 3 {
		ops = append(ops, Operation{Kind: Add, URI: fmt.Sprint("h", i), Priority: PriorityOf(URIFFeedHighPri)})
	}
	if err := f.Feed(context.Background(), ops...); err != nil {
		t.Fatal(err)
	}
	runFeeder(t, f)
	waitFor(t, "a full window", func() bool { return len(rec.got("d")) == 6 })
	if got := f.Stats()[0].InFlight; got != 3 {
		t.Errorf("in flight = %d, want 3", got)
	}
	deadline := time.Now().Add(30 * time.Second)
	for len(rec.got("d")) < 11 || ob.Pending("d") > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("timed out: sent %v, pending %d", rec.got("d"), ob.Pending("d"))
		}
		if !rec.releaseOne() {
			time.Sleep(time.Millisecond) // poll: the feeder has not submitted the next batch yet
		}
	}
	want := []string{"h0", "h1", "h2", "n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}
	if diff := cmp.Diff(want, rec.got("d")); diff != "" {
		t.Errorf("submission order (-want +got):\n%s", diff)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.maxIn > 3 {
		t.Errorf("%d batches in flight, window is 3", rec.maxIn)
	}
}

func TestTargets(t *testing.T) {
	got, err := Targets("web", []config.Destination{{Name: "A", Collection: "ca"}, {Name: "B", Collection: "cb", Paused: true}})
	if err != nil {
		t.Fatal(err)
	}
	want := []Target{{Name: "A", Collection: "ca", Primary: true}, {Name: "B", Collection: "cb", Paused: true}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
	for _, bad := range [][]config.Destination{
		{{Name: "A"}},
		{{Name: "A", Collection: "x"}, {Name: "A", Collection: "y"}},
		{{Collection: "x"}},
	} {
		if _, err := Targets("web", bad); err == nil {
			t.Errorf("Targets(%+v) accepted", bad)
		}
	}
	if _, err := NewFeeder(nil, nil, nil, FeederOptions{}); err == nil {
		t.Error("feeder without targets accepted")
	}
}
