package webanalyzer

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// BuildRun is one build for a Builder: the dmake build file's text, run on
// Local workers started in this process (working in Work/w0, Work/w1, ...;
// w0 holds the inputs and the kept outputs) and the Remote ones, the
// table programs run by the Self binary, TargetDone called after each
// target.
type BuildRun struct {
	Work, Text string
	Local      int
	Remote     []string
	Self       string
	Slots      int
	Logger     *slog.Logger
	TargetDone func()
}

// RunOptions configure a web analyzer run over a crawl's data directory.
type RunOptions struct {
	// Data is trawl run's --data: Data/node is the crawl store, and the
	// analyzer works in Data/webanalyzer.
	Data       string
	Collection string // "" for the store's only collection
	// LocalWorkers is the number of dmake workers started in this process
	// (at least 1: worker 0 holds the inputs and the kept outputs).
	LocalWorkers int
	// Workers are further workers' addresses (trawl dmake worker).
	Workers []string
	// Self is the trawl binary the workers run the table programs with.
	Self string
	// Full ignores the previous run's state: everything is dumped again.
	Full bool
	// Dump, if set, dumps the crawl's link graph into dir instead of
	// opening Data/node (trawl run dumps from its running crawl's store);
	// since is zero for a full dump.
	Dump func(dir string, since, now time.Time) (DumpStats, error)
	// Tables, if set, is a dump directory (Dump's layout) to analyse
	// instead of dumping the crawl store; with a previous state, it holds
	// what changed since.
	Tables string
	Build  BuildOptions
	// Slots is how many targets a worker runs at once (default 2).
	Slots int
	// Builder runs the build (required): trawl's is dmake.LocalBuild,
	// given by cmd/trawl (only cmd/ imports a role package).
	Builder  func(ctx context.Context, b BuildRun) error
	Logger   *slog.Logger
	Progress io.Writer // progress lines, or nil
	// Now gives the dump's stamp (time.Now if nil); durations are measured
	// on the wall clock.
	Now func() time.Time
}

// RunStats is what a run did.
type RunStats struct {
	Incremental bool
	// RankReused: the link graph was the last run's, whose static rank
	// was kept instead of iterated again.
	RankReused bool
	// OutputsReused: besides, the compacted site map was the last run's,
	// so its site ranks and anchor text were kept too (no ranking build).
	OutputsReused bool
	Dump          DumpStats
	Targets       int
	DumpTime      time.Duration
	BuildTime     time.Duration
}

// Dir returns the web analyzer's directory under a data directory.
func Dir(data string) string { return filepath.Join(data, "webanalyzer") }

// StateDir returns the directory of the last run's kept tables.
func StateDir(data string) string { return filepath.Join(Dir(data), "state") }

// OnlyCollection returns the name of the only collection of a store.
func OnlyCollection(st *store.Store) (string, error) {
	names := map[string]bool{}
	err := st.IterRaw(store.SpaceURI, nil, func(k, _ []byte) error {
		name, _, err := store.ReadLP(k)
		if err != nil {
			return err
		}
		names[name] = true
		if len(names) > 1 {
			return store.ErrStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, store.ErrStop) {
		return "", err
	}
	if len(names) != 1 {
		return "", fmt.Errorf("webanalyzer: the store holds %d collections: name one", len(names))
	}
	for n := range names {
		return n, nil
	}
	return "", nil
}

// DumpData dumps a crawl's link graph (Data/node, opened read-only) into
// out; since, when not zero, makes it incremental.
func DumpData(data, collection, out string, since, now time.Time) (DumpStats, error) {
	st, err := store.Open(filepath.Join(data, "node"), store.Options{ReadOnly: true})
	if err != nil {
		return DumpStats{}, fmt.Errorf("webanalyzer: %w", err)
	}
	defer st.Close()
	if collection == "" {
		if collection, err = OnlyCollection(st); err != nil {
			return DumpStats{}, err
		}
	}
	ds, err := Dump(st, out, DumpOptions{Collection: collection, Since: since, Now: now})
	ds.Collection = collection
	return ds, err
}

// Run dumps what changed since the last run, runs the analysis as a dmake
// build, and replaces the state with the build's kept tables.
func Run(ctx context.Context, o RunOptions) (RunStats, error) {
	var rs RunStats
	var err error
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.LocalWorkers < 1 {
		o.LocalWorkers = 1
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	progress := func(format string, a ...any) {
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, format+"\n", a...)
		}
	}
	state, work := StateDir(o.Data), filepath.Join(Dir(o.Data), "work")
	if err := os.RemoveAll(work); err != nil {
		return rs, fmt.Errorf("webanalyzer: %w", err)
	}
	w0 := filepath.Join(work, "w0")
	if err := os.MkdirAll(w0, 0o755); err != nil {
		return rs, fmt.Errorf("webanalyzer: %w", err)
	}
	var since time.Time
	if !o.Full {
		if t, err := ReadStamp(state); err == nil && haveAll(state, Kept()) {
			since, rs.Incremental = t, true
		}
	}
	start, wall := o.Now(), time.Now()
	dumpDir := filepath.Join(work, "dump")
	var ds DumpStats
	if o.Tables != "" {
		if err := os.MkdirAll(dumpDir, 0o755); err != nil {
			return rs, fmt.Errorf("webanalyzer: %w", err)
		}
		for _, t := range InputTables {
			if err := linkOrCopy(filepath.Join(o.Tables, t), filepath.Join(dumpDir, t)); err != nil {
				return rs, err
			}
		}
	} else if o.Dump != nil {
		if ds, err = o.Dump(dumpDir, since, start); err != nil {
			return rs, err
		}
	} else if ds, err = DumpData(o.Data, o.Collection, dumpDir, since, start); err != nil {
		return rs, err
	}
	rs.Dump, rs.DumpTime = ds, time.Since(wall)
	progress("dump: %d pages, %d links, %d pages without links, %d equivalences, %d deletes (incremental %v) in %v",
		ds.Pages, ds.Links, ds.NoLinks, ds.Equivalences, ds.Deletes, rs.Incremental, rs.DumpTime.Round(time.Millisecond))
	for _, t := range InputTables {
		if err := os.Rename(filepath.Join(dumpDir, t), filepath.Join(w0, "new."+t)); err != nil {
			return rs, fmt.Errorf("webanalyzer: %w", err)
		}
		if rs.Incremental && t != TableEqRepr {
			if err := linkOrCopy(filepath.Join(state, Compacted(t)), filepath.Join(w0, "old."+t)); err != nil {
				return rs, err
			}
		}
	}
	if rs.Incremental {
		// The rank-independent intermediates, updated by delta.
		for _, f := range []string{OutLinks, OutInter} {
			if err := linkOrCopy(filepath.Join(state, f), filepath.Join(w0, "old."+f)); err != nil {
				return rs, err
			}
		}
	}
	if o.Builder == nil {
		return rs, errors.New("webanalyzer: no Builder to run the build with")
	}
	bo := o.Build
	bo.Incremental = rs.Incremental
	bo.defaults()
	bstart := time.Now()
	// Two builds: the compaction and normalization, then the rest, which
	// reuses the last static rank when its graph did not change.
	build := func(stage Stage, what string) error {
		bo.Stage = stage
		text, n, err := BuildFile(bo)
		if err != nil {
			return err
		}
		rs.Targets += n
		if err := os.WriteFile(filepath.Join(work, what+".dmake"), []byte(text), 0o644); err != nil {
			return fmt.Errorf("webanalyzer: %w", err)
		}
		var done atomic.Int64
		targetDone := func() {
			if d := done.Add(1); d%25 == 0 || int(d) == n {
				progress("build: %s: %d/%d targets done", what, d, n)
			}
		}
		if err := o.Builder(ctx, BuildRun{Work: work, Text: text, Local: o.LocalWorkers, Remote: o.Workers,
			Self: o.Self, Slots: o.Slots, Logger: log, TargetDone: targetDone}); err != nil {
			return fmt.Errorf("webanalyzer: build (%s): %w", what, err)
		}
		return nil
	}
	if err := build(StageCompact, "compaction"); err != nil {
		return rs, err
	}
	opts := rankOptions(bo)
	rank := StageRank
	if rs.Incremental {
		same, err := sameGraph(state, w0, opts)
		if err != nil {
			return rs, err
		}
		if same {
			if err := linkOrCopy(filepath.Join(state, OutRank), filepath.Join(w0, OutRank)); err != nil {
				return rs, err
			}
			rank, rs.RankReused = StageReuseRank, true
			progress("build: the link graph did not change: the last static rank stands")
			if rs.OutputsReused, err = sameSites(state, w0); err != nil {
				return rs, err
			}
		}
	}
	if rs.OutputsReused {
		// Site rank and anchor text are functions of links.final, the
		// static rank and the compacted site map, all the last run's.
		for _, f := range []string{OutSiteRank, OutAnchors, OutInter} {
			if err := linkOrCopy(filepath.Join(state, f), filepath.Join(w0, f)); err != nil {
				return rs, err
			}
		}
		progress("build: nor did the site map: the last site ranks and anchor text stand")
	} else if err := build(rank, "ranking"); err != nil {
		return rs, err
	}
	rs.BuildTime = time.Since(bstart)
	progress("build: %d targets in %v", rs.Targets, rs.BuildTime.Round(time.Millisecond))
	if err := os.WriteFile(filepath.Join(w0, RankOptionsFile), []byte(opts), 0o644); err != nil {
		return rs, fmt.Errorf("webanalyzer: %w", err)
	}
	if err := saveState(w0, state, start); err != nil {
		return rs, err
	}
	return rs, nil
}

// RankOptionsFile, in the state directory, holds what the static rank
// there was computed with (rankOptions).
const RankOptionsFile = "rank.options"

func rankOptions(bo BuildOptions) string {
	return fmt.Sprintf("rounds %d damping %s partitions %d\n", bo.Rounds, strconv.FormatFloat(bo.Damping, 'g', -1, 64), bo.Partitions)
}

// sameGraph reports whether the static rank of the state directory was
// computed with opts from the graph worker 0 now holds: the same
// links.final, byte for byte, and the same pages without links (the keys
// of c.no_links.0; their timestamps do not enter the rank).
func sameGraph(state, w0, opts string) (bool, error) {
	if b, err := os.ReadFile(filepath.Join(state, RankOptionsFile)); err != nil || string(b) != opts {
		return false, nil
	}
	if !haveAll(state, []string{OutRank, OutLinks, Compacted(TableNoLinks)}) {
		return false, nil
	}
	same, err := sameLines(filepath.Join(state, OutLinks), filepath.Join(w0, OutLinks), func(l string) string { return l })
	if err != nil || !same {
		return false, err
	}
	key := func(l string) string {
		if i := strings.IndexByte(l, ' '); i >= 0 {
			return l[:i]
		}
		return l
	}
	return sameLines(filepath.Join(state, Compacted(TableNoLinks)), filepath.Join(w0, Compacted(TableNoLinks)), key)
}

// sameSites reports whether the state directory's site ranks and anchor
// text are there and its compacted site map is the one worker 0 now holds,
// byte for byte.
func sameSites(state, w0 string) (bool, error) {
	if !haveAll(state, []string{OutSiteRank, OutAnchors, Compacted(TableSiteMap)}) {
		return false, nil
	}
	f := Compacted(TableSiteMap)
	return sameBytes(filepath.Join(state, f), filepath.Join(w0, f))
}

// openPair opens the two files a comparison reads.
func openPair(a, b string) (*os.File, *os.File, error) {
	fa, err := os.Open(a)
	if err != nil {
		return nil, nil, fmt.Errorf("webanalyzer: %w", err)
	}
	fb, err := os.Open(b)
	if err != nil {
		fa.Close()
		return nil, nil, fmt.Errorf("webanalyzer: %w", err)
	}
	return fa, fb, nil
}

// sameBytes reports whether two files hold the same bytes.
func sameBytes(a, b string) (bool, error) {
	fa, fb, err := openPair(a, b)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	defer fb.Close()
	ba, bb := make([]byte, 64<<10), make([]byte, 64<<10)
	for {
		na, ea := io.ReadFull(fa, ba)
		nb, eb := io.ReadFull(fb, bb)
		if !bytes.Equal(ba[:na], bb[:nb]) {
			return false, nil
		}
		endA, endB := ea == io.EOF || ea == io.ErrUnexpectedEOF, eb == io.EOF || eb == io.ErrUnexpectedEOF
		if ea != nil && !endA {
			return false, fmt.Errorf("webanalyzer: %w", ea)
		}
		if eb != nil && !endB {
			return false, fmt.Errorf("webanalyzer: %w", eb)
		}
		if endA || endB {
			return endA && endB, nil
		}
	}
}

// sameLines reports whether two files have the same lines once each is
// mapped through f.
func sameLines(a, b string, f func(string) string) (bool, error) {
	fa, fb, err := openPair(a, b)
	if err != nil {
		return false, err
	}
	defer fa.Close()
	defer fb.Close()
	sa, sb := bufio.NewScanner(fa), bufio.NewScanner(fb)
	sa.Buffer(make([]byte, 64<<10), 16<<20)
	sb.Buffer(make([]byte, 64<<10), 16<<20)
	for {
		ma, mb := sa.Scan(), sb.Scan()
		if ma != mb {
			return false, nil
		}
		if !ma {
			if err := sa.Err(); err != nil {
				return false, fmt.Errorf("webanalyzer: %w", err)
			}
			return sb.Err() == nil, sb.Err()
		}
		if f(sa.Text()) != f(sb.Text()) {
			return false, nil
		}
	}
}

func haveAll(dir string, files []string) bool {
	for _, f := range files {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			return false
		}
	}
	return true
}

// saveState moves the kept tables into a fresh state directory, stamped
// with the dump's time, and replaces the old state with it.
func saveState(w0, state string, stamp time.Time) error {
	next := state + ".next"
	if err := os.RemoveAll(next); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	if err := os.MkdirAll(next, 0o755); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	for _, f := range append(Kept(), RankOptionsFile) {
		if err := linkOrCopy(filepath.Join(w0, f), filepath.Join(next, f)); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(next, StampFile), []byte(fmt.Sprintf("%d\n", stamp.UnixNano())), 0o644); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	old := state + ".old"
	os.RemoveAll(old)
	if err := os.Rename(state, old); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	if err := os.Rename(next, state); err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	return os.RemoveAll(old)
}

func linkOrCopy(src, dst string) error {
	if err := os.Link(src, dst); err == nil {
		return nil
	}
	in, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	defer in.Close()
	out, err := os.Create(dst)
	if err != nil {
		return fmt.Errorf("webanalyzer: %w", err)
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return fmt.Errorf("webanalyzer: %w", err)
	}
	return out.Close()
}
