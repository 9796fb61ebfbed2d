package chain

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/feed"
)

// TestInProcessChains opens three in-process chains at once (what three
// trawl run processes on one machine do: no fixed port, so none
// collides), feeds each a few documents through its content client with
// a callback per operation, and checks each chain's status: distributor
// 0 master holding the session, nothing in flight, its indexer holding
// exactly its documents. Closing stops the roles and leaves the index
// readable under the data directory.
func TestInProcessChains(t *testing.T) {
	const chains, docs = 3, 5
	var wg sync.WaitGroup
	for i := range chains {
		wg.Add(1)
		go func() {
			defer wg.Done()
			data := t.TempDir()
			local, c, err := Open(Config{Data: data})
			if err != nil {
				t.Error(err)
				return
			}
			defer local.Close()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			target := feed.Target{Name: "default:web", Collection: "web", Primary: true}
			s, err := local.Dialer()(ctx, target)
			if err != nil {
				t.Error(err)
				return
			}
			var batch []feed.Operation
			for j := range docs + i {
				batch = append(batch, feed.Operation{Kind: feed.Add, Seq: uint64(j + 1), Collection: "web",
					URI: fmt.Sprintf("http://site%d.example/%d", i, j), MIME: "text/html", Text: "chain words"})
			}
			answered := make(chan error, len(batch))
			if err := s.Submit(ctx, batch, func(seq uint64, err error) { answered <- err }); err != nil {
				t.Error(err)
				return
			}
			for range batch {
				if err := <-answered; err != nil {
					t.Errorf("chain %d: callback %v", i, err)
				}
			}
			st := c.Status(ctx)
			if !st.InProcess || st.MasterID != 0 || len(st.Distributors) != 1 || len(st.Indexers) != 1 || st.Error != "" {
				t.Errorf("chain %d: status %+v", i, st)
				return
			}
			if d := st.Distributors[0]; !d.Master || d.Sessions != 1 || d.Operations != 0 {
				t.Errorf("chain %d: distributor %+v", i, d)
			}
			if n := st.Indexers[0].Documents; n != int64(docs+i) {
				t.Errorf("chain %d: the indexer holds %d documents, want %d", i, n, docs+i)
			}
			if n, err := local.Index.Count(); err != nil || n != uint64(docs+i) {
				t.Errorf("chain %d: the index under the data directory counts %d (%v)", i, n, err)
			}
			s.Close()
		}()
	}
	wg.Wait()
}
