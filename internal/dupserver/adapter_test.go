package dupserver

import (
	"context"
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
)

// Action is one entry of a batch's Out, as the unit tests compare them.
type Action struct {
	To       PeerID
	Msg      cmt.Message
	Priority cmt.Priority
	Close    bool
}

// stepOut steps m with ev, writes the batch's log lines to log and returns
// its Out (nil when empty), acknowledging the batch.
func stepOut(m loop.Machine[cmt.Message], log *slog.Logger, ev loop.Event[cmt.Message]) []Action {
	m.Step(ev)
	b := m.Ready()
	m.Advance()
	if log != nil {
		for _, l := range b.Logs {
			log.Log(context.Background(), l.Level, l.Msg, l.Args...)
		}
	}
	var out []Action
	for _, e := range b.Out {
		out = append(out, Action{To: e.To, Msg: e.Msg, Priority: cmt.Priority(e.Priority), Close: e.Close})
	}
	return out
}

// testDS steps a DS one event at a time.
type testDS struct {
	*DS
	log *slog.Logger
}

func newDS(cfg DSConfig, st Store, log ...*slog.Logger) (testDS, error) {
	d, err := NewDS(cfg, st)
	t := testDS{DS: d}
	if len(log) > 0 {
		t.log = log[0]
	}
	return t, err
}

func (d testDS) ev(ev loop.Event[cmt.Message]) []Action { return stepOut(d.DS, d.log, ev) }

func (d testDS) Connect(p PeerID, now time.Time) []Action {
	return d.ev(loop.Event[cmt.Message]{Kind: loop.Connected, Tag: TagListen, Peer: p, Now: now})
}

func (d testDS) ConnectReplica(p PeerID, now time.Time) []Action {
	return d.ev(loop.Event[cmt.Message]{Kind: loop.Connected, Tag: TagReplica, Peer: p, Now: now})
}

func (d testDS) Disconnect(p PeerID, now time.Time) []Action {
	return d.ev(loop.Event[cmt.Message]{Kind: loop.Closed, Peer: p, Now: now})
}

func (d testDS) Receive(p PeerID, m cmt.Message, now time.Time) []Action {
	return d.ev(loop.Event[cmt.Message]{Kind: loop.Received, Peer: p, Msg: m, Now: now})
}

func (d testDS) Tick(now time.Time) []Action {
	return d.ev(loop.Event[cmt.Message]{Kind: loop.Tick, Now: now})
}

// testReplica steps a Replica one event at a time.
type testReplica struct {
	*Replica
	log *slog.Logger
}

func newReplica(cfg ReplicaConfig, st Store, log ...*slog.Logger) testReplica {
	t := testReplica{Replica: NewReplica(cfg, st)}
	if len(log) > 0 {
		t.log = log[0]
	}
	return t
}

func (r testReplica) ev(ev loop.Event[cmt.Message]) []Action { return stepOut(r.Replica, r.log, ev) }

func (r testReplica) Connect(p PeerID, now time.Time) []Action {
	return r.ev(loop.Event[cmt.Message]{Kind: loop.Connected, Tag: TagListen, Peer: p, Now: now})
}

func (r testReplica) Disconnect(p PeerID, now time.Time) []Action {
	return r.ev(loop.Event[cmt.Message]{Kind: loop.Closed, Peer: p, Now: now})
}

func (r testReplica) Receive(p PeerID, m cmt.Message, now time.Time) []Action {
	return r.ev(loop.Event[cmt.Message]{Kind: loop.Received, Peer: p, Msg: m, Now: now})
}

func (r testReplica) Tick(now time.Time) []Action {
	return r.ev(loop.Event[cmt.Message]{Kind: loop.Tick, Now: now})
}
