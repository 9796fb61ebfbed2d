package crawladmin

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/testenv"
)

// TestDiskStatus: with SetDisk, a paused guard shows in /status.json (which
// the status page's script draws: TestDiskStatusPageChromium) and in
// /metrics (trawl_disk_paused 1, the free bytes, the low-water mark, the
// pauses); trawl_disk_paused goes back to 0 when it resumes.
func TestDiskStatus(t *testing.T) {
	h := NewHTTP(New(&countingEngine{}, nil, Options{}), admin.Auth{})
	st := diskspace.Status{Dir: "/data", Paused: true, Free: 1 << 20, Total: 1 << 30, Low: 8 << 20, High: 16 << 20, Pauses: 2, Known: true}
	h.SetDisk(func() diskspace.Status { return st })
	mux := http.NewServeMux()
	h.Mount(mux)
	get := func(path string) string {
		rec := httptest.NewRecorder()
		mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, rec.Code, rec.Body)
		}
		return rec.Body.String()
	}
	var rep admin.StatusReport
	if err := json.Unmarshal([]byte(get("/status.json")), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Disk == nil || *rep.Disk != st {
		t.Errorf("status.json disk %+v, want %+v", rep.Disk, st)
	}
	if page := get("/status"); !strings.Contains(page, `id="disk-section"`) {
		t.Error("the status page has no full-disk section")
	}
	metrics := get("/metrics")
	for _, line := range []string{"trawl_disk_paused 1", "trawl_disk_free_bytes 1.048576e+06", "trawl_disk_low_water_bytes 8.388608e+06", "trawl_disk_pauses_total 2"} {
		if !strings.Contains(metrics, line+"\n") {
			t.Errorf("/metrics has no %q", line)
		}
	}
	st.Paused = false
	if metrics := get("/metrics"); !strings.Contains(metrics, "trawl_disk_paused 0\n") {
		t.Error("trawl_disk_paused is not 0 once resumed")
	}
}

// TestDiskStatusPageChromium renders the status page of a paused guard in
// headless Chromium: the "disk full: paused" section is shown (not hidden)
// with the free space and the marks.
func TestDiskStatusPageChromium(t *testing.T) {
	browser := testenv.Tool(t, "apt-get install chromium", "chromium", "chromium-browser")
	h := NewHTTP(New(&countingEngine{}, nil, Options{}), admin.Auth{})
	h.SetDisk(func() diskspace.Status {
		return diskspace.Status{Dir: "/data", Paused: true, Free: 3 << 20, Total: 1 << 30, Low: 8 << 20, High: 16 << 20, Known: true}
	})
	mux := http.NewServeMux()
	h.Mount(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, browser, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir="+t.TempDir(), "--virtual-time-budget=2000", "--dump-dom", srv.URL+"/status").Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	i := strings.Index(dom, `id="disk-section"`)
	if i < 0 {
		t.Fatalf("no disk section in the rendered page:\n%s", dom)
	}
	tag := dom[i:]
	tag = tag[:strings.Index(tag, ">")]
	if strings.Contains(tag, "hidden") {
		t.Errorf("the disk section is hidden while paused: <section %s>", tag)
	}
	for _, want := range []string{"disk full: paused", "The free space of /data is 3.0 MB", "low-water mark of 8.0 MB", "back at 16.0 MB"} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered page lacks %q", want)
		}
	}
}
