package fetch

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// Login is one HTML form login (MS-FSCCFG 2.2.4.31, the Login element).
type Login struct {
	Name string
	// Preload is fetched first (for the cookies it sets), when set.
	Preload string
	// Scheme, Site and Form locate the form's target: Scheme://Site/Form.
	Scheme, Site, Form string
	// Action is the method, GET or POST (default POST).
	Action string
	// Params are the form variables to send (the parameters section), in
	// order; with Autofill they override the form's own values.
	Params []FormField
	// Sites are the hosts that need this login ("host" or "host:port");
	// empty means Site.
	Sites []string
	// TTL is how long a login lasts before it is done again (0: until the
	// site sends the crawler back to the login form), and, with
	// ReloginIfFailed, how long to wait before trying again after a
	// failure.
	TTL time.Duration
	// HTMLForm is the page holding the form. It is fetched before the
	// submission; with Autofill its form is read: hidden fields, defaults,
	// and (when Site/Form are not set) the target and method.
	HTMLForm string
	Autofill bool
	// ReloginIfFailed allows a new attempt TTL after a failed login.
	ReloginIfFailed bool
}

// FormField is one form variable.
type FormField struct{ Name, Value string }

// ErrLoginFailed is wrapped by the errors of a login that did not succeed.
var ErrLoginFailed = errors.New("fetch: login failed")

// Logins performs the HTML form logins of a collection and keeps their
// state. A login is done before the first fetch from one of its sites
// (Ensure); its session lives in the fetcher's cookie jar. A login succeeds
// when the submission ends (after redirects) in a 2xx page that is not a
// login form again (no password field, not the form's page); a login form
// met later during the crawl (IsLoginPage) means the session was lost and
// Ensure logs in again. It is safe for concurrent use.
type Logins struct {
	f      *Fetcher
	now    func() time.Time
	list   []*loginState
	bySite map[string]*loginState
}

type loginState struct {
	spec   Login
	target *url.URL // Scheme://Site/Form, or nil (taken from the form)
	pages  []string // normalized URLs that are this login's form pages

	mu     sync.Mutex
	ok     bool
	at     time.Time
	failed bool
	err    error
	count  int
}

// NewLogins prepares the logins. o are the crawl's fetch options: the
// logins share its transport, cookie jar, credentials and proxies, follow
// up to 10 redirects and accept any type; timeout is login_timeout. o.Jar
// must be set: a login without cookies keeps no session.
func NewLogins(specs []Login, o Options, timeout time.Duration, now func() time.Time) (*Logins, error) {
	if o.Jar == nil {
		return nil, errors.New("fetch: logins need a cookie jar")
	}
	if now == nil {
		now = time.Now
	}
	o.MaxRedirects = 10
	o.CheckRedirect = nil
	o.AllowedTypes = nil
	o.ExcludeHeaders = nil
	o.ForceMimeDetection = false
	o.CutOff = 4 << 20
	o.Truncate = true
	if timeout > 0 {
		o.Timeout = timeout
	}
	f, err := New(o)
	if err != nil {
		return nil, err
	}
	l := &Logins{f: f, now: now, bySite: map[string]*loginState{}}
	for _, sp := range specs {
		st := &loginState{spec: sp}
		sp.Action = strings.ToUpper(strings.TrimSpace(sp.Action))
		if sp.Action != "" && sp.Action != http.MethodGet && sp.Action != http.MethodPost {
			return nil, fmt.Errorf("fetch: login %s: action %q is not GET or POST", sp.Name, sp.Action)
		}
		st.spec.Action = sp.Action
		if sp.Site != "" && sp.Form != "" {
			scheme := strings.ToLower(sp.Scheme)
			if scheme == "" {
				scheme = "http"
			}
			form := sp.Form
			if !strings.HasPrefix(form, "/") {
				form = "/" + form
			}
			t, err := url.Parse(scheme + "://" + sp.Site + form)
			if err != nil || t.Host == "" {
				return nil, fmt.Errorf("fetch: login %s: bad form target %s://%s%s", sp.Name, scheme, sp.Site, form)
			}
			st.target = t
		} else if sp.HTMLForm == "" {
			return nil, fmt.Errorf("fetch: login %s: neither site and form nor html_form", sp.Name)
		}
		if sp.Autofill && sp.HTMLForm == "" {
			return nil, fmt.Errorf("fetch: login %s: autofill needs html_form", sp.Name)
		}
		if sp.HTMLForm != "" {
			u, err := url.Parse(sp.HTMLForm)
			if err != nil || u.Host == "" {
				return nil, fmt.Errorf("fetch: login %s: bad html_form %q", sp.Name, sp.HTMLForm)
			}
			st.pages = append(st.pages, pageKey(u))
		}
		if st.target != nil {
			st.pages = append(st.pages, pageKey(st.target))
		}
		sites := sp.Sites
		if len(sites) == 0 && sp.Site != "" {
			sites = []string{sp.Site}
		}
		if len(sites) == 0 && sp.HTMLForm != "" {
			u, _ := url.Parse(sp.HTMLForm)
			sites = []string{u.Host}
		}
		for _, s := range sites {
			s = strings.ToLower(strings.TrimSpace(s))
			if s != "" {
				if _, dup := l.bySite[s]; !dup {
					l.bySite[s] = st
				}
			}
		}
		l.list = append(l.list, st)
	}
	return l, nil
}

func pageKey(u *url.URL) string {
	return origin(u) + u.EscapedPath()
}

func (l *Logins) stateFor(u *url.URL) *loginState {
	if l == nil {
		return nil
	}
	if st := l.bySite[strings.ToLower(u.Host)]; st != nil {
		return st
	}
	return l.bySite[strings.ToLower(u.Hostname())]
}

// Covers reports whether u's site has a login.
func (l *Logins) Covers(u *url.URL) bool { return l.stateFor(u) != nil }

// IsLoginPage reports whether target (a page the crawl was sent to, such
// as a redirect's Location) is the login form of the login covering from.
func (l *Logins) IsLoginPage(from, target *url.URL) bool {
	st := l.stateFor(from)
	if st == nil || target == nil {
		return false
	}
	k := pageKey(target)
	for _, p := range st.pages {
		if p == k {
			return true
		}
	}
	return false
}

// Invalidate forgets the session of u's login: the next Ensure logs in
// again.
func (l *Logins) Invalidate(u *url.URL) {
	if st := l.stateFor(u); st != nil {
		st.mu.Lock()
		st.ok = false
		st.mu.Unlock()
	}
}

// Count is how many logins were attempted for u's site.
func (l *Logins) Count(u *url.URL) int {
	st := l.stateFor(u)
	if st == nil {
		return 0
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.count
}

// Ensure logs into u's site unless a valid session exists. It returns nil
// when the site has no login or the session is valid, and an error
// wrapping ErrLoginFailed when the login failed (again, or earlier and no
// new attempt is due). Concurrent callers for one login wait for one
// attempt.
func (l *Logins) Ensure(ctx context.Context, u *url.URL) error {
	st := l.stateFor(u)
	if st == nil {
		return nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	now := l.now()
	due := st.spec.TTL > 0 && !now.Before(st.at.Add(st.spec.TTL))
	switch {
	case st.ok && !due:
		return nil
	case st.failed && !(st.spec.ReloginIfFailed && due):
		return st.err
	}
	st.count++
	err := l.login(ctx, st)
	st.at = l.now()
	if err != nil {
		if ctx.Err() != nil {
			return err // canceled: no verdict on the login
		}
		st.ok, st.failed, st.err = false, true, fmt.Errorf("%w: %s: %v", ErrLoginFailed, st.spec.Name, err)
		return st.err
	}
	st.ok, st.failed, st.err = true, false, nil
	return nil
}

func (l *Logins) login(ctx context.Context, st *loginState) error {
	sp := st.spec
	if sp.Preload != "" {
		if _, err := l.f.Fetch(ctx, Request{URL: sp.Preload}); err != nil {
			return fmt.Errorf("preload %s: %w", sp.Preload, err)
		}
	}
	target, method := st.target, sp.Action
	vals := url.Values{}
	var order []string
	set := func(k, v string) {
		if _, ok := vals[k]; !ok {
			order = append(order, k)
		}
		vals[k] = []string{v}
	}
	if sp.HTMLForm != "" {
		resp, err := l.f.Fetch(ctx, Request{URL: sp.HTMLForm})
		if err != nil {
			return fmt.Errorf("html_form %s: %w", sp.HTMLForm, err)
		}
		if resp.Status >= 400 {
			return fmt.Errorf("html_form %s: status %d", sp.HTMLForm, resp.Status)
		}
		if sp.Autofill {
			base, _ := url.Parse(resp.FinalURL)
			forms := ParseForms(resp.Body, base)
			fm := pickForm(forms, sp.Params)
			if fm == nil {
				return fmt.Errorf("html_form %s: no form found", sp.HTMLForm)
			}
			for _, fld := range fm.Fields {
				set(fld.Name, fld.Value)
			}
			if target == nil {
				target = fm.Action
			}
			if method == "" {
				method = fm.Method
			}
		}
	}
	if target == nil {
		return errors.New("no form target (set site and form, or autofill)")
	}
	for _, p := range sp.Params {
		set(p.Name, p.Value)
	}
	if method == "" {
		method = http.MethodPost
	}
	var enc strings.Builder
	for i, k := range order {
		if i > 0 {
			enc.WriteByte('&')
		}
		enc.WriteString(url.QueryEscape(k) + "=" + url.QueryEscape(vals.Get(k)))
	}
	req := Request{URL: target.String(), Method: method}
	if method == http.MethodGet {
		t := *target
		t.RawQuery = enc.String()
		req.URL = t.String()
	} else {
		req.Body = []byte(enc.String())
		req.Header = http.Header{"Content-Type": {"application/x-www-form-urlencoded"}}
	}
	resp, err := l.f.Fetch(ctx, req)
	if err != nil {
		return fmt.Errorf("submitting %s: %w", target, err)
	}
	if resp.Status < 200 || resp.Status >= 300 {
		return fmt.Errorf("submitting %s: status %d", target, resp.Status)
	}
	final, _ := url.Parse(resp.FinalURL)
	if final != nil {
		k := pageKey(final)
		for _, p := range st.pages {
			if p == k && len(resp.RedirectTrail) > 0 {
				return fmt.Errorf("submitting %s: sent back to the login form %s", target, final)
			}
		}
	}
	if HasPasswordField(resp.Body) {
		return fmt.Errorf("submitting %s: the answer is a login form again", target)
	}
	return nil
}

// Form is an HTML form: its resolved target, method and the fields a
// browser would submit (hidden fields included).
type Form struct {
	Action   *url.URL
	Method   string
	Fields   []FormField
	Password bool // it has a password field
}

// maxForms bounds the forms and fields read from one page.
const (
	maxForms      = 64
	maxFormFields = 512
)

// ParseForms reads the forms of an HTML page: for each, the action
// resolved against base (the page's own URL when empty), the method (GET
// or POST), and the successful controls with their initial values: inputs
// (checkboxes and radios only when checked; no buttons, images or files),
// the selected (or first) option of a select, textareas.
func ParseForms(body []byte, base *url.URL) []Form {
	z := html.NewTokenizer(bytes.NewReader(body))
	var (
		forms   []Form
		cur     *Form
		sel     string // name of the open select
		selVal  string
		selSet  bool
		selHas  bool
		inOpt   bool
		optVal  string
		optHas  bool
		optSel  bool
		optText strings.Builder
		taName  string
		inTA    bool
		taText  strings.Builder
	)
	attrs := func(t html.Token) map[string]string {
		m := make(map[string]string, len(t.Attr))
		for _, a := range t.Attr {
			m[strings.ToLower(a.Key)] = a.Val
		}
		return m
	}
	add := func(n, v string) {
		if cur != nil && n != "" && len(cur.Fields) < maxFormFields {
			cur.Fields = append(cur.Fields, FormField{Name: n, Value: v})
		}
	}
	endOption := func() {
		if !inOpt {
			return
		}
		v := optVal
		if !optHas {
			v = strings.TrimSpace(optText.String())
		}
		switch {
		case optSel && !selSet:
			selVal, selHas, selSet = v, true, true
		case !selHas:
			selVal, selHas = v, true
		}
		inOpt = false
	}
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		switch tt {
		case html.TextToken:
			if inOpt {
				optText.Write(z.Text())
			}
			if inTA {
				taText.Write(z.Text())
			}
		case html.StartTagToken, html.SelfClosingTagToken:
			t := z.Token()
			a := attrs(t)
			switch t.DataAtom {
			case atom.Form:
				if len(forms) >= maxForms {
					cur = nil
					continue
				}
				f := Form{Method: http.MethodGet}
				if strings.EqualFold(strings.TrimSpace(a["method"]), "post") {
					f.Method = http.MethodPost
				}
				f.Action = base
				if act := strings.TrimSpace(a["action"]); act != "" && base != nil {
					if u, err := base.Parse(act); err == nil {
						f.Action = u
					}
				}
				forms = append(forms, f)
				cur = &forms[len(forms)-1]
			case atom.Input:
				if cur == nil {
					continue
				}
				typ := strings.ToLower(strings.TrimSpace(a["type"]))
				switch typ {
				case "password":
					cur.Password = true
					add(a["name"], a["value"])
				case "checkbox", "radio":
					if _, ok := a["checked"]; ok {
						v, ok := a["value"]
						if !ok {
							v = "on"
						}
						add(a["name"], v)
					}
				case "submit", "button", "image", "reset", "file":
				default:
					add(a["name"], a["value"])
				}
			case atom.Select:
				sel, selVal, selSet, selHas = a["name"], "", false, false
			case atom.Option:
				endOption()
				inOpt = true
				optVal, optHas = a["value"]
				_, optSel = a["selected"]
				optText.Reset()
			case atom.Textarea:
				taName, inTA = a["name"], true
				taText.Reset()
			}
		case html.EndTagToken:
			t := z.Token()
			switch t.DataAtom {
			case atom.Form:
				cur = nil
			case atom.Option:
				endOption()
			case atom.Select:
				endOption()
				if selHas {
					add(sel, selVal)
				}
				sel = ""
			case atom.Textarea:
				if inTA {
					add(taName, taText.String())
				}
				inTA = false
			}
		}
	}
	return forms
}

// pickForm chooses the login form: the first that has every configured
// variable, else the first with a password field, else the only form.
func pickForm(forms []Form, params []FormField) *Form {
	for i := range forms {
		all := len(params) > 0
		for _, p := range params {
			found := false
			for _, f := range forms[i].Fields {
				if f.Name == p.Name {
					found = true
					break
				}
			}
			all = all && found
		}
		if all {
			return &forms[i]
		}
	}
	for i := range forms {
		if forms[i].Password {
			return &forms[i]
		}
	}
	if len(forms) == 1 {
		return &forms[0]
	}
	return nil
}

// HasPasswordField reports whether an HTML page holds a password input
// (a login form).
func HasPasswordField(body []byte) bool {
	z := html.NewTokenizer(bytes.NewReader(body))
	for {
		switch z.Next() {
		case html.ErrorToken:
			return false
		case html.StartTagToken, html.SelfClosingTagToken:
			name, hasAttr := z.TagName()
			if atom.Lookup(name) != atom.Input || !hasAttr {
				continue
			}
			for {
				k, v, more := z.TagAttr()
				if strings.EqualFold(string(k), "type") && strings.EqualFold(strings.TrimSpace(string(v)), "password") {
					return true
				}
				if !more {
					break
				}
			}
		}
	}
}
