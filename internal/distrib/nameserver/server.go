package nameserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"time"

	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/tlsconf"
)

// ServerConfig configures a Server.
type ServerConfig struct {
	// Listen is the address to listen on (base port + 4).
	Listen string
	// Dir holds bindings.log ("": the bindings are not kept).
	Dir          string
	PingInterval time.Duration
	PingFailures int
	Logger       *slog.Logger
	// TLS, if set, makes the listener and the pings mutual TLS.
	TLS *tlsconf.Config
	// Disk, if set, holds the appends to bindings.log while the free
	// space of Dir's file system is below its low-water mark
	// (diskfull.go).
	Disk *diskspace.Guard
}

// Server runs the name server machine on TCP.
type Server struct {
	cfg   ServerConfig
	ln    net.Listener
	store *Store
	drv   *loop.Driver[*wire.Frame]
	m     *Machine
}

// NewServer opens the store and the listener.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	st, bindings, err := OpenStore(cfg.Dir)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("nameserver: %w", err)
	}
	m := New(Config{PingInterval: cfg.PingInterval, PingFailures: cfg.PingFailures, Bindings: bindings})
	// A ping fails when refused, closed, or not answered within the
	// interval (at least 2 s, so a busy machine is not taken for dead).
	timeout := max(cfg.PingInterval, 2*time.Second)
	pinger := &wire.Client{Timeout: timeout, Dialer: cfg.TLS.Dialer(nil)}
	s := &Server{cfg: cfg, ln: ln, store: st, m: m}
	s.drv = loop.New(loop.Config[*wire.Frame]{
		Name:      "nameserver",
		Machine:   m,
		Listeners: map[string]loop.Listener[*wire.Frame]{"ns": loop.NetListener[*wire.Frame](cfg.TLS.Listener(ln, tlsconf.LogRefused(cfg.Logger, "nameserver")), wire.Codec{}, loop.StreamConfig{})},
		Storage:   st,
		Worker: loop.WorkerFunc(func(ctx context.Context, spec any) (any, error) {
			p := spec.(PingJob)
			_, err := pinger.Call(ctx, p.Addr, p.Type, wire.MethodPing)
			return nil, err
		}),
		TickInterval: tickOf(cfg.PingInterval),
		Logger:       cfg.Logger,
	})
	cfg.Logger.Info("nameserver: listening", "addr", ln.Addr().String(), "bindings", len(bindings))
	return s, nil
}

func tickOf(ping time.Duration) time.Duration {
	if ping > 0 && ping < time.Second {
		return ping / 2
	}
	return time.Second
}

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Run serves until ctx ends.
func (s *Server) Run(ctx context.Context) error {
	defer s.store.Close()
	if s.cfg.Disk != nil {
		var wg sync.WaitGroup
		wctx, stop := context.WithCancel(ctx)
		defer wg.Wait()
		defer stop()
		wg.Add(1)
		go s.watchDisk(wctx, &wg)
	}
	return s.drv.Run(ctx)
}

// Bindings returns the current bindings (read on the machine's goroutine).
func (s *Server) Bindings(ctx context.Context) ([]wire.AOR, error) {
	var out []wire.AOR
	err := s.drv.Do(ctx, func(time.Time) { out = s.m.Bindings() })
	return out, err
}
