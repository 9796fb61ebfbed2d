package crawlpipe

import (
	"context"
	"crypto/tls"
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/fetch"
	"github.com/trawl/trawl/internal/urls"
)

// Access is what a collection needs to get into its sites: the cookie
// jar, HTTP credentials, proxies, the client certificate, FTP accounts and
// HTML form logins (MS-FSCCFG use_cookies, cookie_timeout, passwd, proxy,
// proxy_max_pending, key_file, cert_file, ftp_acct, ftp_passive,
// ftp_searchlinks, logins and Login, login_timeout, login_failed_ignore),
// and what shapes a request or refuses its answer: post_payload and
// exclude_headers. compileAccess puts them into the collection's fetch
// options.
type Access struct {
	Jar     *fetch.Jar
	Auth    *fetch.Auth
	Proxies *fetch.Proxies
	Logins  *fetch.Logins
	// LoginFailedIgnore: crawl a site whose form login failed anyway
	// (default no: its documents fail with fetch.KindLogin).
	LoginFailedIgnore bool
	// FTP: ftp:// is in allowed_schemes; FTPSearchLinks extracts links from
	// files fetched by FTP (directory listings are always followed);
	// FTPErrors is ftp_errors.
	FTP            bool
	FTPSearchLinks bool
	FTPErrors      config.ErrorPolicy
	// Payloads is post_payload: URIs fetched with a POST of a payload.
	Payloads *Payloads
	// Warnings are settings accepted but not applied as written.
	Warnings []string
}

// password decrypts an "!ENC!" password with the node's key. A wrong key
// or a damaged value is an error, never a garbled password.
func password(key *config.Key, what, pw string) (string, error) {
	p, err := key.Password(pw)
	if err != nil {
		return "", fmt.Errorf("%s: %w", what, err)
	}
	return p, nil
}

// compileAccess fills fo with the access settings of the collection.
func compileAccess(c *config.Collection, eff *config.Effective, env Env, fo *fetch.Options) (*Access, error) {
	a := &Access{LoginFailedIgnore: eff.LoginFailedIgnore(), FTPSearchLinks: eff.FTPSearchlinks(), FTPErrors: eff.FTPErrors()}
	now := env.Now
	if now == nil {
		now = time.Now
	}
	if eff.UseCookies() || len(c.Logins) > 0 {
		jar, err := fetch.NewJar(time.Duration(eff.CookieTimeout())*time.Second, now)
		if err != nil {
			return nil, err
		}
		a.Jar, fo.Jar = jar, jar
		if !eff.UseCookies() {
			a.Warnings = append(a.Warnings, "logins keep their session in cookies: the cookie jar is on although use_cookies is no")
		}
	}
	if entries := eff.Passwd(); len(entries) > 0 {
		creds := make([]fetch.Credential, 0, len(entries))
		for _, e := range entries {
			pw, err := password(env.Key, "passwd "+e.Name, e.Password)
			if err != nil {
				return nil, err
			}
			creds = append(creds, fetch.Credential{Name: e.Name, User: e.User, Password: pw, Realm: e.Realm, Scheme: e.Scheme})
		}
		auth, err := fetch.NewAuth(creds)
		if err != nil {
			return nil, err
		}
		a.Auth, fo.Auth = auth, auth
	}
	if list := eff.Proxy(); len(list) > 0 {
		var pcs []fetch.ProxyConfig
		for _, s := range list {
			p, err := config.ParseProxy(s)
			if err != nil {
				return nil, fmt.Errorf("proxy: %w", err)
			}
			pw, err := password(env.Key, "proxy "+p.Host, p.Password)
			if err != nil {
				return nil, err
			}
			pcs = append(pcs, fetch.ProxyConfig{Host: p.Host, Port: p.Port, User: p.User, Password: pw})
		}
		ps, err := fetch.NewProxies(pcs, eff.ProxyMaxPending(), now)
		if err != nil {
			return nil, err
		}
		a.Proxies, fo.Proxies = ps, ps
	}
	certFile, hasCert := eff.CertFile()
	keyFile, hasKey := eff.KeyFile()
	if hasCert || hasKey {
		cert, err := fetch.LoadClientCertificate(strings.TrimSpace(certFile), strings.TrimSpace(keyFile))
		if err != nil {
			return nil, err
		}
		tc := &tls.Config{}
		if env.TLSConfig != nil {
			tc = env.TLSConfig.Clone()
		}
		tc.Certificates = []tls.Certificate{cert}
		fo.TLSConfig = tc
		// The certificate belongs to this collection: its own connections.
		fo.Transport = fetch.NewTransport(*fo)
	}
	for _, s := range eff.AllowedSchemes() {
		if strings.EqualFold(strings.TrimSpace(s), "ftp") {
			a.FTP = true
		}
	}
	if a.FTP {
		accts := map[string]fetch.FTPAccount{}
		for _, p := range eff.Params("ftp_acct") {
			if !p.Set {
				continue
			}
			user, pw, ok := strings.Cut(p.Value.Text, ":")
			if !ok {
				return nil, fmt.Errorf("ftp_acct %s: want username:password", p.Name)
			}
			pw, err := password(env.Key, "ftp_acct "+p.Name, pw)
			if err != nil {
				return nil, err
			}
			accts[strings.ToLower(strings.TrimSpace(p.Name))] = fetch.FTPAccount{User: user, Password: pw}
		}
		fo.FTP.Accounts = accts
		fo.FTP.Active = !eff.FTPPassive()
	}
	if err := compileRequestRules(eff, a, fo); err != nil {
		return nil, err
	}
	if len(c.Logins) > 0 {
		var specs []fetch.Login
		for _, sec := range c.Logins {
			l, err := loginSpec(sec, env.Key)
			if err != nil {
				return nil, err
			}
			specs = append(specs, l)
		}
		ls, err := fetch.NewLogins(specs, *fo, time.Duration(eff.LoginTimeout())*time.Second, now)
		if err != nil {
			return nil, err
		}
		a.Logins = ls
	}
	return a, nil
}

// loginSpec reads one Login element (or section of logins).
func loginSpec(sec *config.Section, key *config.Key) (fetch.Login, error) {
	l := fetch.Login{Name: sec.Name}
	for _, p := range sec.Params {
		v := strings.TrimSpace(p.Value.Text)
		switch p.Name {
		case "preload":
			l.Preload = v
		case "scheme":
			l.Scheme = v
		case "site":
			l.Site = v
		case "form":
			l.Form = v
		case "action":
			l.Action = v
		case "sites":
			for _, m := range p.Value.List {
				if m = strings.TrimSpace(m); m != "" {
					l.Sites = append(l.Sites, m)
				}
			}
		case "ttl":
			l.TTL = time.Duration(p.Value.Int) * time.Second
		case "html_form":
			l.HTMLForm = v
		case "autofill", "autocomplete":
			l.Autofill = p.Value.Bool
		case "relogin_if_failed":
			l.ReloginIfFailed = p.Value.Bool
		}
	}
	if ps := sec.Child("parameters"); ps != nil {
		for _, p := range ps.Params {
			v := strings.TrimSpace(p.Value.Text)
			if config.IsEncrypted(v) {
				pw, err := password(key, "login "+sec.Name+" parameter "+p.Name, v)
				if err != nil {
					return fetch.Login{}, err
				}
				v = pw
			}
			l.Params = append(l.Params, fetch.FormField{Name: p.Name, Value: v})
		}
	}
	return l, nil
}

// fetchableScheme reports whether the pipeline fetches URIs of scheme.
// schemeAllowed reports whether a URI of scheme can be crawled under s (the
// URI's own settings): fetchable, and in allowed_schemes.
func schemeAllowed(s *Settings, scheme string) bool {
	return fetchableScheme(s, scheme) && (len(s.AllowedSchemes) == 0 || urls.SchemeAllowed(scheme, s.AllowedSchemes))
}

func fetchableScheme(s *Settings, scheme string) bool {
	switch scheme {
	case "http", "https":
		return true
	case "ftp":
		return s.Access != nil && s.Access.FTP
	}
	return false
}

// maxRelogins is how many times fetchDoc logs in again for one document
// that keeps sending the crawler to the login form.
const maxRelogins = 3

// fetchDoc fetches a document, logging into its site first when a form
// login covers it. A page that sends the crawler to the login form means
// the session was lost: the login is done again and the document fetched
// once more, up to maxRelogins times (the site's other fetches, running
// meanwhile, may use a new session up before this one is sent).
func fetchDoc(ctx context.Context, s *Settings, f *fetch.Fetcher, u *url.URL, req fetch.Request) (*fetch.Response, error) {
	var ls *fetch.Logins
	if s.Access != nil && s.Access.Logins != nil && s.Access.Logins.Covers(u) {
		ls = s.Access.Logins
	}
	if ls == nil {
		return f.Fetch(ctx, req)
	}
	if err := ls.Ensure(ctx, u); err != nil && !s.Access.LoginFailedIgnore {
		if ctx.Err() != nil {
			return nil, &fetch.Error{Kind: fetch.KindCanceled, URL: req.URL, Err: err}
		}
		return nil, &fetch.Error{Kind: fetch.KindLogin, URL: req.URL, Err: err}
	}
	resp, err := f.Fetch(ctx, req)
	for try := 0; try < maxRelogins && err == nil && sentToLogin(ls, u, resp); try++ {
		ls.Invalidate(u)
		if lerr := ls.Ensure(ctx, u); lerr != nil {
			if s.Access.LoginFailedIgnore {
				return resp, nil
			}
			return nil, &fetch.Error{Kind: fetch.KindLogin, URL: req.URL, Err: lerr}
		}
		resp, err = f.Fetch(ctx, req)
	}
	return resp, err
}

// sentToLogin reports whether a response redirects to the login form of
// the site (or is that form, reached by a redirect).
func sentToLogin(ls *fetch.Logins, u *url.URL, resp *fetch.Response) bool {
	if resp == nil || ls.IsLoginPage(u, u) {
		return false
	}
	if resp.Status >= 300 && resp.Status < 400 && resp.Header != nil {
		if t, err := u.Parse(resp.Header.Get("Location")); err == nil && ls.IsLoginPage(u, t) {
			return true
		}
	}
	if len(resp.RedirectTrail) > 0 {
		if t, err := url.Parse(resp.FinalURL); err == nil && ls.IsLoginPage(u, t) {
			return true
		}
	}
	return false
}

// linksWanted reports whether links are extracted from a fetched document:
// not from files fetched by FTP unless ftp_searchlinks (listings always).
func linksWanted(s *Settings, u *url.URL, resp *fetch.Response) bool {
	if u.Scheme != "ftp" {
		return true
	}
	return resp.FTPListing || (s.Access != nil && s.Access.FTPSearchLinks)
}

// compileRequestRules reads exclude_headers (into the fetch options: a
// document whose response headers match is refused before its body is
// read, skip code hx) and post_payload (into a.Payloads).
func compileRequestRules(eff *config.Effective, a *Access, fo *fetch.Options) error {
	ex := map[string][]string{}
	for _, p := range eff.Params("exclude_headers") {
		if !p.Set {
			continue
		}
		for _, v := range p.Value.List {
			if v = strings.TrimSpace(v); v != "" {
				ex[p.Name] = append(ex[p.Name], v)
			}
		}
	}
	if len(ex) > 0 {
		h, err := fetch.NewHeaderExcluder(ex)
		if err != nil {
			return err
		}
		fo.ExcludeHeaders = h
	}
	var rules []PayloadRule
	for _, p := range eff.Params("post_payload") {
		if !p.Set {
			continue
		}
		r := PayloadRule{URI: strings.TrimSpace(p.Name), Payload: strings.TrimSpace(p.Value.Text)}
		if rest, ok := strings.CutPrefix(r.URI, "prefix:"); ok {
			r.URI, r.Prefix = strings.TrimSpace(rest), true
		}
		if r.URI == "" {
			return fmt.Errorf("post_payload %q: empty URI", p.Name)
		}
		rules = append(rules, r)
	}
	if len(rules) > 0 {
		a.Payloads = NewPayloads(rules)
	}
	return nil
}

// PayloadRule is one post_payload entry (MS-FSCCFG 2.2.4.29): the payload
// POSTed to URI, or to every URI starting with URI when Prefix.
type PayloadRule struct {
	URI     string
	Prefix  bool
	Payload string
}

// Payloads chooses the post_payload of a URI: an exact entry wins, else the
// longest matching prefix.
type Payloads struct {
	exact  map[string]string
	prefix []PayloadRule // longest first
}

// NewPayloads indexes rules.
func NewPayloads(rules []PayloadRule) *Payloads {
	p := &Payloads{exact: map[string]string{}}
	for _, r := range rules {
		if r.Prefix {
			p.prefix = append(p.prefix, r)
		} else {
			p.exact[r.URI] = r.Payload
		}
	}
	sort.SliceStable(p.prefix, func(i, j int) bool { return len(p.prefix[i].URI) > len(p.prefix[j].URI) })
	return p
}

// PayloadContentType is the Content-Type of a post_payload request: the
// specification gives none, and its example is a form encoding
// (docs/decisions/fetch.md).
const PayloadContentType = "application/x-www-form-urlencoded"

// For returns the payload of uri, if one is configured.
func (p *Payloads) For(uri string) (string, bool) {
	if p == nil {
		return "", false
	}
	if v, ok := p.exact[uri]; ok {
		return v, true
	}
	for _, r := range p.prefix {
		if strings.HasPrefix(uri, r.URI) {
			return r.Payload, true
		}
	}
	return "", false
}

// applyPayload turns req into the POST of its URI's post_payload, if it
// has one (never conditional: a POST answer is not a cached document).
func applyPayload(s *Settings, req *fetch.Request) {
	if s.Access == nil {
		return
	}
	body, ok := s.Access.Payloads.For(req.URL)
	if !ok {
		return
	}
	req.Method, req.Body = "POST", []byte(body)
	req.IfModifiedSince, req.ETag = time.Time{}, ""
	if req.Header == nil {
		req.Header = map[string][]string{}
	}
	req.Header["Content-Type"] = []string{PayloadContentType}
}
