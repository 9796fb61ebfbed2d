package nodesched

import (
	"context"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestSubCollectionFTPPassive crawls two FTP sites in one collection: the
// collection has ftp_passive=yes and a subcollection (SubDomain scoped to
// the second site by include_domains) has ftp_passive=no. The first server
// refuses active mode and the second passive mode, and each logs the mode
// of every data connection: each site is fetched in its own mode only, and
// the crawl gets every file of both, and nothing else. The same holds with
// the roles swapped (collection active, subcollection passive).
func TestSubCollectionFTPPassive(t *testing.T) {
	files := map[string]map[string]string{
		"main": {"/pub/a.txt": "a", "/pub/docs/b.txt": "b", "/pub/docs/deep/c.txt": "c"},
		"sub":  {"/pub/x.txt": "x", "/pub/more/y.txt": "y"},
	}
	want := map[string][]string{
		"main": {"/pub/a.txt", "/pub/docs/b.txt", "/pub/docs/deep/c.txt"},
		"sub":  {"/pub/more/y.txt", "/pub/x.txt"},
	}
	yn := map[bool]string{true: "yes", false: "no"}
	modeName := map[bool]string{true: "passive", false: "active"}
	for _, collectionPassive := range []bool{true, false} {
		subPassive := !collectionPassive
		t.Run(fmt.Sprintf("collection ftp_passive=%s, subcollection %s", yn[collectionPassive], yn[subPassive]), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			passive := map[string]bool{"main": collectionPassive, "sub": subPassive}
			srvs := map[string]*webfarm.FTPServer{}
			base := map[string]string{}
			host := map[string]string{"main": "main.test", "sub": "sub.test"}
			for _, k := range []string{"main", "sub"} {
				// Each server refuses the mode its site must not be fetched in.
				srv := &webfarm.FTPServer{Files: files[k], Anonymous: true, RefusePassive: !passive[k], RefuseActive: passive[k]}
				ln, err := net.Listen("tcp", "127.0.0.1:0")
				if err != nil {
					t.Fatal(err)
				}
				go srv.Serve(ctx, ln)
				srvs[k] = srv
				base[k] = fmt.Sprintf("ftp://%s:%d", host[k], ln.Addr().(*net.TCPAddr).Port)
			}
			xml := fmt.Sprintf(`<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="acc">
    <attrib name="start_uris" type="list-string"><member> %s/pub/ </member><member> %s/pub/ </member></attrib>
    <attrib name="delay" type="real"> 0.01 </attrib>
    <attrib name="fetch_timeout" type="integer"> 10 </attrib>
    <attrib name="refresh_mode" type="string"> scratch </attrib>
    <attrib name="allowed_schemes" type="list-string"><member> ftp </member></attrib>
    <attrib name="allowed_types" type="list-string"><member> */* </member></attrib>
    <attrib name="ftp_passive" type="boolean"> %s </attrib>
    <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member><member> %s </member></attrib></section>
    <SubDomain name="other-mode">
      <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
      <attrib name="ftp_passive" type="boolean"> %s </attrib>
    </SubDomain>
  </DomainSpecification>
</CrawlerConfig>
`, base["main"], base["sub"], yn[collectionPassive], host["main"], host["sub"], host["sub"], yn[subPassive])
			stats := runAccessCrawl(t, xml)
			for _, k := range []string{"main", "sub"} {
				if d := cmp.Diff(want[k], srvs[k].Retrieved()); d != "" {
					t.Errorf("%s: files retrieved (-want +got):\n%s\nstats %v", host[k], d, stats)
				}
				modes := map[string]int{}
				for _, c := range srvs[k].Log() {
					if c.Mode != "" {
						modes[c.Mode]++
					}
				}
				if len(modes) != 1 || modes[modeName[passive[k]]] == 0 {
					t.Errorf("%s: data connections by mode %v, want %s only", host[k], modes, modeName[passive[k]])
				}
			}
		})
	}
}

// TestSubCollectionUseHTTP11 crawls a farm of three hosts whose collection
// has use_http_1_1=yes (and accept_compression=yes) and whose subcollection
// (SubDomain scoped to host 0 by include_domains) has use_http_1_1=no. The
// farm's request log shows host 0 asked in HTTP/1.0 only, every request on
// a connection of its own, none asking for compression (robots.txt
// included: the subcollection fetches its own), and the other hosts in
// HTTP/1.1 only, with reused connections and compression. The crawl
// fetches what Expect lists.
func TestSubCollectionUseHTTP11(t *testing.T) {
	farm := startFarm(t, 3, 30)
	sub := farm.Hosts()[0].Name
	extra := fmt.Sprintf(`        <attrib name="use_http_1_1" type="boolean"> yes </attrib>
        <attrib name="accept_compression" type="boolean"> yes </attrib>
        <SubDomain name="old-server">
            <section name="include_domains"><attrib name="exact" type="list-string"><member> %s </member></attrib></section>
            <attrib name="use_http_1_1" type="boolean"> no </attrib>
        </SubDomain>
`, sub)
	crawl := farm.DefaultCrawl()
	r := runCrawlWith(t, farm, t.TempDir(), crawl, webfarm.XMLOptions{Collection: "farm", Delay: 0.01, FetchTimeout: 8, Extra: extra})
	waitIdle(t, r.d, 90*time.Second)

	want, err := farm.Expect(crawl)
	if err != nil {
		t.Fatal(err)
	}
	missing, extraURLs := diffSets(want, requestedURLs(farm, 0))
	if len(missing)+len(extraURLs) > 0 {
		t.Errorf("fetched set differs from Expect: missing %v, extra %v", head(missing), head(extraURLs))
	}
	type use struct {
		Requests, Reused, GzipAsked, GzipSent int
		Protos                                map[string]int
	}
	got := map[bool]*use{true: {Protos: map[string]int{}}, false: {Protos: map[string]int{}}}
	for _, q := range farm.Requests() {
		u := got[q.Host == sub]
		u.Requests++
		u.Protos[q.Proto]++
		if q.ConnSeq > 1 {
			u.Reused++
		}
		if strings.Contains(q.AcceptEncoding, "gzip") {
			u.GzipAsked++
		}
		if q.ContentEncoding != "" {
			u.GzipSent++
		}
	}
	old, cur := got[true], got[false]
	if old.Requests == 0 || cur.Requests == 0 {
		t.Fatalf("requests: subcollection host %d, others %d", old.Requests, cur.Requests)
	}
	if d := cmp.Diff(map[string]int{"HTTP/1.0": old.Requests}, old.Protos); d != "" {
		t.Errorf("subcollection host %s: protocols (-want +got):\n%s", sub, d)
	}
	if old.Reused != 0 || old.GzipAsked != 0 || old.GzipSent != 0 {
		t.Errorf("subcollection host %s: %d requests on reused connections, %d asked for gzip, %d compressed answers (want 0 each)", sub, old.Reused, old.GzipAsked, old.GzipSent)
	}
	if d := cmp.Diff(map[string]int{"HTTP/1.1": cur.Requests}, cur.Protos); d != "" {
		t.Errorf("collection hosts: protocols (-want +got):\n%s", d)
	}
	if cur.Reused == 0 || cur.GzipAsked != cur.Requests || cur.GzipSent == 0 {
		t.Errorf("collection hosts: %d requests on reused connections (want some), %d of %d asked for gzip, %d compressed answers", cur.Reused, cur.GzipAsked, cur.Requests, cur.GzipSent)
	}
	t.Logf("subcollection host: %+v; others: %+v", *old, *cur)
}
