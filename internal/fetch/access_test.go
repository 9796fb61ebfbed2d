package fetch

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/webfarm"
)

func get(t *testing.T, f *Fetcher, u string) *Response {
	t.Helper()
	resp, err := f.Fetch(context.Background(), Request{URL: u})
	if err != nil {
		t.Fatalf("fetch %s: %v", u, err)
	}
	return resp
}

func TestParseChallenges(t *testing.T) {
	tests := []struct {
		in   []string
		want []Challenge
	}{
		{[]string{`Basic realm="a b", charset="UTF-8"`}, []Challenge{{Scheme: "basic", Params: map[string]string{"realm": "a b", "charset": "UTF-8"}}}},
		{[]string{`NTLM`, `Negotiate`}, []Challenge{{Scheme: "ntlm"}, {Scheme: "negotiate"}}},
		{[]string{`NTLM TlRMTVNTUAACAAAA==`}, []Challenge{{Scheme: "ntlm", Token68: "TlRMTVNTUAACAAAA=="}}},
		{[]string{`Digest realm="x", qop="auth,auth-int", nonce="n\"1", algorithm=SHA-256, Basic realm="y"`}, []Challenge{
			{Scheme: "digest", Params: map[string]string{"realm": "x", "qop": "auth,auth-int", "nonce": `n"1`, "algorithm": "SHA-256"}},
			{Scheme: "basic", Params: map[string]string{"realm": "y"}}}},
		{[]string{`Basic realm="unterminated`}, []Challenge{{Scheme: "basic"}}},
		{[]string{``, `,,`}, nil},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.in, "|"), func(t *testing.T) {
			if d := cmp.Diff(tt.want, ParseChallenges(tt.in)); d != "" {
				t.Error(d)
			}
		})
	}
}

func FuzzParseChallenges(f *testing.F) {
	for _, s := range []string{`Basic realm="x"`, `Digest realm="r", nonce="n", qop="auth"`, `NTLM abc==`, `a=,b`, `"`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) { ParseChallenges([]string{s, s}) })
}

func TestJar(t *testing.T) {
	now := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	jar, err := NewJar(900*time.Second, clock)
	if err != nil {
		t.Fatal(err)
	}
	set := func(raw, header string) {
		u, _ := url.Parse(raw)
		resp := http.Response{Header: http.Header{"Set-Cookie": {header}}}
		jar.SetCookies(u, resp.Cookies())
	}
	names := func(raw string) []string {
		u, _ := url.Parse(raw)
		var out []string
		for _, c := range jar.Cookies(u) {
			out = append(out, c.Name)
		}
		return out
	}
	set("http://www.example.co.uk/", "suffix=1; Domain=co.uk")           // public suffix: refused
	set("http://www.example.co.uk/", "site=1; Domain=example.co.uk")     // the registrable domain: kept
	set("http://www.example.co.uk/", "host=1")                           // host-only
	set("http://www.example.co.uk/", "lasting=1; Max-Age=86400")         // persistent
	set("http://www.example.co.uk/", "other=1; Domain=other.example.uk") // another domain: refused
	if d := cmp.Diff([]string{"site", "host", "lasting"}, names("http://www.example.co.uk/x")); d != "" {
		t.Errorf("same host: %s", d)
	}
	if d := cmp.Diff([]string{"site"}, names("http://shop.example.co.uk/")); d != "" {
		t.Errorf("sibling host: %s", d)
	}
	if got := names("http://www.other.co.uk/"); len(got) != 0 {
		t.Errorf("other site got %v", got)
	}
	now = now.Add(899 * time.Second)
	if got := names("http://www.example.co.uk/"); len(got) != 3 {
		t.Errorf("before cookie_timeout: %v", got)
	}
	now = now.Add(2 * time.Second)
	if d := cmp.Diff([]string{"lasting"}, names("http://www.example.co.uk/")); d != "" {
		t.Errorf("after cookie_timeout session cookies must be gone: %s", d)
	}
}

func TestJarFetch(t *testing.T) {
	var gotCookie atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/set":
			http.SetCookie(w, &http.Cookie{Name: "s", Value: "v1", Path: "/"})
			http.Redirect(w, r, "/show", http.StatusFound)
		default:
			gotCookie.Store(r.Header.Get("Cookie"))
			w.Header().Set("Content-Type", "text/html")
		}
	}))
	defer srv.Close()
	jar, _ := NewJar(0, nil)
	f := newFetcher(t, func(o *Options) { o.Jar = jar })
	get(t, f, srv.URL+"/set")
	if got := gotCookie.Load(); got != "s=v1" {
		t.Errorf("cookie set on a redirect hop: sent %v, want s=v1", got)
	}
	plain := newFetcher(t, nil)
	get(t, plain, srv.URL+"/show")
	if got := gotCookie.Load(); got != "" {
		t.Errorf("fetcher without a jar sent %q", got)
	}
}

// accessServer serves an AccessSite on 127.0.0.1.
func accessServer(t *testing.T, g webfarm.Guard) (*webfarm.AccessSite, string) {
	site := &webfarm.AccessSite{Pages: 6, Guard: g}
	srv := httptest.NewServer(site)
	t.Cleanup(srv.Close)
	return site, srv.URL
}

func authFetcher(t *testing.T, creds ...Credential) *Fetcher {
	t.Helper()
	a, err := NewAuth(creds)
	if err != nil {
		t.Fatal(err)
	}
	return newFetcher(t, func(o *Options) { o.Auth = a })
}

func TestHTTPAuth(t *testing.T) {
	type tc struct {
		name   string
		guard  func() webfarm.Guard
		cred   func(base string) Credential
		status int
	}
	basic := func() webfarm.Guard { return &webfarm.BasicGuard{User: "alice", Password: "s3cret", Realm: "intranet"} }
	digest := func(alg string) func() webfarm.Guard {
		return func() webfarm.Guard {
			return &webfarm.DigestGuard{User: "bob", Password: "pw:with:colons", Realm: "docs", Algorithm: alg, StaleAfter: 3}
		}
	}
	ntlm := func() webfarm.Guard { return &webfarm.NTLMGuard{User: "carol", Password: "Winter2024", Domain: "CORP"} }
	tests := []tc{
		{"basic prefix 2-field", basic, func(b string) Credential { return Credential{Name: b + "/", User: "alice", Password: "s3cret"} }, 200},
		{"basic realm", basic, func(b string) Credential {
			return Credential{Name: "intranet", User: "alice", Password: "s3cret", Scheme: "basic"}
		}, 200},
		{"basic auto", basic, func(b string) Credential {
			return Credential{Name: b, User: "alice", Password: "s3cret", Scheme: "auto"}
		}, 200},
		{"basic wrong password", basic, func(b string) Credential { return Credential{Name: b + "/", User: "alice", Password: "nope"} }, 401},
		{"basic other prefix", basic, func(b string) Credential {
			return Credential{Name: b + "/elsewhere/", User: "alice", Password: "s3cret"}
		}, 401},
		{"digest md5", digest("MD5"), func(b string) Credential {
			return Credential{Name: b + "/", User: "bob", Password: "pw:with:colons", Realm: "docs", Scheme: "digest"}
		}, 200},
		{"digest sha-256", digest("SHA-256"), func(b string) Credential {
			return Credential{Name: "docs", User: "bob", Password: "pw:with:colons", Realm: "docs", Scheme: "digest"}
		}, 200},
		{"digest md5-sess auto", digest("MD5-sess"), func(b string) Credential {
			return Credential{Name: b + "/", User: "bob", Password: "pw:with:colons", Scheme: "auto"}
		}, 200},
		{"digest wrong password", digest("SHA-256"), func(b string) Credential {
			return Credential{Name: b + "/", User: "bob", Password: "bad", Scheme: "digest"}
		}, 401},
		{"digest asked, basic configured", digest("MD5"), func(b string) Credential { return Credential{Name: b + "/", User: "bob", Password: "pw:with:colons"} }, 401},
		{"ntlmv2", ntlm, func(b string) Credential {
			return Credential{Name: b + "/", User: `CORP\carol`, Password: "Winter2024", Scheme: "ntlmv2"}
		}, 200},
		{"ntlm auto realm", ntlm, func(b string) Credential {
			return Credential{Name: "CORP", User: `CORP\carol`, Password: "Winter2024", Scheme: "auto"}
		}, 200},
		{"ntlmv1 setting", ntlm, func(b string) Credential {
			return Credential{Name: b + "/", User: `CORP\carol`, Password: "Winter2024", Scheme: "ntlmv1"}
		}, 200},
		{"ntlm wrong password", ntlm, func(b string) Credential {
			return Credential{Name: b + "/", User: `CORP\carol`, Password: "Summer", Scheme: "ntlmv2"}
		}, 401},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			site, base := accessServer(t, tt.guard())
			if resp := get(t, newFetcher(t, nil), base+"/a/0.html"); resp.Status != 401 {
				t.Fatalf("without credentials: status %d, want 401", resp.Status)
			}
			f := authFetcher(t, tt.cred(base))
			for _, p := range site.Paths() {
				resp := get(t, f, base+p)
				if resp.Status != tt.status {
					t.Fatalf("%s: status %d, want %d", p, resp.Status, tt.status)
				}
			}
			if tt.status == 200 {
				if d := cmp.Diff(sortedCopy(site.Paths()), site.GrantedPaths()); d != "" {
					t.Errorf("granted: %s", d)
				}
			}
			t.Logf("%d requests for %d pages", len(site.Requests()), len(site.Paths()))
		})
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j] < out[j-1]; j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

func TestAuthRoundTrips(t *testing.T) {
	// Basic for a URI prefix goes with the first request; Digest answers
	// in advance once challenged (one 401 for the whole site, plus one
	// per stale nonce).
	t.Run("basic", func(t *testing.T) {
		site, base := accessServer(t, &webfarm.BasicGuard{User: "u", Password: "p", Realm: "r"})
		f := authFetcher(t, Credential{Name: base + "/", User: "u", Password: "p"})
		for _, p := range site.Paths() {
			get(t, f, base+p)
		}
		if n := len(site.Requests()); n != len(site.Paths()) {
			t.Errorf("%d requests for %d pages, want no 401 round trip", n, len(site.Paths()))
		}
	})
	t.Run("digest", func(t *testing.T) {
		g := &webfarm.DigestGuard{User: "u", Password: "p", Realm: "r", Algorithm: "SHA-256", StaleAfter: 3}
		site, base := accessServer(t, g)
		f := authFetcher(t, Credential{Name: "r", User: "u", Password: "p", Scheme: "digest"})
		for _, p := range site.Paths() {
			get(t, f, base+p)
		}
		refused := 0
		for _, r := range site.Requests() {
			if !r.Granted {
				refused++
			}
		}
		// 7 pages, a nonce lasts 3 uses: 3 challenges.
		if refused != 3 {
			t.Errorf("%d challenges for %d pages, want 3", refused, len(site.Paths()))
		}
	})
}

func TestProxies(t *testing.T) {
	site, origin := accessServer(t, nil)
	newProxy := func(user, pw string) (*webfarm.ForwardProxy, ProxyConfig) {
		p := &webfarm.ForwardProxy{User: user, Password: pw}
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		host, port, _ := net.SplitHostPort(u.Host)
		pc := ProxyConfig{Host: host, User: user, Password: pw}
		pc.Port = atoi(port)
		return p, pc
	}
	t.Run("credentials", func(t *testing.T) {
		p, pc := newProxy("proxyuser", "proxypw")
		ps, err := NewProxies([]ProxyConfig{pc}, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := newFetcher(t, func(o *Options) { o.Proxies = ps })
		if resp := get(t, f, origin+"/a/1.html"); resp.Status != 200 {
			t.Fatalf("status %d", resp.Status)
		}
		bad := pc
		bad.Password = "wrong"
		ps2, _ := NewProxies([]ProxyConfig{bad}, 0, nil)
		f2 := newFetcher(t, func(o *Options) { o.Proxies = ps2 })
		if resp := get(t, f2, origin+"/a/2.html"); resp.Status != http.StatusProxyAuthRequired {
			t.Fatalf("wrong proxy password: status %d, want 407", resp.Status)
		}
		st := p.Stats()
		if st.Forwarded != 1 || st.Refused != 1 {
			t.Errorf("proxy stats %+v, want 1 forwarded and 1 refused", st)
		}
		if got := site.GrantedPaths(); !cmp.Equal(got, []string{"/a/1.html"}) {
			t.Errorf("origin served %v", got)
		}
	})
	t.Run("https connect", func(t *testing.T) {
		tlsSrv := httptest.NewTLSServer(&webfarm.AccessSite{Pages: 2})
		t.Cleanup(tlsSrv.Close)
		p, pc := newProxy("pu", "pp")
		ps, _ := NewProxies([]ProxyConfig{pc}, 0, nil)
		pool := x509.NewCertPool()
		pool.AddCert(tlsSrv.Certificate())
		f := newFetcher(t, func(o *Options) { o.Proxies = ps; o.TLSConfig = &tls.Config{RootCAs: pool} })
		if resp := get(t, f, tlsSrv.URL+"/a/0.html"); resp.Status != 200 {
			t.Fatalf("status %d", resp.Status)
		}
		if st := p.Stats(); st.Tunnels != 1 {
			t.Errorf("tunnels %d, want 1", st.Tunnels)
		}
		bad := pc
		bad.Password = "x"
		ps2, _ := NewProxies([]ProxyConfig{bad}, 0, nil)
		f2 := newFetcher(t, func(o *Options) { o.Proxies = ps2; o.TLSConfig = &tls.Config{RootCAs: pool} })
		_, err := f2.Fetch(context.Background(), Request{URL: tlsSrv.URL + "/a/1.html"})
		if KindOf(err) != KindProxy {
			t.Errorf("CONNECT refused: err %v (kind %v), want proxy", err, KindOf(err))
		}
	})
	t.Run("spread and failover", func(t *testing.T) {
		p1, pc1 := newProxy("", "")
		p2, pc2 := newProxy("", "")
		ln, _ := net.Listen("tcp", "127.0.0.1:0")
		deadAddr := ln.Addr().(*net.TCPAddr)
		ln.Close() // nothing listens there now
		dead := ProxyConfig{Host: "127.0.0.1", Port: deadAddr.Port}
		ps, _ := NewProxies([]ProxyConfig{pc1, dead, pc2}, 0, nil)
		f := newFetcher(t, func(o *Options) { o.Proxies = ps })
		for i := 0; i < 6; i++ {
			if resp := get(t, f, origin+"/a/0.html"); resp.Status != 200 {
				t.Fatalf("status %d", resp.Status)
			}
		}
		s1, s2 := p1.Stats().Forwarded, p2.Stats().Forwarded
		if s1+s2 != 6 || s1 < 2 || s2 < 2 {
			t.Errorf("forwarded %d and %d, want 6 spread over both live proxies", s1, s2)
		}
		deadOnly, _ := NewProxies([]ProxyConfig{dead}, 0, nil)
		fd := newFetcher(t, func(o *Options) { o.Proxies = deadOnly })
		_, err := fd.Fetch(context.Background(), Request{URL: origin + "/"})
		if KindOf(err) != KindProxy {
			t.Errorf("unreachable proxy: err %v (kind %v), want proxy", err, KindOf(err))
		}
	})
	t.Run("max pending", func(t *testing.T) {
		release := make(chan struct{})
		var inside atomic.Int32
		slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			inside.Add(1)
			<-release
			w.Header().Set("Content-Type", "text/html")
		}))
		t.Cleanup(slow.Close)
		p, pc := newProxy("", "")
		ps, _ := NewProxies([]ProxyConfig{pc}, 2, nil)
		f := newFetcher(t, func(o *Options) { o.Proxies = ps })
		var wg sync.WaitGroup
		for i := 0; i < 5; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				f.Fetch(context.Background(), Request{URL: slow.URL + "/"})
			}()
		}
		deadline := time.Now().Add(5 * time.Second)
		for inside.Load() < 2 && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if n := inside.Load(); n != 2 {
			t.Errorf("%d requests reached the server through a proxy with proxy_max_pending 2", n)
		}
		close(release)
		wg.Wait()
		if st := p.Stats(); st.MaxInFlight > 2 || st.Forwarded != 5 {
			t.Errorf("proxy saw %+v, want 5 forwarded, at most 2 at once", st)
		}
	})
}

func atoi(s string) int {
	n := 0
	for _, c := range s {
		n = n*10 + int(c-'0')
	}
	return n
}

// testPKI makes a CA, a server certificate for 127.0.0.1 and a client
// certificate, writing the client's to files.
func testPKI(t *testing.T) (pool *x509.CertPool, server tls.Certificate, certFile, keyFile string) {
	t.Helper()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "trawl test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	pool = x509.NewCertPool()
	pool.AddCert(ca)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ip bool) ([]byte, *ecdsa.PrivateKey) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if ip {
			tmpl.IPAddresses = []net.IP{net.ParseIP("127.0.0.1")}
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	sDER, sKey := issue(2, "127.0.0.1", x509.ExtKeyUsageServerAuth, true)
	server = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := issue(3, "trawl crawler", x509.ExtKeyUsageClientAuth, false)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	kDER, _ := x509.MarshalECPrivateKey(cKey)
	os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cDER}), 0o600)
	os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kDER}), 0o600)
	return pool, server, certFile, keyFile
}

func TestClientCertificate(t *testing.T) {
	pool, serverCert, certFile, keyFile := testPKI(t)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<p>hello " + r.TLS.PeerCertificates[0].Subject.CommonName + "</p>"))
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)

	none := newFetcher(t, func(o *Options) { o.TLSConfig = &tls.Config{RootCAs: pool} })
	if _, err := none.Fetch(context.Background(), Request{URL: srv.URL + "/"}); err == nil {
		t.Fatal("a fetch without a client certificate succeeded")
	}
	cert, err := LoadClientCertificate(certFile, keyFile)
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, func(o *Options) {
		o.TLSConfig = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}}
	})
	resp := get(t, f, srv.URL+"/")
	if !strings.Contains(string(resp.Body), "hello trawl crawler") {
		t.Errorf("body %q", resp.Body)
	}
	if _, err := LoadClientCertificate("", keyFile); err == nil {
		t.Error("a key without a certificate was accepted")
	}
	if _, err := LoadClientCertificate(keyFile, certFile); err == nil {
		t.Error("swapped files were accepted")
	}
}

func startFTP(t *testing.T, s *webfarm.FTPServer) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	go s.Serve(ctx, ln)
	return "ftp://" + ln.Addr().String()
}

func TestFTP(t *testing.T) {
	srv := &webfarm.FTPServer{
		Files: map[string]string{
			"/pub/readme.txt":        "read me\n",
			"/pub/docs/guide.html":   `<html><body><a href="../readme.txt">up</a></body></html>`,
			"/pub/docs/a b&c.txt":    "odd name",
			"/private/secret.txt":    "secret",
			"/pub/docs/sub/deep.pdf": "%PDF-1.4 deep",
		},
		Users: map[string]string{"crawler": "ftp-pw"},
	}
	base := startFTP(t, srv)
	host := strings.TrimPrefix(base, "ftp://")
	f := newFetcher(t, func(o *Options) {
		o.AllowedTypes = nil
		o.FTP.Accounts = map[string]FTPAccount{host: {User: "crawler", Password: "ftp-pw"}}
	})
	resp := get(t, f, base+"/pub/docs/")
	if resp.Status != 200 || resp.ContentType != "text/html" {
		t.Fatalf("listing: status %d type %s", resp.Status, resp.ContentType)
	}
	for _, want := range []string{`href="a%20b&amp;c.txt"`, `href="guide.html"`, `href="sub/"`} {
		if !strings.Contains(string(resp.Body), want) {
			t.Errorf("listing lacks %s:\n%s", want, resp.Body)
		}
	}
	resp = get(t, f, base+"/pub/readme.txt")
	if resp.Status != 200 || string(resp.Body) != "read me\n" || resp.ContentType != "text/plain" {
		t.Errorf("file: status %d type %s body %q", resp.Status, resp.ContentType, resp.Body)
	}
	resp = get(t, f, base+"/pub/docs")
	if resp.Status != 301 || resp.Header.Get("Location") != base+"/pub/docs/" {
		t.Errorf("directory without slash: status %d location %q", resp.Status, resp.Header.Get("Location"))
	}
	resp = get(t, f, base+"/pub/missing.txt")
	if resp.Status != 550 {
		t.Errorf("missing file: status %d, want 550", resp.Status)
	}
	if k := ErrorKey(resp.Status, nil); k != "550" {
		t.Errorf("ftp_errors key %q", k)
	}
	anon := newFetcher(t, func(o *Options) { o.AllowedTypes = nil })
	if resp := get(t, anon, base+"/pub/readme.txt"); resp.Status != 530 {
		t.Errorf("anonymous on a server without anonymous: status %d, want 530", resp.Status)
	}
	wrong := newFetcher(t, func(o *Options) {
		o.FTP.Accounts = map[string]FTPAccount{host: {User: "crawler", Password: "bad"}}
	})
	if resp := get(t, wrong, base+"/pub/readme.txt"); resp.Status != 530 {
		t.Errorf("wrong password: status %d, want 530", resp.Status)
	}
	cut := newFetcher(t, func(o *Options) {
		o.AllowedTypes = nil
		o.CutOff = 4
		o.FTP.Accounts = map[string]FTPAccount{host: {User: "crawler", Password: "ftp-pw"}}
	})
	if resp := get(t, cut, base+"/pub/readme.txt"); !resp.Truncated || string(resp.Body) != "read" {
		t.Errorf("cut_off: truncated %v body %q", resp.Truncated, resp.Body)
	}
	// The truncated fetch does not wait for the server's 226: the server
	// may log its RETR a moment after the fetch has returned.
	want := []string{"/pub/readme.txt", "/pub/readme.txt"}
	got := srv.Retrieved()
	for deadline := time.Now().Add(5 * time.Second); !cmp.Equal(got, want) && time.Now().Before(deadline); got = srv.Retrieved() {
		time.Sleep(10 * time.Millisecond)
	}
	if !cmp.Equal(got, want) {
		t.Errorf("server sent %v", got)
	}
}

func TestFormLogin(t *testing.T) {
	g := &webfarm.FormLoginGuard{User: "dave", Password: "letmein"}
	site, base := accessServer(t, g)
	u, _ := url.Parse(base)
	newLogins := func(t *testing.T, l Login) (*Logins, *Fetcher) {
		jar, _ := NewJar(900*time.Second, nil)
		o := DefaultOptions()
		o.Timeout = 10 * time.Second
		o.Jar = jar
		o.MaxRedirects = 0
		f, err := New(o)
		if err != nil {
			t.Fatal(err)
		}
		ls, err := NewLogins([]Login{l}, o, 5*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ls, f
	}
	t.Run("autofill", func(t *testing.T) {
		ls, f := newLogins(t, Login{Name: "l", HTMLForm: base + "/login", Autofill: true,
			Params: []FormField{{"user", "dave"}, {"password", "letmein"}}, Sites: []string{u.Host}})
		if resp := get(t, f, base+"/a/0.html"); resp.Status != 302 {
			t.Fatalf("before login: status %d, want a redirect to the form", resp.Status)
		}
		if !ls.IsLoginPage(u, mustURL(base+"/login")) {
			t.Error("the form page is not recognized")
		}
		if err := ls.Ensure(context.Background(), u); err != nil {
			t.Fatal(err)
		}
		for _, p := range site.Paths() {
			if resp := get(t, f, base+p); resp.Status != 200 {
				t.Fatalf("%s after login: status %d", p, resp.Status)
			}
		}
		if err := ls.Ensure(context.Background(), u); err != nil || ls.Count(u) != 1 {
			t.Errorf("a valid session logged in again: %v, %d logins", err, ls.Count(u))
		}
		ls.Invalidate(u)
		if err := ls.Ensure(context.Background(), u); err != nil || ls.Count(u) != 2 {
			t.Errorf("relogin: %v, %d logins", err, ls.Count(u))
		}
	})
	t.Run("configured form without autofill", func(t *testing.T) {
		// No autofill: the one-time token of the form is not sent, so the
		// server refuses; the login must report the failure.
		ls, _ := newLogins(t, Login{Name: "l", Scheme: "http", Site: u.Host, Form: "/login", Action: "POST",
			Params: []FormField{{"user", "dave"}, {"password", "letmein"}}})
		err := ls.Ensure(context.Background(), u)
		if err == nil || !strings.Contains(err.Error(), "login form again") {
			t.Errorf("err = %v, want a failed login", err)
		}
	})
	t.Run("wrong password", func(t *testing.T) {
		ls, _ := newLogins(t, Login{Name: "l", HTMLForm: base + "/login", Autofill: true,
			Params: []FormField{{"user", "dave"}, {"password", "guess"}}})
		err := ls.Ensure(context.Background(), u)
		if err == nil {
			t.Fatal("a wrong password logged in")
		}
		if err2 := ls.Ensure(context.Background(), u); err2 == nil || ls.Count(u) != 1 {
			t.Errorf("a failed login without relogin_if_failed was tried again (%d attempts)", ls.Count(u))
		}
	})
	t.Run("relogin_if_failed after ttl", func(t *testing.T) {
		now := time.Unix(1e9, 0)
		jar, _ := NewJar(0, nil)
		o := DefaultOptions()
		o.Jar = jar
		ls, err := NewLogins([]Login{{Name: "l", HTMLForm: base + "/login", Autofill: true, TTL: time.Minute, ReloginIfFailed: true,
			Params: []FormField{{"user", "dave"}, {"password", "guess"}}}}, o, 5*time.Second, func() time.Time { return now })
		if err != nil {
			t.Fatal(err)
		}
		ls.Ensure(context.Background(), u)
		ls.Ensure(context.Background(), u)
		if ls.Count(u) != 1 {
			t.Fatalf("%d attempts before ttl", ls.Count(u))
		}
		now = now.Add(time.Minute)
		ls.Ensure(context.Background(), u)
		if ls.Count(u) != 2 {
			t.Errorf("%d attempts after ttl, want 2", ls.Count(u))
		}
	})
}

func mustURL(s string) *url.URL {
	u, err := url.Parse(s)
	if err != nil {
		panic(err)
	}
	return u
}

func TestParseForms(t *testing.T) {
	page := `<form action="/go" method=POST><input type=hidden name=t value=x>
<input name=user><input type=password name=pw value=d><input type=checkbox name=c1 checked><input type=checkbox name=c2>
<select name=s><option>a<option selected value=B>b</select><textarea name=ta>hi</textarea><input type=submit name=go value=Go></form>
<form><input name=q></form>`
	base := mustURL("http://h/dir/page.html")
	got := ParseForms([]byte(page), base)
	if len(got) != 2 {
		t.Fatalf("%d forms", len(got))
	}
	want := []FormField{{"t", "x"}, {"user", ""}, {"pw", "d"}, {"c1", "on"}, {"s", "B"}, {"ta", "hi"}}
	if d := cmp.Diff(want, got[0].Fields); d != "" {
		t.Error(d)
	}
	if got[0].Action.String() != "http://h/go" || got[0].Method != "POST" || !got[0].Password {
		t.Errorf("form 0: %v %s %v", got[0].Action, got[0].Method, got[0].Password)
	}
	if got[1].Action.String() != base.String() || got[1].Method != "GET" || got[1].Password {
		t.Errorf("form 1: %v %s", got[1].Action, got[1].Method)
	}
}
