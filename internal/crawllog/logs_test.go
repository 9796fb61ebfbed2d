package crawllog

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
)

func TestPath(t *testing.T) {
	for _, tc := range []struct {
		coll string
		kind Kind
		want string
		err  bool
	}{
		{"web", Fetch, "root/web/fetch.log", false},
		{"web", Scheduler, "root/web/schedule.log", false},
		{"a/b", Site, "root/a%2Fb/site.log", false},
		{"..", Site, "", true},
		{"", Site, "", true},
		{"web", Kind(99), "", true},
	} {
		t.Run(tc.coll+"/"+tc.kind.String(), func(t *testing.T) {
			got, err := Path("root", tc.coll, tc.kind)
			if (err != nil) != tc.err || got != filepath.FromSlash(tc.want) {
				t.Errorf("Path = %q, %v; want %q (error %v)", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestKindLogFile(t *testing.T) {
	got := map[Kind]cmt.LogFile{}
	for _, k := range Kinds() {
		if f, ok := k.LogFile(); ok {
			got[k] = f
			if back, ok := KindOf(f); !ok || back != k {
				t.Errorf("KindOf(%q) = %v, %v", f, back, ok)
			}
		}
	}
	want := map[Kind]cmt.LogFile{Site: "si", Screened: "ur", Scheduler: "sc", Fetch: "dk"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CMD_UM_LOG codes (-want +got):\n%s", diff)
	}
	if _, ok := KindOf("zz"); ok {
		t.Error("KindOf(zz) ok")
	}
}

func TestFormatsOf(t *testing.T) {
	// The defaults of MS-FSCCFG 2.2.4.5: text/text/none/none/none/text/text.
	c, err := config.Parse("t.xml", []byte(`<CrawlerConfig><DomainSpecification name="x"></DomainSpecification></CrawlerConfig>`), nil)
	if err != nil {
		t.Fatal(err)
	}
	got := FormatsOf(c.Collections[0].Top().Log())
	want := Formats{Fetch: Text, PostProcess: Text, Header: None, Screened: None, Scheduler: None, DSFeed: Text, Site: Text}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		in   string
		want Format
	}{{"text", Text}, {" XML ", XML}, {"none", None}, {"", None}} {
		if got := ParseFormat(tc.in); got != tc.want {
			t.Errorf("ParseFormat(%q) = %v, want %v", tc.in, got, tc.want)
		}
	}
}

func TestLine(t *testing.T) {
	at := time.Date(2026, 3, 1, 12, 30, 5, 123456789, time.FixedZone("x", 3600))
	for _, tc := range []struct {
		fields []string
		want   string
	}{
		{[]string{"200", "5", "http://a/"}, "2026-03-01T11:30:05.123Z 200 5 http://a/"},
		{[]string{"", "a\nb\r"}, "2026-03-01T11:30:05.123Z - a b "},
		{nil, "2026-03-01T11:30:05.123Z"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			if got := Line(at, tc.fields...); got != tc.want {
				t.Errorf("Line = %q, want %q", got, tc.want)
			}
		})
	}
}

func runLogs(t *testing.T, l *Logs) (stop func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- l.Run(ctx) }()
	return func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run: %v", err)
			}
		case <-time.After(60 * time.Second):
			t.Fatal("Run did not return")
		}
	}
}

func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := strings.TrimSuffix(string(b), "\n")
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestLogsWriteAndFlushOnStop(t *testing.T) {
	dir := t.TempDir()
	l := New(Config{Dir: dir, FlushEvery: time.Hour})
	stop := runLogs(t, l)
	var want []string
	for i := range 100 {
		line := fmt.Sprintf("line %03d", i)
		want = append(want, line)
		if !l.Log(Entry{Collection: "web", Kind: Fetch, Line: line}) {
			t.Fatal("Log dropped an entry with room in the queue")
		}
	}
	l.Log(Entry{Collection: "other", Kind: Site, Line: "site line"})
	stop()
	if diff := cmp.Diff(want, readLines(t, filepath.Join(dir, "web", "fetch.log"))); diff != "" {
		t.Errorf("fetch.log (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"site line"}, readLines(t, filepath.Join(dir, "other", "site.log"))); diff != "" {
		t.Errorf("site.log (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(filepath.Join(dir, "web", "site.log")); !os.IsNotExist(err) {
		t.Errorf("a log nobody wrote exists: %v", err)
	}
	// A second run appends.
	l2 := New(Config{Dir: dir})
	stop = runLogs(t, l2)
	l2.Log(Entry{Collection: "web", Kind: Fetch, Line: "after restart"})
	stop()
	if got := readLines(t, filepath.Join(dir, "web", "fetch.log")); len(got) != 101 || got[100] != "after restart" {
		t.Errorf("after restart: %d lines, last %q", len(got), got[len(got)-1])
	}
}

func TestLogsPeriodicFlush(t *testing.T) {
	dir := t.TempDir()
	l := New(Config{Dir: dir, FlushEvery: 10 * time.Millisecond})
	stop := runLogs(t, l)
	defer stop()
	l.Log(Entry{Collection: "web", Kind: DSFeed, Line: "flushed while running"})
	path := filepath.Join(dir, "web", "dsfeed.log")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if b, _ := os.ReadFile(path); string(b) == "flushed while running\n" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the line never reached the file while Run ran")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestLogsRotation(t *testing.T) {
	for _, tc := range []struct {
		name  string
		keep  int
		files []string
	}{
		{"keep 2", 2, []string{"fetch.log", "fetch.log.1", "fetch.log.2"}},
		{"keep 1", 1, []string{"fetch.log", "fetch.log.1"}},
		{"keep none", -1, []string{"fetch.log"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			const max = 100
			l := New(Config{Dir: dir, MaxBytes: max, Keep: tc.keep, Queue: 1000})
			stop := runLogs(t, l)
			var all []string
			for i := range 50 {
				line := fmt.Sprintf("entry %02d", i) // 9 bytes with the line break
				all = append(all, line)
				l.Log(Entry{Collection: "c", Kind: Fetch, Line: line})
			}
			stop()
			ents, err := os.ReadDir(filepath.Join(dir, "c"))
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			var got []string
			for _, e := range ents {
				names = append(names, e.Name())
				fi, _ := e.Info()
				if fi.Size() > max {
					t.Errorf("%s has %d bytes, more than %d", e.Name(), fi.Size(), max)
				}
			}
			sort.Strings(names)
			if diff := cmp.Diff(tc.files, names); diff != "" {
				t.Fatalf("files (-want +got):\n%s", diff)
			}
			// Oldest first: .N ... .1, then the current file; together
			// they are the newest lines, in order.
			for i := len(names) - 1; i >= 1; i-- {
				got = append(got, readLines(t, filepath.Join(dir, "c", names[i]))...)
			}
			got = append(got, readLines(t, filepath.Join(dir, "c", names[0]))...)
			if diff := cmp.Diff(all[len(all)-len(got):], got); diff != "" {
				t.Errorf("lines kept (-want +got):\n%s", diff)
			}
			if len(got) != 11*len(names)-(11-50%11) {
				t.Errorf("%d lines kept in %d files", len(got), len(names))
			}
		})
	}
}

func TestLogsCutsLongEntry(t *testing.T) {
	dir := t.TempDir()
	l := New(Config{Dir: dir})
	stop := runLogs(t, l)
	l.Log(Entry{Collection: "c", Kind: Header, Line: strings.Repeat("x", MaxEntryBytes+10)})
	stop()
	got := readLines(t, filepath.Join(dir, "c", "header.log"))
	if len(got) != 1 || len(got[0]) != MaxEntryBytes+len(" [cut]") || !strings.HasSuffix(got[0], " [cut]") {
		t.Errorf("long entry written as %d lines, first %d bytes", len(got), len(got[0]))
	}
}

// gatedWriter blocks every write until gate is closed: a disk that hangs.
type gatedWriter struct {
	io.WriteCloser
	gate chan struct{}
}

func (g gatedWriter) Write(p []byte) (int, error) {
	<-g.gate
	return g.WriteCloser.Write(p)
}

func TestLogsNeverBlock(t *testing.T) {
	t.Run("no writer", func(t *testing.T) {
		l := New(Config{Dir: t.TempDir(), Queue: 8})
		for i := range 20 {
			l.Log(Entry{Collection: "c", Kind: Fetch, Line: fmt.Sprint(i)})
		}
		if got := l.Dropped(); got != 12 {
			t.Errorf("Dropped = %d, want 12", got)
		}
		var nilLogs *Logs
		if nilLogs.Log(Entry{Collection: "c"}) || nilLogs.Dropped() != 0 {
			t.Error("a nil Logs took an entry")
		}
	})
	t.Run("hung disk", func(t *testing.T) {
		dir := t.TempDir()
		gate := make(chan struct{})
		l := New(Config{Dir: dir, Queue: 64, FlushEvery: time.Millisecond, Create: func(p string) (io.WriteCloser, error) {
			f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
			return gatedWriter{f, gate}, err
		}})
		stop := runLogs(t, l)
		start := time.Now()
		const n = 100000
		queued := 0
		for i := range n {
			if l.Log(Entry{Collection: "c", Kind: Fetch, Line: fmt.Sprintf("%06d", i)}) {
				queued++
			}
		}
		if el := time.Since(start); el > 20*time.Second {
			t.Errorf("logging %d lines to a hung disk took %v", n, el)
		}
		if l.Dropped() == 0 || uint64(queued)+l.Dropped() != n {
			t.Errorf("queued %d, dropped %d of %d", queued, l.Dropped(), n)
		}
		close(gate)
		stop()
		if got := len(readLines(t, filepath.Join(dir, "c", "fetch.log"))); got != queued {
			t.Errorf("%d lines written, %d were queued", got, queued)
		}
	})
}
