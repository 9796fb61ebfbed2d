package admin

import (
	"crypto/subtle"
	"fmt"
	"net"
	"net/http"
	"strings"
)

// Auth is the optional authentication of the HTTP interface. MS-FSCADM
// (section 5) has none and assumes a private network; users expose the
// port by accident, so a token, a user and password, or both may be
// required. The zero value lets every request through.
type Auth struct {
	// Token, if set, is accepted as "Authorization: Bearer <token>" (or as
	// the password of basic authentication with any user name, which is
	// what XML-RPC clients that only know URLs with credentials can send).
	Token string
	// User and Password, if set, are accepted as basic authentication.
	User, Password string
}

// Enabled reports whether a credential is required.
func (a Auth) Enabled() bool { return a.Token != "" || a.User != "" || a.Password != "" }

// Allowed reports whether r carries an accepted credential.
func (a Auth) Allowed(r *http.Request) bool {
	if !a.Enabled() {
		return true
	}
	eq := func(x, y string) bool { return subtle.ConstantTimeCompare([]byte(x), []byte(y)) == 1 }
	h := r.Header.Get("Authorization")
	if tok, ok := strings.CutPrefix(h, "Bearer "); ok && a.Token != "" {
		return eq(strings.TrimSpace(tok), a.Token)
	}
	user, pass, ok := r.BasicAuth()
	if !ok {
		return false
	}
	if a.User != "" || a.Password != "" {
		if eq(user, a.User) && eq(pass, a.Password) {
			return true
		}
	}
	return a.Token != "" && eq(pass, a.Token)
}

// Wrap returns h behind the authentication: a request without an accepted
// credential gets 401 with a WWW-Authenticate challenge.
func (a Auth) Wrap(h http.Handler) http.Handler {
	if !a.Enabled() {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !a.Allowed(r) {
			w.Header().Set("WWW-Authenticate", `Basic realm="trawl"`)
			http.Error(w, "401 unauthorized: this crawler requires a token (Authorization: Bearer) or a user and password", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}

// authTransport adds a credential to every request of a Client.
type authTransport struct {
	auth Auth
	base http.RoundTripper
}

func (t authTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	switch {
	case t.auth.User != "" || t.auth.Password != "":
		r.SetBasicAuth(t.auth.User, t.auth.Password)
	case t.auth.Token != "":
		r.Header.Set("Authorization", "Bearer "+t.auth.Token)
	}
	base := t.base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}

// HTTPClient returns an http.Client (based on hc, nil for the default)
// that sends the credential of a on every request, for NewClient.
func (a Auth) HTTPClient(hc *http.Client) *http.Client {
	var c http.Client
	if hc != nil {
		c = *hc
	}
	if a.Enabled() {
		c.Transport = authTransport{auth: a, base: c.Transport}
	}
	return &c
}

// CheckListen refuses to serve the HTTP interface on addr (HOST:PORT) when
// that exposes it beyond this machine without a credential: any address
// but a loopback one ("localhost", 127.0.0.0/8, ::1) with auth not
// Enabled, unless insecure says the user wants exactly that. flag names
// the flag that set addr, for the message.
func CheckListen(addr, flag string, auth Auth, insecure bool) error {
	if insecure || auth.Enabled() || addr == "" || addr == "off" {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil // the listener reports it
	}
	if IsLoopbackHost(host) {
		return nil
	}
	return fmt.Errorf("admin: %s %s would open the admin API to the network without authentication; "+
		"set --admin-token (or --admin-user and --admin-password), listen on 127.0.0.1, "+
		"or pass --insecure-listen to allow it", flag, addr)
}

// IsLoopbackHost reports whether host (a name or an address, without a
// port) can only be reached from this machine.
func IsLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}

// ListenURL is how a listener bound to addr is reached: its URL when it is
// bound to one address, and for every address (0.0.0.0, ::) the bound
// address followed by the loopback URL this machine can use.
func ListenURL(addr string) string {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "http://" + addr + "/"
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		return fmt.Sprintf("%s, every address (http://127.0.0.1:%s/ from this machine)", addr, port)
	}
	return "http://" + net.JoinHostPort(host, port) + "/"
}
