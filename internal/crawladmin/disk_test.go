package crawladmin

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/diskspace"
)

// TestDiskStatus: with SetDisk, a paused guard shows in /status.json, on
// the status page ("disk full: paused") and in /metrics
// (trawl_disk_paused 1, the free bytes, the low-water mark, the pauses).
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
	if page := get("/status"); !strings.Contains(page, "disk full: paused") {
		t.Error("the status page has no full-disk banner")
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
