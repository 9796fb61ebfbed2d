package nodesched

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/webfarm"
)

func logLines(t *testing.T, path string) []string {
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

// field returns the i-th space-separated field of a text log line (0 is
// the time).
func field(line string, i int) string {
	f := strings.Fields(line)
	if i < len(f) {
		return f[i]
	}
	return ""
}

func setOf(xs []string) []string {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	out := make([]string, 0, len(m))
	for x := range m {
		out = append(out, x)
	}
	sort.Strings(out)
	return out
}

// TestCrawlLogs crawls the synthetic web with every log of the log section
// on (umlogs off: all of them on the node) and checks each file against
// what the crawl did.
func TestCrawlLogs(t *testing.T) {
	for _, tc := range []struct {
		name, post string
	}{{"postprocess text", "text"}, {"postprocess xml", "xml"}} {
		t.Run(tc.name, func(t *testing.T) {
			farm := startFarm(t, 3, 30)
			logDir := t.TempDir()
			extra := `    <attrib name="umlogs" type="boolean"> no </attrib>
    <section name="log">
      <attrib name="fetch" type="string"> text </attrib>
      <attrib name="postprocess" type="string"> ` + tc.post + ` </attrib>
      <attrib name="header" type="string"> text </attrib>
      <attrib name="screened" type="string"> text </attrib>
      <attrib name="dsfeed" type="string"> text </attrib>
      <attrib name="site" type="string"> text </attrib>
    </section>
`
			r := runCrawlCfg(t, farm, t.TempDir(), farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", Delay: 0.01, FetchTimeout: 8, Extra: extra},
				func(c *Config) { c.LogDir = logDir })
			waitIdle(t, r.d, 90*time.Second)
			var docs []string
			for _, l := range r.rec.logs() {
				if !l.Robots {
					docs = append(docs, l.URI)
				}
			}
			docs = setOf(docs)
			r.stop(t)
			dir := filepath.Join(logDir, "farm")

			// fetch: one line per request, the same URIs as requested.
			fetchLines := logLines(t, filepath.Join(dir, "fetch.log"))
			var fetched []string
			for _, l := range fetchLines {
				if _, err := time.Parse(crawllog.TimeLayout, field(l, 0)); err != nil {
					t.Errorf("fetch line without a time: %q", l)
				}
				if !strings.HasSuffix(field(l, 3), "ms") {
					t.Errorf("fetch line without a duration: %q", l)
				}
				fetched = append(fetched, field(l, 4))
			}
			if len(fetchLines) != len(docs) {
				t.Errorf("%d fetch lines for %d documents requested", len(fetchLines), len(docs))
			}
			if diff := cmp.Diff(docs, setOf(fetched)); diff != "" {
				t.Errorf("fetch log URIs (-requested +logged):\n%s", diff)
			}

			// header: one entry per response, each starting with the URI.
			var headed []string
			for _, l := range logLines(t, filepath.Join(dir, "header.log")) {
				if !strings.HasPrefix(l, "  ") {
					headed = append(headed, field(l, 1))
				}
			}
			if diff := cmp.Diff(docs, setOf(headed)); diff != "" {
				t.Errorf("header log URIs (-requested +logged):\n%s", diff)
			}

			// postprocess: one line per document fetched, with an action.
			var post []string
			for _, l := range logLines(t, filepath.Join(dir, "postprocess.log")) {
				var action, uri string
				if tc.post == "xml" {
					if !strings.HasPrefix(l, `<document time="`) || !strings.HasSuffix(l, "/>") {
						t.Fatalf("not an XML element: %q", l)
					}
					action, uri = xmlAttr(l, "action"), xmlAttr(l, "uri")
				} else {
					action, uri = field(l, 1), field(l, 2)
				}
				switch action {
				case "stored", "modified", "unchanged", "duplicate", "redirect", "error", "excluded", "deleted":
				default:
					t.Errorf("postprocess action %q: %q", action, l)
				}
				post = append(post, uri)
			}
			if diff := cmp.Diff(docs, setOf(post)); diff != "" {
				t.Errorf("postprocess log URIs (-requested +logged):\n%s", diff)
			}

			// screened: the links the farm's exclude_uris rule (calendar
			// pages outside 2024) rejected, never fetched.
			screened := 0
			fetchedSet := map[string]bool{}
			for _, u := range docs {
				fetchedSet[u] = true
			}
			for _, l := range logLines(t, filepath.Join(dir, "screened.log")) {
				uri, reason := field(l, 1), strings.Join(strings.Fields(l)[3:], " ")
				if fetchedSet[uri] {
					t.Errorf("screened URI was fetched: %q", l)
				}
				if strings.HasPrefix(reason, "exclude_uris") {
					screened++
					if !strings.Contains(uri, "/cal/") {
						t.Errorf("exclude_uris rejected %q", uri)
					}
				}
			}
			if screened == 0 {
				t.Error("no link screened by exclude_uris")
			}

			// site: every site that was crawled started and finished.
			started, finished := map[string]bool{}, map[string]bool{}
			for _, l := range logLines(t, filepath.Join(dir, "site.log")) {
				switch field(l, 2) {
				case "started":
					started[field(l, 1)] = true
				case "finished":
					finished[field(l, 1)] = true
				}
			}
			var sites []string
			for _, u := range docs {
				sites = append(sites, u[len("http://"):strings.IndexByte(u[len("http://"):], '/')+len("http://")])
			}
			for _, s := range setOf(sites) {
				if !started[s] || !finished[s] {
					t.Errorf("site %s: started %v, finished %v", s, started[s], finished[s])
				}
			}

			// scheduler (off by default) and dsfeed (no feeding) have no file.
			for _, f := range []string{"schedule.log", "dsfeed.log"} {
				if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
					t.Errorf("%s exists: %v", f, err)
				}
			}
		})
	}
}

func xmlAttr(el, name string) string {
	var v struct {
		Attrs []xml.Attr `xml:",any,attr"`
	}
	if err := xml.Unmarshal([]byte(el), &v); err != nil {
		return ""
	}
	for _, a := range v.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// TestCrawlLogsNone: every log "none" writes no file; with the default
// umlogs (yes) the fetch and site lines go to the multinode scheduler in
// CMD_UM_LOG and postprocess stays on the node.
func TestCrawlLogsNoneAndUMLogs(t *testing.T) {
	t.Run("none", func(t *testing.T) {
		farm := startFarm(t, 2, 10)
		logDir := t.TempDir()
		extra := `    <section name="log">` + "\n"
		for _, k := range []string{"fetch", "postprocess", "header", "screened", "scheduler", "dsfeed", "site"} {
			extra += `      <attrib name="` + k + `" type="string"> none </attrib>` + "\n"
		}
		extra += "    </section>\n"
		r := runCrawlCfg(t, farm, t.TempDir(), farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", Delay: 0.01, FetchTimeout: 8, Extra: extra},
			func(c *Config) { c.LogDir = logDir })
		waitIdle(t, r.d, 90*time.Second)
		r.stop(t)
		ents, _ := os.ReadDir(logDir)
		if len(ents) != 0 {
			t.Errorf("log directory not empty: %v", ents)
		}
		r.mns.mu.Lock()
		defer r.mns.mu.Unlock()
		if len(r.mns.logs) != 0 {
			t.Errorf("%d CMD_UM_LOG sent with every log off", len(r.mns.logs))
		}
	})
	t.Run("umlogs", func(t *testing.T) {
		farm := startFarm(t, 2, 10)
		logDir := t.TempDir()
		r := runCrawlCfg(t, farm, t.TempDir(), farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", Delay: 0.01, FetchTimeout: 8},
			func(c *Config) { c.LogDir = logDir })
		waitIdle(t, r.d, 90*time.Second)
		var docs []string
		for _, l := range r.rec.logs() {
			if !l.Robots {
				docs = append(docs, l.URI)
			}
		}
		docs = setOf(docs)
		// The lines are sent when their step commits; wait for the last.
		deadline := time.Now().Add(60 * time.Second)
		var fetched []string
		sites := 0
		for {
			fetched, sites = nil, 0
			r.mns.mu.Lock()
			for _, x := range r.mns.logs {
				switch x.File {
				case cmt.LogFetch:
					fetched = append(fetched, field(x.Text, 4))
				case cmt.LogSite:
					sites++
				default:
					t.Errorf("CMD_UM_LOG %q not on by default: %q", x.File, x.Text)
				}
			}
			r.mns.mu.Unlock()
			if len(fetched) >= len(docs) || time.Now().After(deadline) {
				break
			}
			time.Sleep(20 * time.Millisecond)
		}
		r.stop(t)
		if diff := cmp.Diff(docs, setOf(fetched)); diff != "" || len(fetched) != len(docs) {
			t.Errorf("fetch lines sent to the multinode scheduler: %d for %d documents (-requested +sent):\n%s", len(fetched), len(docs), diff)
		}
		if sites == 0 {
			t.Error("no site line sent")
		}
		dir := filepath.Join(logDir, "farm")
		if got := len(logLines(t, filepath.Join(dir, "postprocess.log"))); got != len(docs) {
			t.Errorf("%d postprocess lines on the node for %d documents", got, len(docs))
		}
		for _, f := range []string{"fetch.log", "site.log", "header.log", "screened.log"} {
			if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
				t.Errorf("%s written on the node: %v", f, err)
			}
		}
	})
}
