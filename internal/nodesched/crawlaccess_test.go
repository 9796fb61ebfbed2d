package nodesched

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/webfarm"
)

// auditCrawl runs the collections of xml on one node with the extra
// driver settings of hook until the node is idle, and returns the
// counters of collection coll and the node's log.
func auditCrawl(t *testing.T, xml, coll string, hook func(*Config)) (map[string]int64, string) {
	t.Helper()
	logs := &testenv.Buffer{}
	c := startCrawlWith(t, xml, func(dc *Config) {
		dc.Logger = slog.New(slog.NewTextHandler(logs, nil))
		if hook != nil {
			hook(dc)
		}
	})
	waitIdle(t, c.d, 90*time.Second)
	return c.d.Stats()[coll], logs.String()
}

// logLine returns the first line of logText holding every one of parts.
func logLine(logText string, parts ...string) string {
	for _, l := range strings.Split(logText, "\n") {
		all := true
		for _, p := range parts {
			if !strings.Contains(l, p) {
				all = false
				break
			}
		}
		if all {
			return l
		}
	}
	return ""
}

// plainStatus is the status a client without credentials gets for u.
func plainStatus(t *testing.T, u string) int {
	t.Helper()
	resp, err := http.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestCrawlHTTPAuthSchemes crawls an area protected by Basic, Digest
// (MD5 and SHA-256, with nonces going stale) and NTLM, each answering 401
// to a client without credentials, with passwd entries keyed by URI
// prefix or by realm, scheme given or auto, and a password written
// "!ENC!" (decrypted with the node's key). With the right password the
// crawl is served exactly every page of the site; with a wrong one it is
// served none, the refusals are counted (errors_auth, skip code ot), the
// crawl ends, and the log names the site.
func TestCrawlHTTPAuthSchemes(t *testing.T) {
	key, err := config.CreateKeyFile(t.TempDir()+"/key", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	enc := func(pw string) string {
		s, err := key.Encrypt(pw, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	type entry func(base, pw string) (name, value string)
	byPrefix := func(user, realm, scheme string) entry {
		return func(base, pw string) (string, string) {
			return base + "/", user + ":" + pw + ":" + realm + ":" + scheme
		}
	}
	byRealm := func(user, realm, scheme string) entry {
		return func(base, pw string) (string, string) { return realm, user + ":" + pw + ":" + realm + ":" + scheme }
	}
	for _, tt := range []struct {
		name     string
		guard    func() webfarm.Guard
		entry    entry
		password string // the right one
		encrypt  bool
	}{
		{"basic by realm", func() webfarm.Guard { return &webfarm.BasicGuard{User: "alice", Password: "s3cret", Realm: "intranet"} },
			byRealm("alice", "intranet", "basic"), "s3cret", false},
		{"digest md5 by prefix", func() webfarm.Guard {
			return &webfarm.DigestGuard{User: "bob", Password: "pw-digest", Realm: "docs", Algorithm: "MD5", StaleAfter: 4}
		}, byPrefix("bob", "docs", "digest"), "pw-digest", false},
		{"digest sha-256 auto, encrypted", func() webfarm.Guard {
			return &webfarm.DigestGuard{User: "bob", Password: "pw-digest", Realm: "docs", Algorithm: "SHA-256", StaleAfter: 4}
		}, byPrefix("bob", "docs", "auto"), "pw-digest", true},
		{"ntlm auto by prefix", func() webfarm.Guard { return &webfarm.NTLMGuard{User: "carol", Password: "Winter2024", Domain: "CORP"} },
			byPrefix(`CORP\carol`, "CORP", "auto"), "Winter2024", false},
		{"ntlmv2 by realm, encrypted", func() webfarm.Guard { return &webfarm.NTLMGuard{User: "carol", Password: "Winter2024", Domain: "CORP"} },
			byRealm(`CORP\carol`, "CORP", "ntlmv2"), "Winter2024", true},
	} {
		for _, right := range []bool{true, false} {
			t.Run(fmt.Sprintf("%s right=%v", tt.name, right), func(t *testing.T) {
				site := &webfarm.AccessSite{Pages: 20, Guard: tt.guard()}
				port := serveHandler(t, site)
				if st := plainStatus(t, fmt.Sprintf("http://127.0.0.1:%d/a/3.html", port)); st != http.StatusUnauthorized {
					t.Fatalf("the site answers %d without credentials, want 401", st)
				}
				before := len(site.Requests())
				pw := tt.password
				if !right {
					pw = "guess"
				}
				if tt.encrypt {
					pw = enc(pw)
				}
				base := fmt.Sprintf("http://auth.test:%d", port)
				name, value := tt.entry(base, pw)
				extra := fmt.Sprintf(`<section name="passwd"><attrib name="%s" type="string"> %s </attrib></section>`, name, value)
				counters, logText := auditCrawl(t, optXML(optCollection("auth", base+"/", "auth.test", extra)), "auth", func(c *Config) { c.Key = key })
				var granted []string
				set := map[string]bool{}
				for _, r := range site.Requests()[before:] {
					if r.Granted && !set[r.Path] {
						set[r.Path] = true
						granted = append(granted, r.Path)
					}
				}
				want := allPaths(site)
				if !right {
					want = nil
				}
				if d := cmp.Diff(want, sortedStrings(granted)); d != "" {
					t.Errorf("pages served to the crawl (-want +got):\n%s\ncounters %v", d, counters)
				}
				if right {
					if counters["errors_auth"] != 0 {
						t.Errorf("errors_auth %d with the right password", counters["errors_auth"])
					}
					return
				}
				if counters["errors_auth"] != 1 || docSkips(counters)[stats.DocOther] < 1 {
					t.Errorf("wrong password: errors_auth %d (want 1: the start page; nothing else is linked), skips %v", counters["errors_auth"], docSkips(counters))
				}
				if l := logLine(logText, "authentication refused by the site", "site=auth.test"); l == "" || !strings.Contains(l, "status=401") {
					t.Errorf("no log line of the refusal naming the site:\n%s", logText)
				}
			})
		}
	}
}

func sortedStrings(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// startProxy serves a forward proxy that demands user:pw (none when user
// is empty) and reaches every origin at 127.0.0.1 (the crawl's host names
// are known to no resolver). It returns the proxy and its host:port.
func startProxy(t *testing.T, user, pw string) (*webfarm.ForwardProxy, string) {
	p := &webfarm.ForwardProxy{User: user, Password: pw, Dial: func(ctx context.Context, network, addr string) (net.Conn, error) {
		_, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		var d net.Dialer
		return d.DialContext(ctx, network, net.JoinHostPort("127.0.0.1", port))
	}}
	port := serveHandler(t, p)
	return p, fmt.Sprintf("127.0.0.1:%d", port)
}

// TestCrawlThroughProxy crawls a site only through forward proxies
// that refuse (407) a request without their credentials: with the right
// credentials every page (and robots.txt) is fetched through the proxies
// and nothing directly, spread over two proxies; with wrong credentials
// or none the origin serves nothing, each refusal is counted (errors_auth,
// skip code ot), the crawl ends and the log names the site.
func TestCrawlThroughProxy(t *testing.T) {
	for _, tt := range []struct {
		name    string
		creds   string // user:pw@ in the proxy member
		proxies int
		ok      bool
	}{
		{"right credentials, two proxies", "pu:pp@", 2, true},
		{"wrong credentials", "pu:bad@", 1, false},
		{"no credentials", "", 1, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			site := &webfarm.AccessSite{Pages: 20}
			origin := serveHandler(t, site)
			var ps []*webfarm.ForwardProxy
			members := ""
			for i := 0; i < tt.proxies; i++ {
				p, addr := startProxy(t, "pu", "pp")
				if st := proxyStatus(t, addr, fmt.Sprintf("http://127.0.0.1:%d/", origin)); st != http.StatusProxyAuthRequired {
					t.Fatalf("proxy answers %d without credentials, want 407", st)
				}
				ps = append(ps, p)
				members += fmt.Sprintf("<member> http://%s%s </member>", tt.creds, addr)
			}
			base := fmt.Sprintf("http://proxied.test:%d", origin)
			extra := fmt.Sprintf(`<attrib name="proxy" type="list-string">%s</attrib>`, members)
			counters, logText := auditCrawl(t, optXML(optCollection("px", base+"/", "proxied.test", extra)), "px", nil)
			forwarded, refused := 0, 0
			for _, p := range ps {
				st := p.Stats()
				forwarded += st.Forwarded
				refused += st.Refused - 1 // the request without credentials above
			}
			if !tt.ok {
				if got := site.GrantedPaths(); len(got) != 0 {
					t.Errorf("origin served %v", got)
				}
				if counters["errors_auth"] == 0 || docSkips(counters)[stats.DocOther] == 0 {
					t.Errorf("proxy refusals not counted: %v", counters)
				}
				if logLine(logText, "authentication refused by the proxy", "site=proxied.test", "status=407") == "" {
					t.Errorf("no log line of the proxy's refusal naming the site:\n%s", logText)
				}
				return
			}
			if d := cmp.Diff(allPaths(site), site.GrantedPaths()); d != "" {
				t.Errorf("pages fetched (-want +got):\n%s", d)
			}
			// Every request the origin saw (pages; robots.txt is not in
			// its log) came through a proxy: one more for robots.txt.
			if n := len(site.Requests()); forwarded != n+1 {
				t.Errorf("proxies forwarded %d requests, the origin logged %d pages (+ robots.txt)", forwarded, n)
			}
			for i, p := range ps {
				if p.Stats().Forwarded < 3 {
					t.Errorf("proxy %d forwarded only %d of %d requests: load not spread", i, p.Stats().Forwarded, forwarded)
				}
			}
			if refused != 0 || counters["errors_auth"] != 0 {
				t.Errorf("refused %d, errors_auth %d with the right credentials", refused, counters["errors_auth"])
			}
		})
	}
}

// proxyStatus is the status a client without proxy credentials gets for u
// through the proxy at addr.
func proxyStatus(t *testing.T, addr, u string) int {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "GET %s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", u)
	var proto string
	var code int
	if _, err := fmt.Fscan(c, &proto, &code); err != nil {
		t.Fatal(err)
	}
	return code
}
