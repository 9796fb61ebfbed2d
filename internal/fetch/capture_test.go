package fetch

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestCapture: under Request.Capture every exchange is kept, the redirect
// hop first; the final body is the bytes as sent (gzip kept, chunks
// removed), the header block has no Transfer-Encoding, the request block
// names the method, target and Host. Without Capture nothing is kept.
func TestCapture(t *testing.T) {
	page := bytes.Repeat([]byte("<p>archived</p>\n"), 3000)
	gz := compress(t, "gzip", page)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/old" {
			http.Redirect(w, r, "/page", http.StatusMovedPermanently)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Encoding", "gzip")
		// No Content-Length and several flushes: chunked on the wire.
		for i := 0; i < len(gz); i += 1000 {
			w.Write(gz[i:min(i+1000, len(gz))])
			w.(http.Flusher).Flush()
		}
	}))
	defer srv.Close()
	f := newFetcher(t, func(o *Options) { o.MaxRedirects = 2; o.AcceptCompression = true })

	resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/old", Capture: true})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(resp.Body, page) {
		t.Fatalf("decoded body: %d bytes, want %d", len(resp.Body), len(page))
	}
	if len(resp.Exchanges) != 2 {
		t.Fatalf("%d exchanges, want the redirect and the page", len(resp.Exchanges))
	}
	hop, x := resp.Exchanges[0], resp.Exchanges[1]
	if hop.URL != srv.URL+"/old" || hop.Status != 301 || !strings.Contains(string(hop.Header), "Location: /page\r\n") {
		t.Errorf("redirect exchange %s %d:\n%s", hop.URL, hop.Status, hop.Header)
	}
	if x.URL != srv.URL+"/page" || x.Status != 200 || x.Truncated || x.IP != "127.0.0.1" || x.Date.IsZero() {
		t.Errorf("page exchange %s %d truncated=%v ip=%q", x.URL, x.Status, x.Truncated, x.IP)
	}
	if !bytes.Equal(x.Body, gz) {
		t.Errorf("captured body: %d bytes, want the %d gzip bytes as sent", len(x.Body), len(gz))
	}
	h := string(x.Header)
	if !strings.HasPrefix(h, "HTTP/1.1 200 OK\r\n") || !strings.Contains(h, "Content-Encoding: gzip\r\n") ||
		strings.Contains(h, "Transfer-Encoding") || !strings.HasSuffix(h, "\r\n\r\n") {
		t.Errorf("header block:\n%s", h)
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	if q := string(x.Request); !strings.HasPrefix(q, "GET /page HTTP/1.1\r\nHost: "+host+"\r\n") || !strings.Contains(q, "Accept-Encoding: gzip, deflate\r\n") {
		t.Errorf("request block:\n%s", q)
	}

	resp, err = f.Fetch(context.Background(), Request{URL: srv.URL + "/old"})
	if err != nil || resp.Exchanges != nil {
		t.Errorf("without Capture: %d exchanges, err %v", len(resp.Exchanges), err)
	}
}
