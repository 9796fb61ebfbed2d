package dmake

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// LocalBuild is what a job built on dmake (the web analyzer) runs its build
// with: it starts local workers in this process, on loopback listeners,
// working in work/w0, work/w1, ..., parses text for them and the remote
// workers, and runs a master until the build is done; targetDone is called
// after each target (nil: not told).
func LocalBuild(ctx context.Context, work, text string, local int, remote []string, self string, slots int,
	log *slog.Logger, targetDone func()) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	var addrs []string
	var wg sync.WaitGroup
	errs := make(chan error, local)
	for i := 0; i < local; i++ {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return fmt.Errorf("dmake: %w", err)
		}
		addrs = append(addrs, ln.Addr().String())
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			err := RunWorker(ctx, WorkerOptions{Listener: ln, Dir: filepath.Join(work, fmt.Sprintf("w%d", i)),
				Self: self, Logger: log, DiskCheck: time.Minute})
			if err != nil && ctx.Err() == nil {
				errs <- err
				cancel()
			}
		}(i)
	}
	defer wg.Wait()
	addrs = append(addrs, remote...)
	b, err := ParseBuild(strings.NewReader(text), len(addrs))
	if err != nil {
		return err
	}
	mlog := log
	if targetDone != nil {
		mlog = slog.New(&doneHandler{Handler: log.Handler(), done: targetDone})
	}
	err = RunMaster(ctx, MasterOptions{Logger: mlog, MasterConfig: MasterConfig{Workers: addrs, Build: b, Slots: slots}})
	cancel()
	select {
	case werr := <-errs:
		if err == nil {
			err = werr
		}
	default:
	}
	return err
}

// doneHandler counts the master's "target done" records.
type doneHandler struct {
	slog.Handler
	done func()
}

func (h *doneHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelInfo || h.Handler.Enabled(ctx, l)
}

func (h *doneHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "dmake master: target done" {
		h.done()
	}
	if !h.Handler.Enabled(ctx, r.Level) {
		return nil
	}
	return h.Handler.Handle(ctx, r)
}

func (h *doneHandler) WithAttrs(a []slog.Attr) slog.Handler {
	return &doneHandler{Handler: h.Handler.WithAttrs(a), done: h.done}
}

func (h *doneHandler) WithGroup(g string) slog.Handler {
	return &doneHandler{Handler: h.Handler.WithGroup(g), done: h.done}
}
