package fetch

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/webfarm"
)

// protoLog serves a page and records each request's protocol, its
// Accept-Encoding and the client's address.
type protoLog struct {
	mu   sync.Mutex
	reqs []string
}

func (p *protoLog) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.reqs = append(p.reqs, r.Proto+" ae="+r.Header.Get("Accept-Encoding"))
	p.mu.Unlock()
	w.Header().Set("Content-Type", "text/html")
	fmt.Fprintf(w, "<p>%s %s</p>", r.Method, r.URL.Path)
}

func (p *protoLog) log() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.reqs...)
}

// TestHTTP10: with Options.HTTP10 every request is HTTP/1.0 without
// compression (even with AcceptCompression), directly, through a forward
// proxy with credentials, and through a CONNECT tunnel for https; a
// refused CONNECT is a proxy failure.
func TestHTTP10(t *testing.T) {
	newProxy := func(user, pw string) (*webfarm.ForwardProxy, ProxyConfig) {
		p := &webfarm.ForwardProxy{User: user, Password: pw}
		srv := httptest.NewServer(p)
		t.Cleanup(srv.Close)
		u, _ := url.Parse(srv.URL)
		host, port, _ := net.SplitHostPort(u.Host)
		pc := ProxyConfig{Host: host, User: user, Password: pw}
		pc.Port = atoi(port)
		return p, pc
	}
	t.Run("direct", func(t *testing.T) {
		pl := &protoLog{}
		srv := httptest.NewServer(pl)
		t.Cleanup(srv.Close)
		f := newFetcher(t, func(o *Options) { o.HTTP10, o.AcceptCompression = true, true })
		for i := 0; i < 3; i++ {
			resp := get(t, f, srv.URL+"/p")
			if resp.Status != 200 || string(resp.Body) != "<p>GET /p</p>" || resp.Proto != "HTTP/1.0" && resp.Proto != "HTTP/1.1" {
				t.Fatalf("response %d %q %s", resp.Status, resp.Body, resp.Proto)
			}
		}
		want := []string{"HTTP/1.0 ae=identity", "HTTP/1.0 ae=identity", "HTTP/1.0 ae=identity"}
		if d := cmp.Diff(want, pl.log()); d != "" {
			t.Errorf("requests (-want +got):\n%s", d)
		}
	})
	t.Run("forward proxy", func(t *testing.T) {
		pl := &protoLog{}
		srv := httptest.NewServer(pl)
		t.Cleanup(srv.Close)
		p, pc := newProxy("pu", "pp")
		ps, err := NewProxies([]ProxyConfig{pc}, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		f := newFetcher(t, func(o *Options) { o.HTTP10, o.Proxies = true, ps })
		if resp := get(t, f, srv.URL+"/q"); resp.Status != 200 || string(resp.Body) != "<p>GET /q</p>" {
			t.Fatalf("through the proxy: %d %q", resp.Status, resp.Body)
		}
		if st := p.Stats(); st.Forwarded != 1 || st.Refused != 0 {
			t.Errorf("proxy stats %+v", st)
		}
	})
	t.Run("https connect", func(t *testing.T) {
		pl := &protoLog{}
		tlsSrv := httptest.NewTLSServer(pl)
		t.Cleanup(tlsSrv.Close)
		pool := x509.NewCertPool()
		pool.AddCert(tlsSrv.Certificate())
		p, pc := newProxy("pu", "pp")
		ps, _ := NewProxies([]ProxyConfig{pc}, 0, nil)
		f := newFetcher(t, func(o *Options) {
			o.HTTP10, o.Proxies, o.TLSConfig = true, ps, &tls.Config{RootCAs: pool}
		})
		if resp := get(t, f, tlsSrv.URL+"/s"); resp.Status != 200 || string(resp.Body) != "<p>GET /s</p>" {
			t.Fatalf("through the tunnel: %d %q", resp.Status, resp.Body)
		}
		if st := p.Stats(); st.Tunnels != 1 {
			t.Errorf("tunnels %d, want 1", st.Tunnels)
		}
		if got := pl.log(); len(got) != 1 || !strings.HasPrefix(got[0], "HTTP/1.0 ") {
			t.Errorf("origin saw %v, want one HTTP/1.0 request", got)
		}
		bad := pc
		bad.Password = "wrong"
		ps2, _ := NewProxies([]ProxyConfig{bad}, 0, nil)
		f2 := newFetcher(t, func(o *Options) { o.HTTP10, o.Proxies, o.TLSConfig = true, ps2, &tls.Config{RootCAs: pool} })
		_, err := f2.Fetch(context.Background(), Request{URL: tlsSrv.URL + "/t"})
		if KindOf(err) != KindProxy {
			t.Errorf("CONNECT refused: err %v (kind %v), want proxy", err, KindOf(err))
		}
	})
}
