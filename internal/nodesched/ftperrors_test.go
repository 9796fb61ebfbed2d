package nodesched

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestCrawlFTPErrors crawls an FTP tree whose listed files answer RETR with
// 550, 450 and 552, under the default ftp_errors (MS-FSCCFG 2.2.4.14: 550
// DELETE:0, 4xx and 5xx DELETE:3) and under a section that overrides
// them. The verdict is the URI record's status; the number of RETR
// attempts (RETRY) comes from the FTP server's log. Under the defaults a
// 450 is not deleted, although http_errors' default for 4xx would: the
// FTP policy, not the HTTP one, decides for ftp:// URIs.
func TestCrawlFTPErrors(t *testing.T) {
	for _, tc := range []struct {
		name    string
		section string
		status  map[string]store.Status
		retrs   map[string]int
	}{
		{"defaults", "",
			map[string]store.Status{"/pub/gone.txt": store.StatusDeleted, "/pub/busy.txt": store.StatusError, "/pub/full.txt": store.StatusError, "/pub/ok.txt": store.StatusFetched},
			map[string]int{"/pub/gone.txt": 1, "/pub/busy.txt": 1, "/pub/full.txt": 1, "/pub/ok.txt": 1}},
		{"overrides", `<section name="ftp_errors">
      <attrib name="550" type="string"> KEEP:0 </attrib>
      <attrib name="4xx" type="string"> DELETE:0, RETRY:2 </attrib>
      <attrib name="552" type="string"> DELETE:0 </attrib>
    </section>`,
			map[string]store.Status{"/pub/gone.txt": store.StatusError, "/pub/busy.txt": store.StatusDeleted, "/pub/full.txt": store.StatusDeleted, "/pub/ok.txt": store.StatusFetched},
			map[string]int{"/pub/gone.txt": 1, "/pub/busy.txt": 3, "/pub/full.txt": 1, "/pub/ok.txt": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := &webfarm.FTPServer{
				Files: map[string]string{"/pub/gone.txt": "g", "/pub/busy.txt": "b", "/pub/full.txt": "f", "/pub/ok.txt": "ok"},
				Fail:  map[string]int{"/pub/gone.txt": 550, "/pub/busy.txt": 450, "/pub/full.txt": 552},
				Users: map[string]string{"crawler": "pw"},
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go srv.Serve(ctx, ln)
			hostport := fmt.Sprintf("files.test:%d", ln.Addr().(*net.TCPAddr).Port)
			base := "ftp://" + hostport
			extra := fmt.Sprintf(`<attrib name="allowed_schemes" type="list-string"><member> http </member><member> ftp </member></attrib>
    <attrib name="allowed_types" type="list-string"><member> */* </member></attrib>
    <section name="ftp_acct"><attrib name="%s" type="string"> crawler:pw </attrib></section>
    %s`, hostport, tc.section)
			c := startOptCrawl(t, optXML(optCollection("ftp", base+"/pub/", "files.test", extra)), nil, nil)
			waitIdle(t, c.d, 60*time.Second)
			got := map[string]store.Status{}
			for p := range tc.status {
				r, ok, err := c.st.URI("ftp", base+p)
				if err != nil || !ok {
					t.Errorf("%s: no record (%v)", p, err)
					continue
				}
				got[p] = r.Status
			}
			if d := cmp.Diff(tc.status, got); d != "" {
				t.Errorf("statuses (-want +got):\n%s", d)
			}
			retrs := map[string]int{}
			for _, cmd := range srv.Log() {
				if cmd.Verb == "RETR" {
					retrs[cmd.Arg]++
				}
			}
			if d := cmp.Diff(tc.retrs, retrs); d != "" {
				t.Errorf("RETR attempts (-want +got):\n%s", d)
			}
		})
	}
}
