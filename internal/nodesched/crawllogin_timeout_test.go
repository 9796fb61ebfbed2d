package nodesched

import (
	"fmt"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/webfarm"
)

// loginCollection is a collection "lg" starting at every URI of starts,
// crawling the hosts under .test, with the extra XML inside.
func loginCollection(starts []string, extra string) string {
	var members strings.Builder
	for _, s := range starts {
		fmt.Fprintf(&members, "<member> %s </member>", s)
	}
	return optXML(fmt.Sprintf(`  <DomainSpecification name="lg">
    <attrib name="start_uris" type="list-string">%s</attrib>
    <attrib name="delay" type="real"> 0.01 </attrib>
    <attrib name="fetch_timeout" type="integer"> 10 </attrib>
    <attrib name="use_cookies" type="boolean"> yes </attrib>
    <section name="include_domains"><attrib name="suffix" type="list-string"><member> .test </member></attrib></section>
%s
  </DomainSpecification>
`, members.String(), extra))
}

// autofillLogin is a Login element reading the form at base/login for the
// site hostport, posting user dave and password.
func autofillLogin(base, hostport, password string) string {
	return fmt.Sprintf(`    <Login name="intranet">
      <attrib name="html_form" type="string"> %s/login </attrib>
      <attrib name="autofill" type="boolean"> yes </attrib>
      <attrib name="sites" type="list-string"><member> %s </member></attrib>
      <section name="parameters">
        <attrib name="user" type="string"> dave </attrib>
        <attrib name="password" type="string"> %s </attrib>
      </section>
    </Login>`, base, hostport, password)
}

// refusedPaths is the sorted set of paths of site's requests the guard
// refused.
func refusedPaths(site *webfarm.AccessSite) []string {
	set := map[string]bool{}
	for _, r := range site.Requests() {
		if !r.Granted {
			set[r.Path] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// TestCrawlLoginTimeout crawls, in one collection, a site behind a form
// login whose login page answers only after 2 s (the form and the
// submission alike) and an open site. With login_timeout 1 the login gives
// up: no protected page is served, the failure is counted (errors_login,
// skip code ot) and logged with the site and the time-out, and the open
// site is crawled all the same. With login_timeout 10 the login waits for
// the slow answers and succeeds, and every protected page is served.
func TestCrawlLoginTimeout(t *testing.T) {
	for _, tt := range []struct {
		name    string
		timeout int
		ok      bool
	}{
		{"timeout shorter than the login", 1, false},
		{"timeout longer than the login", 10, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &webfarm.FormLoginGuard{User: "dave", Password: "letmein", LoginDelay: 2 * time.Second}
			site := &webfarm.AccessSite{Pages: 12, Guard: g}
			base, _ := serveSite(t, site, "forms.test")
			// The open site's pages differ from the protected ones (a
			// duplicate's links would not be followed).
			open := &webfarm.LangSite{Pages: 6}
			openBase := fmt.Sprintf("http://open.test:%d", serveHandler(t, open))
			extra := autofillLogin(base, strings.TrimPrefix(base, "http://"), "letmein") +
				fmt.Sprintf("\n    <attrib name=\"login_timeout\" type=\"integer\"> %d </attrib>", tt.timeout)
			counters, logText := auditCrawl(t, loginCollection([]string{base + "/", openBase + "/"}, extra), "lg", nil)
			okLogins, failedLogins := g.Logins()
			wantOpen, _ := open.ExpectFocused(nil, 0)
			if d := cmp.Diff(wantOpen, withoutRobots(open.Paths())); d != "" {
				t.Errorf("open site: pages served (-want +got):\n%s\ncounters %v", d, counters)
			}
			if !tt.ok {
				if got := site.GrantedPaths(); len(got) != 0 {
					t.Errorf("protected pages served after a timed-out login: %v", got)
				}
				// The crawl gave up on the form page: nothing was submitted.
				if okLogins != 0 || failedLogins != 0 {
					t.Errorf("the site saw %d good and %d bad submissions, want none", okLogins, failedLogins)
				}
				if counters["errors_login"] == 0 || docSkips(counters)[stats.DocOther] == 0 {
					t.Errorf("timed-out login not counted: counters %v", counters)
				}
				l := logLine(logText, "form login failed", "site=forms.test")
				if l == "" {
					t.Fatalf("no log line of the failed login naming the site:\n%s", logText)
				}
				if !strings.Contains(l, "deadline") && !strings.Contains(l, "timeout") && !strings.Contains(l, "timed out") {
					t.Errorf("the log line does not say the login timed out: %s", l)
				}
				return
			}
			if d := cmp.Diff(allPaths(site), site.GrantedPaths()); d != "" {
				t.Errorf("protected site: pages served (-want +got):\n%s\ncounters %v", d, counters)
			}
			if okLogins != 1 || failedLogins != 0 {
				t.Errorf("logins: %d ok, %d failed; want 1 ok", okLogins, failedLogins)
			}
			if counters["errors_login"] != 0 || strings.Contains(logText, "form login failed") {
				t.Errorf("a login failed: counters %v\n%s", counters, logText)
			}
		})
	}
}

// TestCrawlLoginFailedIgnore crawls a site with public pages ("/", pages
// 0, 1 and 2) and protected ones (the rest, which redirect to the login
// form without a session), with a wrong password, so the form login fails
// once. With login_failed_ignore = yes the site is crawled without the
// session: exactly the public pages are served, exactly the protected
// pages they link to (3 to 6) are asked for and refused, nothing deeper
// is asked for, and no document counts as a login error. With no (the
// default) no page of the site is asked for at all (the only requests are
// the login's own, to the form), and the failure is counted.
func TestCrawlLoginFailedIgnore(t *testing.T) {
	public := []string{"/", "/a/0.html", "/a/1.html", "/a/2.html"}
	for _, tt := range []struct {
		name               string
		ignore             string
		granted, refused   []string
		wantLoginErrorsMin int64
	}{
		{"yes", "yes", public, []string{"/a/3.html", "/a/4.html", "/a/5.html", "/a/6.html", "/login"}, 0},
		{"no", "no", []string{}, []string{"/login"}, 1},
	} {
		t.Run(tt.name, func(t *testing.T) {
			g := &webfarm.FormLoginGuard{User: "dave", Password: "letmein", Public: public}
			site := &webfarm.AccessSite{Pages: 14, Guard: g}
			base, _ := serveSite(t, site, "forms.test")
			extra := autofillLogin(base, strings.TrimPrefix(base, "http://"), "guess") +
				fmt.Sprintf("\n    <attrib name=\"login_failed_ignore\" type=\"boolean\"> %s </attrib>", tt.ignore)
			counters, logText := auditCrawl(t, loginCollection([]string{base + "/"}, extra), "lg", nil)
			okLogins, failedLogins := g.Logins()
			if okLogins != 0 || failedLogins != 1 {
				t.Errorf("logins: %d ok, %d failed; want exactly one failed attempt", okLogins, failedLogins)
			}
			if d := cmp.Diff(tt.granted, site.GrantedPaths()); d != "" {
				t.Errorf("pages served (-want +got):\n%s\ncounters %v", d, counters)
			}
			if d := cmp.Diff(tt.refused, refusedPaths(site)); d != "" {
				t.Errorf("pages refused (-want +got):\n%s\ncounters %v", d, counters)
			}
			if tt.wantLoginErrorsMin == 0 {
				if counters["errors_login"] != 0 {
					t.Errorf("errors_login %d with login_failed_ignore: counters %v", counters["errors_login"], counters)
				}
				return
			}
			if counters["errors_login"] < tt.wantLoginErrorsMin {
				t.Errorf("errors_login %d, want at least %d: counters %v", counters["errors_login"], tt.wantLoginErrorsMin, counters)
			}
			if logLine(logText, "form login failed", "site=forms.test") == "" {
				t.Errorf("no log line of the failed login naming the site:\n%s", logText)
			}
		})
	}
}
