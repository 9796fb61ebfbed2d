package multinode

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/testenv"
)

// The collections' log files (CMD_UM_LOG) as the driver writes them
// through package crawllog: layout, rotation, a hanging disk, hostile
// names.

// newLogServer runs a server over TCP on 127.0.0.1 with the log writer
// tuned by lc and the log going to logs (nil: the test log).
func newLogServer(t *testing.T, data string, lc crawllog.Config, logs io.Writer, specs ...*CollectionSpec) (*Server, func()) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	log := testLogger(t)
	if logs != nil {
		log = slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
	s := &Server{Listener: ln, Data: data, Logger: log, Collections: specs, Tick: 20 * time.Millisecond, Logs: lc}
	return s, runServer(t, s)
}

// keepAlive sends a keep-alive and waits for its answer. A keep-alive has
// the high priority, so it may overtake log lines queued before it: it
// shows that the event loop answers, not that it handled them.
func keepAlive(n *fakeNode) {
	n.t.Helper()
	isAck := func(m cmt.Message) bool { _, ok := m.(*cmt.UMKeepaliveAck); return ok }
	before := len(n.all(isAck))
	n.send(&cmt.UMKeepalive{})
	count := 0
	n.wait("keep-alive ack", func(m cmt.Message) bool {
		if isAck(m) {
			count++
		}
		return count > before
	})
}

// waitLogLines waits until the server has handled want log lines of
// collection coll (CMD_UM_LOG messages keep their order among
// themselves).
func waitLogLines(t *testing.T, srv *Server, coll string, want uint64) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		got := collCounts(t, srv)[coll].LogLines
		if got == want {
			return
		}
		if got > want || time.Now().After(deadline) {
			t.Fatalf("%s: %d log lines handled, want %d", coll, got, want)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// collCounts returns the collections' counts by name.
func collCounts(t *testing.T, srv *Server) map[string]CollectionCounts {
	t.Helper()
	infos, err := srv.CollectionInfos(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]CollectionCounts{}
	for _, ci := range infos {
		out[ci.Name] = ci.Counts
	}
	return out
}

// filesUnder lists the files under root (slash-separated, relative),
// leaving out the routing database.
func filesUnder(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasSuffix(rel, routesDirName) {
				return filepath.SkipDir
			}
			return nil
		}
		out = append(out, rel)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(out)
	return out
}

func fileLines(t *testing.T, path string) []string {
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

func TestServerCollectionLogs(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv, stop := newLogServer(t, data, crawllog.Config{FlushEvery: time.Hour}, nil,
		testSpec(t, "web", ""), testSpec(t, "news", ""))
	n := dialFakeNode(t, srv.Addr().String(), "node-1", nil)
	n.wait("CONF_ADD", isConfAdd("news"))

	for _, m := range []*cmt.UMLog{
		{Collection: "web", File: cmt.LogFetch, Text: "2026-03-01T11:30:05.123Z 200 512 3ms http://a.test/"},
		{Collection: "web", File: cmt.LogFetch, Text: "2026-03-01T11:30:05.200Z 404 0 1ms http://a.test/x\n"},
		{Collection: "web", File: cmt.LogSite, Text: "2026-03-01T11:30:05.000Z a.test started"},
		{Collection: "web", File: cmt.LogScreened, Text: "2026-03-01T11:30:06.000Z http://b.test/ http://a.test/ exclude_uris\r\n"},
		{Collection: "web", File: cmt.LogSchedule, Text: "line one\nforged line two"},
		{Collection: "news", File: cmt.LogFetch, Text: "2026-03-01T11:30:07.000Z 200 9 1ms http://n.test/"},
	} {
		n.send(m)
	}
	waitLogLines(t, srv, "news", 1)
	counts := collCounts(t, srv)
	if c := counts["web"]; c.LogLines != 5 || c.LogsDropped != 0 {
		t.Errorf("web: %d log lines, %d dropped; want 5, 0", c.LogLines, c.LogsDropped)
	}
	if c := counts["news"]; c.LogLines != 1 || c.LogsDropped != 0 {
		t.Errorf("news: %d log lines, %d dropped; want 1, 0", c.LogLines, c.LogsDropped)
	}
	// Stopping flushes (FlushEvery is an hour).
	stop()

	want := map[string][]string{
		"logs/web/fetch.log": {
			"2026-03-01T11:30:05.123Z 200 512 3ms http://a.test/",
			"2026-03-01T11:30:05.200Z 404 0 1ms http://a.test/x",
		},
		"logs/web/site.log":     {"2026-03-01T11:30:05.000Z a.test started"},
		"logs/web/screened.log": {"2026-03-01T11:30:06.000Z http://b.test/ http://a.test/ exclude_uris"},
		"logs/web/schedule.log": {"line one forged line two"},
		"logs/news/fetch.log":   {"2026-03-01T11:30:07.000Z 200 9 1ms http://n.test/"},
	}
	got := map[string][]string{}
	for _, f := range filesUnder(t, data) {
		got[f] = fileLines(t, filepath.Join(data, f))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("log files (-want +got):\n%s", diff)
	}
	// LogFilePath names the same files.
	for _, f := range []cmt.LogFile{cmt.LogFetch, cmt.LogSite, cmt.LogScreened, cmt.LogSchedule} {
		p, err := LogFilePath(data, "web", f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(data, p)
		if _, ok := want[filepath.ToSlash(rel)]; !ok {
			t.Errorf("LogFilePath(%s) = %s, not a file the server wrote", f, p)
		}
	}
	if d := srv.LogsDropped(); d != 0 {
		t.Errorf("LogsDropped = %d", d)
	}
}

func TestServerCollectionLogRotation(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	const maxBytes, keep, lines = 300, 2, 100
	srv, stop := newLogServer(t, data, crawllog.Config{MaxBytes: maxBytes, Keep: keep}, nil, testSpec(t, "web", ""))
	n := dialFakeNode(t, srv.Addr().String(), "node-1", nil)
	n.wait("CONF_ADD", isConfAdd("web"))
	var sent []string
	for i := range lines {
		line := fmt.Sprintf("2026-03-01T11:30:05.123Z 200 %03d http://a.test/p", i)
		sent = append(sent, line)
		n.send(&cmt.UMLog{Collection: "web", File: cmt.LogFetch, Text: line})
	}
	waitLogLines(t, srv, "web", lines)
	if c := collCounts(t, srv)["web"]; c.LogsDropped != 0 {
		t.Fatalf("web: %d log lines dropped", c.LogsDropped)
	}
	stop()

	base, err := LogFilePath(data, "web", cmt.LogFetch)
	if err != nil {
		t.Fatal(err)
	}
	wantFiles := []string{"logs/web/fetch.log", "logs/web/fetch.log.1", "logs/web/fetch.log.2"}
	if diff := cmp.Diff(wantFiles, filesUnder(t, data)); diff != "" {
		t.Fatalf("files (-want +got):\n%s", diff)
	}
	var kept []string
	for _, p := range []string{base + ".2", base + ".1", base} {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Size() > maxBytes || fi.Size() == 0 {
			t.Errorf("%s: %d bytes, want 1..%d", filepath.Base(p), fi.Size(), maxBytes)
		}
		kept = append(kept, fileLines(t, p)...)
	}
	// What is kept is the newest lines, in order, each whole.
	if len(kept) >= lines || len(kept) < 2*keep {
		t.Fatalf("kept %d of %d lines", len(kept), lines)
	}
	if diff := cmp.Diff(sent[lines-len(kept):], kept); diff != "" {
		t.Errorf("kept lines (-want +got):\n%s", diff)
	}
}

// hangingDisk opens files only once released, as a disk that hangs.
type hangingDisk struct {
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (h *hangingDisk) create(p string) (io.WriteCloser, error) {
	h.once.Do(func() { close(h.entered) })
	<-h.release
	return os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
}

func TestServerCollectionLogHangingDisk(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	disk := &hangingDisk{entered: make(chan struct{}), release: make(chan struct{})}
	released := false
	release := func() {
		if !released {
			released = true
			close(disk.release)
		}
	}
	var logs testenv.Buffer
	const queue, lines = 4, 200
	srv, stop := newLogServer(t, data, crawllog.Config{Queue: queue, FlushEvery: 10 * time.Millisecond, Create: disk.create}, &logs, testSpec(t, "web", ""))
	// Registered after runServer's stop, so it runs first: a failing test
	// does not leave the writer hanging.
	t.Cleanup(release)
	n := dialFakeNode(t, srv.Addr().String(), "node-1", nil)
	n.wait("CONF_ADD", isConfAdd("web"))

	var sent []string
	for i := range lines {
		line := fmt.Sprintf("line %03d", i)
		sent = append(sent, line)
		n.send(&cmt.UMLog{Collection: "web", File: cmt.LogFetch, Text: line})
	}
	select {
	case <-disk.entered:
	case <-time.After(waitTimeout):
		t.Fatal("the log writer never opened a file")
	}
	// The writer hangs in its first open. The event loop still handles
	// every line, answers keep-alives and serves operations.
	waitLogLines(t, srv, "web", lines)
	keepAlive(n)
	if _, err := srv.Nodes(context.Background()); err != nil {
		t.Fatal(err)
	}
	c := collCounts(t, srv)["web"]
	// One line in the writer's hands, the queue full, the rest dropped.
	if c.LogsDropped < lines-queue-1 || c.LogsDropped > lines-queue {
		t.Errorf("dropped %d lines, want %d or %d", c.LogsDropped, lines-queue-1, lines-queue)
	}
	if d := srv.LogsDropped(); d != c.LogsDropped {
		t.Errorf("Server.LogsDropped = %d, the collection's count %d", d, c.LogsDropped)
	}
	if got := strings.Count(logs.String(), "queue full, log lines dropped"); got != 8 {
		// 1, 2, 4, ..., 128 of 195 or 196 drops: 8 warnings.
		t.Errorf("%d warnings about dropped lines, want one per power of two; log:\n%s", got, logs.String())
	}

	// The disk comes back: what was queued is written, in order.
	release()
	stop()
	path, _ := LogFilePath(data, "web", cmt.LogFetch)
	got := fileLines(t, path)
	if uint64(len(got))+c.LogsDropped != lines {
		t.Errorf("%d lines written + %d dropped != %d sent", len(got), c.LogsDropped, lines)
	}
	i := 0
	for _, l := range got {
		for i < len(sent) && sent[i] != l {
			i++
		}
		if i == len(sent) {
			t.Fatalf("written lines are not the sent ones in order: %q", got)
		}
	}
}

func TestLogFilePath(t *testing.T) {
	data := filepath.Join("srv", "data")
	logs := filepath.Join(data, "logs")
	for _, tc := range []struct {
		coll string
		file cmt.LogFile
		want string // relative to data/logs; empty: an error
	}{
		{"web", cmt.LogFetch, "web/fetch.log"},
		{"web", cmt.LogSite, "web/site.log"},
		{"web", cmt.LogScreened, "web/screened.log"},
		{"web", cmt.LogSchedule, "web/schedule.log"},
		{"../etc", cmt.LogFetch, "..%2Fetc/fetch.log"},
		{"../../../../tmp/x", cmt.LogSite, "..%2F..%2F..%2F..%2Ftmp%2Fx/site.log"},
		{"/abs", cmt.LogFetch, "%2Fabs/fetch.log"},
		{`a\..\b`, cmt.LogFetch, `a%5C..%5Cb/fetch.log`},
		{"nul\x00", cmt.LogFetch, "nul%00/fetch.log"},
		{"..", cmt.LogFetch, ""},
		{".", cmt.LogFetch, ""},
		{"", cmt.LogFetch, ""},
		{"web", "../x", ""},
		{"web", "fetch.log", ""},
		{"web", "", ""},
	} {
		t.Run(fmt.Sprintf("%q/%q", tc.coll, tc.file), func(t *testing.T) {
			got, err := LogFilePath(data, tc.coll, tc.file)
			if tc.want == "" {
				if err == nil {
					t.Fatalf("LogFilePath = %q, want an error", got)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if want := filepath.Join(logs, filepath.FromSlash(tc.want)); got != want {
				t.Errorf("LogFilePath = %q, want %q", got, want)
			}
			// Exactly one directory below data/logs.
			if filepath.Dir(filepath.Dir(got)) != logs {
				t.Errorf("%q is not in a collection directory of %q", got, logs)
			}
		})
	}
}

func TestServerCollectionLogHostileNames(t *testing.T) {
	dir := t.TempDir()
	data := filepath.Join(dir, "data")
	srv, stop := newLogServer(t, data, crawllog.Config{}, nil,
		testSpec(t, "../escape", ""), testSpec(t, "..", ""), testSpec(t, "a/b", ""), testSpec(t, "web", ""))
	n := dialFakeNode(t, srv.Addr().String(), "node-1", nil)
	n.wait("CONF_ADD", isConfAdd("web"))
	for _, m := range []*cmt.UMLog{
		{Collection: "../escape", File: cmt.LogFetch, Text: "escape"},
		{Collection: "..", File: cmt.LogSite, Text: "dot dot"},
		{Collection: "a/b", File: cmt.LogSchedule, Text: "slash"},
		{Collection: "web", File: "../../x", Text: "bad file"},
		{Collection: "web", File: "/etc/passwd", Text: "bad file"},
		{Collection: "../../../x", File: cmt.LogFetch, Text: "unknown collection"},
		{Collection: "web", File: cmt.LogFetch, Text: "fine"},
	} {
		n.send(m)
	}
	waitLogLines(t, srv, "web", 1) // the last message
	counts := collCounts(t, srv)
	want := map[string][2]uint64{"../escape": {1, 0}, "..": {1, 1}, "a/b": {1, 0}, "web": {1, 0}}
	for name, w := range want {
		if c := counts[name]; c.LogLines != w[0] || c.LogsDropped != w[1] {
			t.Errorf("%s: %d lines, %d dropped; want %d, %d", name, c.LogLines, c.LogsDropped, w[0], w[1])
		}
	}
	if d := srv.LogsDropped(); d != 1 {
		t.Errorf("LogsDropped = %d, want 1", d)
	}
	stop()
	// Nothing outside data/logs/<one directory>/; the test directory
	// holds only data.
	wantFiles := []string{"data/logs/..%2Fescape/fetch.log", "data/logs/a%2Fb/schedule.log", "data/logs/web/fetch.log"}
	if diff := cmp.Diff(wantFiles, filesUnder(t, dir)); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for _, f := range wantFiles {
		if got := fileLines(t, filepath.Join(dir, f)); len(got) != 1 {
			t.Errorf("%s holds %q", f, got)
		}
	}
}
