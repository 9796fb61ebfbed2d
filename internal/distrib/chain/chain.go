// Package chain is trawl run's feeding chain, composed: the content client
// of the crawl's feeders, the chain behind it and what the HTTP interface
// shows of it.
//
// By default (Open with no NameServer) the chain runs in the calling
// process: a name server, one content distributor (node_id 0) and one
// indexer (partition 0 of 1), each the same Server as the separate
// processes (trawl nameserver, distributor, indexer) and talking to the
// others over loopback TCP, so a single-machine crawl and a distributed
// one feed through one code path. Their ports are ones the system chooses
// (127.0.0.1:0), found through the name server, so any number of trawl
// run processes can run on one machine; the name server keeps its
// bindings in memory only (its objects get new ports at every start, so
// bindings of an earlier run would only point at nothing). The indexer's
// index is DATA/index, where trawl search --data and the search page look.
// Open returns once the distributor is master and the indexer is bound,
// so the first session is neither refused nor its first batch failed.
//
// With NameServer the crawl feeds an external chain found through that
// name server: nothing runs in the process, the search page queries every
// indexer partition through the name server (indexer.Searcher) and the
// status page surveys the distributors and indexers bound there.
//
// Either way the search page logs searches and result clicks in
// DATA/clicks/log, and the click relevance of the last click build
// (DATA/clicks/state, which trawl run's web analyzer builds) boosts the
// URLs clicked for a query: in the in-process indexer's searches, or in
// the merge of the indexers' results.
package chain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/tlsconf"
)

// Config configures Open.
type Config struct {
	// Data is the crawl's data directory; the in-process indexer's index
	// is Data/index.
	Data string
	// NameServer is HOST:PORT of an external chain's name server; "" runs
	// the chain in this process.
	NameServer string
	// Timers are the in-process distributor's "check master status" and
	// "check for master" periods, and the indexer's rebind period (1 s if
	// 0).
	Timers time.Duration
	// TLS, if set, makes the links to an external chain mutual TLS (the
	// in-process chain stays on plain loopback TCP).
	TLS    *tlsconf.Config
	Logger *slog.Logger
	// Disk, if set, is the in-process indexer's full-disk guard
	// (indexer.ServerConfig.Disk).
	Disk *diskspace.Guard
}

// Chain is an open feeding chain.
type Chain struct {
	// NameServer is the address of the chain's name server (the
	// in-process one's, on a port the system chose).
	NameServer string
	// InProcess tells an in-process chain from an external one.
	InProcess bool
	reg       nameserver.Registry
	client    *distrib.Client
	survey    *wire.Client
	search    *wire.Client
	clicks    *clicks.Relevance
	log       *slog.Logger
	cancel    context.CancelFunc
	done      []chan error
}

// Open opens the feeding chain and returns it with the feeding of trawl
// run over it: the feeders' dialer is the chain's content client and, for
// an in-process chain, the search page and summary use its indexer's
// index. Closing the feed.Local closes the client, then stops the
// in-process roles (the indexer closes its index).
func Open(cfg Config) (*feed.Local, *Chain, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	c := &Chain{NameServer: cfg.NameServer, InProcess: cfg.NameServer == "", log: cfg.Logger,
		survey: &wire.Client{Timeout: 5 * time.Second}, search: &wire.Client{Timeout: 30 * time.Second}}
	var tc *tlsconf.Config // the in-process chain's links are plain
	if !c.InProcess {
		tc = cfg.TLS
		c.survey.Dialer, c.search.Dialer = tc.Dialer(nil), tc.Dialer(nil)
	}
	s := feed.NewLocal(nil, cfg.Logger)
	rel := clicks.NewRelevance(clicks.RelevancePath(cfg.Data))
	c.clicks = rel
	if c.InProcess {
		ix, err := c.start(cfg, rel)
		if err != nil {
			c.stop()
			return feed.NewLocal(nil, cfg.Logger), nil, fmt.Errorf("chain: in-process feeding chain: %w", err)
		}
		s.Index = ix
	}
	c.reg = nameserver.NewClient(c.NameServer, &wire.Client{Dialer: tc.Dialer(nil)})
	c.client = distrib.NewClient(c.reg, cfg.Logger.With("role", "distrib-client"))
	c.client.Control.Dialer, c.client.Data.Dialer = tc.Dialer(nil), tc.Dialer(nil)
	s.Remote, s.RemoteName = c.client.Dial, c.NameServer
	if !c.InProcess {
		s.Search = c.Searcher()
	}
	s.OnClose = append(s.OnClose, c.Close)
	var err error
	if s.Clicks, err = clicks.OpenLog(clicks.LogDir(cfg.Data), nil); err != nil {
		c.Close()
		return feed.NewLocal(nil, cfg.Logger), nil, fmt.Errorf("chain: %w", err)
	}
	return s, c, nil
}

// start starts the in-process roles and waits for them to be ready.
func (c *Chain) start(cfg Config, rel *clicks.Relevance) (*index.Index, error) {
	timers := cfg.Timers
	if timers <= 0 {
		timers = time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	c.cancel = cancel
	run := func(r interface{ Run(context.Context) error }) {
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		c.done = append(c.done, done)
	}
	nsrv, err := nameserver.NewServer(nameserver.ServerConfig{Listen: "127.0.0.1:0", Logger: cfg.Logger.With("role", "nameserver")})
	if err != nil {
		return nil, err
	}
	run(nsrv)
	c.NameServer = nsrv.Addr()
	reg := nameserver.NewClient(c.NameServer, nil)
	isrv, err := indexer.NewServer(indexer.ServerConfig{Listen: "127.0.0.1", AnyPort: true, Host: "127.0.0.1", Dir: cfg.Data,
		Partition: 0, Partitions: 1, Registry: reg, RebindInterval: timers, Logger: cfg.Logger.With("role", "indexer"), Disk: cfg.Disk, Clicks: rel})
	if err != nil {
		return nil, err
	}
	run(isrv)
	// The indexer first, bound before the distributor lists the indexers
	// (at the first session).
	if err := c.ready(ctx, "the indexer to bind itself", func() bool {
		ixs, err := reg.List(ctx, wire.NameIndexPrefix)
		return err == nil && len(ixs) > 0
	}); err != nil {
		return isrv.Index(), err
	}
	dsrv, err := distrib.NewServer(distrib.ServerConfig{
		Config: distrib.Config{NodeID: 0, Host: "127.0.0.1", CheckMaster: timers, PingMaster: timers},
		Listen: "127.0.0.1", AnyPort: true, Registry: reg, Logger: cfg.Logger.With("role", "distributor"),
	})
	if err != nil {
		return isrv.Index(), err
	}
	run(dsrv)
	// A session's creation lists the indexers; its first batch waits for
	// the list.
	return isrv.Index(), c.ready(ctx, "the distributor to be master", func() bool {
		st, err := dsrv.Status(ctx)
		return err == nil && st.Role == distrib.Master && len(st.Nodes) > 0
	})
}

// ready waits (at most 30 s) until ok.
func (c *Chain) ready(ctx context.Context, what string, ok func() bool) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	for wait := time.Millisecond; !ok(); wait = min(2*wait, 50*time.Millisecond) {
		select {
		case <-ctx.Done():
			return fmt.Errorf("waited 30 s for %s", what)
		case <-time.After(wait):
		}
	}
	return nil
}

// Survey reports the chain: the master, each distributor's sessions and
// operations in flight, each indexer's documents.
func (c *Chain) Survey(ctx context.Context) (distrib.Survey, error) {
	return distrib.Take(ctx, c.reg, c.survey)
}

// Searcher searches every indexer partition of the chain, merged, with
// the click relevance of DATA/clicks.
func (c *Chain) Searcher() indexer.Searcher {
	return indexer.Searcher{Registry: c.reg, Client: c.search, Clicks: c.clicks}
}

// Close closes the content client, then stops the in-process roles.
func (c *Chain) Close() error {
	if c.client != nil {
		c.client.Close()
	}
	c.survey.Close()
	c.search.Close()
	return c.stop()
}

func (c *Chain) stop() error {
	if c.cancel == nil {
		return nil
	}
	c.cancel()
	var errs []error
	for _, d := range c.done {
		if err := <-d; err != nil && !errors.Is(err, context.Canceled) {
			errs = append(errs, err)
		}
	}
	c.done = nil
	return errors.Join(errs...)
}
