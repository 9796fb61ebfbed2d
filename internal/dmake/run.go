package dmake

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/tlsconf"
)

// PortOffset is the worker's port relative to the base port (3.2.3).
const PortOffset = 310

// WorkerOptions configure a worker process.
type WorkerOptions struct {
	// Listener, if set, is used as it is; otherwise Addr is listened on.
	Listener net.Listener
	Addr     string
	// TLS, if set, makes the listener and the transfers between workers
	// mutual TLS (internal/tlsconf); the allow-list applies first.
	TLS *tlsconf.Config
	// Dir is the directory the worker works in (created if missing).
	Dir string
	// Allow lists the prefixes masters may connect from; empty: loopback.
	Allow []string
	// AllowShell lets shell tasks run any program.
	AllowShell bool
	// Self is the trawl binary ("" for os.Executable).
	Self   string
	Logger *slog.Logger
	// FreeSpace, DiskCheck and CutTransfer: see Executor and WorkerConfig.
	FreeSpace   func(dir string) (int64, error)
	DiskCheck   time.Duration
	CutTransfer int64
	// Throttle bounds every outgoing transfer to that many bytes per
	// second (fault injection, 0: none).
	Throttle int64
	Version  string
	// Ready, if set, receives the listening address once the worker listens.
	Ready func(addr string)
	// Registry, if set, is where the worker binds itself as an fdmworker
	// (see WorkerAOR), again every Rebind (DefaultRebind if 0), and unbinds
	// itself when ctx ends. Advertise is the host masters dial ("" for the
	// listener's, or the machine's name when that is unspecified).
	Registry  Registry
	Rebind    time.Duration
	Advertise string
}

// RunWorker runs a worker until ctx ends.
func RunWorker(ctx context.Context, o WorkerOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	root, err := filepath.Abs(o.Dir)
	if err != nil {
		return fmt.Errorf("dmake: %w", err)
	}
	if err := os.MkdirAll(root, 0o755); err != nil {
		return fmt.Errorf("dmake: %w", err)
	}
	if root, err = filepath.EvalSymlinks(root); err != nil {
		return fmt.Errorf("dmake: %w", err)
	}
	allow := o.Allow
	if len(allow) == 0 {
		allow = []string{"127.0.0.0/8", "::1"}
	}
	al, err := cmt.ParseAllowList(allow)
	if err != nil {
		return fmt.Errorf("dmake: %w", err)
	}
	self := o.Self
	if self == "" {
		if self, err = os.Executable(); err != nil {
			return fmt.Errorf("dmake: %w", err)
		}
	}
	ln := o.Listener
	if ln == nil {
		if ln, err = net.Listen("tcp", o.Addr); err != nil {
			return fmt.Errorf("dmake: %w", err)
		}
	}
	host, _, _ := net.SplitHostPort(ln.Addr().String())
	var aor wire.AOR
	if o.Registry != nil {
		if aor, err = WorkerAOR(advertised(ln, o.Advertise)); err != nil {
			ln.Close()
			return err
		}
		// The name server's pings come to the worker's own port.
		ln = newSniffListener(ln, sniffWait)
	}
	ln = cmt.AllowListener(ln, al, func(remote net.Addr) {
		log.Warn("dmake worker: refused a connection", "remote", remote.String(), "allow", al.String())
	})
	ln = o.TLS.Listener(ln, func(remote net.Addr, err error) {
		log.Warn("dmake worker: refused a connection without a valid TLS client certificate", "remote", remote.String(), "err", err)
	})
	m := NewWorker(WorkerConfig{Root: root, Env: os.Environ(), PID: os.Getpid(), AllowShell: o.AllowShell,
		DiskCheck: o.DiskCheck, Version: o.Version})
	tick := time.Second
	if o.DiskCheck > 0 && o.DiskCheck < tick {
		tick = o.DiskCheck
	}
	ex := &Executor{Self: self, ListenHost: host, FreeSpace: o.FreeSpace, CutTransfer: o.CutTransfer, Throttle: o.Throttle, TLS: o.TLS}
	defer ex.Close()
	d := loop.New(loop.Config[Message]{
		Name: "dmake worker", Machine: m, Logger: log,
		Listeners: map[string]loop.Listener[Message]{"master": loop.NetListener[Message](ln, Codec{}, loop.StreamConfig{})},
		Worker:    ex, MaxWork: 4096, TickInterval: tick,
	})
	log.Info("dmake worker listening", "addr", ln.Addr().String(), "dir", root)
	if o.Ready != nil {
		o.Ready(ln.Addr().String())
	}
	if o.Registry == nil {
		return d.Run(ctx)
	}
	rctx, stop := context.WithCancel(ctx)
	registered := make(chan struct{})
	go func() {
		defer close(registered)
		register(rctx, o.Registry, aor, o.Rebind, log)
	}()
	err = d.Run(ctx)
	stop()
	<-registered
	return err
}

// MasterOptions configure a master process.
type MasterOptions struct {
	MasterConfig
	Logger *slog.Logger
	// Dialer, if set, opens the connections to workers.
	Dialer loop.Dialer[Message]
	// TLS, if set (and Dialer not), makes them mutual TLS.
	TLS *tlsconf.Config
}

// RunMaster runs a build to its end and returns its outcome.
func RunMaster(ctx context.Context, o MasterOptions) error {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if o.Seed == 0 {
		o.Seed = uint64(time.Now().UnixNano())
	}
	if o.BuildID == "" {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return fmt.Errorf("dmake: build id: %w", err)
		}
		o.BuildID = hex.EncodeToString(b[:])
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	m := NewMaster(o.MasterConfig)
	result := make(chan error, 1)
	dialer := o.Dialer
	if dialer == nil {
		dialer = loop.NetDialer[Message]{D: o.TLS.Dialer(&net.Dialer{Timeout: 5 * time.Second}), Codec: Codec{}}
	}
	d := loop.New(loop.Config[Message]{
		Name: "dmake master", Machine: m, Logger: log, Dialer: dialer,
		Worker: loop.WorkerFunc(func(_ context.Context, spec any) (any, error) {
			if bd, ok := spec.(BuildDone); ok {
				select {
				case result <- bd.Err:
				default:
				}
				cancel()
			}
			return nil, nil
		}),
		TickInterval: min(time.Second, o.MasterConfig.heartbeatPeriod()),
	})
	go func() { _ = d.Inject(ctx, Message{}) }()
	err := d.Run(ctx)
	select {
	case berr := <-result:
		return berr
	default:
	}
	if err == nil {
		err = ctx.Err()
	}
	if err == nil {
		err = errors.New("dmake: master stopped before the build ended")
	}
	return err
}

func (c MasterConfig) heartbeatPeriod() time.Duration {
	if c.HeartbeatPeriod <= 0 {
		return DefaultHeartbeatPeriod
	}
	return c.HeartbeatPeriod
}

// FreeSpaceFromFile returns a free-space function for fault injection: it
// reads a number of megabytes from file when the file exists, and measures
// the filesystem otherwise.
func FreeSpaceFromFile(file string) func(dir string) (int64, error) {
	real := &Executor{}
	return func(dir string) (int64, error) {
		b, err := os.ReadFile(file)
		if err != nil {
			return real.freeSpace(dir)
		}
		n, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("dmake: %s: %w", file, err)
		}
		return n << 20, nil
	}
}
