package webfarm

import (
	"context"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"time"
)

// ForwardProxy is an HTTP forward proxy for the crawler's proxy tests: it
// forwards absolute-form requests (http URLs) and tunnels CONNECT (https),
// demanding Basic Proxy-Authorization when User is set (407 otherwise). It
// counts what it did and the most requests it had in flight at once.
type ForwardProxy struct {
	User, Password string
	// Dial reaches the origin servers (default net.Dialer).
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)

	mu          sync.Mutex
	forwarded   int
	tunnels     int
	refused     int
	inFlight    int
	maxInFlight int
	hosts       map[string]int
	tr          *http.Transport
}

// ProxyStats is what a ForwardProxy counted.
type ProxyStats struct {
	Forwarded, Tunnels, Refused, MaxInFlight int
	// Hosts counts requests (and tunnels) per target host:port.
	Hosts map[string]int
}

// Stats returns the counts.
func (p *ForwardProxy) Stats() ProxyStats {
	p.mu.Lock()
	defer p.mu.Unlock()
	h := map[string]int{}
	for k, v := range p.hosts {
		h[k] = v
	}
	return ProxyStats{Forwarded: p.forwarded, Tunnels: p.tunnels, Refused: p.refused, MaxInFlight: p.maxInFlight, Hosts: h}
}

func (p *ForwardProxy) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	if p.Dial != nil {
		return p.Dial(ctx, network, addr)
	}
	d := net.Dialer{Timeout: 10 * time.Second}
	return d.DialContext(ctx, network, addr)
}

func (p *ForwardProxy) enter(host string) func() {
	p.mu.Lock()
	p.inFlight++
	if p.inFlight > p.maxInFlight {
		p.maxInFlight = p.inFlight
	}
	if p.hosts == nil {
		p.hosts = map[string]int{}
	}
	p.hosts[host]++
	p.mu.Unlock()
	return func() {
		p.mu.Lock()
		p.inFlight--
		p.mu.Unlock()
	}
}

// ServeHTTP proxies one request.
func (p *ForwardProxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if p.User != "" {
		u, pw, ok := basicCredentials(r.Header.Get("Proxy-Authorization"))
		if !ok || u != p.User || pw != p.Password {
			p.mu.Lock()
			p.refused++
			p.mu.Unlock()
			w.Header().Set("Proxy-Authenticate", `Basic realm="webfarm proxy"`)
			http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
			return
		}
	}
	if r.Method == http.MethodConnect {
		p.connect(w, r)
		return
	}
	if r.URL.Scheme != "http" || r.URL.Host == "" {
		http.Error(w, "not a proxy request", http.StatusBadRequest)
		return
	}
	defer p.enter(r.URL.Host)()
	p.mu.Lock()
	p.forwarded++
	if p.tr == nil {
		p.tr = &http.Transport{DialContext: p.dial, DisableCompression: true, MaxIdleConnsPerHost: 4}
	}
	tr := p.tr
	p.mu.Unlock()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Authorization")
	out.Header.Del("Proxy-Connection")
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	io.Copy(w, resp.Body)
}

func (p *ForwardProxy) connect(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if !strings.Contains(host, ":") {
		host += ":443"
	}
	defer p.enter(host)()
	p.mu.Lock()
	p.tunnels++
	p.mu.Unlock()
	up, err := p.dial(r.Context(), "tcp", host)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "no hijacking", http.StatusInternalServerError)
		return
	}
	conn, brw, err := hj.Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	if _, err := io.WriteString(conn, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	if n := brw.Reader.Buffered(); n > 0 {
		b, _ := brw.Reader.Peek(n)
		up.Write(b)
	}
	done := make(chan struct{}, 2)
	go func() {
		io.Copy(up, conn)
		if cw, ok := up.(interface{ CloseWrite() error }); ok {
			cw.CloseWrite()
		}
		done <- struct{}{}
	}()
	go func() { io.Copy(conn, up); done <- struct{}{} }()
	<-done // one side ended: the deferred closes end the other
}
