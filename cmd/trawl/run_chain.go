package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/index"
)

// localChain is trawl run --chain: a name server, one content distributor
// and one indexer (one partition) in this process, on loopback TCP, which
// the crawl feeds through exactly as it feeds separate processes. The
// indexer's index is DATA/index, where trawl search --data looks.
type localChain struct {
	ns     string
	idx    *index.Index
	cancel context.CancelFunc
	done   []chan error
}

// startLocalChain starts the three roles: the name server on an ephemeral
// loopback port (state in DATA/nameserver), the distributor on base+390
// and base+391, the indexer on base+400.
func startLocalChain(o *runOptions, log *slog.Logger) (*localChain, error) {
	ctx, cancel := context.WithCancel(context.Background())
	lc := &localChain{cancel: cancel}
	run := func(r interface{ Run(context.Context) error }) {
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		lc.done = append(lc.done, done)
	}
	fail := func(err error) (*localChain, error) {
		lc.stop()
		return nil, fmt.Errorf("trawl run --chain: %w", err)
	}
	nsrv, err := nameserver.NewServer(nameserver.ServerConfig{Listen: "127.0.0.1:0", Dir: filepath.Join(o.data, "nameserver"),
		Logger: log.With("role", "nameserver")})
	if err != nil {
		return fail(err)
	}
	run(nsrv)
	lc.ns = nsrv.Addr()
	reg := nameserver.NewClient(lc.ns, nil)
	isrv, err := indexer.NewServer(indexer.ServerConfig{Listen: "127.0.0.1", Host: "127.0.0.1", BasePort: o.basePort, Dir: o.data,
		Partition: 0, Partitions: 1, Registry: reg, RebindInterval: time.Second, Logger: log.With("role", "indexer")})
	if err != nil {
		return fail(err)
	}
	run(isrv)
	lc.idx = isrv.Index()
	dsrv, err := distrib.NewServer(distrib.ServerConfig{
		Config: distrib.Config{NodeID: 0, Host: "127.0.0.1", BasePort: o.basePort, CheckMaster: time.Second, PingMaster: time.Second},
		Listen: "127.0.0.1", Registry: reg, Logger: log.With("role", "distributor"),
	})
	if err != nil {
		return fail(err)
	}
	run(dsrv)
	return lc, nil
}

// stop ends the three roles (the indexer closes its index).
func (lc *localChain) stop() error {
	lc.cancel()
	var first error
	for _, d := range lc.done {
		if err := <-d; err != nil && first == nil {
			first = err
		}
	}
	return first
}
