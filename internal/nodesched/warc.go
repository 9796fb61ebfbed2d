package nodesched

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"sync"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/warc"
)

// WARCConfig is the node scheduler's side of WARC writing (package warc):
// collections whose warc section is enabled, or every collection when Dir
// is set (trawl run --warc DIR), have what they fetch written to WARC
// files by a writer of their own directory and prefix.
type WARCConfig struct {
	// Dir, if set, switches WARC writing on for every collection, into
	// this directory (over the collections' warc/dir).
	Dir string
	// Software names trawl in the files' warcinfo records.
	Software string
	// Queue bounds each writer's queue (warc.DefaultQueue if 0).
	Queue int
}

// warcSet holds the node scheduler's WARC writers while Run runs: one per
// directory and prefix, shared by the collections that name them, each
// writing from its own goroutine.
type warcSet struct {
	cfg     WARCConfig
	dataDir string
	node    string
	log     *slog.Logger

	mu      sync.Mutex
	ctx     context.Context
	writers map[string]*warc.Writer
	wg      sync.WaitGroup
	errs    []error
}

func newWARCSet(ctx context.Context, cfg WARCConfig, dataDir, node string, log *slog.Logger) *warcSet {
	return &warcSet{cfg: cfg, dataDir: dataDir, node: node, log: log, ctx: ctx, writers: map[string]*warc.Writer{}}
}

// writer returns the writer of a collection's warc section, starting it
// on first use (nil when WARC is off for the collection).
func (ws *warcSet) writer(sec config.WarcSection) (*warc.Writer, error) {
	if ws == nil || (!sec.Enable && ws.cfg.Dir == "") {
		return nil, nil
	}
	dir := sec.Dir
	if ws.cfg.Dir != "" {
		dir = ws.cfg.Dir
	}
	if !filepath.IsAbs(dir) && ws.dataDir != "" {
		dir = filepath.Join(ws.dataDir, dir)
	}
	key := dir + "\x00" + sec.FilePrefix
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if w, ok := ws.writers[key]; ok {
		return w, nil
	}
	w, err := warc.New(warc.Options{Dir: dir, Prefix: sec.FilePrefix, Node: ws.node, MaxSize: int64(sec.MaxSize) << 20,
		Queue: ws.cfg.Queue, Software: ws.cfg.Software, Logger: ws.log.With("component", "warc")})
	if err != nil {
		return nil, fmt.Errorf("nodesched: %w", err)
	}
	ws.writers[key] = w
	ws.wg.Add(1)
	go func() {
		defer ws.wg.Done()
		if err := w.Run(ws.ctx); err != nil {
			ws.log.Error("warc: closing the files failed", "dir", w.Dir(), "err", err)
			ws.mu.Lock()
			ws.errs = append(ws.errs, err)
			ws.mu.Unlock()
		}
	}()
	return w, nil
}

// wait waits for the writers, once their context has ended, to write what
// is queued and close their files.
func (ws *warcSet) wait() {
	ws.wg.Wait()
}

// stats sums the writers' counts.
func (ws *warcSet) stats() warc.Stats {
	var t warc.Stats
	if ws == nil {
		return t
	}
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, w := range ws.writers {
		s := w.Stats()
		t.Responses += s.Responses
		t.Revisits += s.Revisits
		t.Requests += s.Requests
		t.Metadata += s.Metadata
		t.NotModified += s.NotModified
		t.Identical += s.Identical
		t.Errors += s.Errors
		t.Files += s.Files
	}
	return t
}
