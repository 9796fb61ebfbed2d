package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"
)

// ProxyDownTime is how long a proxy that could not be reached is passed
// over while another one is up.
const ProxyDownTime = 30 * time.Second

// ProxyConfig is one forward proxy of the proxy parameter, password in clear.
type ProxyConfig struct {
	Host           string
	Port           int // 0: 80
	User, Password string
}

// Proxies spreads requests over forward proxies (MS-FSCCFG proxy and
// proxy_max_pending). Each request goes through the proxy with the fewest
// requests in flight (ties in turn); a proxy never has more than MaxPending
// requests in flight, and a request waits for a free one. http URLs are
// sent to the proxy in absolute form, https URLs through a CONNECT tunnel;
// credentials go in Proxy-Authorization (Basic) both ways. A proxy that
// cannot be reached is passed over for ProxyDownTime and the request tries
// the next one. It is safe for concurrent use.
type Proxies struct {
	list       []*proxyState
	maxPending int
	now        func() time.Time

	mu   sync.Mutex
	next int
	free chan struct{} // closed and replaced whenever a slot frees
}

type proxyState struct {
	url       *url.URL
	inFlight  int
	downUntil time.Time
	requests  int64
}

// NewProxies returns the proxy set. maxPending <= 0 means no bound; now is
// the clock of the down time (nil: time.Now).
func NewProxies(list []ProxyConfig, maxPending int, now func() time.Time) (*Proxies, error) {
	if len(list) == 0 {
		return nil, errors.New("fetch: no proxy")
	}
	if now == nil {
		now = time.Now
	}
	p := &Proxies{maxPending: maxPending, now: now, free: make(chan struct{})}
	for _, c := range list {
		if c.Host == "" {
			return nil, errors.New("fetch: proxy without host")
		}
		port := c.Port
		if port == 0 {
			port = 80
		}
		u := &url.URL{Scheme: "http", Host: net.JoinHostPort(c.Host, strconv.Itoa(port))}
		if c.User != "" {
			u.User = url.UserPassword(c.User, c.Password)
		}
		p.list = append(p.list, &proxyState{url: u})
	}
	return p, nil
}

// Len is the number of proxies.
func (p *Proxies) Len() int { return len(p.list) }

// Stats returns, per proxy address, the requests sent through it.
func (p *Proxies) Stats() map[string]int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := map[string]int64{}
	for _, s := range p.list {
		out[s.url.Host] = s.requests
	}
	return out
}

// acquire waits for a proxy with a free slot, skipping those in skip.
func (p *Proxies) acquire(ctx context.Context, skip map[*proxyState]bool) (*proxyState, error) {
	for {
		p.mu.Lock()
		now := p.now()
		var best *proxyState
		bestDown := false
		n := len(p.list)
		for k := 0; k < n; k++ {
			s := p.list[(p.next+k)%n]
			if skip[s] || (p.maxPending > 0 && s.inFlight >= p.maxPending) {
				continue
			}
			down := now.Before(s.downUntil)
			switch {
			case best == nil,
				bestDown && !down,
				bestDown == down && s.inFlight < best.inFlight:
				best, bestDown = s, down
			}
		}
		if best != nil {
			best.inFlight++
			best.requests++
			for i, s := range p.list {
				if s == best {
					p.next = (i + 1) % n
				}
			}
			p.mu.Unlock()
			return best, nil
		}
		if len(skip) >= n {
			p.mu.Unlock()
			return nil, errAllProxiesFailed
		}
		wait := p.free
		p.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (p *Proxies) release(s *proxyState) {
	p.mu.Lock()
	s.inFlight--
	close(p.free)
	p.free = make(chan struct{})
	p.mu.Unlock()
}

func (p *Proxies) markDown(s *proxyState) {
	p.mu.Lock()
	s.downUntil = p.now().Add(ProxyDownTime)
	p.mu.Unlock()
}

var errAllProxiesFailed = errors.New("fetch: every proxy failed")

type proxyKey struct{}

// proxyFromContext is the transports' Proxy function: the proxy chosen for
// the request travels in its context.
func proxyFromContext(r *http.Request) (*url.URL, error) {
	if u, ok := r.Context().Value(proxyKey{}).(*url.URL); ok {
		return u, nil
	}
	return nil, nil
}

// ProxyStatusError is a CONNECT refused by a proxy.
type ProxyStatusError struct {
	Proxy  string
	Status int
}

func (e *ProxyStatusError) Error() string {
	return fmt.Sprintf("proxy %s answered CONNECT with %d %s", e.Proxy, e.Status, http.StatusText(e.Status))
}

// onProxyConnectResponse types a refused CONNECT.
func onProxyConnectResponse(_ context.Context, proxy *url.URL, _ *http.Request, resp *http.Response) error {
	if resp.StatusCode != http.StatusOK {
		return &ProxyStatusError{Proxy: proxy.Host, Status: resp.StatusCode}
	}
	return nil
}

// proxyUnreachable reports whether err is a failure to reach the proxy
// (rather than a failure of the site behind it).
func proxyUnreachable(err error) bool {
	var pe *ProxyStatusError
	if errors.As(err, &pe) {
		return false
	}
	var oe *net.OpError
	return errors.As(err, &oe) && oe.Op == "proxyconnect"
}

// releaseBody frees the proxy slot when the body is closed.
type releaseBody struct {
	io.ReadCloser
	once sync.Once
	fn   func()
}

func (b *releaseBody) Close() error {
	err := b.ReadCloser.Close()
	b.once.Do(b.fn)
	return err
}

// exchange sends one request (one hop): through a proxy when there are
// proxies, answering authentication challenges when there is an Auth.
func (f *Fetcher) exchange(ctx context.Context, u *url.URL, method string, body []byte, req Request, resp *Response) (*http.Response, error) {
	p := f.o.Proxies
	if p == nil {
		return f.authExchange(ctx, u, method, body, req, resp)
	}
	var skip map[*proxyState]bool
	for {
		s, err := p.acquire(ctx, skip)
		if err != nil {
			return nil, err
		}
		hr, err := f.authExchange(context.WithValue(ctx, proxyKey{}, s.url), u, method, body, req, resp)
		if err != nil {
			p.release(s)
			if proxyUnreachable(err) && ctx.Err() == nil {
				p.markDown(s)
				if skip == nil {
					skip = map[*proxyState]bool{}
				}
				skip[s] = true
				if len(skip) < p.Len() {
					continue
				}
			}
			return nil, err
		}
		hr.Body = &releaseBody{ReadCloser: hr.Body, fn: func() { p.release(s) }}
		return hr, nil
	}
}

// classifyProxy is classify, with the failures of proxies told apart.
func classifyProxy(err error, parent context.Context, proxied bool) Kind {
	if proxied {
		var pe *ProxyStatusError
		if errors.As(err, &pe) || proxyUnreachable(err) {
			if parent.Err() == context.Canceled {
				return KindCanceled
			}
			return KindProxy
		}
		if errors.Is(err, errAllProxiesFailed) {
			return KindProxy
		}
	}
	return classify(err, parent)
}
