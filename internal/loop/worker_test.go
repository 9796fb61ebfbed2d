package loop

import (
	"bytes"
	"context"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// bigSpec is a job spec whose collection the test watches.
type bigSpec struct{ buf []byte }

// jobber starts a job with a bigSpec for each "job" message and answers
// "done" when its result comes back.
type jobber struct {
	Base[string]
	freed  *atomic.Int64
	nextID uint64
	to     map[uint64]Peer
}

func (m *jobber) Step(ev Event[string]) {
	switch ev.Kind {
	case Received:
		spec := &bigSpec{buf: make([]byte, 1<<20)}
		runtime.SetFinalizer(spec, func(*bigSpec) { m.freed.Add(1) })
		m.nextID++
		m.to[m.nextID] = ev.Peer
		m.Pending.Work = append(m.Pending.Work, Job{ID: m.nextID, Spec: spec})
	case Result:
		m.Pending.Send(m.to[ev.Job], "done", 0)
		delete(m.to, ev.Job)
	}
}

// goroutineID is the number in the first line of the calling goroutine's
// stack ("goroutine 12 [running]:").
func goroutineID() string {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	buf, _, _ = bytes.Cut(bytes.TrimPrefix(buf, []byte("goroutine ")), []byte(" "))
	return string(buf)
}

// TestWorkersAreReusedAndDropFinishedJobs: jobs one after another run on
// the same few worker goroutines (a goroutine per job grew a new stack
// each time), and a worker waiting for its next job does not keep the
// spec of its last one, nor does the driver's queue.
func TestWorkersAreReusedAndDropFinishedJobs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n, l := memServer(t)
	var (
		freed atomic.Int64
		mu    sync.Mutex
		ran   = map[string]int{}
	)
	m := &jobber{freed: &freed, to: map[uint64]Peer{}}
	d := New(Config[string]{Name: "jobber", Machine: m, Listeners: map[string]Listener[string]{"c": l},
		Storage: &recStorage{}, MaxWork: 4,
		Worker: WorkerFunc(func(ctx context.Context, spec any) (any, error) {
			if len(spec.(*bigSpec).buf) != 1<<20 {
				t.Errorf("spec of %d bytes", len(spec.(*bigSpec).buf))
			}
			mu.Lock()
			ran[goroutineID()]++
			mu.Unlock()
			return nil, nil
		})})
	errc := make(chan error, 1)
	go func() { errc <- d.Run(ctx) }()
	c, err := n.Host("client").Dial(ctx, "server:1")
	if err != nil {
		t.Fatal(err)
	}
	cl := runClient(t, ctx, c)
	const jobs = 30
	for range jobs {
		c.TrySend("job", 0)
		cl.want(t, "done")
	}
	mu.Lock()
	workers := len(ran)
	mu.Unlock()
	// Each job starts after the last one's answer, so one worker is
	// waiting by then; a few more are allowed for a worker descheduled
	// between its result and its wait.
	if workers > 10 {
		t.Errorf("%d jobs one after another ran on %d goroutines, want a few", jobs, workers)
	}
	deadline := time.Now().Add(10 * time.Second)
	for freed.Load() < jobs {
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d finished job specs collected while the driver runs", freed.Load(), jobs)
		}
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	cancel()
	if err := <-errc; err != nil {
		t.Fatalf("driver: %v", err)
	}
}
