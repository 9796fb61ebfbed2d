package distrib

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
)

// ServerConfig configures a distributor process.
type ServerConfig struct {
	Config
	// Listen is the host to listen on ("" every interface); the ports are
	// BasePort+390 and BasePort+391.
	Listen string
	// Registry is the name server (or etcd).
	Registry nameserver.Registry
	// CallTimeout bounds each call to another process (the ping timeout);
	// PingMaster if 0.
	CallTimeout time.Duration
	Logger      *slog.Logger
}

// Server runs a distributor machine on TCP.
type Server struct {
	cfg ServerConfig
	lns []net.Listener
	drv *loop.Driver[*wire.Frame]
	m   *Machine
	cl  *wire.Client
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
		cfg.CallTimeout = cfg.PingMaster
		if cfg.CallTimeout <= 0 {
			cfg.CallTimeout = 5 * time.Second
		}
	}
	s := &Server{cfg: cfg, cl: &wire.Client{Timeout: cfg.CallTimeout}}
	listeners := map[string]loop.Listener[*wire.Frame]{}
	for _, off := range []int{wire.PortInternal, wire.PortExternal} {
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Listen, strconv.Itoa(cfg.BasePort+off)))
		if err != nil {
			for _, l := range s.lns {
				l.Close()
			}
			return nil, fmt.Errorf("distrib: %w", err)
		}
		s.lns = append(s.lns, ln)
		listeners[strconv.Itoa(off)] = loop.NetListener[*wire.Frame](ln, wire.Codec{}, loop.StreamConfig{})
	}
	s.m = New(cfg.Config)
	tick := min(cfg.Config.CheckMaster, cfg.Config.PingMaster) / 2
	if tick <= 0 || tick > time.Second {
		tick = time.Second
	}
	s.drv = loop.New(loop.Config[*wire.Frame]{
		Name:         "distributor",
		Machine:      s.m,
		Listeners:    listeners,
		Worker:       loop.WorkerFunc(s.do),
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
	}
	return nil, fmt.Errorf("distrib: unknown job %T", spec)
}

// Addr is the address of the distributor's objects (base port + 390).
func (s *Server) Addr() string { return s.lns[0].Addr().String() }

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	defer s.cl.Close()
	return s.drv.Run(ctx)
}

// Status is what a distributor reports about itself.
type Status struct {
	NodeID   int64
	Role     Role
	Master   string
	Nodes    []int64
	Sessions []int64
}

// Status reads the machine's state on its goroutine.
func (s *Server) Status(ctx context.Context) (Status, error) {
	var st Status
	err := s.drv.Do(ctx, func(time.Time) {
		st = Status{NodeID: s.cfg.NodeID, Role: s.m.Role(), Master: s.m.MasterAddr(), Nodes: s.m.Nodes(), Sessions: s.m.Sessions()}
	})
	return st, err
}
