package clicks_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/clicks"
	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/render"
	"github.com/trawl/trawl/internal/testenv"
)

// TestClickSessionInChromium is the user's session: in headless Chromium,
// search "orchard cider" on the search page and click the third result,
// three times; run the click build (dmake, the spec's functions); the
// result clicked is now first for that query, and the order of every
// other query is what it was.
func TestClickSessionInChromium(t *testing.T) {
	bin, err := render.FindBrowser()
	if err != nil {
		testenv.Missing(t, "chromium is not installed (apt-get install chromium; test.sh does)")
	}
	data := t.TempDir()
	rel := clicks.NewRelevance(clicks.RelevancePath(data))
	ix, err := index.Open(filepath.Join(data, "index"), index.Options{Create: true, Clicks: rel})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	log, err := clicks.OpenLog(clicks.LogDir(data), nil)
	if err != nil {
		t.Fatal(err)
	}

	// One server for the search page and the documents it finds.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	var visits atomic.Int64
	mux := http.NewServeMux()
	search := index.NewHandler(ix, index.HandlerOptions{Clicks: log})
	mux.Handle("/", search)
	mux.HandleFunc("GET /doc/{n}", func(w http.ResponseWriter, r *http.Request) {
		visits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, `<html><body><h1 id="doc">document %s</h1></body></html>`, r.PathValue("n"))
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	defer srv.Close()

	var ops []index.Op
	for i := range 6 {
		body := strings.Repeat("orchard cider ", 8-i) + strings.Repeat("apple ", i+1) + strings.Repeat("filler ", 30)
		ops = append(ops, index.Op{Version: 1, Doc: index.Doc{URL: fmt.Sprintf("%s/doc/%d", base, i), Collection: "c",
			Title: fmt.Sprintf("Page %d", i), Body: body, MIME: "text/html"}})
	}
	if _, err := ix.Apply(context.Background(), ops); err != nil {
		t.Fatal(err)
	}
	order := func(q string) []string {
		t.Helper()
		res, err := ix.Search(context.Background(), q, index.SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range res.Hits {
			out = append(out, h.URL)
		}
		return out
	}
	others := []string{"orchard", "cider", "apple", "orchard apple", "cider orchard"}
	before := map[string][]string{}
	for _, q := range append([]string{"orchard cider"}, others...) {
		before[q] = order(q)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(bin), chromedp.Flag("headless", true), chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true), chromedp.Flag("disable-dev-shm-usage", true))...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()
	resultLinks := func() []string {
		t.Helper()
		var hrefs []string
		if err := chromedp.Run(bctx,
			chromedp.Navigate(base+"/search"),
			chromedp.WaitVisible(`input[name=q]`, chromedp.ByQuery),
			chromedp.SendKeys(`input[name=q]`, "orchard cider", chromedp.ByQuery),
			chromedp.Submit(`input[name=q]`, chromedp.ByQuery),
			chromedp.WaitVisible(`#results`, chromedp.ByQuery),
			chromedp.Evaluate(`[...document.querySelectorAll('#results .hit .url')].map(e => e.textContent)`, &hrefs),
		); err != nil {
			t.Fatal(err)
		}
		return hrefs
	}
	var third string
	for i := range 3 {
		shown := resultLinks()
		if diff := cmp.Diff(before["orchard cider"], shown); diff != "" {
			t.Fatalf("search %d: the page's order differs from the index's (-index +page):\n%s", i, diff)
		}
		third = shown[2]
		var at string
		if err := chromedp.Run(bctx,
			chromedp.Click(`#results li:nth-child(3) a.title`, chromedp.ByQuery),
			chromedp.WaitVisible(`#doc`, chromedp.ByID),
			chromedp.Location(&at),
		); err != nil {
			t.Fatal(err)
		}
		if at != third {
			t.Fatalf("click %d landed on %s, want %s", i, at, third)
		}
	}
	if visits.Load() != 3 {
		t.Errorf("%d document visits, want 3", visits.Load())
	}

	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := clicks.Run(ctx, clicks.RunOptions{Data: data, FromDate: time.Now().UTC().AddDate(0, 0, -1).Format(time.DateOnly),
		LocalWorkers: 2, Self: self, Builder: dmake.LocalBuild}); err != nil {
		t.Fatal(err)
	}
	rel.Reload()
	after := resultLinks()
	if len(after) == 0 || after[0] != third {
		t.Errorf("after three clicks on %s: the page shows %v, want it first", third, after)
	}
	for _, q := range others {
		if diff := cmp.Diff(before[q], order(q)); diff != "" {
			t.Errorf("%q: order changed (-before +after):\n%s", q, diff)
		}
	}
}
