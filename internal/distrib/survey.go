package distrib

import (
	"context"
	"sort"
	"strconv"
	"strings"

	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
)

// NodeStatus is one distributor as seen from outside: its sessions, the
// operations it has sent to indexers and not yet had answered, and its
// load (the two added up).
type NodeStatus struct {
	NodeID     int64  `json:"node_id"`
	Addr       string `json:"addr"`
	Master     bool   `json:"master"`
	Sessions   int    `json:"sessions"`
	Operations int64  `json:"operations_in_flight"`
	Load       int64  `json:"load"`
	Err        string `json:"error,omitempty"`
}

// IndexerStatus is one indexer partition.
type IndexerStatus struct {
	Name      string `json:"name"`
	Partition string `json:"partition"`
	Addr      string `json:"addr"`
	Documents int64  `json:"documents"`
	Err       string `json:"error,omitempty"`
}

// Survey is the state of a feeding chain: which distributor is master
// (its address, and its node_id or -1 when none answers as master), each
// distributor's sessions and load, each indexer's documents.
type Survey struct {
	Master      string          `json:"master"`
	MasterID    int64           `json:"master_id"`
	Distributor []NodeStatus    `json:"distributors"`
	Indexers    []IndexerStatus `json:"indexers"`
}

// Take asks the registry and every object bound in it.
func Take(ctx context.Context, reg nameserver.Registry, cl *wire.Client) (Survey, error) {
	s := Survey{MasterID: -1}
	if m, err := reg.Resolve(ctx, wire.NameDispatcher, wire.IfaceSessionFactory, wire.VersionSessionFactory); err == nil {
		s.Master = m.Addr()
	} else if !wire.IsException(err, wire.ExcResolve) {
		return s, err
	}
	nodes, err := reg.List(ctx, wire.NameNodePrefix)
	if err != nil {
		return s, err
	}
	for _, a := range nodes {
		id, err := strconv.ParseInt(strings.TrimPrefix(a.Name, wire.NameNodePrefix), 10, 64)
		if err != nil || a.Type != wire.IfaceDispatcherNode {
			continue
		}
		ns := NodeStatus{NodeID: id, Addr: a.Addr(), Master: a.Addr() == s.Master}
		if f, err := cl.Call(ctx, a.Addr(), wire.IfaceDispatcherNode, "get_sessions"); err != nil {
			ns.Err = err.Error()
		} else {
			ns.Sessions = len(f.Arg(0).L)
			if f, err := cl.Call(ctx, a.Addr(), wire.IfaceDispatcherNode, "get_load"); err == nil {
				ns.Load = f.Arg(0).I
			}
			if f, err := cl.Call(ctx, a.Addr(), wire.IfaceDispatcherNode, "get_operations"); err == nil {
				ns.Operations = f.Arg(0).I
			}
		}
		if ns.Master && ns.Err == "" {
			s.MasterID = id
		}
		s.Distributor = append(s.Distributor, ns)
	}
	sort.Slice(s.Distributor, func(i, j int) bool { return s.Distributor[i].NodeID < s.Distributor[j].NodeID })
	ixs, err := reg.List(ctx, wire.NameIndexPrefix)
	if err != nil {
		return s, err
	}
	for _, a := range ixs {
		is := IndexerStatus{Name: a.Name, Partition: a.ObjectID, Addr: a.Addr()}
		if f, err := cl.Call(ctx, a.Addr(), "indexer", "count"); err != nil {
			is.Err = err.Error()
		} else {
			is.Documents = f.Arg(0).I
		}
		s.Indexers = append(s.Indexers, is)
	}
	return s, nil
}
