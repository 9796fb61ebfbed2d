package indexer

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/loop"
)

// TestProcessUpdateFields drives the indexer machine with a process call
// carrying a content operation, an update-fields operation for it and one
// for a URL not indexed, runs the Apply job on a real index and checks the
// answer and the index: the rank and anchor text are merged into the
// stored document, the content kept.
func TestProcessUpdateFields(t *testing.T) {
	ix, err := index.Open(t.TempDir(), index.Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	work := Work(ix, nil, nil)
	m := New(Config{Partition: 0, Partitions: 1, Host: "127.0.0.1", Port: 1})
	enc := func(op feed.Operation) wire.Value {
		op.Collection = "web"
		b, err := op.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		return wire.Byt(b)
	}
	process := func(id uint64, ops ...wire.Value) []distrib.OpResult {
		t.Helper()
		m.Step(loop.Event[*wire.Frame]{Kind: loop.Received, Peer: 1, Msg: wire.Call(id, distrib.IfaceIndexSession, "process", wire.I64(7), wire.Lst(ops...))})
		b := m.Ready()
		m.Advance()
		if len(b.Work) != 1 {
			t.Fatalf("jobs %+v, out %+v", b.Work, b.Out)
		}
		res, err := work(context.Background(), b.Work[0].Spec)
		m.Step(loop.Event[*wire.Frame]{Kind: loop.Result, Job: b.Work[0].ID, Result: res, Err: err})
		b = m.Ready()
		m.Advance()
		if len(b.Out) != 1 || b.Out[0].Msg.Kind != wire.Reply || len(b.Out[0].Msg.Args) != 1 {
			t.Fatalf("reply %+v", b.Out)
		}
		rs, err := distrib.ParseResults(b.Out[0].Msg.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		return rs
	}
	const u = "http://a.example/page"
	got := process(1,
		enc(feed.Operation{Seq: 10, Kind: feed.Add, URI: u, Title: "Page", Text: "plain words"}),
		enc(feed.Operation{Seq: 3, Kind: feed.UpdateFields, URI: u, Rank: 1.5, Anchors: []string{"zeppelin"}}),
		enc(feed.Operation{Seq: 4, Kind: feed.UpdateFields, URI: "http://b.example/", Rank: 2}))
	if d := cmp.Diff([]distrib.OpResult{{Seq: 10}, {Seq: 3}, {Seq: 4}}, got); d != "" {
		t.Errorf("results (-want +got):\n%s", d)
	}
	st, err := ix.Lookup(context.Background(), "web", u)
	if err != nil || !st.Found || st.Rank != 1.5 || st.Title != "Page" || st.Body != "plain words" || st.Version != 10 || st.FieldsVersion != 3 {
		t.Errorf("stored %+v %v", st, err)
	}
	// A later rank update alone re-indexes the stored document.
	process(2, enc(feed.Operation{Seq: 11, Kind: feed.UpdateFields, URI: u, Rank: 0.5, Anchors: []string{"airship"}}))
	r, err := ix.Search(context.Background(), "airship", index.SearchOptions{Collection: "web"})
	if err != nil || len(r.Hits) != 1 || r.Hits[0].URL != u || r.Hits[0].Rank != 0.5 || r.Hits[0].Title != "Page" {
		t.Errorf("search by the new anchor text: %+v %v", r, err)
	}
	if r, _ := ix.Search(context.Background(), "zeppelin", index.SearchOptions{Collection: "web"}); r == nil || len(r.Hits) != 0 {
		t.Errorf("the old anchor text still finds it: %+v", r)
	}
}
