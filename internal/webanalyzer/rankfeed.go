package webanalyzer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
)

// RankFeed feeds the results of each analysis run into the index as
// partial updates: one feed.UpdateFields operation per analysed URL,
// carrying its index rank (IndexRank) and its anchor text (Anchors) and
// nothing else. The operations go through the feeding chain like the
// crawl's documents: a durable outbox of the web analyzer's own
// (DATA/webanalyzer/outbox, so nothing queued is lost on a crash: a
// restarted RankFeed sends what was not acknowledged) and one feed.Feeder
// per collection (target "default:<collection>") over the crawl's dialer,
// the content distributors of trawl run's chain or an in-process index.
// The outbox's sequence numbers are the partial updates' versions, which
// the index compares only with the document's earlier partial updates
// (internal/index fields.go): every run, online in trawl run or offline in
// trawl webanalyzer run, feeds through this one outbox, so the versions of
// a data directory's rank updates only grow.
type RankFeed struct {
	ob   *feed.Outbox
	dial feed.Dialer
	log  *slog.Logger

	mu      sync.Mutex
	feeders map[string]*feed.Feeder // by collection
	ctx     context.Context         // Run's while it runs
	wg      sync.WaitGroup
	queued  int

	acked, rejected atomic.Int64
}

// FeedStats says what a RankFeed did.
type FeedStats struct {
	// Queued is the number of partial updates the last run queued;
	// Applied and Rejected count the ones the index answered since then
	// (since the RankFeed opened before any run); Pending the ones waiting
	// (or in flight).
	Queued            int
	Applied, Rejected int64
	Pending           int
}

// OutboxDir is the rank feed's outbox under a data directory.
func OutboxDir(data string) string { return filepath.Join(Dir(data), "outbox") }

// OpenRankFeed opens the rank feed of data directory data, feeding
// through dial. Operations left in its outbox by an earlier process are
// sent once Run runs.
func OpenRankFeed(data string, dial feed.Dialer, log *slog.Logger) (*RankFeed, error) {
	if dial == nil {
		return nil, errors.New("webanalyzer: rank feed without a destination")
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	ob, err := feed.OpenOutbox(OutboxDir(data), feed.OutboxOptions{NoSync: true, SyncOnClaim: true, Logger: log})
	if err != nil {
		return nil, fmt.Errorf("webanalyzer: %w", err)
	}
	f := &RankFeed{ob: ob, dial: dial, log: log, feeders: map[string]*feed.Feeder{}}
	for _, d := range ob.Destinations() {
		if _, err := f.feeder(strings.TrimPrefix(d, feed.DefaultTargetName(""))); err != nil {
			ob.Close()
			return nil, err
		}
	}
	return f, nil
}

// feeder returns the feeder of collection, making (and, while Run runs,
// starting) it the first time (f.mu held or not yet shared).
func (f *RankFeed) feeder(collection string) (*feed.Feeder, error) {
	if fr, ok := f.feeders[collection]; ok {
		return fr, nil
	}
	fr, err := feed.NewFeeder(f.ob, []feed.Target{{Name: feed.DefaultTargetName(collection), Collection: collection, Primary: true}},
		f.dial, feed.FeederOptions{Logger: f.log.With("role", "rankfeed"), OnResult: f.result})
	if err != nil {
		return nil, fmt.Errorf("webanalyzer: %w", err)
	}
	f.feeders[collection] = fr
	if f.ctx != nil {
		f.start(fr)
	}
	return fr, nil
}

func (f *RankFeed) start(fr *feed.Feeder) {
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		_ = fr.Run(f.ctx)
	}()
}

func (f *RankFeed) result(r feed.Result) {
	if r.Err != nil {
		f.rejected.Add(1)
		f.log.Warn("webanalyzer: partial update refused", "uri", r.URI, "err", r.Err)
		return
	}
	f.acked.Add(1)
}

// Run sends the queued partial updates until ctx ends.
func (f *RankFeed) Run(ctx context.Context) error {
	f.mu.Lock()
	if f.ctx != nil {
		f.mu.Unlock()
		return errors.New("webanalyzer: rank feed already running")
	}
	f.ctx = ctx
	for _, fr := range f.feeders {
		f.start(fr)
	}
	f.mu.Unlock()
	<-ctx.Done()
	f.mu.Lock()
	f.ctx = nil // no feeder starts any more
	f.mu.Unlock()
	f.wg.Wait()
	return nil
}

// Queue queues the partial updates of the last run's results in state
// (StateDir) for the documents of collection, and returns how many.
func (f *RankFeed) Queue(ctx context.Context, collection, state string) (int, error) {
	ranks, err := Ranks(state)
	if err != nil {
		return 0, err
	}
	anchors, err := Anchors(state)
	if err != nil {
		return 0, err
	}
	sites := map[string]bool{}
	for _, r := range ranks {
		sites[index.Site(r.URL)] = true
	}
	f.mu.Lock()
	fr, err := f.feeder(collection)
	f.mu.Unlock()
	if err != nil {
		return 0, err
	}
	f.acked.Store(0)
	f.rejected.Store(0)
	const chunk = 1000
	ops := make([]feed.Operation, 0, min(chunk, len(ranks)))
	for i, r := range ranks {
		op := feed.Operation{Kind: feed.UpdateFields, URI: r.URL, Rank: IndexRank(r.Static, r.SiteRank, len(ranks), len(sites))}
		if a := anchors[r.URL]; a != "" {
			op.Anchors = []string{a}
		}
		ops = append(ops, op)
		if len(ops) == chunk || i == len(ranks)-1 {
			if err := fr.Feed(ctx, ops...); err != nil {
				return i + 1 - len(ops), fmt.Errorf("webanalyzer: queueing ranks: %w", err)
			}
			ops = ops[:0]
		}
	}
	f.mu.Lock()
	f.queued = len(ranks)
	f.mu.Unlock()
	return len(ranks), nil
}

// Stats returns what the feed did.
func (f *RankFeed) Stats() FeedStats {
	f.mu.Lock()
	s := FeedStats{Queued: f.queued}
	f.mu.Unlock()
	s.Applied, s.Rejected = f.acked.Load(), f.rejected.Load()
	for _, d := range f.ob.Destinations() {
		s.Pending += f.ob.Pending(d)
	}
	return s
}

// Wait returns once nothing is left to send (Run must run), or ctx ends.
func (f *RankFeed) Wait(ctx context.Context) error {
	for wait := time.Millisecond; f.Stats().Pending > 0; wait = min(2*wait, 50*time.Millisecond) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("webanalyzer: waiting for the ranks to reach the index: %w", ctx.Err())
		case <-time.After(wait):
		}
	}
	return nil
}

// Close closes the outbox (after Run ended).
func (f *RankFeed) Close() error { return f.ob.Close() }

// FeedIndex feeds the last run's results in data's state directory, for
// the documents of collection, into ix (the index of a stopped crawl)
// through the rank feed's outbox, and returns once the index has them.
func FeedIndex(ctx context.Context, ix *index.Index, data, collection string) (FeedStats, error) {
	f, err := OpenRankFeed(data, feed.IndexDialer(ix), nil)
	if err != nil {
		return FeedStats{}, err
	}
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	_, err = f.Queue(ctx, collection, StateDir(data))
	if err == nil {
		err = f.Wait(ctx)
	}
	cancel()
	<-done
	fs := f.Stats()
	return fs, errors.Join(err, f.Close())
}
