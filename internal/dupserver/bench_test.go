package dupserver

import (
	"context"
	"encoding/binary"
	"testing"

	"github.com/trawl/trawl/internal/cmt"
)

func benchChecksum(i int) cmt.Checksum {
	var c cmt.Checksum
	binary.BigEndian.PutUint64(c[8:], uint64(i)+1)
	c[0] = 0xAB
	return c
}

// BenchmarkDSAddPebble measures the machine answering ADDs of new
// checksums with the Pebble store (no replica).
func BenchmarkDSAddPebble(b *testing.B) {
	st, err := OpenPebble(b.TempDir(), PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	ds, _ := newDS(DSConfig{NodeID: "ds"}, st)
	ds.Connect(1, t0)
	m := &cmt.PPDUPAdd{Collection: "bench", NodeID: "n", URI: "http://bench.example/page"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		m.Checksum = benchChecksum(i)
		if out := ds.Receive(1, m, t0); len(out) != 1 {
			b.Fatal(out)
		}
	}
}

// BenchmarkServerAddTCP measures ADD round trips over TCP to a running
// server with a Pebble store, 256 in flight.
func BenchmarkServerAddTCP(b *testing.B) {
	st, err := OpenPebble(b.TempDir(), PebbleOptions{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	s := &Server{Store: st, NodeID: "ds"}
	ln := listenB(b)
	s.Listener = ln
	ctx, cancel := context.WithCancel(b.Context())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	defer func() { cancel(); <-done }()
	ns := dialB(b, ctx, ln.Addr().String())
	const window = 256
	sent, got := 0, 0
	b.ResetTimer()
	for got < b.N {
		for sent < b.N && sent-got < window {
			if err := ns.Send(ctx, &cmt.PPDUPAdd{Collection: "bench", NodeID: "n", URI: "http://bench.example/page", Checksum: benchChecksum(sent)}, cmt.PriorityNormal); err != nil {
				b.Fatal(err)
			}
			sent++
		}
		f := <-ns.Incoming()
		if _, ok := f.Message.(*cmt.PPDUPAddOK); ok {
			got++
		}
	}
}
