package distrib

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/tlsconf"
)

// ServerConfig configures a distributor process.
type ServerConfig struct {
	Config
	// Listen is the host to listen on ("" every interface); the ports are
	// BasePort+390 and BasePort+391, or with AnyPort two the system
	// chooses (an in-process chain, which finds them through the registry).
	Listen  string
	AnyPort bool
	// Registry is the name server (or etcd).
	Registry nameserver.Registry
	// CallTimeout bounds each call to another process, a ping included
	// (PingMaster, at least 2 s, if 0).
	CallTimeout time.Duration
	Logger      *slog.Logger
	// TLS, if set, makes the listeners and the calls to other processes
	// mutual TLS (the Registry's client is the caller's).
	TLS *tlsconf.Config
}

// Server runs a distributor machine on TCP.
type Server struct {
	cfg ServerConfig
	lns []net.Listener
	drv *loop.Driver[*wire.Frame]
	m   *Machine
	cl  *wire.Client
	// data carries operations to the indexers, apart from the control
	// calls so that a slow batch never delays a ping.
	data *wire.Client
}

// NewServer opens the listeners.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Incarnation == 0 {
		cfg.Incarnation = time.Now().UnixNano()
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = max(cfg.PingMaster, 2*time.Second)
		if cfg.PingMaster <= 0 {
			cfg.CallTimeout = 5 * time.Second
		}
	}
	s := &Server{cfg: cfg, cl: &wire.Client{Timeout: cfg.CallTimeout, Dialer: cfg.TLS.Dialer(nil)},
		data: &wire.Client{Timeout: 2 * time.Minute, MaxPending: 4096, Dialer: cfg.TLS.Dialer(nil)}}
	listeners := map[string]loop.Listener[*wire.Frame]{}
	for i, off := range []int{wire.PortInternal, wire.PortExternal} {
		port := cfg.BasePort + off
		if cfg.AnyPort {
			port = 0
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Listen, strconv.Itoa(port)))
		if err != nil {
			for _, l := range s.lns {
				l.Close()
			}
			return nil, fmt.Errorf("distrib: %w", err)
		}
		s.lns = append(s.lns, ln)
		listeners[strconv.Itoa(off)] = loop.NetListener[*wire.Frame](cfg.TLS.Listener(ln, tlsconf.LogRefused(cfg.Logger, "distrib")), wire.Codec{}, loop.StreamConfig{})
		if cfg.AnyPort {
			p := ln.Addr().(*net.TCPAddr).Port
			if i == 0 {
				cfg.Config.Port = p
			} else {
				cfg.Config.ExternalPort = p
			}
		}
	}
	s.cfg = cfg
	s.m = New(cfg.Config)
	// The election starts at once, not a tick from now.
	s.m.Pending.WakeAt(time.Now())
	tick := min(cfg.Config.CheckMaster, cfg.Config.PingMaster) / 2
	if tick <= 0 || tick > time.Second {
		tick = time.Second
	}
	s.drv = loop.New(loop.Config[*wire.Frame]{
		Name:      "distributor",
		Machine:   s.m,
		Listeners: listeners,
		Worker:    loop.WorkerFunc(s.do),
		// Operations waiting for a slow indexer must not hold up a ping.
		MaxWork:      4096,
		TickInterval: tick,
		Logger:       cfg.Logger,
	})
	return s, nil
}

// do runs one of the machine's jobs.
func (s *Server) do(ctx context.Context, spec any) (any, error) {
	ctx, cancel := context.WithTimeout(ctx, s.cfg.CallTimeout)
	defer cancel()
	r := s.cfg.Registry
	switch j := spec.(type) {
	case Resolve:
		return r.Resolve(ctx, j.Name, j.Type, j.Version)
	case Bind:
		return nil, r.Bind(ctx, j.AOR)
	case Unbind:
		if j.Holder.Port != 0 {
			return nil, r.UnbindIf(ctx, j.Holder)
		}
		return nil, r.Unbind(ctx, j.Name, j.Type, j.Version)
	case Ping:
		_, err := s.cl.Call(ctx, j.Addr, j.Type, wire.MethodPing)
		return nil, err
	case Register:
		_, err := s.cl.Call(ctx, j.Addr, wire.IfaceMasterDispatcher, "register_dispatcher", wire.I64(j.NodeID))
		return nil, err
	case IndexSession:
		ixs, err := r.List(ctx, wire.NameIndexPrefix)
		if err != nil {
			return nil, err
		}
		for _, a := range ixs {
			if _, err := s.cl.Call(ctx, a.Addr(), wire.IfaceIndexFactory, j.Method, wire.I64(j.ID), wire.Str(j.Collection)); err != nil {
				return nil, err
			}
		}
		return nil, nil
	case Loads:
		return s.loads(ctx, j), nil
	case Forward:
		f, err := s.cl.Call(ctx, j.Addr, wire.IfaceDispatcherNode, j.Method, j.Args...)
		if err != nil {
			return nil, err
		}
		if j.Method == "destroy_session" {
			return nil, nil
		}
		return wire.ParseAOR(f.Arg(0))
	case ListIndexers:
		return r.List(ctx, wire.NameIndexPrefix)
	case IndexOps:
		ops := make([]wire.Value, len(j.Ops))
		for i, b := range j.Ops {
			ops[i] = wire.Byt(b)
		}
		// Applying a batch may take longer than a ping.
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		f, err := s.data.Call(ctx, j.Addr, IfaceIndexSession, "process", wire.I64(j.Session), wire.Lst(ops...))
		if err != nil {
			return nil, err
		}
		return ParseResults(f.Arg(0))
	}
	return nil, fmt.Errorf("distrib: unknown job %T", spec)
}

// loads calls get_load on every node at once.
func (s *Server) loads(ctx context.Context, j Loads) map[int64]int64 {
	out := make(map[int64]int64, len(j.Nodes))
	var mu sync.Mutex
	var wg sync.WaitGroup
	for id, addr := range j.Nodes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			load := int64(-1)
			if f, err := s.cl.Call(ctx, addr, wire.IfaceDispatcherNode, "get_load"); err == nil && f.Arg(0).Tag == wire.Int {
				load = f.Arg(0).I
			}
			mu.Lock()
			out[id] = load
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// Addr is the address of the distributor's objects (base port + 390).
func (s *Server) Addr() string { return s.lns[0].Addr().String() }

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	defer s.cl.Close()
	defer s.data.Close()
	return s.drv.Run(ctx)
}

// Status is what a distributor reports about itself.
type Status struct {
	NodeID   int64
	Role     Role
	Master   string
	Nodes    []int64
	Sessions []int64
	// Partitions is the partition count of the indexers it knows (0:
	// none known yet).
	Partitions int
}

// Status reads the machine's state on its goroutine.
func (s *Server) Status(ctx context.Context) (Status, error) {
	var st Status
	err := s.drv.Do(ctx, func(time.Time) {
		st = Status{NodeID: s.cfg.NodeID, Role: s.m.Role(), Master: s.m.MasterAddr(), Nodes: s.m.Nodes(), Sessions: s.m.Sessions(),
			Partitions: s.m.partitions}
	})
	return st, err
}
