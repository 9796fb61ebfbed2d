package dupserver

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
)

// TestDSDeadPeers: a node scheduler that leaves two keep-alive periods in a
// row unanswered is closed, and so is a replica (given up, to be
// resynchronised when it comes back).
func TestDSDeadPeers(t *testing.T) {
	h := newDSHarness(t, true)
	h.ds.ConnectReplica(rep, h.now)
	h.ds.Tick(t0)
	h.ds.Tick(t0.Add(120 * time.Second)) // keep-alives out
	h.recv(ns1, &cmt.PPDUPKeepaliveAck{})
	h.ds.Tick(t0.Add(240 * time.Second)) // ns2 and the replica: one missed
	h.recv(ns1, &cmt.PPDUPKeepaliveAck{})
	acts := h.ds.Tick(t0.Add(360 * time.Second))
	var closed []PeerID
	for _, a := range acts {
		if a.Close {
			closed = append(closed, a.To)
		}
	}
	if diff := cmp.Diff([]PeerID{ns2, rep}, closed); diff != "" {
		t.Errorf("closed connections (-want +got):\n%s", diff)
	}
	logs := h.logs.String()
	for _, want := range []string{"node scheduler dead (keep-alives unanswered)", "replica lost", "keep-alives unanswered"} {
		if !strings.Contains(logs, want) {
			t.Errorf("log lacks %q:\n%s", want, logs)
		}
	}
}

func TestReplicaDeadDuplicateServer(t *testing.T) {
	logs := &logBuffer{}
	r := newReplica(ReplicaConfig{}, NewMemStore(), logs.logger())
	r.Connect(1, t0)
	r.Tick(t0)
	r.Tick(t0.Add(2 * time.Minute))
	r.Tick(t0.Add(4 * time.Minute))
	acts := r.Tick(t0.Add(6 * time.Minute))
	if diff := cmp.Diff([]Action{{To: 1, Close: true}}, acts); diff != "" {
		t.Errorf("third tick without an answer (-want +got):\n%s", diff)
	}
	if !logs.contains("duplicate server dead (keep-alives unanswered)") {
		t.Error("dead duplicate server not logged")
	}
}
