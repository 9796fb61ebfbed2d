package admin_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
)

// TestURIFilesRefuseNonRegular: a FIFO, a directory or a device inside
// --admin-files is refused before it is opened (opening a FIFO with no
// writer used to block the call forever).
func TestURIFilesRefuseNonRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	os.Mkdir(filepath.Join(dir, "sub"), 0o755)
	os.WriteFile(filepath.Join(dir, "ok.txt"), []byte("# seeds\nhttp://a.example/\n\nhttp://b.example/\n"), 0o644)
	u := admin.URIFiles{Dir: dir}
	for _, name := range []string{"fifo", "sub"} {
		done := make(chan error, 1)
		go func() { _, err := u.Read(filepath.Join(dir, name)); done <- err }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "not a regular file") {
				t.Errorf("%s: %v, want a refusal as not a regular file", name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: Read blocks", name)
		}
	}
	uris, err := u.Read(filepath.Join(dir, "ok.txt"))
	if err != nil || len(uris) != 2 {
		t.Errorf("regular file: %v %v", uris, err)
	}
}

// TestURIFilesOutsideOneMessage: every path outside the directory gets
// the same refusal, whether it exists or not, and whatever it is (a
// symbolic link inside pointing out counts as outside).
func TestURIFilesOutsideOneMessage(t *testing.T) {
	dir := t.TempDir()
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "exists.txt"), []byte("http://a.example/\n"), 0o644)
	os.Symlink("/dev/null", filepath.Join(dir, "devnull"))
	os.Symlink(filepath.Join(other, "exists.txt"), filepath.Join(dir, "link-out"))
	os.Symlink(filepath.Join(other, "missing.txt"), filepath.Join(dir, "link-missing"))
	u := admin.URIFiles{Dir: dir}
	msgs := map[string]bool{}
	for _, p := range []string{filepath.Join(other, "exists.txt"), filepath.Join(other, "missing.txt"), "/etc/passwd",
		"/nonexistent/x", other, "/dev/zero", filepath.Join(dir, "devnull"), filepath.Join(dir, "link-out"),
		filepath.Join(dir, "link-missing"), filepath.Join(dir, "..", filepath.Base(other), "exists.txt")} {
		_, err := u.Read(p)
		if err == nil {
			t.Errorf("%s: read", p)
			continue
		}
		msgs[strings.ReplaceAll(err.Error(), p, "PATH")] = true
	}
	if len(msgs) != 1 {
		t.Errorf("%d different refusals for paths outside, want 1:\n%s", len(msgs), strings.Join(keys(msgs), "\n"))
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestHugeNamesBounded: a 2 MB parameter name sent with CollectionAdd
// (the did-you-mean used to compare it with every known name: 12 s) and a
// 2 MB method name are refused at once, and the fault quotes a bounded
// prefix of them.
func TestHugeNamesBounded(t *testing.T) {
	e := start(t, admin.Standalone)
	size := 2 << 20
	if raceEnabled {
		size = 256 << 10 // the detector slows XML decoding tenfold
	}
	huge := strings.Repeat("n", size)
	xml := `<CrawlerConfig><DomainSpecification name="web"><attrib name="` + huge + `" type="real">1</attrib>` +
		`<section name="` + huge + `"/></DomainSpecification></CrawlerConfig>`
	begin := time.Now()
	_, err := e.client.CollectionAdd(context.Background(), xml, false)
	took := time.Since(begin)
	if err == nil || len(err.Error()) > 4096 || strings.Contains(err.Error(), huge[:200]) {
		t.Errorf("CollectionAdd: %d bytes of error: %.300v", len(err.Error()), err)
	}
	if took > 10*time.Second {
		t.Errorf("CollectionAdd took %v", took)
	}
	_, err = e.client.Call(context.Background(), huge)
	if err == nil || len(err.Error()) > 4096 {
		t.Errorf("unknown method: %.300v", err)
	}
}
