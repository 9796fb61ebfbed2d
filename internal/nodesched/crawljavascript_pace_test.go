package nodesched

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/render"
	"github.com/trawl/trawl/internal/testenv"
)

// jsCollection is a collection "js" with use_javascript, starting at every
// URI of starts, crawling the hosts under .test. The crawl itself never
// fetches .js or .json URIs (exclude_exts): every request for one comes
// from the browser, through the crawl.
func jsCollection(starts []string, extra string) string {
	var members strings.Builder
	for _, s := range starts {
		fmt.Fprintf(&members, "<member> %s </member>", s)
	}
	return optXML(fmt.Sprintf(`  <DomainSpecification name="js">
    <attrib name="start_uris" type="list-string">%s</attrib>
    <attrib name="delay" type="real"> 0.01 </attrib>
    <attrib name="fetch_timeout" type="integer"> 20 </attrib>
    <attrib name="use_javascript" type="boolean"> yes </attrib>
    <attrib name="exclude_exts" type="list-string"><member> .js </member><member> .json </member></attrib>
    <section name="include_domains"><attrib name="suffix" type="list-string"><member> .test </member></attrib></section>
%s
  </DomainSpecification>
`, members.String(), extra))
}

// arrivals is a server's log of requests: path and arrival time.
type arrivals struct {
	mu  sync.Mutex
	log []arrival
}

type arrival struct {
	path string
	at   time.Time
}

func (a *arrivals) add(path string) {
	a.mu.Lock()
	a.log = append(a.log, arrival{path, time.Now()})
	a.mu.Unlock()
}

func (a *arrivals) all() []arrival {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]arrival(nil), a.log...)
}

// TestCrawlJavaScriptDelay renders a page that needs four scripts (asked
// for at once by the browser's preload scanner) and makes a synchronous
// XHR. With javascript_delay 1 every request of the browser reaches the
// site at least 1 s after the previous one (server arrival times, 0.1 s of
// tolerance); without javascript_delay the pace is delay (0.01 s) and the
// scripts arrive well within 1 s of each other.
func TestCrawlJavaScriptDelay(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	deps := []string{"/s/0.js", "/s/1.js", "/s/2.js", "/s/3.js", "/x/0.json"}
	for _, tt := range []struct {
		name  string
		extra string
		paced bool
	}{
		{"javascript_delay=1", `    <attrib name="javascript_delay" type="real"> 1 </attrib>`, true},
		{"no javascript_delay", "", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			log := &arrivals{}
			srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path == "/robots.txt" {
					http.NotFound(w, r)
					return
				}
				log.add(r.URL.Path)
				switch {
				case r.URL.Path == "/":
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><head><title>deps</title>
<script src="/s/0.js"></script><script src="/s/1.js"></script><script src="/s/2.js"></script><script src="/s/3.js"></script>
</head><body><p>home</p>
<script>var x=new XMLHttpRequest();x.open('GET','/x/0.json',false);x.send();
var a=document.createElement('a');a.href=JSON.parse(x.responseText).next;a.textContent='next';document.body.appendChild(a)</script>
</body></html>`)
				case strings.HasPrefix(r.URL.Path, "/s/"):
					w.Header().Set("Content-Type", "application/javascript")
					fmt.Fprintf(w, "window.loaded = (window.loaded || 0) + 1; // %s\n", r.URL.Path)
				case r.URL.Path == "/x/0.json":
					w.Header().Set("Content-Type", "application/json")
					fmt.Fprint(w, `{"next": "/found.html"}`)
				default:
					w.Header().Set("Content-Type", "text/html")
					fmt.Fprint(w, `<html><body>leaf</body></html>`)
				}
			})
			base := fmt.Sprintf("http://jsdelay.test:%d", serveHandler(t, srv))
			counters, logText := auditCrawl(t, jsCollection([]string{base + "/"}, tt.extra), "js", nil)
			if counters["errors_javascript"] != 0 {
				t.Fatalf("rendering failed: %v\n%s", counters, logText)
			}
			var got []arrival
			seen := map[string]int{}
			found := false
			for _, a := range log.all() {
				seen[a.path]++
				if strings.HasPrefix(a.path, "/s/") || strings.HasPrefix(a.path, "/x/") {
					got = append(got, a)
				}
				found = found || a.path == "/found.html"
			}
			if len(got) != len(deps) {
				t.Fatalf("the browser asked for %d dependencies, want each of %v once; requests %v", len(got), deps, seen)
			}
			for _, d := range deps {
				if seen[d] != 1 {
					t.Errorf("%s asked for %d times, want once", d, seen[d])
				}
			}
			if !found {
				t.Errorf("the link written with the XHR's answer was not fetched: requests %v", seen)
			}
			var gaps []time.Duration
			for i := 1; i < len(got); i++ {
				gaps = append(gaps, got[i].at.Sub(got[i-1].at))
			}
			t.Logf("gaps between the browser's requests: %v", gaps)
			for i, g := range gaps {
				if tt.paced && g < 900*time.Millisecond {
					t.Errorf("%s came %v after %s, want at least javascript_delay (1 s)", got[i+1].path, g, got[i].path)
				}
			}
			if !tt.paced {
				// The four scripts are asked for at once by the browser:
				// paced by delay they come far less than 1 s apart.
				for i, g := range gaps[:3] {
					if g >= 900*time.Millisecond {
						t.Errorf("%s came %v after %s, without javascript_delay (pace delay 0.01 s)", got[i+1].path, g, got[i].path)
					}
				}
			}
		})
	}
}

// TestCrawlJavaScriptMaxTabs crawls 10 sites at once, each with a home
// page that needs a script the site holds for 1 s. The crawl has 8
// workers, so up to 8 pages could be rendered at once, but the sites never
// see more than JSMaxTabs requests for the script in flight (the browser's
// tabs, each render waiting for its script), and do see more than one
// (renders run side by side). Every page is rendered: each script-written
// link is fetched.
func TestCrawlJavaScriptMaxTabs(t *testing.T) {
	if _, err := render.FindBrowser(); err != nil {
		testenv.Missing(t, "chromium is not installed on this machine (test.sh installs Debian's chromium)")
	}
	const sites = 10
	var (
		mu            sync.Mutex
		inFlight, max int
		holds         int
		found         = map[string]bool{}
	)
	srv := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/":
			w.Header().Set("Content-Type", "text/html")
			// Each home page its own text: a duplicate's links are not
			// followed.
			fmt.Fprintf(w, `<html><head><title>tab</title><script src="/hold.js"></script></head><body><p>held on %s</p></body></html>`, r.Host)
		case "/hold.js":
			mu.Lock()
			inFlight++
			holds++
			if inFlight > max {
				max = inFlight
			}
			mu.Unlock()
			t := time.NewTimer(time.Second)
			select {
			case <-t.C:
			case <-r.Context().Done():
			}
			t.Stop()
			mu.Lock()
			inFlight--
			mu.Unlock()
			w.Header().Set("Content-Type", "application/javascript")
			fmt.Fprint(w, `document.addEventListener('DOMContentLoaded', function(){var a=document.createElement('a');a.href='/written.html';a.textContent='w';document.body.appendChild(a)})`)
		case "/written.html":
			mu.Lock()
			found[r.Host] = true
			mu.Unlock()
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprintf(w, `<html><body>written on %s</body></html>`, r.Host)
		default:
			http.NotFound(w, r)
		}
	})
	port := serveHandler(t, srv)
	var starts []string
	for i := 0; i < sites; i++ {
		starts = append(starts, fmt.Sprintf("http://tab%d.test:%d/", i, port))
	}
	counters, logText := auditCrawl(t, jsCollection(starts, ""), "js", nil)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("at most %d scripts in flight, %d asked for; counters %v", max, holds, counters)
	if counters["errors_javascript"] != 0 {
		t.Errorf("rendering failed: %v\n%s", counters, logText)
	}
	if holds != sites {
		t.Errorf("the script was asked for %d times, want once per site (%d)", holds, sites)
	}
	if max > crawlpipe.JSMaxTabs {
		t.Errorf("%d renders waited for their script at once, more than JSMaxTabs (%d)", max, crawlpipe.JSMaxTabs)
	}
	if max < 2 {
		t.Errorf("at most %d render at a time: the renders never ran side by side", max)
	}
	if len(found) != sites {
		t.Errorf("script-written links fetched on %d sites, want %d: %v", len(found), sites, found)
	}
}
