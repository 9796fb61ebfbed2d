package fetch

import (
	"bufio"
	"context"
	"crypto/tls"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/url"
	"strings"
	"sync"
)

// http10Transport sends HTTP/1.0 requests (use_http_1_1 off, MS-FSCCFG
// 2.2.3): one connection per request, closed when the response body is,
// no keep-alive and no Accept-Encoding beyond identity (accept_compression
// has no effect without HTTP/1.1). It goes through the same dialer, TLS
// configuration and proxies (Options.Proxies, CONNECT for https) as the
// HTTP/1.1 transport. Go's http.Transport always speaks HTTP/1.1, hence
// this small client; the response is parsed by http.ReadResponse.
type http10Transport struct {
	dial      func(ctx context.Context, network, addr string) (net.Conn, error)
	tls       *tls.Config
	maxHeader int64
}

func newHTTP10Transport(tr *http.Transport) *http10Transport {
	t := &http10Transport{dial: tr.DialContext, tls: tr.TLSClientConfig, maxHeader: tr.MaxResponseHeaderBytes}
	if t.dial == nil {
		d := &net.Dialer{}
		t.dial = d.DialContext
	}
	if t.maxHeader <= 0 {
		t.maxHeader = 1 << 20
	}
	return t
}

// hostPort is u's host with the scheme's default port.
func hostPort(u *url.URL) string {
	if u.Port() != "" {
		return u.Host
	}
	if u.Scheme == "https" {
		return net.JoinHostPort(u.Hostname(), "443")
	}
	return net.JoinHostPort(u.Hostname(), "80")
}

func basicAuth(u *url.Userinfo) string {
	p, _ := u.Password()
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+p))
}

// RoundTrip implements http.RoundTripper.
func (t *http10Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	trace := httptrace.ContextClientTrace(ctx)
	u := req.URL
	proxy, _ := proxyFromContext(req)
	addr := hostPort(u)
	if proxy != nil {
		addr = hostPort(proxy)
	}
	if trace != nil && trace.ConnectStart != nil {
		trace.ConnectStart("tcp", addr)
	}
	conn, err := t.dial(ctx, "tcp", addr)
	if trace != nil && trace.ConnectDone != nil {
		trace.ConnectDone("tcp", addr, err)
	}
	if err != nil {
		if proxy != nil {
			return nil, &net.OpError{Op: "proxyconnect", Net: "tcp", Err: err}
		}
		return nil, err
	}
	// The context closes the connection: a cancelled or timed-out fetch
	// does not hang in a read.
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	fail := func(err error) (*http.Response, error) {
		stop()
		conn.Close()
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, err
	}
	if proxy != nil && u.Scheme == "https" {
		if err := t.connect(conn, proxy, hostPort(u)); err != nil {
			return fail(err)
		}
	}
	if u.Scheme == "https" {
		cfg := &tls.Config{}
		if t.tls != nil {
			cfg = t.tls.Clone()
		}
		if cfg.ServerName == "" {
			cfg.ServerName = u.Hostname()
		}
		if trace != nil && trace.TLSHandshakeStart != nil {
			trace.TLSHandshakeStart()
		}
		tc := tls.Client(conn, cfg)
		err := tc.HandshakeContext(ctx)
		if trace != nil && trace.TLSHandshakeDone != nil {
			trace.TLSHandshakeDone(tc.ConnectionState(), err)
		}
		if err != nil {
			return fail(err)
		}
		conn = tc
	}
	target := u.RequestURI()
	if proxy != nil && u.Scheme == "http" {
		target = u.String() // absolute form through a proxy
	}
	bw := bufio.NewWriter(conn)
	fmt.Fprintf(bw, "%s %s HTTP/1.0\r\nHost: %s\r\n", req.Method, target, u.Host)
	h := req.Header.Clone()
	h.Del("Host")
	h.Del("Connection")
	h.Del("Accept-Encoding")
	h.Set("Accept-Encoding", "identity")
	if proxy != nil && u.Scheme == "http" && proxy.User != nil {
		h.Set("Proxy-Authorization", basicAuth(proxy.User))
	}
	var body []byte
	if req.Body != nil {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return fail(err)
		}
		body = b
		h.Set("Content-Length", fmt.Sprint(len(body)))
	}
	if err := h.Write(bw); err != nil {
		return fail(err)
	}
	bw.WriteString("\r\n")
	bw.Write(body)
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if trace != nil && trace.WroteRequest != nil {
		trace.WroteRequest(httptrace.WroteRequestInfo{})
	}
	lim := &headerLimit{r: conn, left: t.maxHeader}
	br := bufio.NewReader(lim)
	if _, err := br.Peek(1); err != nil {
		return fail(err)
	}
	if trace != nil && trace.GotFirstResponseByte != nil {
		trace.GotFirstResponseByte()
	}
	resp, err := http.ReadResponse(br, req)
	if err != nil {
		return fail(err)
	}
	lim.done()
	resp.Body = &closeConn{ReadCloser: resp.Body, conn: conn, stop: stop}
	return resp, nil
}

// connect opens a tunnel to addr through the proxy on conn.
func (t *http10Transport) connect(conn net.Conn, proxy *url.URL, addr string) error {
	var b strings.Builder
	fmt.Fprintf(&b, "CONNECT %s HTTP/1.0\r\nHost: %s\r\n", addr, addr)
	if proxy.User != nil {
		fmt.Fprintf(&b, "Proxy-Authorization: %s\r\n", basicAuth(proxy.User))
	}
	b.WriteString("\r\n")
	if _, err := io.WriteString(conn, b.String()); err != nil {
		return &net.OpError{Op: "proxyconnect", Net: "tcp", Err: err}
	}
	// Read the answer byte by byte up to the blank line, so that nothing
	// of the tunnelled stream is consumed.
	lim := &headerLimit{r: conn, left: t.maxHeader}
	resp, err := http.ReadResponse(bufio.NewReaderSize(oneByte{lim}, 16), &http.Request{Method: http.MethodConnect})
	if err != nil {
		return &net.OpError{Op: "proxyconnect", Net: "tcp", Err: err}
	}
	if resp.StatusCode != http.StatusOK {
		return &ProxyStatusError{Proxy: proxy.Host, Status: resp.StatusCode}
	}
	return nil
}

// oneByte reads at most one byte at a time.
type oneByte struct{ r io.Reader }

func (o oneByte) Read(p []byte) (int, error) {
	if len(p) > 1 {
		p = p[:1]
	}
	return o.r.Read(p)
}

var errHeaderTooLarge = errors.New("fetch: response header too large")

// headerLimit fails reads after left bytes until done is called (the
// header has been read).
type headerLimit struct {
	r    io.Reader
	mu   sync.Mutex
	left int64
	off  bool
}

func (h *headerLimit) Read(p []byte) (int, error) {
	h.mu.Lock()
	off, left := h.off, h.left
	h.mu.Unlock()
	if !off {
		if left <= 0 {
			return 0, errHeaderTooLarge
		}
		if int64(len(p)) > left {
			p = p[:left]
		}
	}
	n, err := h.r.Read(p)
	h.mu.Lock()
	h.left -= int64(n)
	h.mu.Unlock()
	return n, err
}

func (h *headerLimit) done() {
	h.mu.Lock()
	h.off = true
	h.mu.Unlock()
}

// closeConn closes the connection with the body.
type closeConn struct {
	io.ReadCloser
	conn net.Conn
	stop func() bool
	once sync.Once
}

func (c *closeConn) Close() error {
	err := c.ReadCloser.Close()
	c.once.Do(func() {
		c.stop()
		c.conn.Close()
	})
	return err
}
