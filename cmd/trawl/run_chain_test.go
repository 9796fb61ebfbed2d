package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/distrib"
	"github.com/trawl/trawl/internal/distrib/indexer"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/testenv"
)

// TestRunChain: trawl run feeds its crawl through the in-process feeding
// chain (a name server, content distributor 0 and one indexer, on ports
// the system chose), and its HTTP interface shows the chain: status.json
// and the status page name distributor 0 as master with its session and
// no operation in flight, /metrics says the same, the indexer's document
// count is the number of indexable documents in the crawl store (and in
// the index under --data afterwards), and trawl admin chain prints it.
func TestRunChain(t *testing.T) {
	data := t.TempDir()
	r := serveRun(t, "--data", data, "--demo-hosts", "4", "--demo-pages", "30")
	rep := r.status()
	c := rep.Chain
	if c == nil || !c.InProcess || c.MasterID != 0 || len(c.Distributors) != 1 || len(c.Indexers) != 1 || c.Error != "" {
		t.Fatalf("status.json chain: %+v", c)
	}
	if d := c.Distributors[0]; !d.Master || d.Addr != c.Master || d.Sessions != 1 || d.Operations != 0 || d.Error != "" {
		t.Errorf("distributor: %+v (master %s)", d, c.Master)
	}
	docs := c.Indexers[0].Documents
	if page := r.get("/status"); !strings.Contains(page, "Feeding chain") || !strings.Contains(page, `"master_id":0`) {
		t.Errorf("the status page has no feeding chain section")
	}
	metrics := r.get("/metrics")
	for _, want := range []string{`trawl_chain_master{node_id="0"} 1`, `trawl_chain_sessions{node_id="0"} 1`,
		`trawl_chain_operations_in_flight{node_id="0"} 0`, `trawl_chain_indexer_documents{partition="0"} ` + strconv.FormatInt(docs, 10), "trawl_chain_up 1"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	code, adm, admErr := runTrawl(t, "", "admin", "-C", r.host, "chain")
	if code != 0 || !regexp.MustCompile(`(?m)^nameserver 127\.0\.0\.1:\d+ \(in process\) master distributor 0 at 127\.0\.0\.1:\d+\n`+
		`distributor 0 127\.0\.0\.1:\d+ master sessions 1 operations-in-flight 0\n`+
		`indexer 0 127\.0\.0\.1:\d+ documents `+strconv.FormatInt(docs, 10)+`\n$`).MatchString(adm) {
		t.Errorf("trawl admin chain: exit %d\n%s%s", code, adm, admErr)
	}
	r.stop()
	want, _, _ := indexableDocs(t, data, demoFarm(t, data, 4, 30))
	if int(docs) != len(want) {
		t.Errorf("the status page counts %d documents in the indexer; the crawl store has %d indexable ones", docs, len(want))
	}
	checkRunIndex(t, data, want)
}

// servedRun is trawl run --demo --serve in this process, its crawl done.
type servedRun struct {
	t        *testing.T
	host     string
	cancel   context.CancelFunc
	done     chan int
	out, err *testenv.Buffer
}

// serveRun runs trawl run --demo --serve --listen 127.0.0.1:0 with args
// and waits for its summary (the crawl complete, the HTTP interface up).
func serveRun(t *testing.T, args ...string) *servedRun {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &servedRun{t: t, cancel: cancel, done: make(chan int, 1), out: &testenv.Buffer{}, err: &testenv.Buffer{}}
	go func() {
		r.done <- runMain(ctx, &cmdEnv{stdin: strings.NewReader(""), stdout: r.out, stderr: r.err},
			append([]string{"run", "--demo", "--serve", "--listen", "127.0.0.1:0", "--progress", "off"}, args...))
	}()
	t.Cleanup(cancel)
	re := regexp.MustCompile(`status page  http://(\S+)/status`)
	for deadline := time.Now().Add(2 * time.Minute); r.host == ""; {
		select {
		case code := <-r.done:
			t.Fatalf("trawl run ended (exit %d) before serving:\n%s\n%s", code, r.out.String(), r.err.String())
		default:
		}
		if m := re.FindStringSubmatch(r.out.String()); m != nil {
			r.host = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no summary after 2 minutes:\n%s\n%s", r.out.String(), r.err.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	return r
}

func (r *servedRun) get(path string) string {
	r.t.Helper()
	resp, err := http.Get("http://" + r.host + path)
	if err != nil {
		r.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		r.t.Fatalf("GET %s: %s: %s", path, resp.Status, b)
	}
	return string(b)
}

func (r *servedRun) status() *admin.StatusReport {
	r.t.Helper()
	var rep admin.StatusReport
	if err := json.Unmarshal([]byte(r.get("/status.json")), &rep); err != nil {
		r.t.Fatal(err)
	}
	return &rep
}

// stop stops trawl run (as Ctrl-C would) and checks that it exited 0.
func (r *servedRun) stop() {
	r.t.Helper()
	r.cancel()
	if code := <-r.done; code != 0 {
		r.t.Fatalf("trawl run: exit %d\n%s", code, r.err.String())
	}
}

// TestRunNameserverSearch: trawl run --nameserver feeds an external chain
// (a name server, distributor 1 and two indexer partitions, each its own
// process); its status page shows that chain (distributor 1 master, the
// partitions' document counts adding up to the crawl store's indexable
// documents), and its search page, its JSON API and trawl search
// --nameserver query both partitions and merge them: the total is the sum
// of the partitions' totals and the hits come from both; both apply the
// click relevance of the data directory.
func TestRunNameserverSearch(t *testing.T) {
	c := newDistribChain(t, "")
	c.startIndexer(0, 2)
	c.startIndexer(1, 2)
	c.startCD(1)
	c.waitMaster(c.reg(), -1)
	data := t.TempDir()
	r := serveRun(t, "--data", data, "--demo-hosts", "4", "--demo-pages", "30", "--nameserver", c.ns)
	ch := r.status().Chain
	if ch == nil || ch.InProcess || ch.NameServer != c.ns || ch.MasterID != 1 || len(ch.Distributors) != 1 || len(ch.Indexers) != 2 {
		t.Fatalf("status.json chain: %+v", ch)
	}
	docs := ch.Indexers[0].Documents + ch.Indexers[1].Documents

	const q = "important" // a word of many demo pages, scored by its frequency
	var partTotal int64
	for i := range 2 {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		f, err := c.cl.Call(ctx, "127.0.0.1:"+strconv.Itoa(c.ixBase[i]+indexer.PortOffset), indexer.Object, "search", wire.Str(q), wire.Str("demo"), wire.I64(1))
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		partTotal += f.Arg(0).I
	}
	var res index.Results
	if err := json.Unmarshal([]byte(r.get("/api/search?size=100&q="+url.QueryEscape(q))), &res); err != nil {
		t.Fatal(err)
	}
	inPart := [2]int{}
	for _, h := range res.Hits {
		inPart[distrib.Partition(h.URL, 2)]++
	}
	if int64(res.Total) != partTotal || partTotal < 50 || len(res.Hits) != min(100, int(partTotal)) || inPart[0] == 0 || inPart[1] == 0 {
		t.Errorf("API: total %d (partitions %d), %d hits, by partition %v", res.Total, partTotal, len(res.Hits), inPart)
	}
	if page := r.get("/search?q=" + url.QueryEscape(q)); !strings.Contains(page, fmt.Sprintf("Results 1-10 of %d", partTotal)) {
		t.Errorf("the search page does not say Results 1-10 of %d", partTotal)
	}
	code, out, errOut := runTrawl(t, "", "search", "--nameserver", c.ns, "--json", "--size", "5", q)
	if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || int64(res.Total) != partTotal || len(res.Hits) != 5 {
		t.Errorf("trawl search --nameserver: exit %d, %v, total %d\n%s", code, err, res.Total, errOut)
	}
	nameserverClicks(t, r, c.ns, data, q)
	r.stop()
	want, _, _ := indexableDocs(t, data, demoFarm(t, data, 4, 30))
	if docs != int64(len(want)) {
		t.Errorf("the status page counts %d documents in the indexers; the crawl store has %d indexable ones", docs, len(want))
	}
	c.checkExactlyOnce("demo", want)
}

// nameserverClicks: with a click relevance in data in which the fifth hit
// of q was clicked 1,000 times, trawl search --nameserver --data and the
// running crawl's search API (over the indexers) put it first for q, and
// another query's results keep their scores.
func nameserverClicks(t *testing.T, r *servedRun, ns, data, q string) {
	t.Helper()
	search := func(args ...string) index.Results {
		t.Helper()
		var res index.Results
		code, out, errOut := runTrawl(t, "", append([]string{"search", "--nameserver", ns, "--json", "--size", "5"}, args...)...)
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || len(res.Hits) == 0 {
			t.Fatalf("trawl search %v: exit %d, %v\n%s", args, code, err, errOut)
		}
		return res
	}
	before := search("--data", data, q)
	const other = "village"
	otherBefore := search("--data", data, other)
	clicked := before.Hits[4].URL
	rel := clicks.RelevancePath(data)
	if err := os.MkdirAll(filepath.Dir(rel), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(rel, []byte(clicked+" 1000 1000 1 1 "+q+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if got := search("--data", data, q); got.Hits[0].URL != clicked {
		t.Errorf("trawl search --nameserver --data: %s first, want the clicked %s", got.Hits[0].URL, clicked)
	}
	if got := search("--data", data, other); got.Total != otherBefore.Total || got.Hits[0].Score != otherBefore.Hits[0].Score {
		t.Errorf("%s: total %d, first score %v; before the clicks %d, %v", other, got.Total, got.Hits[0].Score, otherBefore.Total, otherBefore.Hits[0].Score)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		var res index.Results
		if err := json.Unmarshal([]byte(r.get("/api/search?size=5&q="+url.QueryEscape(q))), &res); err == nil && len(res.Hits) > 0 && res.Hits[0].URL == clicked {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the running crawl's search API does not put the clicked %s first for %q", clicked, q)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
