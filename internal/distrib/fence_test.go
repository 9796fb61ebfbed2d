package distrib

import (
	"testing"

	"github.com/trawl/trawl/internal/distrib/wire"
)

// TestEpochs: the epoch in a master's object_id, in a session id, and in a
// dispatcher node's refusal.
func TestEpochs(t *testing.T) {
	for oid, want := range map[string]int64{"cd1.1.e7": 7, "cd1.1": 0, "cd1.1.e": 0, "cd1.1.e-3": 0, "partition 0 of 2": 0, "cd2.99.e65536": 65536} {
		if got := Epoch(wire.AOR{ObjectID: oid}); got != want {
			t.Errorf("Epoch(%q) = %d, want %d", oid, got, want)
		}
	}
	m := New(Config{NodeID: 3, Incarnation: 0x1ff})
	m.epoch = 0x10005
	id := m.sessionBase() + 1
	if e := SessionEpoch(id); e != 5 || id>>48 != 3 || id>>24&0xff != 0xff || id < 0 {
		t.Errorf("session id %#x: epoch %d", id, e)
	}
	if n, ok := staleRefusal(&wire.Error{Name: wire.ExcUnsupportedGuarantees, What: staleEpoch + "12 seen, session 5 has epoch 3"}); !ok || n != 12 {
		t.Errorf("staleRefusal = %d %v", n, ok)
	}
	if _, ok := staleRefusal(&wire.Error{Name: wire.ExcUnknownCollection, What: staleEpoch + "12"}); ok {
		t.Error("another exception read as a refusal")
	}
}

// FuzzEpochs: the epoch parsers never panic and never return a negative
// epoch.
func FuzzEpochs(f *testing.F) {
	f.Add("cd1.1.e7", staleEpoch+"2 seen, session 281479271677953 has epoch 1", int64(281479271677953))
	f.Add("cd1.1", "the indexing dispatcher cannot open the session", int64(7))
	f.Fuzz(func(t *testing.T, oid, what string, id int64) {
		if e := Epoch(wire.AOR{ObjectID: oid}); e < 0 {
			t.Fatalf("Epoch(%q) = %d", oid, e)
		}
		if e := SessionEpoch(id); e < 0 || e > 0xffff {
			t.Fatalf("SessionEpoch(%d) = %d", id, e)
		}
		staleRefusal(&wire.Error{Name: wire.ExcUnsupportedGuarantees, What: what})
	})
}
