package webfarm

import (
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	stdhash "hash"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// AccessSite is a small site behind an access control, for the crawler's
// authentication tests: pages "/" and "/a/<n>.html" (0 <= n < Pages), page
// n linking to pages 2n+1 and 2n+2, every page reachable only by links.
// Guard decides who gets in; a request the guard refuses gets its refusal
// (401, or a redirect to a login form) and is logged as refused.
type AccessSite struct {
	Pages int
	Guard Guard

	mu   sync.Mutex
	log  []AccessRequest
	seen map[string]bool
}

// AccessRequest is one request to an AccessSite.
type AccessRequest struct {
	Path    string
	Granted bool
}

// Guard protects an AccessSite. Admit either lets the request through
// (true) or answers it itself (false).
type Guard interface {
	Admit(w http.ResponseWriter, r *http.Request) bool
}

// Paths lists every page of the site, in order: what a crawl that got in
// fetches.
func (s *AccessSite) Paths() []string {
	out := []string{"/"}
	for n := 0; n < s.Pages; n++ {
		out = append(out, "/a/"+strconv.Itoa(n)+".html")
	}
	return out
}

// Requests returns the request log.
func (s *AccessSite) Requests() []AccessRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]AccessRequest(nil), s.log...)
}

// GrantedPaths is the sorted set of pages served with access granted.
func (s *AccessSite) GrantedPaths() []string {
	set := map[string]bool{}
	for _, r := range s.Requests() {
		if r.Granted {
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

func (s *AccessSite) record(p string, ok bool) {
	s.mu.Lock()
	s.log = append(s.log, AccessRequest{Path: p, Granted: ok})
	s.mu.Unlock()
}

// ServeHTTP serves the site.
func (s *AccessSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/robots.txt" {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "User-agent: *\nDisallow:\n")
		return
	}
	if s.Guard != nil && !s.Guard.Admit(w, r) {
		s.record(r.URL.Path, false)
		return
	}
	n := -1
	switch {
	case r.URL.Path == "/":
	case strings.HasPrefix(r.URL.Path, "/a/") && strings.HasSuffix(r.URL.Path, ".html"):
		v, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/a/"), ".html"))
		if err != nil || v < 0 || v >= s.Pages || strconv.Itoa(v) != strings.TrimSuffix(strings.TrimPrefix(r.URL.Path, "/a/"), ".html") {
			s.record(r.URL.Path, true)
			http.NotFound(w, r)
			return
		}
		n = v
	default:
		s.record(r.URL.Path, true)
		http.NotFound(w, r)
		return
	}
	s.record(r.URL.Path, true)
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprintf(w, "<!DOCTYPE html><html><head><title>Protected page %d</title></head><body><p>Protected text %d.</p>\n", n, n)
	if n < 0 {
		if s.Pages > 0 {
			io.WriteString(w, `<a href="/a/0.html">start</a>`+"\n")
		}
	} else {
		for _, c := range []int{2*n + 1, 2*n + 2} {
			if c < s.Pages {
				fmt.Fprintf(w, "<a href=\"/a/%d.html\">page %d</a>\n", c, c)
			}
		}
	}
	io.WriteString(w, "</body></html>\n")
}

// BasicGuard demands HTTP Basic authentication (RFC 7617).
type BasicGuard struct {
	User, Password, Realm string
}

// Admit implements Guard.
func (g *BasicGuard) Admit(w http.ResponseWriter, r *http.Request) bool {
	u, p, ok := r.BasicAuth()
	if ok && subtle.ConstantTimeCompare([]byte(u), []byte(g.User)) == 1 && subtle.ConstantTimeCompare([]byte(p), []byte(g.Password)) == 1 {
		return true
	}
	w.Header().Set("WWW-Authenticate", fmt.Sprintf("Basic realm=%q, charset=\"UTF-8\"", g.Realm))
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}

// DigestGuard demands HTTP Digest authentication (RFC 7616) with qop=auth
// and the algorithm Algorithm ("MD5", "SHA-256", or "-sess" variants;
// default MD5). Nonces are random and remembered with the highest nonce
// count used, so a replayed count is refused; StaleAfter > 0 makes a nonce
// stale after that many uses (the client must take the new one).
type DigestGuard struct {
	User, Password, Realm, Algorithm string
	StaleAfter                       int

	mu     sync.Mutex
	nonces map[string]int // nonce -> last nc (and uses)
	uses   map[string]int
}

// Admit implements Guard.
func (g *DigestGuard) Admit(w http.ResponseWriter, r *http.Request) bool {
	alg := g.Algorithm
	if alg == "" {
		alg = "MD5"
	}
	stale := false
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Digest ") {
		ok, st := g.check(h[len("Digest "):], r.Method, alg)
		if ok {
			return true
		}
		stale = st
	}
	nonce := randomHex(16)
	g.mu.Lock()
	if g.nonces == nil {
		g.nonces, g.uses = map[string]int{}, map[string]int{}
	}
	if len(g.nonces) > 10000 {
		g.nonces, g.uses = map[string]int{}, map[string]int{}
	}
	g.nonces[nonce] = 0
	g.mu.Unlock()
	v := fmt.Sprintf("Digest realm=%q, qop=\"auth\", algorithm=%s, nonce=%q, opaque=\"op-aque\"", g.Realm, alg, nonce)
	if stale {
		v += ", stale=true"
	}
	w.Header().Set("WWW-Authenticate", v)
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}

func (g *DigestGuard) check(h, method, alg string) (ok, stale bool) {
	p := parseDigestParams(h)
	if p["username"] != g.User || p["realm"] != g.Realm || p["qop"] != "auth" || p["opaque"] != "op-aque" || !strings.EqualFold(p["algorithm"], alg) {
		return false, false
	}
	nc, err := strconv.ParseUint(p["nc"], 16, 32)
	if err != nil {
		return false, false
	}
	g.mu.Lock()
	last, known := g.nonces[p["nonce"]]
	if known && int(nc) > last {
		g.nonces[p["nonce"]] = int(nc)
		g.uses[p["nonce"]]++
	}
	uses := g.uses[p["nonce"]]
	g.mu.Unlock()
	if !known {
		return false, true
	}
	if int(nc) <= last {
		return false, false
	}
	var newHash func() stdhash.Hash = md5.New
	if strings.HasPrefix(strings.ToUpper(alg), "SHA-256") {
		newHash = sha256.New
	}
	hx := func(s string) string {
		x := newHash()
		io.WriteString(x, s)
		return hex.EncodeToString(x.Sum(nil))
	}
	ha1 := hx(g.User + ":" + g.Realm + ":" + g.Password)
	if strings.HasSuffix(strings.ToLower(alg), "-sess") {
		ha1 = hx(ha1 + ":" + p["nonce"] + ":" + p["cnonce"])
	}
	ha2 := hx(method + ":" + p["uri"])
	want := hx(ha1 + ":" + p["nonce"] + ":" + p["nc"] + ":" + p["cnonce"] + ":auth:" + ha2)
	if subtle.ConstantTimeCompare([]byte(want), []byte(p["response"])) != 1 {
		return false, false
	}
	if g.StaleAfter > 0 && uses > g.StaleAfter {
		return false, true
	}
	return true, false
}

// parseDigestParams reads name=value and name="value" pairs.
func parseDigestParams(s string) map[string]string {
	out := map[string]string{}
	for len(s) > 0 {
		s = strings.TrimLeft(s, " \t,")
		eq := strings.IndexByte(s, '=')
		if eq <= 0 {
			break
		}
		name := strings.ToLower(strings.TrimSpace(s[:eq]))
		s = strings.TrimLeft(s[eq+1:], " \t")
		var val string
		if strings.HasPrefix(s, `"`) {
			var b strings.Builder
			i := 1
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) {
					i++
				}
				b.WriteByte(s[i])
			}
			val = b.String()
			if i < len(s) {
				i++
			}
			s = s[i:]
		} else {
			end := strings.IndexByte(s, ',')
			if end < 0 {
				end = len(s)
			}
			val = strings.TrimSpace(s[:end])
			s = s[end:]
		}
		out[name] = val
	}
	return out
}

func randomHex(n int) string { return hex.EncodeToString(randomBytes(n)) }

func randomBytes(n int) []byte {
	b := make([]byte, n)
	rand.Read(b)
	return b
}

// FormLoginGuard is a site with an HTML form login: GET LoginPath shows a
// form (user, password and a hidden one-time token); a POST of the right
// values sets a session cookie and redirects to "/". Any other page
// without a valid session cookie redirects to LoginPath. LogoutPath ends
// the session. A session ends by itself after SessionRequests granted
// requests (0: never), as a server-side timeout would. Public pages are
// served without a session; LoginDelay makes the login slow.
type FormLoginGuard struct {
	User, Password string
	LoginPath      string // default "/login"
	LogoutPath     string // default "/logout"
	Cookie         string // default "SESSION"
	// SessionRequests > 0 ends a session after that many pages.
	SessionRequests int
	// PreloadPath, if set, is a page that sets a PRELOAD cookie; a login
	// submission is then accepted only with that cookie and needs no form
	// token (a login the crawl configures with preload, scheme, site and
	// form instead of reading the form).
	PreloadPath string
	// LoginMethod is the method of a login submission: POST (default) or
	// GET, the user and password then in the query string.
	LoginMethod string
	// LoginDelay > 0 delays every answer of LoginPath (the form and the
	// submission) by that long, as a slow login server would; a client
	// that gives up first is not answered (and its submission not taken).
	LoginDelay time.Duration
	// Public are paths served to anyone, without a session.
	Public []string

	mu       sync.Mutex
	tokens   map[string]bool
	sessions map[string]int
	logins   int
	failures int
}

func (g *FormLoginGuard) paths() (login, logout, cookie string) {
	login, logout, cookie = g.LoginPath, g.LogoutPath, g.Cookie
	if login == "" {
		login = "/login"
	}
	if logout == "" {
		logout = "/logout"
	}
	if cookie == "" {
		cookie = "SESSION"
	}
	return
}

// Logins returns how many logins succeeded and failed.
func (g *FormLoginGuard) Logins() (ok, failed int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.logins, g.failures
}

// Admit implements Guard.
func (g *FormLoginGuard) Admit(w http.ResponseWriter, r *http.Request) bool {
	login, logout, cookie := g.paths()
	g.mu.Lock()
	if g.tokens == nil {
		g.tokens, g.sessions = map[string]bool{}, map[string]int{}
	}
	g.mu.Unlock()
	method := g.LoginMethod
	if method == "" {
		method = http.MethodPost
	}
	for _, p := range g.Public {
		if r.URL.Path == p {
			return true
		}
	}
	if r.URL.Path == login && g.LoginDelay > 0 {
		t := time.NewTimer(g.LoginDelay)
		defer t.Stop()
		select {
		case <-t.C:
		case <-r.Context().Done():
			return false // the client is gone: nothing to answer
		}
	}
	switch r.URL.Path {
	case g.PreloadPath:
		if g.PreloadPath == "" {
			break
		}
		tok := randomHex(12)
		g.mu.Lock()
		if len(g.tokens) > 10000 {
			g.tokens = map[string]bool{}
		}
		g.tokens[tok] = true
		g.mu.Unlock()
		http.SetCookie(w, &http.Cookie{Name: "PRELOAD", Value: tok, Path: "/"})
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		io.WriteString(w, "<!DOCTYPE html><html><head><title>Welcome</title></head><body><p>Welcome.</p></body></html>\n")
		return false
	case login:
		submitted := r.Method == method && (method == http.MethodPost || r.URL.Query().Has("user"))
		if submitted {
			var form url.Values
			if method == http.MethodPost {
				r.Body = http.MaxBytesReader(w, r.Body, 64<<10)
				r.ParseForm()
				form = r.PostForm
			} else {
				form = r.URL.Query()
			}
			tok := form.Get("token")
			if g.PreloadPath != "" {
				tok = ""
				if c, err := r.Cookie("PRELOAD"); err == nil {
					tok = c.Value
				}
			}
			g.mu.Lock()
			okTok := g.tokens[tok]
			delete(g.tokens, tok)
			good := okTok && form.Get("user") == g.User && form.Get("password") == g.Password
			var sid string
			if good {
				sid = randomHex(16)
				if len(g.sessions) > 10000 {
					g.sessions = map[string]int{}
				}
				g.sessions[sid] = 0
				g.logins++
			} else {
				g.failures++
			}
			g.mu.Unlock()
			if good {
				http.SetCookie(w, &http.Cookie{Name: cookie, Value: sid, Path: "/", HttpOnly: true})
				http.Redirect(w, r, "/", http.StatusFound)
				return false
			}
		}
		tok := randomHex(12)
		g.mu.Lock()
		if len(g.tokens) > 10000 {
			g.tokens = map[string]bool{}
		}
		g.tokens[tok] = true
		g.mu.Unlock()
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprintf(w, `<!DOCTYPE html><html><head><title>Sign in</title></head><body>
<form method="post" action="%s"><input type="hidden" name="token" value="%s">
<input type="text" name="user" value=""><input type="password" name="password">
<select name="lang"><option value="en" selected>English</option><option value="fr">French</option></select>
<input type="submit" value="Sign in"></form></body></html>
`, login, tok)
		return false
	case logout:
		if c, err := r.Cookie(cookie); err == nil {
			g.mu.Lock()
			delete(g.sessions, c.Value)
			g.mu.Unlock()
		}
		http.Redirect(w, r, login, http.StatusFound)
		return false
	}
	if c, err := r.Cookie(cookie); err == nil {
		g.mu.Lock()
		n, ok := g.sessions[c.Value]
		if ok {
			n++
			if g.SessionRequests > 0 && n >= g.SessionRequests {
				delete(g.sessions, c.Value)
			} else {
				g.sessions[c.Value] = n
			}
		}
		g.mu.Unlock()
		if ok {
			return true
		}
	}
	http.Redirect(w, r, login, http.StatusFound)
	return false
}

// basicCredentials decodes a Basic Proxy-Authorization or Authorization
// value.
func basicCredentials(h string) (user, pass string, ok bool) {
	const prefix = "Basic "
	if len(h) < len(prefix) || !strings.EqualFold(h[:len(prefix)], prefix) {
		return "", "", false
	}
	b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(h[len(prefix):]))
	if err != nil {
		return "", "", false
	}
	user, pass, ok = strings.Cut(string(b), ":")
	return
}
