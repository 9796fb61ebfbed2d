package farmcli

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/webfarm"
)

func runWebfarmCmd(ctx context.Context, args ...string) (int, string, string) {
	return clitest.Run(ctx, []cli.Command{Command()}, "", append([]string{"webfarm"}, args...)...)
}

func TestWebfarmUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"--help"}, 0, "-hosts-file"},
		{[]string{"--bogus"}, 2, "flag provided but not defined"},
		{[]string{"--hosts", "0", "--expect"}, 2, "--hosts must be at least 1"},
		{[]string{"--port", "0", "--expect"}, 1, "needs a fixed --port"},
		{[]string{"--features", "nonsense", "--expect"}, 1, "unknown feature"},
		{[]string{"extra"}, 2, "unexpected argument"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runWebfarmCmd(context.Background(), tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) {
				t.Errorf("exit %d, want %d; stderr %q lacks %q", code, tc.code, stderr, tc.want)
			}
		})
	}
}

func TestWebfarmExpect(t *testing.T) {
	code, out, stderr := runWebfarmCmd(context.Background(), "--hosts", "12", "--pages", "240", "--seed", "9", "--port", "8081", "--expect")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	f, err := webfarm.New(func() webfarm.Config {
		c := webfarm.DefaultConfig(9, 12, 20)
		c.Port = 8081
		return c
	}())
	if err != nil {
		t.Fatal(err)
	}
	want, err := f.Expect(f.DefaultCrawl())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, strings.Fields(out)); diff != "" {
		t.Errorf("--expect differs from webfarm.Expect (-want +got):\n%s", diff)
	}
}

func TestWebfarmServe(t *testing.T) {
	dir := t.TempDir()
	hostsFile, confFile, logFile := filepath.Join(dir, "hosts"), filepath.Join(dir, "crawl.xml"), filepath.Join(dir, "log.jsonl")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	type result struct {
		code           int
		stdout, stderr string
	}
	done := make(chan result, 1)
	go func() {
		code, out, errs := runWebfarmCmd(ctx, "--hosts", "5", "--pages", "50", "--port", "0",
			"--hosts-file", hostsFile, "--write-config", confFile, "--log", logFile, "--delay", "0.25")
		done <- result{code, out, errs}
	}()
	deadline := time.Now().Add(20 * time.Second)
	var conf []byte
	for {
		b, err := os.ReadFile(confFile)
		if err == nil && bytes.Contains(b, []byte("</CrawlerConfig>")) {
			conf = b
			break
		}
		select {
		case r := <-done:
			t.Fatalf("webfarm exited early: %d %s", r.code, r.stderr)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatal("crawl configuration never written")
		}
		time.Sleep(20 * time.Millisecond) // polling for the file, with a deadline
	}
	for _, want := range []string{`<DomainSpecification name="webfarm">`, `<attrib name="delay" type="real"> 0.25 </attrib>`,
		`<section name="crawlmode">`, `<section name="link_extraction">`, `.farm.test`} {
		if !bytes.Contains(conf, []byte(want)) {
			t.Errorf("configuration lacks %s", want)
		}
	}
	start := regexp.MustCompile(`<member> (http://site0000[^ ]+) </member>`).FindSubmatch(conf)
	if start == nil {
		t.Fatalf("no start URI in\n%s", conf)
	}
	names, err := webfarm.ReadHostsFile(hostsFile)
	if err != nil || len(names) != 5 {
		t.Fatalf("hosts file: %v %v", names, err)
	}
	client := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		if a, ok := names[host]; ok {
			addr = net.JoinHostPort(a.String(), port)
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}, Timeout: 10 * time.Second}
	resp, err := client.Get(string(start[1]))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("start URI: status %d", resp.StatusCode)
	}
	cancel()
	var r result
	select {
	case r = <-done:
	case <-time.After(20 * time.Second):
		t.Fatal("webfarm did not stop")
	}
	if r.code != 0 || !strings.Contains(r.stderr, "stopped after 1 requests") {
		t.Errorf("exit %d, stderr %q", r.code, r.stderr)
	}
	logData, err := os.ReadFile(logFile)
	if err != nil {
		t.Fatal(err)
	}
	var entry webfarm.Request
	if err := json.Unmarshal(bytes.TrimSpace(logData), &entry); err != nil || entry.URL != string(start[1]) || entry.Status != 200 {
		t.Errorf("log %q: %+v %v", logData, entry, err)
	}
}
