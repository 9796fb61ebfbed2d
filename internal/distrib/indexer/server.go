package indexer

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/distrib/nameserver"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/tlsconf"
)

// ServerConfig configures an indexer process.
type ServerConfig struct {
	// Listen is the host to listen on; the port is BasePort+400, or with
	// AnyPort one the system chooses (an in-process chain, which finds it
	// through the registry).
	Listen   string
	AnyPort  bool
	Host     string
	BasePort int
	// Dir holds the index (Dir/index).
	Dir                   string
	Partition, Partitions int
	Registry              nameserver.Registry
	RebindInterval        time.Duration
	Logger                *slog.Logger
	// TLS, if set, makes the listener mutual TLS (the Registry's client
	// is the caller's).
	TLS *tlsconf.Config
	// Disk, if set, holds the operations while the free space of Dir's
	// file system is below its low-water mark (Work).
	Disk *diskspace.Guard
	// Clicks, if set, is the click relevance the index's searches apply
	// (an in-process chain, whose search page queries the index itself).
	Clicks *clicks.Relevance
}

// Server runs an indexer on TCP.
type Server struct {
	ix  *index.Index
	ln  net.Listener
	drv *loop.Driver[*wire.Frame]
	m   *Machine
	// disk is the full-disk guard (nil: none).
	disk *diskspace.Guard
}

// NewServer opens the index and the listener.
func NewServer(cfg ServerConfig) (*Server, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Partitions <= 0 || cfg.Partition < 0 || cfg.Partition >= cfg.Partitions {
		return nil, fmt.Errorf("indexer: partition %d of %d", cfg.Partition, cfg.Partitions)
	}
	ix, err := index.Open(filepath.Join(cfg.Dir, "index"), index.Options{Create: true, Clicks: cfg.Clicks})
	if err != nil {
		return nil, err
	}
	port := cfg.BasePort + PortOffset
	if cfg.AnyPort {
		port = 0
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Listen, strconv.Itoa(port)))
	if err != nil {
		ix.Close()
		return nil, fmt.Errorf("indexer: %w", err)
	}
	m := New(Config{Partition: cfg.Partition, Partitions: cfg.Partitions, Host: cfg.Host, Port: ln.Addr().(*net.TCPAddr).Port,
		RebindInterval: cfg.RebindInterval})
	tick := cfg.RebindInterval / 2
	if tick <= 0 || tick > time.Second {
		tick = time.Second
	}
	// The first bind at once, not a tick from now.
	m.Pending.WakeAt(time.Now())
	s := &Server{ix: ix, ln: ln, m: m, disk: cfg.Disk}
	s.drv = loop.New(loop.Config[*wire.Frame]{
		Name:         "indexer",
		Machine:      m,
		Listeners:    map[string]loop.Listener[*wire.Frame]{"indexer": loop.NetListener[*wire.Frame](cfg.TLS.Listener(ln, tlsconf.LogRefused(cfg.Logger, "indexer")), wire.Codec{}, loop.StreamConfig{})},
		Worker:       Work(ix, cfg.Registry.Bind, cfg.Disk),
		MaxWork:      256,
		TickInterval: tick,
		Logger:       cfg.Logger,
	})
	cfg.Logger.Info("indexer: listening", "addr", ln.Addr().String(), "partition", cfg.Partition, "partitions", cfg.Partitions)
	return s, nil
}

// Index is the indexer's index (for a search page in the same process).
func (s *Server) Index() *index.Index { return s.ix }

// Addr is the listening address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Run serves until ctx ends, then closes the index.
func (s *Server) Run(ctx context.Context) error {
	err := s.drv.Run(ctx)
	if cerr := s.ix.Close(); err == nil {
		err = cerr
	}
	return err
}

// DiskStatus is the full-disk guard's state (zero without
// ServerConfig.Disk).
func (s *Server) DiskStatus() diskspace.Status { return s.disk.Status() }
