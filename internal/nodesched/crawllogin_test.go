package nodesched

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestCrawlConfiguredLogin crawls a site whose pages redirect to its
// login form without a session cookie, with a Login element that does not
// read the form (no html_form, no autofill): the target is scheme, site and
// form, the method is action, and the server accepts a submission only
// with the cookie its preload page sets. With preload the crawl logs in
// (again each time the session ends) and is served exactly every page;
// with the GET method the same; without preload the login fails, no page
// is served, the failure is counted (errors_login, skip code ot), the
// crawl ends and the log names the site.
func TestCrawlConfiguredLogin(t *testing.T) {
	for _, tt := range []struct {
		name, method string
		preload      bool
		ok           bool
	}{
		{"preload and POST", "POST", true, true},
		{"preload and GET", "GET", true, true},
		{"no preload", "POST", false, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &webfarm.FormLoginGuard{User: "erin", Password: "open sesame", SessionRequests: 8, PreloadPath: "/welcome", LoginMethod: tt.method}
			site := &webfarm.AccessSite{Pages: 24, Guard: g}
			port := serveHandler(t, site)
			hostport := fmt.Sprintf("forms.test:%d", port)
			preload := ""
			if tt.preload {
				preload = fmt.Sprintf(`<attrib name="preload" type="string"> http://%s/welcome </attrib>`, hostport)
			}
			extra := fmt.Sprintf(`<attrib name="use_cookies" type="boolean"> yes </attrib>
    <Login name="configured">
      %s
      <attrib name="scheme" type="string"> http </attrib>
      <attrib name="site" type="string"> %s </attrib>
      <attrib name="form" type="string"> /login </attrib>
      <attrib name="action" type="string"> %s </attrib>
      <section name="parameters">
        <attrib name="user" type="string"> erin </attrib>
        <attrib name="password" type="string"> open sesame </attrib>
      </section>
    </Login>`, preload, hostport, tt.method)
			counters, logText := auditCrawl(t, optXML(optCollection("login", "http://"+hostport+"/", "forms.test", extra)), "login", nil)
			ok, failed := g.Logins()
			granted := site.GrantedPaths()
			if !tt.ok {
				if len(granted) != 0 {
					t.Errorf("pages served after a failed login: %v", granted)
				}
				if failed != 1 || counters["errors_login"] == 0 || docSkips(counters)[stats.DocOther] == 0 {
					t.Errorf("failed logins %d (want 1), counters %v", failed, counters)
				}
				if l := logLine(logText, "form login failed", "site=forms.test"); l == "" {
					t.Errorf("no log line of the failed login naming the site:\n%s", logText)
				}
				return
			}
			if d := cmp.Diff(allPaths(site), granted); d != "" {
				t.Errorf("pages served (-want +got):\n%s\ncounters %v", d, counters)
			}
			// 25 pages, sessions of 8: at least 3 logins, none failed.
			if ok < 3 || failed != 0 {
				t.Errorf("logins: %d ok, %d failed; want at least 3 ok (sessions end), none failed", ok, failed)
			}
			if counters["errors_login"] != 0 {
				t.Errorf("errors_login %d", counters["errors_login"])
			}
			if strings.Contains(logText, "form login failed") {
				t.Errorf("a login failed:\n%s", logText)
			}
		})
	}
}
