package nodesched

import (
	"context"
	"fmt"
	"net"
	"testing"

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
