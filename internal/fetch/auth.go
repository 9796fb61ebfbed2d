package fetch

import (
	"context"
	"crypto/md5"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"sync"

	ntlmssp "github.com/Azure/go-ntlmssp"
)

// Authentication schemes of passwd (MS-FSCCFG 2.2.4.20).
const (
	SchemeBasic  = "basic"
	SchemeDigest = "digest"
	SchemeNTLMv1 = "ntlmv1"
	SchemeNTLMv2 = "ntlmv2"
	SchemeAuto   = "auto"
)

// Credential is one passwd entry, its password in clear.
type Credential struct {
	// Name is the attrib name: a URI prefix ("http://host/dir/") or a realm.
	Name string
	User string
	// Password is the clear password (decrypted by the caller).
	Password string
	// Realm is the realm field of the four-field form ("" in the two-field
	// form); Scheme is basic, digest, ntlmv1, ntlmv2 or auto ("" means
	// basic, as the two-field form does).
	Realm, Scheme string
}

// Auth answers HTTP authentication challenges with the passwd credentials
// (MS-FSCCFG 2.2.4.20). An entry named by a URI applies to every URL that
// starts with it (scheme and host compared case-insensitively, default
// ports ignored); the longest such prefix wins. Otherwise an entry named by
// the challenge's realm applies. The entry's scheme decides what is
// answered: basic, digest (RFC 7616: MD5, MD5-sess, SHA-256, SHA-256-sess,
// qop=auth or none), ntlmv1/ntlmv2 (NTLMv2 through go-ntlmssp, see
// docs/decisions/fetch.md) or auto (the strongest scheme the server offers: NTLM,
// then Digest, then Basic).
//
// Basic credentials of a URI-prefix entry are sent with the first request
// (no 401 round trip); a Digest protection space, once challenged, is
// answered in advance with the next nonce count. It is safe for concurrent
// use.
type Auth struct {
	prefixes []prefixCred // longest first
	realms   map[string]*Credential

	mu     sync.Mutex
	digest map[string]*digestState // origin + "\x00" + realm
	spaces map[string][]spaceEntry // origin -> protection spaces seen
	ntlmMu map[string]*sync.Mutex  // origin -> serializes NTLM handshakes
	rand   io.Reader
}

type prefixCred struct {
	prefix string // normalized
	cred   *Credential
}

// spaceEntry remembers that URLs under dir of an origin were answered with
// cred and a scheme, so that the next request there authenticates at once.
type spaceEntry struct {
	dir    string
	scheme string // basic, digest, ntlm
	realm  string
	cred   *Credential
}

const maxSpacesPerOrigin = 16
const maxAuthOrigins = 4096

// NewAuth compiles the passwd entries. An entry whose name parses as an
// absolute http(s) URI is a prefix; any other name is a realm.
func NewAuth(creds []Credential) (*Auth, error) {
	a := &Auth{realms: map[string]*Credential{}, digest: map[string]*digestState{}, spaces: map[string][]spaceEntry{}, ntlmMu: map[string]*sync.Mutex{}, rand: rand.Reader}
	for i := range creds {
		c := creds[i]
		switch c.Scheme {
		case "", SchemeBasic, SchemeDigest, SchemeNTLMv1, SchemeNTLMv2, SchemeAuto:
		default:
			return nil, fmt.Errorf("fetch: passwd %s: unknown scheme %q", c.Name, c.Scheme)
		}
		if c.User == "" {
			return nil, fmt.Errorf("fetch: passwd %s: empty user name", c.Name)
		}
		name := strings.TrimSpace(c.Name)
		if p, ok := normalizePrefix(name); ok {
			a.prefixes = append(a.prefixes, prefixCred{prefix: p, cred: &c})
		} else {
			a.realms[name] = &c
		}
	}
	sort.SliceStable(a.prefixes, func(i, j int) bool { return len(a.prefixes[i].prefix) > len(a.prefixes[j].prefix) })
	return a, nil
}

func (a *Auth) needsNTLM() bool {
	for _, p := range a.prefixes {
		if isNTLMScheme(p.cred.Scheme) || p.cred.Scheme == SchemeAuto {
			return true
		}
	}
	for _, c := range a.realms {
		if isNTLMScheme(c.Scheme) || c.Scheme == SchemeAuto {
			return true
		}
	}
	return false
}

func isNTLMScheme(s string) bool { return s == SchemeNTLMv1 || s == SchemeNTLMv2 }

// normalizePrefix turns a URI into the comparable form
// "scheme://host[:port]/path": lower-case scheme and host, no default port.
func normalizePrefix(s string) (string, bool) {
	u, err := url.Parse(s)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	return origin(u) + pathOf(u), true
}

func origin(u *url.URL) string {
	scheme := strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Hostname())
	port := u.Port()
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	if strings.Contains(host, ":") {
		host = "[" + host + "]"
	}
	if port != "" {
		host += ":" + port
	}
	return scheme + "://" + host
}

func pathOf(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// prefixFor returns the credential of the longest URI prefix of u.
func (a *Auth) prefixFor(u *url.URL) *Credential {
	s := origin(u) + pathOf(u)
	for _, p := range a.prefixes {
		if strings.HasPrefix(s, p.prefix) {
			return p.cred
		}
	}
	return nil
}

// preemptive returns the Authorization header to send with the first
// request to u, if one is known.
func (a *Auth) preemptive(method string, u *url.URL) string {
	if c := a.prefixFor(u); c != nil && (c.Scheme == "" || c.Scheme == SchemeBasic) {
		return basicHeader(c)
	}
	o := origin(u)
	p := u.EscapedPath()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.spaces[o] {
		if !strings.HasPrefix(p, e.dir) {
			continue
		}
		switch e.scheme {
		case "basic":
			return basicHeader(e.cred)
		case "digest":
			if st := a.digest[o+"\x00"+e.realm]; st != nil {
				h, err := st.authorize(e.cred, method, requestURI(u), a.rand)
				if err == nil {
					return h
				}
			}
		}
	}
	return ""
}

// ntlmFor returns the credential of an NTLM space u is known to be in.
func (a *Auth) ntlmFor(u *url.URL) *Credential {
	o := origin(u)
	p := u.EscapedPath()
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, e := range a.spaces[o] {
		if e.scheme == "ntlm" && strings.HasPrefix(p, e.dir) {
			return e.cred
		}
	}
	return nil
}

func (a *Auth) remember(u *url.URL, scheme, realm string, c *Credential) {
	o := origin(u)
	dir := u.EscapedPath()
	if i := strings.LastIndexByte(dir, '/'); i >= 0 {
		dir = dir[:i+1]
	} else {
		dir = "/"
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	l := a.spaces[o]
	for _, e := range l {
		if e.dir == dir && e.scheme == scheme && e.realm == realm {
			return
		}
	}
	if len(a.spaces) >= maxAuthOrigins && l == nil {
		for k := range a.spaces { // forget one origin: a bound, not a cache policy
			delete(a.spaces, k)
			break
		}
	}
	if len(l) >= maxSpacesPerOrigin {
		l = l[1:]
	}
	a.spaces[o] = append(l, spaceEntry{dir: dir, scheme: scheme, realm: realm, cred: c})
}

func (a *Auth) forget(u *url.URL) {
	a.mu.Lock()
	defer a.mu.Unlock()
	delete(a.spaces, origin(u))
}

// choose picks the credential and the challenge to answer for u.
func (a *Auth) choose(u *url.URL, chs []Challenge) (*Credential, *Challenge) {
	find := func(scheme string) *Challenge {
		for i := range chs {
			if chs[i].Scheme == scheme {
				return &chs[i]
			}
		}
		return nil
	}
	var digest *Challenge
	for _, alg := range []string{"sha-256", "sha-256-sess", "md5", "md5-sess"} {
		for i := range chs {
			if chs[i].Scheme == "digest" && digestAlgorithm(chs[i].Params["algorithm"]) == alg && digest == nil {
				digest = &chs[i]
			}
		}
	}
	ntlm := find("ntlm")
	if ntlm == nil {
		ntlm = find("negotiate")
	}
	basic := find("basic")
	pick := func(c *Credential) (*Credential, *Challenge) {
		switch c.Scheme {
		case "", SchemeBasic:
			if basic != nil {
				return c, basic
			}
		case SchemeDigest:
			if digest != nil {
				return c, digest
			}
		case SchemeNTLMv1, SchemeNTLMv2:
			if ntlm != nil {
				return c, ntlm
			}
		case SchemeAuto:
			for _, ch := range []*Challenge{ntlm, digest, basic} {
				if ch != nil {
					return c, ch
				}
			}
		}
		return nil, nil
	}
	if c := a.prefixFor(u); c != nil {
		return pick(c)
	}
	for _, ch := range chs {
		realm, ok := ch.Params["realm"]
		if !ok {
			continue
		}
		if c := a.realms[realm]; c != nil {
			if cc, ch := pick(c); cc != nil {
				return cc, ch
			}
		}
	}
	// A realm entry named like the realm but in another case.
	for _, ch := range chs {
		for name, c := range a.realms {
			if strings.EqualFold(name, ch.Params["realm"]) && ch.Params["realm"] != "" {
				if cc, ch := pick(c); cc != nil {
					return cc, ch
				}
			}
		}
	}
	// NTLM challenges carry no realm: a realm entry for NTLM or auto
	// applies when it is the only one that can answer.
	if ntlm != nil {
		var only *Credential
		n := 0
		for _, c := range a.realms {
			if isNTLMScheme(c.Scheme) || c.Scheme == SchemeAuto {
				only, n = c, n+1
			}
		}
		if n == 1 {
			return only, ntlm
		}
	}
	return nil, nil
}

func basicHeader(c *Credential) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(c.User+":"+c.Password))
}

func requestURI(u *url.URL) string {
	p := u.EscapedPath()
	if p == "" {
		p = "/"
	}
	if u.RawQuery != "" {
		p += "?" + u.RawQuery
	}
	return p
}

// digestAlgorithm normalizes an algorithm parameter (absent means MD5).
func digestAlgorithm(a string) string {
	if a == "" {
		return "md5"
	}
	return strings.ToLower(a)
}

// digestState is a Digest protection space: the server's nonce and the
// nonce count of the next request.
type digestState struct {
	mu     sync.Mutex
	realm  string
	nonce  string
	opaque string
	alg    string // md5, md5-sess, sha-256, sha-256-sess
	qop    string // "auth" or "" (RFC 2069 compatibility)
	nc     uint32
}

func newDigestState(ch *Challenge) (*digestState, error) {
	alg := digestAlgorithm(ch.Params["algorithm"])
	switch alg {
	case "md5", "md5-sess", "sha-256", "sha-256-sess":
	default:
		return nil, fmt.Errorf("fetch: digest algorithm %q not supported", ch.Params["algorithm"])
	}
	nonce, ok := ch.Params["nonce"]
	if !ok || nonce == "" {
		return nil, errors.New("fetch: digest challenge without nonce")
	}
	st := &digestState{realm: ch.Params["realm"], nonce: nonce, opaque: ch.Params["opaque"], alg: alg}
	if q, ok := ch.Params["qop"]; ok {
		found := false
		for _, v := range strings.Split(q, ",") {
			if strings.EqualFold(strings.TrimSpace(v), "auth") {
				found = true
			}
		}
		if !found {
			return nil, fmt.Errorf("fetch: digest qop %q not supported (only auth)", q)
		}
		st.qop = "auth"
	}
	return st, nil
}

// authorize computes the Authorization header of one request (RFC 7616
// section 3.4).
func (st *digestState) authorize(c *Credential, method, uri string, rnd io.Reader) (string, error) {
	st.mu.Lock()
	st.nc++
	nc := st.nc
	st.mu.Unlock()
	var newHash func() hash.Hash
	if strings.HasPrefix(st.alg, "sha-256") {
		newHash = sha256.New
	} else {
		newHash = md5.New
	}
	h := func(s string) string {
		x := newHash()
		io.WriteString(x, s)
		return hex.EncodeToString(x.Sum(nil))
	}
	var cb [16]byte
	if _, err := io.ReadFull(rnd, cb[:]); err != nil {
		return "", fmt.Errorf("fetch: digest cnonce: %w", err)
	}
	cnonce := hex.EncodeToString(cb[:])
	ha1 := h(c.User + ":" + st.realm + ":" + c.Password)
	if strings.HasSuffix(st.alg, "-sess") {
		ha1 = h(ha1 + ":" + st.nonce + ":" + cnonce)
	}
	ha2 := h(method + ":" + uri)
	ncs := fmt.Sprintf("%08x", nc)
	var resp string
	if st.qop == "auth" {
		resp = h(ha1 + ":" + st.nonce + ":" + ncs + ":" + cnonce + ":auth:" + ha2)
	} else {
		resp = h(ha1 + ":" + st.nonce + ":" + ha2)
	}
	var b strings.Builder
	fmt.Fprintf(&b, `Digest username=%s, realm=%s, nonce=%s, uri=%s, response="%s"`,
		quote(c.User), quote(st.realm), quote(st.nonce), quote(uri), resp)
	alg := strings.ToUpper(st.alg)
	alg = strings.Replace(alg, "-SESS", "-sess", 1)
	fmt.Fprintf(&b, ", algorithm=%s", alg)
	if st.qop == "auth" {
		fmt.Fprintf(&b, `, qop=auth, nc=%s, cnonce="%s"`, ncs, cnonce)
	}
	if st.opaque != "" {
		fmt.Fprintf(&b, ", opaque=%s", quote(st.opaque))
	}
	return b.String(), nil
}

func quote(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func (a *Auth) ntlmLock(u *url.URL) *sync.Mutex {
	o := origin(u)
	a.mu.Lock()
	defer a.mu.Unlock()
	m := a.ntlmMu[o]
	if m == nil {
		if len(a.ntlmMu) >= maxAuthOrigins {
			a.ntlmMu = map[string]*sync.Mutex{}
		}
		m = &sync.Mutex{}
		a.ntlmMu[o] = m
	}
	return m
}

// authExchange sends one request, answering an authentication challenge
// when the Auth has credentials for it. The response returned is the last
// one: a 401 after credentials were sent means they were refused.
func (f *Fetcher) authExchange(ctx context.Context, u *url.URL, method string, body []byte, req Request, resp *Response) (*http.Response, error) {
	a := f.o.Auth
	if a == nil || req.Header.Get("Authorization") != "" {
		return f.roundTrip(ctx, f.tr, u, method, body, req, resp, "")
	}
	if c := a.ntlmFor(u); c != nil && f.ntlm != nil {
		hr, err := f.ntlmHandshake(ctx, u, method, body, req, resp, c, "NTLM")
		if err != nil || hr.StatusCode != http.StatusUnauthorized {
			return hr, err
		}
		discard(hr)
		a.forget(u)
	}
	pre := a.preemptive(method, u)
	hr, err := f.roundTrip(ctx, f.tr, u, method, body, req, resp, pre)
	if err != nil || hr.StatusCode != http.StatusUnauthorized {
		return hr, err
	}
	chs := ParseChallenges(hr.Header.Values("WWW-Authenticate"))
	c, ch := a.choose(u, chs)
	if c == nil {
		return hr, nil
	}
	if pre != "" && ch.Scheme == "basic" {
		// The Basic credentials sent in advance were refused: the same
		// again would be refused again.
		a.forget(u)
		return hr, nil
	}
	switch ch.Scheme {
	case "basic":
		discard(hr)
		h := basicHeader(c)
		hr2, err := f.roundTrip(ctx, f.tr, u, method, body, req, resp, h)
		if err == nil && hr2.StatusCode != http.StatusUnauthorized {
			a.remember(u, "basic", ch.Params["realm"], c)
		}
		return hr2, err
	case "digest":
		st, derr := newDigestState(ch)
		if derr != nil {
			return hr, nil
		}
		h, derr := st.authorize(c, method, requestURI(u), a.rand)
		if derr != nil {
			return hr, nil
		}
		discard(hr)
		hr2, err := f.roundTrip(ctx, f.tr, u, method, body, req, resp, h)
		if err == nil && hr2.StatusCode != http.StatusUnauthorized {
			a.mu.Lock()
			a.digest[origin(u)+"\x00"+st.realm] = st
			a.mu.Unlock()
			a.remember(u, "digest", st.realm, c)
		}
		return hr2, err
	case "ntlm", "negotiate":
		if f.ntlm == nil {
			return hr, nil
		}
		discard(hr)
		scheme := "NTLM"
		if ch.Scheme == "negotiate" {
			scheme = "Negotiate"
		}
		hr2, err := f.ntlmHandshake(ctx, u, method, body, req, resp, c, scheme)
		if err == nil && hr2.StatusCode != http.StatusUnauthorized {
			a.remember(u, "ntlm", "", c)
		}
		return hr2, err
	}
	return hr, nil
}

// ntlmHandshake authenticates one request with NTLM (MS-NLMP): NEGOTIATE,
// the server's CHALLENGE, then AUTHENTICATE with the request itself, all on
// one connection (the NTLM transport has one connection per host, and the
// per-origin lock keeps other requests off it meanwhile).
func (f *Fetcher) ntlmHandshake(ctx context.Context, u *url.URL, method string, body []byte, req Request, resp *Response, c *Credential, scheme string) (*http.Response, error) {
	m := f.o.Auth.ntlmLock(u)
	m.Lock()
	defer m.Unlock()
	neg, err := ntlmssp.NewNegotiateMessage("", "")
	if err != nil {
		return nil, fmt.Errorf("fetch: ntlm negotiate: %w", err)
	}
	hr, err := f.roundTrip(ctx, f.ntlm, u, method, body, req, resp, scheme+" "+base64.StdEncoding.EncodeToString(neg))
	if err != nil || hr.StatusCode != http.StatusUnauthorized {
		return hr, err
	}
	var challenge []byte
	for _, ch := range ParseChallenges(hr.Header.Values("WWW-Authenticate")) {
		if (ch.Scheme == "ntlm" || ch.Scheme == "negotiate") && ch.Token68 != "" {
			if b, err := base64.StdEncoding.DecodeString(ch.Token68); err == nil {
				challenge = b
				break
			}
		}
	}
	if challenge == nil {
		return hr, nil
	}
	msg, err := ntlmssp.NewAuthenticateMessage(challenge, c.User, c.Password, nil)
	if err != nil {
		// A challenge the library cannot answer (NTLMv1-only server): the
		// 401 stands.
		return hr, nil
	}
	discard(hr)
	return f.roundTrip(ctx, f.ntlm, u, method, body, req, resp, scheme+" "+base64.StdEncoding.EncodeToString(msg))
}
