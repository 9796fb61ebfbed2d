package clustertest

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// clusterSites are small sites, each on its own loopback address
// (127.3.0.x): "/" links to /a.html and /b.html. Every request is logged
// with the host name asked for and the client's address.
type clusterSites struct {
	mu    sync.Mutex
	hosts map[string]string // name -> name:port
	ips   map[string]string // name -> IP
	log   []siteReq
}

type siteReq struct{ host, path, ip string }

func startClusterSites(t *testing.T, names []string) *clusterSites {
	t.Helper()
	s := &clusterSites{hosts: map[string]string{}, ips: map[string]string{}}
	for i, name := range names {
		ip := "127.3.0." + strconv.Itoa(i+1)
		ln, err := net.Listen("tcp", ip+":0")
		if err != nil {
			t.Fatalf("site listener: %v", err)
		}
		_, port, _ := net.SplitHostPort(ln.Addr().String())
		s.hosts[name], s.ips[name] = name+":"+port, ip
		name := name
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			remote, _, _ := net.SplitHostPort(r.RemoteAddr)
			s.mu.Lock()
			s.log = append(s.log, siteReq{host: name, path: r.URL.Path, ip: remote})
			s.mu.Unlock()
			switch r.URL.Path {
			case "/":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><head><title>%s</title></head><body><p>Home of %s.</p><a href=\"/a.html\">a</a> <a href=\"/b.html\">b</a></body></html>\n", name, name)
			case "/a.html", "/b.html":
				w.Header().Set("Content-Type", "text/html")
				fmt.Fprintf(w, "<html><head><title>%s%s</title></head><body><p>Page %s of %s.</p></body></html>\n", name, r.URL.Path, r.URL.Path, name)
			default:
				http.NotFound(w, r)
			}
		})}
		go srv.Serve(ln)
		t.Cleanup(func() { srv.Close() })
	}
	return s
}

func (s *clusterSites) requests() []siteReq {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]siteReq(nil), s.log...)
}

// complete reports whether every site's three pages were asked for.
func (s *clusterSites) complete() bool {
	got := map[string]bool{}
	for _, r := range s.requests() {
		got[r.host+r.path] = true
	}
	for name := range s.hosts {
		for _, p := range []string{"/", "/a.html", "/b.html"} {
			if !got[name+p] {
				return false
			}
		}
	}
	return true
}

// fetchers maps each site to the sorted client addresses it was crawled
// from.
func (s *clusterSites) fetchers() map[string][]string {
	set := map[string]map[string]bool{}
	for _, r := range s.requests() {
		if set[r.host] == nil {
			set[r.host] = map[string]bool{}
		}
		set[r.host][r.ip] = true
	}
	out := map[string][]string{}
	for h, ips := range set {
		for ip := range ips {
			out[h] = append(out[h], ip)
		}
		sort.Strings(out[h])
	}
	return out
}

// TestSiteClusters crawls 18 sites with a multinode scheduler and three
// node schedulers, each a trawl process fetching from its own source
// address: sites alpha0-5 and beta0-5 form the site_clusters groups alpha
// and beta, sites free0-5 none. With the groups every site of a group is
// crawled by one node scheduler (all its requests come from one address,
// the same for the whole group), and the free sites are spread over more
// than one node scheduler. Without the section, the same alpha sites are
// spread over more than one node scheduler: the grouping is the section's
// doing.
func TestSiteClusters(t *testing.T) {
	var alpha, beta, free, names []string
	for i := 0; i < 6; i++ {
		alpha = append(alpha, fmt.Sprintf("alpha%d.clus.test", i))
		beta = append(beta, fmt.Sprintf("beta%d.clus.test", i))
		free = append(free, fmt.Sprintf("free%d.clus.test", i))
	}
	names = append(append(append(names, alpha...), beta...), free...)
	members := func(hosts []string) string {
		var b strings.Builder
		for _, h := range hosts {
			fmt.Fprintf(&b, "<member> %s </member>", h)
		}
		return b.String()
	}
	for _, tt := range []struct {
		name     string
		clusters bool
	}{{"site_clusters", true}, {"no site_clusters", false}} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			sites := startClusterSites(t, names)
			var starts, hostsFile strings.Builder
			for _, n := range names {
				fmt.Fprintf(&starts, "<member> http://%s/ </member>", sites.hosts[n])
				fmt.Fprintf(&hostsFile, "%s %s\n", sites.ips[n], n)
			}
			section := ""
			if tt.clusters {
				section = fmt.Sprintf(`    <section name="site_clusters">
      <attrib name="alpha" type="list-string">%s</attrib>
      <attrib name="beta" type="list-string">%s</attrib>
    </section>`, members(alpha), members(beta))
			}
			xml := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="clus">
    <attrib name="start_uris" type="list-string">%s</attrib>
    <attrib name="delay" type="real"> 0.01 </attrib>
    <attrib name="fetch_timeout" type="integer"> 10 </attrib>
    <section name="include_domains"><attrib name="suffix" type="list-string"><member> .clus.test </member></attrib></section>
%s
  </DomainSpecification>
</CrawlerConfig>
`, starts.String(), section)
			xmlPath, hostsPath := filepath.Join(dir, "crawl.xml"), filepath.Join(dir, "hosts")
			if err := os.WriteFile(xmlPath, []byte(xml), 0o644); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(hostsPath, []byte(hostsFile.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			mnsAddr := freeAddr(t)
			mns := startProc(t, "multinode", "multinode", "--listen", mnsAddr, "--data", filepath.Join(dir, "mns"), "--config", xmlPath,
				"--hosts-file", hostsPath, "--wait-nodes", "3", "--wait-nodes-timeout", "60s", "--admin-listen", "off")
			mns.waitLine(regexp.MustCompile(`listening for node schedulers`), 0, 30*time.Second)
			nodeOf := map[string]string{} // source IP -> node id
			var nodes []*proc
			for i := 0; i < 3; i++ {
				id, ip := "n"+strconv.Itoa(i), "127.0.0."+strconv.Itoa(11+i)
				nodeOf[ip] = id
				nodes = append(nodes, startProc(t, "node "+id, "node", "--id", id, "--multinode", mnsAddr, "--data", filepath.Join(dir, id),
					"--source-ip", ip, "--workers", "8", "--listen", "off"))
			}
			deadline := time.Now().Add(120 * time.Second)
			for !sites.complete() {
				if time.Now().After(deadline) {
					t.Fatalf("crawl not complete after 120 s: fetched by %v", sites.fetchers())
				}
				time.Sleep(100 * time.Millisecond)
			}
			for _, p := range nodes {
				p.stop()
			}
			mns.stop()
			by := sites.fetchers()
			nodesOf := func(hosts []string) map[string]bool {
				set := map[string]bool{}
				for _, h := range hosts {
					if len(by[h]) != 1 {
						t.Errorf("%s crawled from %v, want one node scheduler", h, by[h])
					}
					for _, ip := range by[h] {
						set[nodeOf[ip]] = true
					}
				}
				return set
			}
			a, b, f := nodesOf(alpha), nodesOf(beta), nodesOf(free)
			t.Logf("alpha on %v, beta on %v, free on %v", a, b, f)
			if len(f) < 2 {
				t.Errorf("the free sites were all crawled by %v: routing does not spread sites", f)
			}
			if !tt.clusters {
				if len(a) < 2 {
					t.Errorf("without site_clusters the alpha sites were all crawled by %v: the test proves nothing", a)
				}
				return
			}
			if len(a) != 1 || len(b) != 1 {
				t.Errorf("a site_clusters group spread over node schedulers: alpha on %v, beta on %v", a, b)
			}
		})
	}
}
