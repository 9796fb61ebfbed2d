package main

import (
	"log/slog"

	"github.com/trawl/trawl/internal/distrib/chain"
	"github.com/trawl/trawl/internal/feed"
)

// openFeeding opens trawl run's feeding chain (internal/distrib/chain): by
// default a name server, one content distributor and one indexer in this
// process, whose index (DATA/index) the search page shows; with
// --nameserver the content distributors and indexers of a distributed
// chain; with --index opensearch://... an OpenSearch index; with
// --index=false nothing.
func openFeeding(o *runOptions, log *slog.Logger) (*feed.Local, *chain.Chain, error) {
	if !o.index {
		return feed.NewLocal(nil, log), nil, nil
	}
	if o.indexURL != "" {
		s, err := openSearchFeeding(o.indexURL, log)
		return s, nil, err
	}
	return chain.Open(chain.Config{Data: o.data, NameServer: o.nameServer, TLS: o.adm.tls, Logger: log, Disk: o.diskGuard})
}
