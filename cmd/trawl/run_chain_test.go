package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
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
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- runMain(ctx, &cmdEnv{stdin: strings.NewReader(""), stdout: &out, stderr: &errb},
			[]string{"run", "--demo", "--serve", "--listen", "127.0.0.1:0", "--data", data, "--demo-hosts", "4", "--demo-pages", "30", "--progress", "off"})
	}()
	re := regexp.MustCompile(`status page  http://(\S+)/status`)
	var host string
	for deadline := time.Now().Add(2 * time.Minute); host == ""; {
		select {
		case code := <-done:
			t.Fatalf("trawl run ended (exit %d) before serving:\n%s\n%s", code, out.String(), errb.String())
		default:
		}
		if m := re.FindStringSubmatch(out.String()); m != nil {
			host = m[1]
		} else if time.Now().After(deadline) {
			t.Fatalf("no summary after 2 minutes:\n%s\n%s", out.String(), errb.String())
		} else {
			time.Sleep(20 * time.Millisecond)
		}
	}
	get := func(path string) string {
		t.Helper()
		resp, err := http.Get("http://" + host + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s: %s", path, resp.Status, b)
		}
		return string(b)
	}
	var rep admin.StatusReport
	if err := json.Unmarshal([]byte(get("/status.json")), &rep); err != nil {
		t.Fatal(err)
	}
	c := rep.Chain
	if c == nil || !c.InProcess || c.MasterID != 0 || len(c.Distributors) != 1 || len(c.Indexers) != 1 || c.Error != "" {
		t.Fatalf("status.json chain: %+v", c)
	}
	if d := c.Distributors[0]; !d.Master || d.Addr != c.Master || d.Sessions != 1 || d.Operations != 0 || d.Error != "" {
		t.Errorf("distributor: %+v (master %s)", d, c.Master)
	}
	docs := c.Indexers[0].Documents
	if page := get("/status"); !strings.Contains(page, "Feeding chain") || !strings.Contains(page, `"master_id":0`) {
		t.Errorf("the status page has no feeding chain section")
	}
	metrics := get("/metrics")
	for _, want := range []string{`trawl_chain_master{node_id="0"} 1`, `trawl_chain_sessions{node_id="0"} 1`,
		`trawl_chain_operations_in_flight{node_id="0"} 0`, `trawl_chain_indexer_documents{partition="0"} ` + strconv.FormatInt(docs, 10), "trawl_chain_up 1"} {
		if !strings.Contains(metrics, want+"\n") {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	code, adm, admErr := runTrawl(t, "", "admin", "-C", host, "chain")
	if code != 0 || !regexp.MustCompile(`(?m)^nameserver 127\.0\.0\.1:\d+ \(in process\) master distributor 0 at 127\.0\.0\.1:\d+\n`+
		`distributor 0 127\.0\.0\.1:\d+ master sessions 1 operations-in-flight 0\n`+
		`indexer 0 127\.0\.0\.1:\d+ documents `+strconv.FormatInt(docs, 10)+`\n$`).MatchString(adm) {
		t.Errorf("trawl admin chain: exit %d\n%s%s", code, adm, admErr)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Fatalf("trawl run: exit %d\n%s", code, errb.String())
	}
	want, _, _ := indexableDocs(t, data, demoFarm(t, data, 4, 30))
	if int(docs) != len(want) {
		t.Errorf("the status page counts %d documents in the indexer; the crawl store has %d indexable ones", docs, len(want))
	}
	checkRunIndex(t, data, want)
}
