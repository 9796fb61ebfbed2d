// Command collycrawl is the Colly v2 peer of the crawler comparison: a
// recursive crawl written the way Colly's README shows one (a collector,
// OnHTML("a[href]") visiting every link), made asynchronous with a
// LimitRule, kept on the benchmark's hosts with AllowedDomains and obeying
// robots.txt.
//
// Host names resolve through a hosts file (/etc/hosts format) by a custom
// DialContext, so the crawl needs no change to the system resolver. Total
// concurrency is the LimitRule's Parallelism; per-host concurrency is the
// transport's MaxConnsPerHost.
//
// It prints one line of counts to stderr when the crawl ends.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/gocolly/colly/v2"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "collycrawl:", err)
		os.Exit(1)
	}
}

func run() error {
	startFile := flag.String("start", "", "file of start URLs, one per line")
	hostsFile := flag.String("hosts-file", "", "resolve host names from this /etc/hosts-format file")
	wildcard := flag.String("resolve-suffix", "", "with --resolve-addr: resolve every host ending in this suffix to --resolve-addr")
	wildAddr := flag.String("resolve-addr", "", "address for --resolve-suffix")
	parallel := flag.Int("parallel", 64, "total concurrent requests (LimitRule Parallelism)")
	perHost := flag.Int("per-host", 2, "concurrent requests per host (Transport MaxConnsPerHost)")
	ua := flag.String("user-agent", "wget (colly; trawl bench)", "User-Agent, also the robots.txt product token")
	robots := flag.Bool("robots", true, "obey robots.txt")
	allowAll := flag.Bool("allow-all-hosts", false, "follow links to any host (else only the hosts of the hosts file)")
	timeout := flag.Duration("timeout", 10*time.Second, "request timeout")
	priority := flag.String("priority-host", "", "give hosts matching this glob (Colly matches host:port) their own LimitRule with per-host parallelism, ahead of the shared one")
	flag.Parse()

	hosts, err := readHosts(*hostsFile)
	if err != nil {
		return err
	}
	starts, err := readLines(*startFile)
	if err != nil {
		return err
	}
	if len(starts) == 0 {
		return errors.New("no start URLs")
	}

	dialer := &net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, network, addr string) (net.Conn, error) {
			host, port, err := net.SplitHostPort(addr)
			if err != nil {
				return nil, err
			}
			h := strings.ToLower(host)
			if ip, ok := hosts[h]; ok {
				addr = net.JoinHostPort(ip, port)
			} else if *wildcard != "" && strings.HasSuffix(h, *wildcard) {
				addr = net.JoinHostPort(*wildAddr, port)
			}
			return dialer.DialContext(ctx, network, addr)
		},
		MaxIdleConns:        *parallel * 2,
		MaxIdleConnsPerHost: *perHost,
		MaxConnsPerHost:     *perHost,
		IdleConnTimeout:     90 * time.Second,
	}

	opts := []colly.CollectorOption{colly.Async(true), colly.UserAgent(*ua)}
	if !*allowAll {
		names := make([]string, 0, len(hosts))
		for h := range hosts {
			names = append(names, h)
		}
		opts = append(opts, colly.AllowedDomains(names...))
	}
	c := colly.NewCollector(opts...)
	c.IgnoreRobotsTxt = !*robots
	c.WithTransport(tr)
	c.SetRequestTimeout(*timeout)
	if *priority != "" {
		if err := c.Limit(&colly.LimitRule{DomainGlob: *priority, Parallelism: *perHost}); err != nil {
			return err
		}
	}
	if err := c.Limit(&colly.LimitRule{DomainGlob: "*", Parallelism: *parallel}); err != nil {
		return err
	}

	var pages, failed atomic.Int64
	c.OnHTML("a[href]", func(e *colly.HTMLElement) {
		e.Request.Visit(e.Attr("href"))
	})
	c.OnResponse(func(*colly.Response) { pages.Add(1) })
	c.OnError(func(*colly.Response, error) { failed.Add(1) })

	start := time.Now()
	for _, u := range starts {
		if err := c.Visit(u); err != nil {
			fmt.Fprintf(os.Stderr, "collycrawl: start %s: %v\n", u, err)
		}
	}
	c.Wait()
	el := time.Since(start)
	fmt.Fprintf(os.Stderr, "collycrawl: %d responses, %d errors in %.1fs (%.0f pages/s)\n",
		pages.Load(), failed.Load(), el.Seconds(), float64(pages.Load())/el.Seconds())
	return nil
}

// readHosts reads an /etc/hosts-format file into name -> address.
func readHosts(path string) (map[string]string, error) {
	m := map[string]string{}
	if path == "" {
		return m, nil
	}
	lines, err := readLines(path)
	if err != nil {
		return nil, err
	}
	for _, l := range lines {
		if i := strings.IndexByte(l, '#'); i >= 0 {
			l = l[:i]
		}
		f := strings.Fields(l)
		for _, name := range f[min(1, len(f)):] {
			m[strings.ToLower(name)] = f[0]
		}
	}
	return m, nil
}

func readLines(path string) ([]string, error) {
	if path == "" {
		return nil, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" && !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out, sc.Err()
}
