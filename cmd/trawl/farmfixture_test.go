package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/trawl/trawl/internal/webfarm"
)

// farmFixture is a synthetic web for the end-to-end admin tests: the farm,
// its hosts file in a temporary directory, crawl configurations for it, and
// an HTTP endpoint the Python scripts ask how often the farm saw a URL.
type farmFixture struct {
	farm      *webfarm.Farm
	dir       string // temporary directory of the test
	hostsFile string
	// counts answers /?url=U with the number of requests for U, and
	// /total with the number of all requests, as JSON.
	counts *httptest.Server
	// site0 is the first host as host:port.
	site0 string
}

func newFarmFixture(t *testing.T, seed int64, hosts, pages int) *farmFixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	fc := webfarm.DefaultConfig(seed, hosts, pages)
	fc.Port = 0
	farm, err := webfarm.New(fc)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	if err := farm.Start(ctx); err != nil {
		cancel()
		t.Fatal(err)
	}
	t.Cleanup(func() { cancel(); farm.Close() })
	f := &farmFixture{farm: farm, dir: t.TempDir()}
	f.hostsFile = filepath.Join(f.dir, "hosts")
	if err := os.WriteFile(f.hostsFile, farm.HostsFile(), 0o644); err != nil {
		t.Fatal(err)
	}
	f.counts = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := 0
		u := r.URL.Query().Get("url")
		for _, req := range farm.Requests() {
			if r.URL.Path == "/total" || req.URL == u {
				n++
			}
		}
		json.NewEncoder(w).Encode(n)
	}))
	t.Cleanup(f.counts.Close)
	f.site0 = farm.Hosts()[0].Name + ":" + strconv.Itoa(farm.Port())
	return f
}

// writeXML writes the farm's default crawl as collection name and returns
// the file's path.
func (f *farmFixture) writeXML(t *testing.T, name string) string {
	t.Helper()
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, f.farm.DefaultCrawl(), webfarm.XMLOptions{Collection: name, FetchTimeout: 10}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(f.dir, name+".xml")
	if err := os.WriteFile(p, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
