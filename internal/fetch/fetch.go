// Package fetch is trawl's HTTP fetcher. One Fetcher serves a node
// scheduler: a keep-alive HTTP/1.1 transport tuned for many hosts, dialing
// through the crawler's resolver, and per request the MS-FSCCFG rules that
// apply to a download:
//
//   - fetch_timeout is a deadline on the whole request, body included;
//   - cut_off caps the document: with truncate=yes the first CutOff bytes
//     are kept (Truncated is set), with truncate=no the document is
//     rejected (KindTooLarge). The body is never read past the cut: the
//     reader is limited to CutOff+1 bytes and the connection is closed;
//   - accept_compression asks for gzip and deflate, which the fetcher
//     decodes itself (Go's transparent gzip is off) so that BytesOnWire
//     counts what crossed the network; deflate is accepted both
//     zlib-wrapped (RFC 1950, as the RFC says) and raw (RFC 1951, as some
//     servers send it);
//   - allowed_types filters on the MIME type, with whole-field wildcards
//     ("text/*", "*/*"); force_mimetype_detection sniffs the type with
//     http.DetectContentType instead of trusting the header, which is also
//     done when the header is missing;
//   - if_modified_since sends If-Modified-Since (and If-None-Match), and a
//     304 comes back as NotModified;
//   - headers and the user agent are sent on every request;
//   - exclude_headers rejects a document on its response headers before
//     its body is read;
//   - max_redirects redirects are followed, each hop recorded in
//     RedirectTrail and submitted to CheckRedirect (which the crawler uses
//     for its include/exclude rules); loops are detected;
//   - use_cookies and cookie_timeout: Jar keeps the cookies of every hop
//     (jar.go);
//   - passwd: Auth answers 401 challenges with Basic, Digest (RFC 7616) or
//     NTLM credentials chosen by URI prefix or realm (auth.go);
//   - proxy and proxy_max_pending: Proxies spreads requests over forward
//     proxies by load, https through CONNECT (proxy.go);
//   - key_file/cert_file: a client certificate in TLSConfig
//     (LoadClientCertificate);
//   - logins: Logins performs HTML form logins with the fetcher (login.go);
//   - ftp:// URLs are fetched with trawl's FTP client, passive or active
//     (ftp_passive), logged in with ftp_acct, a directory
//     coming back as an HTML page of links (ftp.go).
//
// Failures are *Error values with a Kind, which ErrorClass maps onto the
// http_errors keys "net", "ttl" and "int". Backoff implements
// max_backoff_counter and max_backoff_delay.
package fetch

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/flate"
	"github.com/klauspost/compress/gzip"
	"github.com/klauspost/compress/zlib"
)

// DefaultAllowedTypes is the MS-FSCCFG default of allowed_types, verbatim
// (application/pt is in the specification's table).
var DefaultAllowedTypes = []string{"text/html", "text/plain", "application/msword", "application/msexcel", "application/pt", "application/pdf"}

// HardMaxBody bounds a body when no CutOff is configured, so that one
// document cannot exhaust memory.
const HardMaxBody = 64 << 20

// Options configure a Fetcher. The zero value is usable but is not the
// MS-FSCCFG default; start from DefaultOptions.
type Options struct {
	// UserAgent is sent as User-Agent (unless Headers has one).
	UserAgent string
	// Headers are extra request headers (the "headers" parameter).
	Headers http.Header
	// Timeout is fetch_timeout: the deadline of a whole request, redirects
	// and body included. 0 means none.
	Timeout time.Duration
	// CutOff is cut_off in bytes of (decoded) body; 0 means no cut-off
	// (HardMaxBody still applies).
	CutOff int64
	// Truncate is truncate: keep the first CutOff bytes of a larger body
	// (true) or reject the document (false).
	Truncate bool
	// AcceptCompression is accept_compression: send Accept-Encoding: gzip,
	// deflate.
	AcceptCompression bool
	// HTTP10 is use_http_1_1 off: requests are HTTP/1.0, one connection
	// each, and AcceptCompression has no effect (http10.go).
	HTTP10 bool
	// AllowedTypes is allowed_types; empty allows every type. Only 2xx
	// responses are checked.
	AllowedTypes []string
	// ForceMimeDetection is force_mimetype_detection.
	ForceMimeDetection bool
	// MaxRedirects is max_redirects; 0 returns redirects to the caller
	// unfollowed.
	MaxRedirects int
	// CheckRedirect, when set, is asked about every redirect before it is
	// followed. Returning ErrUseLastResponse stops and returns the redirect
	// response itself (no error); any other error fails the fetch with
	// KindRedirectRejected.
	CheckRedirect func(from, to *url.URL) error
	// ExcludeHeaders is exclude_headers; nil excludes nothing.
	ExcludeHeaders *HeaderExcluder

	// Dial opens connections (so that DNS comes from the crawler's
	// resolver); default a net.Dialer.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLSConfig is used for https.
	TLSConfig *tls.Config
	// MaxConnsPerHost bounds connections per host (0 = no bound);
	// MaxIdleConnsPerHost the idle ones kept (default 2, max_pending's
	// default); IdleConnTimeout how long they are kept (default 30 s);
	// MaxIdleConns the idle connections over all hosts (default 4096).
	MaxConnsPerHost     int
	MaxIdleConnsPerHost int
	MaxIdleConns        int
	IdleConnTimeout     time.Duration
	// Transport, when set, is used instead of building one from the fields
	// above (so that fetchers with different options share connections).
	Transport *http.Transport

	// Jar, when set, stores the cookies of every response and sends them
	// (use_cookies). Fetchers sharing a Jar share a session.
	Jar http.CookieJar
	// Auth, when set, answers authentication challenges (passwd).
	Auth *Auth
	// Proxies, when set, carries every HTTP(S) request through one of its
	// forward proxies (proxy, proxy_max_pending).
	Proxies *Proxies
	// FTP configures ftp:// fetching.
	FTP FTPOptions
}

// DefaultOptions returns the MS-FSCCFG defaults: fetch_timeout 300 s, no
// cut_off, truncate=yes, accept_compression=yes, the default allowed_types,
// max_redirects 10, and the user agent of the headers default.
func DefaultOptions() Options {
	return Options{
		UserAgent:         "FAST Search Web Crawler (trawl)",
		Timeout:           300 * time.Second,
		Truncate:          true,
		AcceptCompression: true,
		AllowedTypes:      append([]string(nil), DefaultAllowedTypes...),
		MaxRedirects:      10,
	}
}

// ErrUseLastResponse, returned by CheckRedirect, makes Fetch return the
// redirect response itself instead of following it.
var ErrUseLastResponse = errors.New("fetch: use last response")

// Request is one document to fetch.
type Request struct {
	URL    string
	Method string // default GET
	Body   []byte // for POST (post_payload)
	// IfModifiedSince, when not zero, is sent as If-Modified-Since.
	IfModifiedSince time.Time
	// ETag, when not empty, is sent as If-None-Match.
	ETag string
	// Header holds extra headers for this request only (cookies, auth).
	Header http.Header
	// Capture keeps every HTTP exchange in Response.Exchanges, for a web
	// archive (capture.go).
	Capture bool
}

// Hop is one redirect met on the way.
type Hop struct {
	URL      string // the URL that answered with a redirect
	Status   int
	Location string // the absolute target
}

// Timing breaks down where the time of a fetch went (last hop for DNS,
// Connect and FirstByte; Total covers everything).
type Timing struct {
	DNS, Connect, TLS, FirstByte, Total time.Duration
}

// Response is a fetched document.
type Response struct {
	URL           string // the URL asked for
	FinalURL      string // after redirects
	RedirectTrail []Hop
	Status        int
	Proto         string // the response's protocol ("HTTP/1.1"); "" for FTP
	Header        http.Header
	// Body is the decoded body, at most CutOff bytes.
	Body []byte
	// ContentType is the media type (lower case, no parameters): the
	// header's, or the detected one when detection was forced or the header
	// was missing. Charset is the header's charset parameter, if any.
	ContentType string
	Charset     string
	Detected    bool // ContentType comes from detection
	// Truncated: the body was cut at CutOff (truncate=yes).
	Truncated bool
	// NotModified: the server answered 304 to a conditional request.
	NotModified bool
	// FTPListing: Body is an FTP directory listing rendered as HTML links.
	FTPListing bool
	// BytesOnWire counts the final response's body bytes as received
	// (before decoding).
	BytesOnWire int64
	Timing      Timing
	// Exchanges are the HTTP exchanges of the fetch, redirect hops first,
	// under Request.Capture (capture.go).
	Exchanges []Exchange
	capture   *capture
}

// Fetcher fetches documents. It is safe for concurrent use.
type Fetcher struct {
	o  Options
	tr *http.Transport
	// ntlm carries NTLM handshakes: one connection per host, so that the
	// negotiate and authenticate legs share the connection NTLM
	// authenticates.
	ntlm *http.Transport
	// http10 sends HTTP/1.0 requests under Options.HTTP10 (nil otherwise).
	http10 *http10Transport
}

// New returns a Fetcher.
func New(o Options) (*Fetcher, error) {
	for _, t := range o.AllowedTypes {
		if _, _, ok := strings.Cut(t, "/"); !ok && t != "*" {
			return nil, fmt.Errorf("fetch: allowed type %q is not type/subtype", t)
		}
	}
	if o.CutOff < 0 || o.MaxRedirects < 0 || o.Timeout < 0 {
		return nil, errors.New("fetch: negative cut-off, redirect limit or timeout")
	}
	tr := o.Transport
	if tr == nil {
		tr = NewTransport(o)
	}
	f := &Fetcher{o: o, tr: tr}
	if o.HTTP10 {
		f.http10 = newHTTP10Transport(tr)
	}
	if o.Auth != nil && o.Auth.needsNTLM() {
		f.ntlm = tr.Clone()
		f.ntlm.MaxConnsPerHost = 1
		f.ntlm.MaxIdleConnsPerHost = 1
	}
	return f, nil
}

// NewTransport builds the keep-alive HTTP/1.1 transport a Fetcher uses.
func NewTransport(o Options) *http.Transport {
	dial := o.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}
		dial = d.DialContext
	}
	idle := o.IdleConnTimeout
	if idle <= 0 {
		idle = 30 * time.Second
	}
	perHost := o.MaxIdleConnsPerHost
	if perHost <= 0 {
		perHost = 2
	}
	maxIdle := o.MaxIdleConns
	if maxIdle <= 0 {
		maxIdle = 4096
	}
	tlsConf := o.TLSConfig
	if tlsConf != nil {
		tlsConf = tlsConf.Clone()
	}
	return &http.Transport{
		Proxy:                  proxyFromContext, // proxies are configured explicitly (Options.Proxies), never from the environment
		DialContext:            dial,
		TLSClientConfig:        tlsConf,
		TLSHandshakeTimeout:    30 * time.Second,
		DisableCompression:     true,
		MaxIdleConns:           maxIdle,
		MaxIdleConnsPerHost:    perHost,
		MaxConnsPerHost:        o.MaxConnsPerHost,
		IdleConnTimeout:        idle,
		MaxResponseHeaderBytes: 256 << 10,
		ForceAttemptHTTP2:      false,
		TLSNextProto:           map[string]func(string, *tls.Conn) http.RoundTripper{}, // HTTP/1.1 only
		OnProxyConnectResponse: onProxyConnectResponse,
	}
}

// Transport returns the fetcher's transport, to share with another Fetcher.
func (f *Fetcher) Transport() *http.Transport { return f.tr }

// Options returns the fetcher's options.
func (f *Fetcher) Options() Options { return f.o }

// CloseIdle closes idle connections.
func (f *Fetcher) CloseIdle() {
	f.tr.CloseIdleConnections()
	if f.ntlm != nil {
		f.ntlm.CloseIdleConnections()
	}
}

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// Fetch downloads one document. On failure it returns an *Error; for
// redirect, type, size and header failures it also returns the Response
// so far (trail, status, headers, no body).
func (f *Fetcher) Fetch(ctx context.Context, req Request) (*Response, error) {
	start := time.Now()
	parent := ctx
	if f.o.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.o.Timeout)
		defer cancel()
	}
	u, err := url.Parse(req.URL)
	if err == nil && u.Scheme == "ftp" && u.Host != "" {
		return f.fetchFTP(ctx, parent, u, req, start)
	}
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		if err == nil {
			err = errors.New("not an absolute http(s) URL")
		}
		return nil, &Error{Kind: KindBadURL, URL: req.URL, Err: err}
	}
	resp := &Response{URL: req.URL}
	if req.Capture {
		resp.capture = &capture{}
	}
	defer func() { resp.Timing.Total = time.Since(start) }()
	method := req.Method
	if method == "" {
		method = http.MethodGet
	}
	body := req.Body
	seen := map[string]bool{u.String(): true}
	for {
		hr, err := f.exchange(ctx, u, method, body, req, resp)
		if err != nil {
			return nil, &Error{Kind: classifyProxy(err, parent, f.o.Proxies != nil), URL: u.String(), Err: err}
		}
		resp.FinalURL = u.String()
		resp.Status = hr.StatusCode
		resp.Header = hr.Header
		resp.Proto = hr.Proto
		loc := hr.Header.Get("Location")
		if !isRedirect(hr.StatusCode) || loc == "" {
			return f.readBody(ctx, parent, hr, resp)
		}
		target, perr := u.Parse(loc)
		if resp.capture != nil {
			f.captureRedirect(resp, u.String(), hr)
		} else {
			discard(hr)
		}
		if perr != nil || (target.Scheme != "http" && target.Scheme != "https") {
			return resp, &Error{Kind: KindProtocol, URL: u.String(), Err: fmt.Errorf("bad Location %q", loc)}
		}
		target.Fragment, target.RawFragment = "", ""
		resp.RedirectTrail = append(resp.RedirectTrail, Hop{URL: u.String(), Status: hr.StatusCode, Location: target.String()})
		if f.o.MaxRedirects == 0 {
			return resp, nil
		}
		if len(resp.RedirectTrail) > f.o.MaxRedirects {
			return resp, &Error{Kind: KindTooManyRedirects, URL: req.URL, Err: fmt.Errorf("more than %d redirects", f.o.MaxRedirects)}
		}
		if seen[target.String()] {
			return resp, &Error{Kind: KindRedirectLoop, URL: req.URL, Err: fmt.Errorf("redirect loop at %s", target)}
		}
		if f.o.CheckRedirect != nil {
			if err := f.o.CheckRedirect(u, target); err != nil {
				if errors.Is(err, ErrUseLastResponse) {
					return resp, nil
				}
				return resp, &Error{Kind: KindRedirectRejected, URL: target.String(), Err: err}
			}
		}
		seen[target.String()] = true
		switch {
		case hr.StatusCode == http.StatusSeeOther,
			(hr.StatusCode == http.StatusMovedPermanently || hr.StatusCode == http.StatusFound) && method == http.MethodPost:
			method, body = http.MethodGet, nil
		}
		u = target
	}
}

// discard closes a redirect body, reading a little of it so that the
// connection can be reused.
func discard(hr *http.Response) {
	io.CopyN(io.Discard, hr.Body, 4096)
	hr.Body.Close()
}

func (f *Fetcher) roundTrip(ctx context.Context, tr http.RoundTripper, u *url.URL, method string, body []byte, req Request, resp *Response, auth string) (*http.Response, error) {
	var dnsStart, connStart, tlsStart, sent time.Time
	trace := &httptrace.ClientTrace{
		DNSStart:          func(httptrace.DNSStartInfo) { dnsStart = time.Now() },
		DNSDone:           func(httptrace.DNSDoneInfo) { resp.Timing.DNS = time.Since(dnsStart) },
		ConnectStart:      func(string, string) { connStart = time.Now() },
		ConnectDone:       func(string, string, error) { resp.Timing.Connect = time.Since(connStart) },
		TLSHandshakeStart: func() { tlsStart = time.Now() },
		TLSHandshakeDone:  func(tls.ConnectionState, error) { resp.Timing.TLS = time.Since(tlsStart) },
		WroteRequest:      func(httptrace.WroteRequestInfo) { sent = time.Now() },
		GotFirstResponseByte: func() {
			if !sent.IsZero() {
				resp.Timing.FirstByte = time.Since(sent)
			}
		},
	}
	if resp.capture != nil {
		trace.GotConn = func(i httptrace.GotConnInfo) { resp.capture.gotConn(i.Conn) }
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	hreq, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), method, u.String(), rd)
	if err != nil {
		return nil, err
	}
	h := hreq.Header
	for k, vs := range f.o.Headers {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	for k, vs := range req.Header {
		h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
	}
	if h.Get("User-Agent") == "" && f.o.UserAgent != "" {
		h.Set("User-Agent", f.o.UserAgent)
	}
	if f.http10 != nil {
		tr = f.http10 // use_http_1_1 off (http10.go)
	}
	if f.o.AcceptCompression && f.http10 == nil {
		h.Set("Accept-Encoding", "gzip, deflate")
	} else {
		h.Set("Accept-Encoding", "identity")
	}
	if !req.IfModifiedSince.IsZero() {
		h.Set("If-Modified-Since", req.IfModifiedSince.UTC().Format(http.TimeFormat))
	}
	if req.ETag != "" {
		h.Set("If-None-Match", req.ETag)
	}
	if f.o.Jar != nil && h.Get("Cookie") == "" {
		for _, c := range f.o.Jar.Cookies(u) {
			hreq.AddCookie(c)
		}
	}
	if auth != "" {
		h.Set("Authorization", auth)
	}
	if resp.capture != nil {
		resp.capture.captureRequest(hreq, body)
	}
	hr, err := tr.RoundTrip(hreq)
	if err == nil && f.o.Jar != nil {
		if cs := hr.Cookies(); len(cs) > 0 {
			f.o.Jar.SetCookies(u, cs)
		}
	}
	return hr, err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n *int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	*c.n += int64(n)
	return n, err
}

func (f *Fetcher) readBody(ctx, parent context.Context, hr *http.Response, resp *Response) (*Response, error) {
	defer hr.Body.Close()
	var raw *bytes.Buffer // the body as received, under Request.Capture
	complete := false     // raw holds the whole body
	if resp.capture != nil {
		raw = &bytes.Buffer{}
		defer func() {
			resp.Exchanges = append(resp.Exchanges, resp.capture.exchange(resp.FinalURL, hr, raw.Bytes(), !complete || resp.Truncated))
		}()
	}
	fail := func(k Kind, err error) (*Response, error) {
		return resp, &Error{Kind: k, URL: resp.FinalURL, Err: err}
	}
	if hr.StatusCode == http.StatusNotModified {
		resp.NotModified = true
		complete = true
		return resp, nil
	}
	mt, params, _ := mime.ParseMediaType(hr.Header.Get("Content-Type"))
	resp.ContentType, resp.Charset = strings.ToLower(mt), params["charset"]
	success := hr.StatusCode >= 200 && hr.StatusCode < 300
	if success && f.o.ExcludeHeaders != nil {
		if name, ok := f.o.ExcludeHeaders.Excluded(hr.Header); ok {
			return fail(KindExcludedHeader, fmt.Errorf("header %s excluded", name))
		}
	}
	detect := f.o.ForceMimeDetection || resp.ContentType == ""
	if success && !detect && !TypeAllowed(f.o.AllowedTypes, resp.ContentType) {
		return fail(KindTypeNotAllowed, fmt.Errorf("type %s not allowed", resp.ContentType))
	}
	limit := f.o.CutOff
	if limit <= 0 {
		limit = HardMaxBody
	}
	if !f.o.Truncate && hr.ContentLength > limit {
		return fail(KindTooLarge, fmt.Errorf("content length %d exceeds %d", hr.ContentLength, limit))
	}
	var wire io.Reader = countingReader{r: hr.Body, n: &resp.BytesOnWire}
	if raw != nil {
		wire = io.TeeReader(wire, raw)
	}
	encoding := hr.Header.Get("Content-Encoding")
	dec, err := decoder(encoding, wire)
	if gz, ok := dec.(*gzip.Reader); ok {
		defer gzipReaders.Put(gz)
	}
	if err != nil {
		if ctx.Err() != nil {
			return fail(classify(ctx.Err(), parent), ctx.Err())
		}
		return fail(KindProtocol, err)
	}
	// Read at most limit+1 decoded bytes: one more than allowed tells that
	// the body is too long, without reading the rest.
	b, err := readAtMost(dec, limit+1, sizeHint(hr.ContentLength, encoding, limit+1))
	if err != nil {
		if ctx.Err() != nil {
			return fail(classify(ctx.Err(), parent), err)
		}
		if isDecodeError(err) {
			return fail(KindProtocol, err)
		}
		return fail(classify(err, parent), err)
	}
	complete = true
	if int64(len(b)) > limit {
		if !f.o.Truncate {
			return fail(KindTooLarge, fmt.Errorf("body exceeds %d bytes", limit))
		}
		b = b[:limit]
		resp.Truncated = true
	}
	resp.Body = b
	if detect {
		mt, params, _ := mime.ParseMediaType(http.DetectContentType(b))
		resp.ContentType, resp.Detected = strings.ToLower(mt), true
		if resp.Charset == "" {
			resp.Charset = params["charset"]
		}
		if success && !TypeAllowed(f.o.AllowedTypes, resp.ContentType) {
			resp.Body = nil
			return fail(KindTypeNotAllowed, fmt.Errorf("detected type %s not allowed", resp.ContentType))
		}
	}
	return resp, nil
}

func isDecodeError(err error) bool {
	var ce flate.CorruptInputError
	return errors.Is(err, gzip.ErrChecksum) || errors.Is(err, gzip.ErrHeader) || errors.Is(err, zlib.ErrChecksum) ||
		errors.Is(err, zlib.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF) || errors.As(err, &ce)
}

// sizeHint is the buffer to start a body with: the Content-Length when the
// body is not encoded (plus one byte, to see the end without growing),
// four times it when compressed, 8 KiB when unknown; never above limit.
func sizeHint(contentLength int64, encoding string, limit int64) int {
	n := int64(8 << 10)
	if contentLength >= 0 {
		n = contentLength + 1
		if e := strings.TrimSpace(encoding); e != "" && !strings.EqualFold(e, "identity") {
			n = 4*contentLength + 1
		}
	}
	return int(min(max(n, 512), limit))
}

// readAtMost reads r to its end or to limit bytes, starting with a buffer
// of size bytes and growing it as needed (the body is kept, so it is
// allocated once at about its size rather than copied from a pooled one).
func readAtMost(r io.Reader, limit int64, size int) ([]byte, error) {
	b := make([]byte, 0, size)
	for int64(len(b)) < limit {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		room := min(int64(cap(b)-len(b)), limit-int64(len(b)))
		n, err := r.Read(b[len(b) : len(b)+int(room)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// gzipReaders recycles gzip readers (each holds a 32 KiB window).
var gzipReaders = sync.Pool{New: func() any { return new(gzip.Reader) }}

// decoder wraps r with the decoder of a Content-Encoding. A *gzip.Reader it
// returns comes from gzipReaders; the caller puts it back when done.
func decoder(encoding string, r io.Reader) (io.Reader, error) {
	switch strings.ToLower(strings.TrimSpace(encoding)) {
	case "", "identity":
		return r, nil
	case "gzip", "x-gzip":
		gz := gzipReaders.Get().(*gzip.Reader)
		if err := gz.Reset(r); err != nil {
			gzipReaders.Put(gz)
			return nil, err
		}
		return gz, nil
	case "deflate":
		return newDeflateReader(r)
	}
	return nil, fmt.Errorf("unsupported content encoding %q", encoding)
}

// newDeflateReader decodes "deflate", which RFC 9110 defines as zlib
// (RFC 1950) but which servers also send raw (RFC 1951). A zlib stream starts
// with a CMF byte whose low nibble is 8 and a FLG byte making CMF*256+FLG a
// multiple of 31; anything else is read as raw deflate.
func newDeflateReader(r io.Reader) (io.Reader, error) {
	var head [2]byte
	n, err := io.ReadFull(r, head[:])
	if err != nil && n == 0 {
		if err == io.EOF {
			return bytes.NewReader(nil), nil
		}
		return nil, err
	}
	all := io.MultiReader(bytes.NewReader(head[:n]), r)
	if n == 2 && head[0]&0x0f == 8 && head[0]>>4 <= 7 && (uint16(head[0])<<8|uint16(head[1]))%31 == 0 {
		return zlib.NewReader(all)
	}
	return flate.NewReader(all), nil
}

// TypeAllowed reports whether a media type matches one of the patterns of
// allowed_types. A pattern's type and subtype are each either literal
// (case-insensitive) or "*" (MS-FSCCFG: "wildcard expansion of an entire
// field"). An empty pattern list allows every type.
func TypeAllowed(patterns []string, mediaType string) bool {
	if len(patterns) == 0 {
		return true
	}
	typ, sub, _ := strings.Cut(strings.ToLower(mediaType), "/")
	for _, p := range patterns {
		p = strings.ToLower(strings.TrimSpace(p))
		if p == "*" {
			return true
		}
		pt, ps, _ := strings.Cut(p, "/")
		if (pt == "*" || pt == typ) && (ps == "*" || ps == sub) {
			return true
		}
	}
	return false
}
