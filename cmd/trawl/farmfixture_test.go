package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
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
	return newFarmFixtureConfig(t, webfarm.DefaultConfig(seed, hosts, pages))
}

// newFarmFixtureConfig is newFarmFixture with the farm configured by fc
// (on any free port).
func newFarmFixtureConfig(t *testing.T, fc webfarm.Config) *farmFixture {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
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
		if r.URL.Path == "/host" {
			json.NewEncoder(w).Encode(hostLog(farm.Requests(), r.URL.Query().Get("host")))
			return
		}
		u := r.URL.Query().Get("url")
		if r.URL.Path == "/remote" { // the client addresses that requested url
			remotes := []string{}
			for _, req := range farm.Requests() {
				if ip, _, err := net.SplitHostPort(req.Remote); err == nil && req.URL == u && !slices.Contains(remotes, ip) {
					remotes = append(remotes, ip)
				}
			}
			json.NewEncoder(w).Encode(remotes)
			return
		}
		n := 0
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

// hostRequests is what the farm saw of one host: the number of requests,
// the client IP addresses they came from, and the URLs answered 200 but
// robots.txt (in the order first seen).
type hostRequests struct {
	Count   int      `json:"count"`
	Remotes []string `json:"remotes"`
	OK      []string `json:"ok"`
}

func hostLog(reqs []webfarm.Request, host string) hostRequests {
	out := hostRequests{Remotes: []string{}, OK: []string{}}
	seenIP, seenOK := map[string]bool{}, map[string]bool{}
	for _, req := range reqs {
		if req.Host != host {
			continue
		}
		out.Count++
		ip, _, err := net.SplitHostPort(req.Remote)
		if err != nil {
			ip = req.Remote
		}
		if !seenIP[ip] {
			seenIP[ip] = true
			out.Remotes = append(out.Remotes, ip)
		}
		if req.Status == http.StatusOK && !strings.HasSuffix(req.URL, "/robots.txt") && !seenOK[req.URL] {
			seenOK[req.URL] = true
			out.OK = append(out.OK, req.URL)
		}
	}
	return out
}

// writeXML writes the farm's default crawl as collection name and returns
// the file's path.
func (f *farmFixture) writeXML(t *testing.T, name string) string {
	t.Helper()
	return f.writeXMLOpts(t, webfarm.XMLOptions{Collection: name, FetchTimeout: 10})
}

// writeXMLOpts writes the farm's default crawl with opt as collection
// opt.Collection and returns the file's path.
func (f *farmFixture) writeXMLOpts(t *testing.T, opt webfarm.XMLOptions) string {
	t.Helper()
	name := opt.Collection
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, f.farm.DefaultCrawl(), opt); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(f.dir, name+".xml")
	if err := os.WriteFile(p, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}
