package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdpfetch "github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
	cdppage "github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// farmProxy is a forward HTTP proxy on loopback that reaches the farm's
// host names at their 127.x addresses (wget resolves through the system,
// which does not know them).
func farmProxy(t *testing.T, farm *webfarm.Farm) string {
	t.Helper()
	addrs := map[string]string{}
	for _, h := range farm.Hosts() {
		addrs[strings.ToLower(h.Name)] = h.Addr.String()
	}
	d := &net.Dialer{Timeout: 5 * time.Second}
	tr := &http.Transport{
		DisableCompression: true,
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			ip, ok := addrs[strings.ToLower(host)]
			if !ok {
				return nil, fmt.Errorf("proxy: %s is not a farm host", host)
			}
			return d.DialContext(ctx, network, net.JoinHostPort(ip, port))
		},
	}
	t.Cleanup(tr.CloseIdleConnections)
	rp := &httputil.ReverseProxy{Rewrite: func(r *httputil.ProxyRequest) { r.Out.URL = r.In.URL; r.Out.Host = r.In.Host }, Transport: tr}
	srv := httptest.NewServer(rp)
	t.Cleanup(srv.Close)
	return srv.URL
}

// checkWgetPeer fetches the URLs trawl archived whole with a 200 through
// wget --warc-file (a peer WARC writer) and compares the payload digests by
// URL. (A response trawl refused, e.g. a type allowed_types leaves out, is
// archived with WARC-Truncated and no body: not compared.)
func checkWgetPeer(t *testing.T, warcio string, farm *webfarm.Farm, crawl []warcRecord) {
	wget := needTool(t, "wget", "apt-get install wget; test.sh does")
	dir := t.TempDir()
	want := map[string]string{}
	var list strings.Builder
	for _, r := range crawl {
		if r.Type == "response" && r.Status == "200" && r.Truncated == "" {
			want[r.URI] = r.Payload
			list.WriteString(r.URI + "\n")
		}
	}
	urls := filepath.Join(dir, "urls.txt")
	if err := os.WriteFile(urls, []byte(list.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(wget, "--no-verbose", "--tries=1", "--timeout=10", "--no-config", "-e", "use_proxy=on",
		"-e", "http_proxy="+farmProxy(t, farm), "--warc-file="+filepath.Join(dir, "wget"), "--no-warc-keep-log",
		"--delete-after", "--max-redirect=0", "-i", urls)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Logf("wget: %v\n%.2000s", err, out) // 404s make wget exit 8; the records are what counts
	}
	recs := warcioIndex(t, warcio, dir)
	same, compared := 0, 0
	for _, r := range recs {
		if r.Type != "response" || r.Status != "200" {
			continue
		}
		w, ok := want[r.URI]
		if !ok {
			continue
		}
		compared++
		if w == r.Payload {
			same++
		} else {
			t.Errorf("%s: trawl's payload %s, wget's %s", r.URI, w, r.Payload)
		}
	}
	t.Logf("wget: %d of %d payloads equal", same, compared)
	if compared != len(want) {
		t.Errorf("wget archived %d of the %d URLs trawl archived with a 200", compared, len(want))
	}
}

// checkPywbPeer loads trawl's WARC files into pywb (wb-manager init/add),
// runs its wayback server on loopback and opens a replayed page in
// headless Chromium: the HTML pywb replays (id_, unmodified) is byte for
// byte the page the farm serves, and the browser shows its title.
func checkPywbPeer(t *testing.T, farm *webfarm.Farm, warcDir string, crawl []warcRecord) {
	// pywb and Chromium together miss the 90 s bound when another test
	// package loads the machine (go test runs two at once), so this check
	// runs in test.sh's sequential part, alone: TRAWL_PYWB=1 there.
	if os.Getenv("TRAWL_PYWB") != "1" {
		t.Skip("the pywb replay runs alone in test.sh's sequential part (TRAWL_PYWB=1)")
	}
	wbManager := needTool(t, "wb-manager", "python3 -m pip install pywb; test.sh does")
	wayback := needTool(t, "wayback", "python3 -m pip install pywb; test.sh does")
	bin := testenv.Tool(t, "apt-get install chromium; test.sh does", "chromium", "chromium-browser", "google-chrome")
	dir := t.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(args[0], args[1:]...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	run(wbManager, "init", "trawl")
	files, _ := filepath.Glob(filepath.Join(warcDir, "*.warc.gz"))
	run(append([]string{wbManager, "add", "trawl"}, files...)...)

	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	wb := exec.Command(wayback, "--bind", "127.0.0.1", "-p", fmt.Sprint(port))
	wb.Dir = dir
	var wbOut strings.Builder
	wb.Stdout, wb.Stderr = &wbOut, &wbOut
	if err := wb.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { wb.Process.Kill(); wb.Wait() }()

	// A page trawl archived whole with a 200; the farm's page 3 of a
	// topic if there is one, since it has every kind of subresource
	// (scripts, style sheets, frames, objects, images), some of them
	// archived truncated.
	page := ""
	for _, r := range crawl {
		if r.Type == "response" && r.Status == "200" && r.Truncated == "" && strings.HasSuffix(r.URI, ".html") {
			if page == "" || strings.HasSuffix(r.URI, "/3.html") && !strings.HasSuffix(page, "/3.html") {
				page = r.URI
			}
		}
	}
	if page == "" {
		t.Fatal("no HTML page with a 200 in trawl's WARC")
	}
	replay := fmt.Sprintf("http://127.0.0.1:%d/trawl/2030id_/%s", port, page)
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(replay)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("pywb did not replay %s: %v\n%s", replay, err, wbOut.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The farm's own bytes for the page.
	original := farmGet(t, farm, page)

	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(bin), chromedp.NoSandbox,
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.UserDataDir(filepath.Join(dir, "profile")),
		// The replayed page (id_: not rewritten) names the farm's hosts in
		// its links and resources: no name but loopback resolves, so the
		// browser neither waits on DNS nor leaves this machine.
		chromedp.Flag("host-resolver-rules", "MAP * ~NOTFOUND , EXCLUDE 127.0.0.1"))
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	// Only the page itself is loaded. In id_ mode pywb replays a record
	// as archived, and trawl archives a response whose body it did not
	// read (a type the collection does not take: the farm's scripts and
	// style sheets) with its header and WARC-Truncated: length; pywb
	// then sends that header's Content-Length and no body, and the
	// browser waits for the body of a parser-blocking script forever.
	// (pywb's rewriting replay sends such a record chunked, complete.)
	chromedp.ListenTarget(bctx, func(ev any) {
		if e, ok := ev.(*cdpfetch.EventRequestPaused); ok {
			go func() {
				ectx := cdp.WithExecutor(bctx, chromedp.FromContext(bctx).Target)
				if e.Request.URL == replay {
					_ = cdpfetch.ContinueRequest(e.RequestID).Do(ectx)
				} else {
					_ = cdpfetch.FailRequest(e.RequestID, network.ErrorReasonBlockedByClient).Do(ectx)
				}
			}()
		}
	})
	var html, title string
	err = chromedp.Run(bctx, cdpfetch.Enable(),
		// Navigate without waiting for the load event, which a
		// subresource of the replayed page can hold up; the document
		// itself is what is compared.
		chromedp.ActionFunc(func(ctx context.Context) error {
			_, _, errText, _, err := cdppage.Navigate(replay).Do(ctx)
			if err == nil && errText != "" {
				err = errors.New(errText)
			}
			return err
		}),
		chromedp.WaitReady("body", chromedp.ByQuery),
		chromedp.Title(&title),
		// The document's bytes as the browser received them from pywb.
		chromedp.Evaluate(`fetch(location.href, {cache: "force-cache"}).then(r => r.text())`, &html, func(p *runtime.EvaluateParams) *runtime.EvaluateParams {
			return p.WithAwaitPromise(true)
		}),
	)
	if err != nil {
		t.Fatalf("chromium on %s: %v", replay, err)
	}
	if html != string(original) {
		t.Errorf("pywb's replay of %s in chromium (%d bytes) differs from the farm's page (%d bytes)", page, len(html), len(original))
	}
	if !strings.Contains(string(original), "<title>"+title+"</title>") || title == "" {
		t.Errorf("chromium shows the title %q, not the farm page's", title)
	}
	t.Logf("pywb replayed %s in chromium: %d bytes identical to the farm's, title %q", page, len(html), title)
}

// farmGet fetches a farm URL directly (no content coding).
func farmGet(t *testing.T, farm *webfarm.Farm, u string) []byte {
	t.Helper()
	addrs := map[string]string{}
	for _, h := range farm.Hosts() {
		addrs[strings.ToLower(h.Name)] = h.Addr.String()
	}
	tr := &http.Transport{DisableCompression: true, DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
		host, port, _ := net.SplitHostPort(addr)
		return (&net.Dialer{}).DialContext(ctx, network, net.JoinHostPort(addrs[strings.ToLower(host)], port))
	}}
	defer tr.CloseIdleConnections()
	resp, err := (&http.Client{Transport: tr}).Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != 200 {
		t.Fatalf("farm %s: %d %v", u, resp.StatusCode, err)
	}
	return b
}
