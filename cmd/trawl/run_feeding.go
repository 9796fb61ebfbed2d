package main

import (
	"log/slog"

	"github.com/trawl/trawl/internal/feed"
)

// openFeeding opens trawl run's feeding chain: the embedded index under
// --data (the default); with --chain a name server, one content distributor
// and one indexer in this process (run_chain.go), whose index the search
// page shows; with --nameserver the content distributors of a distributed
// chain, whose indexers hold the index.
func openFeeding(o *runOptions, log *slog.Logger) (*feed.Local, error) {
	if !o.index {
		return feed.NewLocal(nil, log), nil // --index=false: crawl only
	}
	if o.indexURL != "" {
		return openSearchFeeding(o.indexURL, log)
	}
	var s *feed.Local
	if o.chain {
		lc, err := startLocalChain(o, log)
		if err != nil {
			return feed.NewLocal(nil, log), err
		}
		s = feed.NewLocal(lc.idx, log)
		o.nameServer = lc.ns
		s.OnClose = append(s.OnClose, lc.stop)
	}
	if o.nameServer != "" {
		if s == nil {
			s = feed.NewLocal(nil, log)
		}
		tc := o.adm.tls // mutual TLS to a distributed chain; the --chain one is in-process, plain
		if o.chain {
			tc = nil
		}
		cl := distribFeedingTLS(o.nameServer, log, tc)
		s.Remote, s.RemoteName = cl.Dial, o.nameServer
		// The client closes before an in-process chain stops.
		s.OnClose = append([]func() error{func() error { cl.Close(); return nil }}, s.OnClose...)
		return s, nil
	}
	return feed.OpenLocal(o.data, true, log)
}
