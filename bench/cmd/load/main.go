// Command load holds a fixed number of concurrent clients against trawl's
// HTTP interface for a fixed time and prints requests/s, latency
// percentiles and errors: the search API (GET /api/search with queries
// drawn from a word list) or the XML-RPC admin API (POST /RPC2, a mix of
// read-only MS-FSCADM methods). Every client keeps one keep-alive
// connection and sends its next request when the last one is answered
// (a closed loop, as wrk does). A response that is not 200, a body that
// is not what the endpoint returns (no "hits" in a search answer, a
// <fault> in an XML-RPC answer) or a transport error is an error.
//
//	go run ./cmd/load -url http://127.0.0.1:13000 -mode search -c 200 -d 60s
//
// bench/load.sh starts `trawl run --demo --serve` and runs both modes.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strings"
	"sync"
	"time"
)

func main() {
	base := flag.String("url", "http://127.0.0.1:13000", "trawl's HTTP interface")
	mode := flag.String("mode", "search", "search (GET /api/search) or xmlrpc (POST /RPC2)")
	conc := flag.Int("c", 200, "concurrent clients")
	dur := flag.Duration("d", 60*time.Second, "how long to hold the load")
	words := flag.String("words", "harvest village river market winter garden station library forest council", "search: words queries are drawn from (one or two per query)")
	coll := flag.String("collection", "", "xmlrpc: the collection the per-collection methods ask about (default: the first of CollectionGetList)")
	token := flag.String("token", "", "admin token (Authorization: Bearer), if the interface has one")
	flag.Parse()

	tr := &http.Transport{MaxIdleConnsPerHost: *conc, MaxConnsPerHost: *conc, IdleConnTimeout: time.Minute}
	cl := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	var gen func(r *rand.Rand) (*http.Request, func([]byte) error)
	switch *mode {
	case "search":
		ws := strings.Fields(*words)
		gen = func(r *rand.Rand) (*http.Request, func([]byte) error) {
			q := ws[r.IntN(len(ws))]
			if r.IntN(2) == 0 {
				q += " " + ws[r.IntN(len(ws))]
			}
			req, _ := http.NewRequest("GET", *base+"/api/search?q="+url.QueryEscape(q), nil)
			return req, func(b []byte) error {
				if !bytes.Contains(b, []byte(`"hits"`)) {
					return fmt.Errorf("no hits field in %.80q", b)
				}
				return nil
			}
		}
	case "xmlrpc":
		c := *coll
		if c == "" {
			var err error
			if c, err = firstCollection(cl, *base, *token); err != nil {
				fmt.Fprintln(os.Stderr, "load:", err)
				os.Exit(1)
			}
		}
		calls := []string{
			call("CollectionGetList"),
			call("CollectionGetStatus", c),
			call("CollectionGetStatistics", c),
			call("GetGlobalStatistics"),
			call("IsMultiNodeScheduler"),
			call("CollectionGetConfigurationXML", c),
		}
		gen = func(r *rand.Rand) (*http.Request, func([]byte) error) {
			req, _ := http.NewRequest("POST", *base+"/RPC2", strings.NewReader(calls[r.IntN(len(calls))]))
			req.Header.Set("Content-Type", "text/xml")
			return req, func(b []byte) error {
				if bytes.Contains(b, []byte("<fault>")) || !bytes.Contains(b, []byte("<methodResponse>")) {
					return fmt.Errorf("fault or no methodResponse: %.120q", b)
				}
				return nil
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "load: -mode is search or xmlrpc")
		os.Exit(2)
	}

	ctx, cancel := context.WithTimeout(context.Background(), *dur)
	defer cancel()
	type result struct {
		lat     []time.Duration
		errs    int
		lastErr error
	}
	results := make([]result, *conc)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range *conc {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(i), 1))
			res := &results[i]
			for ctx.Err() == nil {
				req, check := gen(r)
				if *token != "" {
					req.Header.Set("Authorization", "Bearer "+*token)
				}
				t0 := time.Now()
				resp, err := cl.Do(req.WithContext(ctx))
				if err == nil {
					var b []byte
					b, err = io.ReadAll(resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != 200 {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
					if err == nil {
						err = check(b)
					}
				}
				if ctx.Err() != nil {
					return // the run ended mid-request: neither a result nor an error
				}
				if err != nil {
					res.errs++
					res.lastErr = err
					continue
				}
				res.lat = append(res.lat, time.Since(t0))
			}
		}(i)
	}
	wg.Wait()
	elapsed := time.Since(start)
	var all []time.Duration
	errs := 0
	var lastErr error
	for _, r := range results {
		all = append(all, r.lat...)
		errs += r.errs
		if r.lastErr != nil {
			lastErr = r.lastErr
		}
	}
	slices.Sort(all)
	pct := func(p float64) time.Duration {
		if len(all) == 0 {
			return 0
		}
		return all[min(len(all)-1, int(p*float64(len(all))))]
	}
	fmt.Printf("mode=%s clients=%d duration=%s requests=%d errors=%d req/s=%.0f p50=%s p99=%s max=%s\n",
		*mode, *conc, elapsed.Round(time.Millisecond), len(all), errs, float64(len(all))/elapsed.Seconds(),
		pct(0.50).Round(10*time.Microsecond), pct(0.99).Round(10*time.Microsecond), pct(1).Round(10*time.Microsecond))
	if errs > 0 {
		fmt.Fprintln(os.Stderr, "load: last error:", lastErr)
		os.Exit(1)
	}
}

// call is an XML-RPC methodCall with string parameters.
func call(method string, params ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<?xml version=\"1.0\"?><methodCall><methodName>%s</methodName><params>", method)
	for _, p := range params {
		fmt.Fprintf(&b, "<param><value><string>%s</string></value></param>", p)
	}
	b.WriteString("</params></methodCall>")
	return b.String()
}

// firstCollection asks CollectionGetList for the first collection's name.
func firstCollection(cl *http.Client, base, token string) (string, error) {
	req, _ := http.NewRequest("POST", base+"/RPC2", strings.NewReader(call("CollectionGetList")))
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := cl.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	_, rest, ok := bytes.Cut(b, []byte("<string>"))
	name, _, ok2 := bytes.Cut(rest, []byte("</string>"))
	if !ok || !ok2 {
		return "", fmt.Errorf("no collection in CollectionGetList's answer: %.200q", b)
	}
	return string(name), nil
}
