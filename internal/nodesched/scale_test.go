package nodesched

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/cmt/cmtconfig"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
)

// scaleXML crawls slowly on purpose: every site may start a request only
// once an hour, so the URIs the test sends are queued, not fetched.
const scaleXML = `<?xml version="1.0"?>
<CrawlerConfig><DomainSpecification name="scale">
<attrib name="start_uris" type="list-string"><member>http://h00000.scale.test:%d/</member></attrib>
<attrib name="delay" type="real">3600</attrib>
<attrib name="robots" type="boolean">no</attrib>
</DomainSpecification></CrawlerConfig>`

// procStatus reads a kB field of /proc/self/status (0 if absent).
func procStatus(field string) int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, field+":"); ok {
			v, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return v << 10
		}
	}
	return 0
}

// TestHelperScale is the child process of TestScaleMemory: a node scheduler
// connected over TCP to the parent, which feeds it URIs. It prints a SCALE
// line with its memory each time the URIs it queued pass a mark.
func TestHelperScale(t *testing.T) {
	dir, addr := os.Getenv("TRAWL_SCALE_DIR"), os.Getenv("TRAWL_SCALE_MNS")
	if dir == "" {
		return // not a child
	}
	var marks []int64
	for _, s := range strings.Split(os.Getenv("TRAWL_SCALE_MARKS"), ",") {
		n, _ := strconv.ParseInt(s, 10, 64)
		marks = append(marks, n)
	}
	d := New(Config{NodeID: "node1", DataDir: dir, MNS: TCPDialer(addr, "mns", nil), Workers: 8})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = d.Run(ctx) }()
	start := time.Now()
	for len(marks) > 0 {
		st := d.Stats()["scale"]
		if q := st["uris_queued"]; q >= marks[0] {
			runtime.GC()
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			fmt.Printf("SCALE queued=%d rss=%d hwm=%d heapinuse=%d sys=%d secs=%.1f\n", st["queued"], procStatus("VmRSS"), procStatus("VmHWM"),
				ms.HeapInuse, ms.Sys, time.Since(start).Seconds())
			marks = marks[1:]
			continue
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scaleMNS plays the multinode scheduler for TestScaleMemory: it configures
// the collection, answers DNS (every host is 127.0.0.1) and crawl-IP
// requests, routes every host to the node, and sends n URIs over hosts.
func scaleMNS(ctx context.Context, t *testing.T, ln net.Listener, col *config.Collection, n, hosts, port int, sent chan<- error) {
	nc, err := ln.Accept()
	if err != nil {
		sent <- err
		return
	}
	c := cmt.NewConn(nc, cmt.ConnConfig{Name: "mns", SendQueue: 1 << 14})
	go func() { _ = c.Run(ctx) }()
	send := func(m cmt.Message) error { return c.Send(ctx, m, cmt.DefaultPriority(m.Code())) }
	feed := func() error {
		for h := 0; h < hosts; h++ {
			if err := send(&cmt.UMAddRoute{Collection: "scale", NodeID: "node1", Site: fmt.Sprintf("h%05d.scale.test", h), TTL: 86400}); err != nil {
				return err
			}
		}
		for i := 0; i < n; i++ {
			h := i % hosts
			u := fmt.Sprintf("http://h%05d.scale.test:%d/section-%d/page-%08d.html", h, port, (i/hosts)%50, i)
			e := wireEntry(crawlpipe.Link{URI: u, Hops: 1}, "", 1)
			if err := send(&cmt.UMURI{Collection: "scale", Entry: e}); err != nil {
				return err
			}
		}
		return nil
	}
	for fr := range c.Incoming() {
		switch x := fr.Message.(type) {
		case *cmt.UMInit:
			if err := send(&cmt.AdmConfAdd{Collection: "scale", Config: cmt.CrawlConfig{Collections: []cmt.Collection{cmtconfig.CrawlConfig(col)}}}); err != nil {
				sent <- err
				return
			}
			go func() { sent <- feed() }()
		case *cmt.UMKeepalive:
			_ = send(&cmt.UMKeepaliveAck{})
		case *cmt.UMDNSRequest:
			_ = send(&cmt.UMDNSReply{Host: x.Site, Time: time.Now().Unix(), TTL: 86400, Addrs: []cmt.AddrInfo{{Family: 2, SockType: 1, IP: "127.0.0.1"}}})
		case *cmt.UMStartCrawlIP:
			_ = send(&cmt.UMStartCrawlIPReply{Collection: x.Collection, IP: x.IP, Site: x.Site, Allowed: true})
		}
	}
}

type scalePoint struct {
	queued, rss, hwm, heap, sys int64
	secs                        float64
}

// TestScaleMemory feeds a node scheduler (a child process, so that its
// memory is its own) 1,000,000 URIs over 10,000 sites that it queues but,
// with a delay of an hour, does not fetch, and reads its resident memory at
// 100,000 and 1,000,000 queued URIs. Under the race detector it feeds
// 100,000 and checks no bound.
func TestScaleMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the 1,000,000-URI run is skipped")
	}
	n, hosts, marks := 1_000_000, 10_000, []int{100_000, 1_000_000}
	if raceEnabled {
		n, hosts, marks = 100_000, 1000, []int{10_000, 100_000}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html><body>scale</body></html>"))
	}))
	defer srv.Close()
	port := srv.Listener.Addr().(*net.TCPAddr).Port
	cfg, err := config.Parse("scale.xml", []byte(fmt.Sprintf(scaleXML, port)), nil)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	sent := make(chan error, 2)
	go scaleMNS(ctx, t, ln, cfg.Collections[0], n, hosts, port, sent)

	var ms []string
	for _, m := range marks {
		ms = append(ms, strconv.Itoa(m))
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperScale$")
	cmd.Env = append(os.Environ(), "TRAWL_SCALE_DIR="+t.TempDir(), "TRAWL_SCALE_MNS="+ln.Addr().String(), "TRAWL_SCALE_MARKS="+strings.Join(ms, ","))
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}()
	lines := make(chan string)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	var pts []scalePoint
	deadline := time.After(300 * time.Second)
	for len(pts) < len(marks) {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatalf("child ended after %d of %d measurements", len(pts), len(marks))
			}
			if !strings.HasPrefix(l, "SCALE ") {
				continue
			}
			var p scalePoint
			if _, err := fmt.Sscanf(l, "SCALE queued=%d rss=%d hwm=%d heapinuse=%d sys=%d secs=%g", &p.queued, &p.rss, &p.hwm, &p.heap, &p.sys, &p.secs); err != nil {
				t.Fatalf("%q: %v", l, err)
			}
			pts = append(pts, p)
			t.Logf("%d URIs queued after %.1f s: RSS %.1f MiB (peak %.1f MiB), Go heap in use %.1f MiB, Go runtime total %.1f MiB",
				p.queued, p.secs, mib(p.rss), mib(p.hwm), mib(p.heap), mib(p.sys))
		case err := <-sent:
			if err != nil {
				t.Fatalf("feeding URIs: %v", err)
			}
			t.Logf("all %d URIs sent", n)
			sent = nil
		case <-deadline:
			t.Fatalf("only %d of %d measurements after 300 s", len(pts), len(marks))
		}
	}
	if raceEnabled {
		return
	}
	first, last := pts[0], pts[len(pts)-1]
	if last.hwm > 1<<30 {
		t.Errorf("peak RSS %.1f MiB at %d URIs, goal under 1 GiB", mib(last.hwm), last.queued)
	}
	// Ten times the URIs must cost far less than ten times the memory.
	if growth := float64(last.rss) / float64(first.rss); growth > 5 {
		t.Errorf("RSS grew %.1fx for %dx the URIs", growth, last.queued/first.queued)
	}
}

func mib(b int64) float64 { return float64(b) / (1 << 20) }
