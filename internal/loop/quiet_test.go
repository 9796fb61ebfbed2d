package loop

import (
	"context"
	"testing"
	"time"
)

// TestStatsCountHandledMessagesAndJobs: Received and Done count what the
// machine handled once its batch is applied, Submitted the jobs it asked
// for; a message from a client that is not a driver unbalances the sums.
func TestStatsCountHandledMessagesAndJobs(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	n, l := memServer(t)
	d, _ := startEcho(t, ctx, map[string]Listener[string]{"clients": l}, &recStorage{})
	c, err := n.Host("client").Dial(ctx, "server:1")
	if err != nil {
		t.Fatal(err)
	}
	cl := runClient(t, ctx, c)
	c.TrySend("put a", 0)
	cl.want(t, "ok a")
	c.TrySend("job x", 0)
	cl.want(t, "done X")
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := d.Stats()
		if s.Received == 2 && s.Submitted == 1 && s.Done == 1 && s.Sent == 2 && s.Held == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want 2 received, 1 submitted, 1 done, 2 sent", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	// A message without an answer: received from outside, nothing sent
	// back, so this driver alone is unbalanced.
	c.TrySend("note y", 0)
	for s := d.Stats(); s.Received != 3; s = d.Stats() {
		if time.Now().After(deadline) {
			t.Fatalf("stats %+v, want 3 received", s)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if s := d.Stats(); Quiet([]Stats{s}, []Stats{s}) {
		t.Fatalf("quiet with 3 messages received from outside and 2 sent out: %+v", s)
	}
}

func TestQuiet(t *testing.T) {
	a := Stats{Sent: 3, Received: 2, Submitted: 4, Done: 4}
	b := Stats{Sent: 2, Received: 3}
	for _, tc := range []struct {
		name          string
		before, after []Stats
		want          bool
	}{
		{"balanced and unchanged", []Stats{a, b}, []Stats{a, b}, true},
		{"nothing yet", []Stats{{}, {}}, []Stats{{}, {}}, true},
		{"a message in flight", []Stats{a, {Sent: 2, Received: 2}}, []Stats{a, {Sent: 2, Received: 2}}, false},
		{"changed between", []Stats{a, b}, []Stats{{Sent: 4, Received: 3, Submitted: 4, Done: 4}, b}, false},
		{"a job running", []Stats{{Submitted: 1}}, []Stats{{Submitted: 1}}, false},
		{"a message held", []Stats{{Held: 1}}, []Stats{{Held: 1}}, false},
		{"different drivers", []Stats{a}, []Stats{a, b}, false},
	} {
		if got := Quiet(tc.before, tc.after); got != tc.want {
			t.Errorf("%s: Quiet = %v, want %v", tc.name, got, tc.want)
		}
	}
}
