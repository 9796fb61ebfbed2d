package crawllog

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"
)

// Defaults of Config.
const (
	DefaultMaxBytes   = 64 << 20
	DefaultKeep       = 3
	DefaultQueue      = 16384
	DefaultFlushEvery = time.Second
	// MaxEntryBytes caps one entry; a longer one is cut and marked.
	MaxEntryBytes = 64 << 10
	// maxOpen bounds the files open at once; past it every file is
	// flushed and closed, and reopened when written again.
	maxOpen = 256
)

// Entry is one event for a collection's log of kind Kind. Line is complete
// (made by Line, or an XML element): the writer adds only the line break.
type Entry struct {
	Collection string
	Kind       Kind
	Line       string
}

// Config configures Logs.
type Config struct {
	// Dir is the root of the collections' log directories.
	Dir string
	// MaxBytes is the size past which a file is rotated
	// (DefaultMaxBytes); Keep is how many rotated files are kept
	// (DefaultKeep; negative: none, the file starts again empty).
	MaxBytes int64
	Keep     int
	// Queue bounds the entries waiting for the writer (DefaultQueue).
	Queue int
	// FlushEvery is how often buffered lines reach the files
	// (DefaultFlushEvery).
	FlushEvery time.Duration
	// Create opens a file for appending (default os.OpenFile with
	// O_APPEND|O_CREATE|O_WRONLY, mode 0644).
	Create func(path string) (io.WriteCloser, error)
	Logger *slog.Logger
}

// Logs writes crawl log entries to files. Log is safe for concurrent use
// and never blocks; Run does the writing.
type Logs struct {
	cfg     Config
	log     *slog.Logger
	q       chan Entry
	dropped atomic.Uint64
	written atomic.Uint64
	files   map[string]*file
}

type file struct {
	path string
	w    io.WriteCloser
	bw   *bufio.Writer
	size int64
}

// New returns Logs writing under cfg.Dir.
func New(cfg Config) *Logs {
	if cfg.MaxBytes <= 0 {
		cfg.MaxBytes = DefaultMaxBytes
	}
	if cfg.Keep == 0 {
		cfg.Keep = DefaultKeep
	}
	if cfg.Queue <= 0 {
		cfg.Queue = DefaultQueue
	}
	if cfg.FlushEvery <= 0 {
		cfg.FlushEvery = DefaultFlushEvery
	}
	if cfg.Create == nil {
		cfg.Create = func(p string) (io.WriteCloser, error) {
			return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		}
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Logs{cfg: cfg, log: log, q: make(chan Entry, cfg.Queue), files: map[string]*file{}}
}

// Log queues e for writing, or drops and counts it when the queue is full
// (a nil Logs drops everything). It reports whether e was queued.
func (l *Logs) Log(e Entry) bool {
	if l == nil {
		return false
	}
	select {
	case l.q <- e:
		return true
	default:
		if n := l.dropped.Add(1); n&(n-1) == 0 {
			l.log.Warn("crawllog: queue full, log lines dropped", "collection", e.Collection, "log", e.Kind.String(), "dropped", n)
		}
		return false
	}
}

// Dropped is how many entries found the queue full.
func (l *Logs) Dropped() uint64 {
	if l == nil {
		return 0
	}
	return l.dropped.Load()
}

// Written is how many entries reached a file's buffer.
func (l *Logs) Written() uint64 {
	if l == nil {
		return 0
	}
	return l.written.Load()
}

// Run writes queued entries until ctx ends; then it writes what is still
// queued, flushes and closes every file. It returns the first write error
// only at the end: a failing disk costs lines, never the crawl.
func (l *Logs) Run(ctx context.Context) error {
	t := time.NewTicker(l.cfg.FlushEvery)
	defer t.Stop()
	var firstErr error
	keep := func(err error) {
		if err != nil && firstErr == nil {
			firstErr = err
		}
	}
	for {
		select {
		case e := <-l.q:
			keep(l.write(e))
		case <-t.C:
			keep(l.flush())
		case <-ctx.Done():
			for {
				select {
				case e := <-l.q:
					keep(l.write(e))
					continue
				default:
				}
				break
			}
			keep(l.closeAll())
			return firstErr
		}
	}
}

func (l *Logs) write(e Entry) error {
	p, err := Path(l.cfg.Dir, e.Collection, e.Kind)
	if err != nil {
		l.log.Warn("crawllog: log line dropped", "err", err)
		return nil
	}
	line := e.Line
	if len(line) > MaxEntryBytes {
		line = line[:MaxEntryBytes] + " [cut]"
	}
	n := int64(len(line)) + 1
	f, err := l.open(p)
	if err != nil {
		return l.failed(p, err)
	}
	if f.size > 0 && f.size+n > l.cfg.MaxBytes {
		if err := l.rotate(f); err != nil {
			return l.failed(p, err)
		}
		if f, err = l.open(p); err != nil {
			return l.failed(p, err)
		}
	}
	if _, err := f.bw.WriteString(line); err != nil {
		return l.failed(p, err)
	}
	if err := f.bw.WriteByte('\n'); err != nil {
		return l.failed(p, err)
	}
	f.size += n
	l.written.Add(1)
	return nil
}

func (l *Logs) failed(path string, err error) error {
	l.log.Warn("crawllog: writing failed", "file", path, "err", err)
	if f := l.files[path]; f != nil {
		f.w.Close()
		delete(l.files, path)
	}
	return fmt.Errorf("crawllog: %s: %w", path, err)
}

func (l *Logs) open(p string) (*file, error) {
	if f := l.files[p]; f != nil {
		return f, nil
	}
	if len(l.files) >= maxOpen {
		if err := l.closeAll(); err != nil {
			l.log.Warn("crawllog: closing files failed", "err", err)
		}
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	var size int64
	if fi, err := os.Stat(p); err == nil {
		size = fi.Size()
	}
	w, err := l.cfg.Create(p)
	if err != nil {
		return nil, err
	}
	f := &file{path: p, w: w, bw: bufio.NewWriterSize(w, 32<<10), size: size}
	l.files[p] = f
	return f, nil
}

// rotate closes f and shifts its file to .1 (.1 to .2, ..., the oldest
// removed).
func (l *Logs) rotate(f *file) error {
	delete(l.files, f.path)
	err := errors.Join(f.bw.Flush(), f.w.Close())
	if l.cfg.Keep < 0 {
		return errors.Join(err, os.Remove(f.path))
	}
	if rerr := os.Remove(fmt.Sprintf("%s.%d", f.path, l.cfg.Keep)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
		err = errors.Join(err, rerr)
	}
	for i := l.cfg.Keep - 1; i >= 1; i-- {
		from := fmt.Sprintf("%s.%d", f.path, i)
		if rerr := os.Rename(from, fmt.Sprintf("%s.%d", f.path, i+1)); rerr != nil && !errors.Is(rerr, os.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return errors.Join(err, os.Rename(f.path, f.path+".1"))
}

func (l *Logs) flush() error {
	var err error
	for p, f := range l.files {
		if ferr := f.bw.Flush(); ferr != nil {
			err = errors.Join(err, l.failed(p, ferr))
		}
	}
	return err
}

func (l *Logs) closeAll() error {
	var err error
	for p, f := range l.files {
		err = errors.Join(err, f.bw.Flush(), f.w.Close())
		delete(l.files, p)
	}
	return err
}
