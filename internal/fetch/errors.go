package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"syscall"
)

// Kind classifies why a fetch failed, so that the frontier can apply the
// http_errors actions and the site backoff.
type Kind int

// The failure kinds.
const (
	KindOther            Kind = iota
	KindBadURL                // the URL cannot be fetched (scheme, syntax)
	KindDNS                   // the host name did not resolve
	KindConnectRefused        // the connection was refused
	KindNetwork               // another network error (reset, unreachable)
	KindTimeout               // fetch_timeout elapsed (connect, headers or body)
	KindTLS                   // TLS handshake or certificate error
	KindProtocol              // a malformed HTTP response or content encoding
	KindTooLarge              // the body exceeds cut_off and truncate is off
	KindTypeNotAllowed        // the MIME type is not in allowed_types
	KindExcludedHeader        // a header matched exclude_headers
	KindTooManyRedirects      // more than max_redirects redirects
	KindRedirectLoop          // a redirect led back to a URL of the chain
	KindRedirectRejected      // CheckRedirect refused a redirect target
	KindCanceled              // the caller's context was canceled
	KindProxy                 // no proxy could be reached, or one refused the request (CONNECT)
	KindLogin                 // the HTML form login of the site failed
)

var kindNames = [...]string{"other", "bad-url", "dns", "connect-refused", "network", "timeout", "tls",
	"protocol", "too-large", "type-not-allowed", "excluded-header", "too-many-redirects",
	"redirect-loop", "redirect-rejected", "canceled", "proxy", "login"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// ErrorClass maps a failure kind to the MS-FSCCFG http_errors key it falls
// under: "net" (network socket errors), "ttl" (time-outs) or "int"
// (internal errors). Kinds that are content decisions rather than errors
// (too large, type not allowed, excluded header, redirect rejected) and
// cancellation return "".
func (k Kind) ErrorClass() string {
	switch k {
	case KindDNS, KindConnectRefused, KindNetwork, KindTLS, KindProtocol, KindProxy:
		return "net"
	case KindTimeout:
		return "ttl"
	case KindBadURL, KindTooManyRedirects, KindRedirectLoop, KindOther, KindLogin:
		return "int"
	}
	return ""
}

// ConnectionFailure reports whether the kind counts as a failure to
// connect to the site for the backoff (max_backoff_counter).
func (k Kind) ConnectionFailure() bool {
	switch k {
	case KindDNS, KindConnectRefused, KindNetwork, KindTimeout, KindTLS:
		return true
	}
	return false
}

// Error is a failed fetch.
type Error struct {
	Kind Kind
	URL  string
	Err  error
}

func (e *Error) Error() string {
	if e.Err == nil {
		return fmt.Sprintf("fetch: %s: %s", e.URL, e.Kind)
	}
	return fmt.Sprintf("fetch: %s: %s: %v", e.URL, e.Kind, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// KindOf returns the Kind of an error returned by Fetch (KindOther for any
// other error, or nil).
func KindOf(err error) Kind {
	var fe *Error
	if errors.As(err, &fe) {
		return fe.Kind
	}
	return KindOther
}

// classify maps a transport error to a Kind. ctxErr is the state of the
// fetch's own context (deadline = timeout) and parent that of the caller's.
func classify(err error, parent context.Context) Kind {
	if parent.Err() == context.Canceled {
		return KindCanceled
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		if dnsErr.IsTimeout {
			return KindTimeout
		}
		return KindDNS
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return KindTimeout
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return KindTimeout
	}
	if errors.Is(err, syscall.ECONNREFUSED) {
		return KindConnectRefused
	}
	var (
		recErr  tls.RecordHeaderError
		certErr *tls.CertificateVerificationError
		unkAuth x509.UnknownAuthorityError
		hostErr x509.HostnameError
		invErr  x509.CertificateInvalidError
		alert   tls.AlertError
	)
	if errors.As(err, &recErr) || errors.As(err, &certErr) || errors.As(err, &unkAuth) ||
		errors.As(err, &hostErr) || errors.As(err, &invErr) || errors.As(err, &alert) ||
		strings.Contains(err.Error(), "tls: ") {
		return KindTLS
	}
	if errors.Is(err, context.Canceled) {
		return KindCanceled
	}
	var opErr *net.OpError
	if errors.As(err, &opErr) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) {
		return KindNetwork
	}
	if strings.Contains(err.Error(), "malformed HTTP") || strings.Contains(err.Error(), "EOF") {
		return KindProtocol
	}
	return KindNetwork
}

// ErrorKey is the http_errors (or ftp_errors) key that describes a fetch
// outcome: the status code ("404") for an HTTP error status (>= 400), the
// error class ("net", "ttl", "int") for a failed fetch, "" when there is
// nothing to handle.
func ErrorKey(status int, err error) string {
	if err != nil {
		return KindOf(err).ErrorClass()
	}
	if status >= 400 {
		return strconv.Itoa(status)
	}
	return ""
}

// MatchErrorRule picks, among the names of http_errors rules ("404", "4xx",
// "5XX", "net", ...), the one that applies to key, with specificity as in
// MS-FSCCFG section 3.8: an exact code beats a pattern, and a pattern with
// fewer X wildcards beats one with more. The wildcard X is matched
// case-insensitively.
func MatchErrorRule(names []string, key string) (string, bool) {
	best, bestX := "", 4
	for _, n := range names {
		if len(n) != len(key) {
			continue
		}
		x, ok := 0, true
		for i := 0; i < len(n); i++ {
			c := n[i]
			switch {
			case c == 'x' || c == 'X':
				if key[i] < '0' || key[i] > '9' {
					ok = false
				}
				x++
			case c != key[i]:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok && x < bestX {
			best, bestX = n, x
		}
	}
	return best, bestX < 4
}
