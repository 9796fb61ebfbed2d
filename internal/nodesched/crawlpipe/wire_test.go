package crawlpipe

import (
	"context"
	"crypto/tls"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httptrace"
	"sync/atomic"
	"testing"

	"github.com/trawl/trawl/internal/fetch"
)

// readCounter is a listener whose connections count the bytes they read:
// what the server received, to compare with what the crawler counted.
type readCounter struct {
	net.Listener
	n atomic.Int64
}

func (l *readCounter) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &countedRead{Conn: c, n: &l.n}, nil
}

type countedRead struct {
	net.Conn
	n *atomic.Int64
}

func (c *countedRead) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestSentCounter fetches from real HTTP and HTTPS servers over the
// node scheduler's counting connections, on new and reused connections,
// and checks that the bytes counted per request add up to what the
// server read (WriteNet).
func TestSentCounter(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"http", false}, {"https", true}} {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Write([]byte("<html><body>hello</body></html>"))
			}))
			ln := &readCounter{Listener: srv.Listener}
			srv.Listener = ln
			if tc.tls {
				srv.StartTLS()
			} else {
				srv.Start()
			}
			defer srv.Close()
			dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
				var d net.Dialer
				c, err := d.DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &CountingConn{Conn: c}, nil
			}
			tr := fetch.NewTransport(fetch.Options{Dial: dial, TLSConfig: &tls.Config{InsecureSkipVerify: true}})
			f, err := fetch.New(fetch.Options{Transport: tr})
			if err != nil {
				t.Fatal(err)
			}
			var total int64
			for i, path := range []string{"/a", "/b?x=1", "/c"} {
				var s SentCounter
				ctx := httptrace.WithClientTrace(context.Background(), &httptrace.ClientTrace{
					GotConn: s.GotConn, GotFirstResponseByte: s.GotFirstByte})
				if _, err := f.Fetch(ctx, fetch.Request{URL: srv.URL + path}); err != nil {
					t.Fatal(err)
				}
				n := s.Total()
				if n < int64(len("GET "+path+" HTTP/1.1\r\n\r\n")) {
					t.Errorf("request %d (%s): %d bytes counted", i, path, n)
				}
				total += n
			}
			if got := ln.n.Load(); got != total {
				t.Errorf("the server read %d bytes, the requests counted %d", got, total)
			}
		})
	}
}
