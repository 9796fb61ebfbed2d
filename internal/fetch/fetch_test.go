package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func newFetcher(t *testing.T, mod func(*Options)) *Fetcher {
	t.Helper()
	o := DefaultOptions()
	o.Timeout = 10 * time.Second
	if mod != nil {
		mod(&o)
	}
	f, err := New(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.CloseIdle)
	return f
}

func compress(t *testing.T, enc string, data []byte) []byte {
	t.Helper()
	var b bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&b)
	case "zlib":
		w = zlib.NewWriter(&b)
	case "raw":
		w, _ = flate.NewWriter(&b, flate.BestCompression)
	}
	w.Write(data)
	w.Close()
	return b.Bytes()
}

func TestCompression(t *testing.T) {
	page := bytes.Repeat([]byte("<p>hello compressed world</p>\n"), 2000)
	tests := []struct {
		name, encoding, header string
		accept                 bool
	}{
		{"gzip", "gzip", "gzip", true},
		{"x-gzip", "gzip", "x-gzip", true},
		{"deflate zlib", "zlib", "deflate", true},
		{"deflate raw", "raw", "deflate", true},
		{"identity", "", "", true},
		{"not accepted", "", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var gotAE atomic.Value
			body := page
			if tt.encoding != "" {
				body = compress(t, tt.encoding, page)
			}
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				gotAE.Store(r.Header.Get("Accept-Encoding"))
				w.Header().Set("Content-Type", "text/html")
				if tt.header != "" {
					w.Header().Set("Content-Encoding", tt.header)
				}
				w.Write(body)
			}))
			defer srv.Close()
			f := newFetcher(t, func(o *Options) { o.AcceptCompression = tt.accept })
			resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/p"})
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(resp.Body, page) {
				t.Errorf("body: %d bytes, want %d", len(resp.Body), len(page))
			}
			if resp.BytesOnWire != int64(len(body)) {
				t.Errorf("BytesOnWire = %d, want %d", resp.BytesOnWire, len(body))
			}
			wantAE := "identity"
			if tt.accept {
				wantAE = "gzip, deflate"
			}
			if got := gotAE.Load(); got != wantAE {
				t.Errorf("Accept-Encoding = %v, want %q", got, wantAE)
			}
		})
	}
}

func TestBadEncoding(t *testing.T) {
	for _, enc := range []string{"gzip", "deflate", "br"} {
		t.Run(enc, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "text/html")
				w.Header().Set("Content-Encoding", enc)
				w.Write([]byte("\x1f\x8b\x08 definitely not compressed data, though it claims to be"))
			}))
			defer srv.Close()
			_, err := newFetcher(t, nil).Fetch(context.Background(), Request{URL: srv.URL})
			if KindOf(err) != KindProtocol {
				t.Errorf("err = %v (kind %v), want protocol", err, KindOf(err))
			}
		})
	}
}

func TestConditional(t *testing.T) {
	lastMod := time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			w.WriteHeader(http.StatusNotModified)
			return
		}
		if ims := r.Header.Get("If-Modified-Since"); ims != "" {
			if t, err := http.ParseTime(ims); err == nil && !lastMod.After(t) {
				w.WriteHeader(http.StatusNotModified)
				return
			}
		}
		w.Header().Set("Content-Type", "text/plain")
		w.Header().Set("Last-Modified", lastMod.Format(http.TimeFormat))
		io.WriteString(w, "fresh")
	}))
	defer srv.Close()
	f := newFetcher(t, nil)
	tests := []struct {
		name string
		req  Request
		nm   bool
	}{
		{"unconditional", Request{URL: srv.URL}, false},
		{"if-modified-since not modified", Request{URL: srv.URL, IfModifiedSince: lastMod}, true},
		{"if-modified-since modified", Request{URL: srv.URL, IfModifiedSince: lastMod.Add(-time.Hour)}, false},
		{"etag", Request{URL: srv.URL, ETag: `"v1"`}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, err := f.Fetch(context.Background(), tt.req)
			if err != nil {
				t.Fatal(err)
			}
			if resp.NotModified != tt.nm || (tt.nm && resp.Status != 304) || (!tt.nm && string(resp.Body) != "fresh") {
				t.Errorf("NotModified=%v status=%d body=%q", resp.NotModified, resp.Status, resp.Body)
			}
		})
	}
}

func redirectServer(t *testing.T) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("/chain/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscanf(r.URL.Path, "/chain/%d", &n)
		if n == 0 {
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprintf(w, "end %s", r.Method)
			return
		}
		code := []int{301, 302, 303, 307, 308}[n%5]
		http.Redirect(w, r, fmt.Sprintf("/chain/%d#frag", n-1), code)
	})
	mux.HandleFunc("/loop/a", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop/b", 302) })
	mux.HandleFunc("/loop/b", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop/a", 302) })
	mux.HandleFunc("/post", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/chain/0", 303) })
	mux.HandleFunc("/post307", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/echo", 307) })
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprintf(w, "%s %s", r.Method, b)
	})
	mux.HandleFunc("/nolocation", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(302) })
	mux.HandleFunc("/ftp", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "ftp://example.com/x")
		w.WriteHeader(302)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestRedirects(t *testing.T) {
	srv := redirectServer(t)
	f := newFetcher(t, func(o *Options) { o.MaxRedirects = 5 })
	resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/chain/3"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Hop{
		{URL: srv.URL + "/chain/3", Status: 307, Location: srv.URL + "/chain/2"},
		{URL: srv.URL + "/chain/2", Status: 303, Location: srv.URL + "/chain/1"},
		{URL: srv.URL + "/chain/1", Status: 302, Location: srv.URL + "/chain/0"},
	}
	if diff := cmp.Diff(want, resp.RedirectTrail); diff != "" {
		t.Errorf("trail (-want +got):\n%s", diff)
	}
	if resp.FinalURL != srv.URL+"/chain/0" || resp.Status != 200 || string(resp.Body) != "end GET" {
		t.Errorf("final %s %d %q", resp.FinalURL, resp.Status, resp.Body)
	}

	t.Run("limit", func(t *testing.T) {
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/chain/6"})
		if KindOf(err) != KindTooManyRedirects || resp == nil || len(resp.RedirectTrail) != 6 {
			t.Fatalf("err %v resp %+v", err, resp)
		}
		if _, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/chain/5"}); err != nil {
			t.Errorf("5 redirects with max 5: %v", err)
		}
	})
	t.Run("loop", func(t *testing.T) {
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/loop/a"})
		if KindOf(err) != KindRedirectLoop || len(resp.RedirectTrail) != 2 {
			t.Fatalf("err %v trail %v", err, resp.RedirectTrail)
		}
	})
	t.Run("not followed", func(t *testing.T) {
		f0 := newFetcher(t, func(o *Options) { o.MaxRedirects = 0 })
		resp, err := f0.Fetch(context.Background(), Request{URL: srv.URL + "/chain/2"})
		if err != nil || resp.Status != 303 || resp.RedirectTrail[0].Location != srv.URL+"/chain/1" {
			t.Fatalf("err %v resp %+v", err, resp)
		}
	})
	t.Run("check redirect", func(t *testing.T) {
		var asked []string
		fc := newFetcher(t, func(o *Options) {
			o.CheckRedirect = func(from, to *url.URL) error {
				asked = append(asked, from.Path+">"+to.Path)
				if to.Path == "/chain/1" {
					return errors.New("excluded by filter")
				}
				return nil
			}
		})
		resp, err := fc.Fetch(context.Background(), Request{URL: srv.URL + "/chain/3"})
		if KindOf(err) != KindRedirectRejected || len(resp.RedirectTrail) != 2 {
			t.Fatalf("err %v resp %+v", err, resp)
		}
		if diff := cmp.Diff([]string{"/chain/3>/chain/2", "/chain/2>/chain/1"}, asked); diff != "" {
			t.Error(diff)
		}
		fu := newFetcher(t, func(o *Options) {
			o.CheckRedirect = func(from, to *url.URL) error { return ErrUseLastResponse }
		})
		resp, err = fu.Fetch(context.Background(), Request{URL: srv.URL + "/chain/3"})
		if err != nil || resp.Status != 307 || resp.FinalURL != srv.URL+"/chain/3" {
			t.Fatalf("ErrUseLastResponse: err %v resp %+v", err, resp)
		}
	})
	t.Run("methods", func(t *testing.T) {
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/post", Method: "POST", Body: []byte("a=1")})
		if err != nil || string(resp.Body) != "end GET" {
			t.Errorf("303 after POST: %v %q", err, resp.Body)
		}
		resp, err = f.Fetch(context.Background(), Request{URL: srv.URL + "/post307", Method: "POST", Body: []byte("a=1")})
		if err != nil || string(resp.Body) != "POST a=1" {
			t.Errorf("307 after POST: %v %q", err, resp.Body)
		}
	})
	t.Run("no location", func(t *testing.T) {
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/nolocation"})
		if err != nil || resp.Status != 302 {
			t.Errorf("err %v", err)
		}
		_, err = f.Fetch(context.Background(), Request{URL: srv.URL + "/ftp"})
		if KindOf(err) != KindProtocol {
			t.Errorf("ftp redirect: %v", err)
		}
	})
}

// endlessServer streams a body of up to 1 GiB and records how much it
// managed to write before the client hung up.
type endlessServer struct {
	*httptest.Server
	written atomic.Int64
	done    chan struct{}
}

func newEndless(t *testing.T, withLength bool, encoding string) *endlessServer {
	s := &endlessServer{done: make(chan struct{}, 1)}
	chunk := bytes.Repeat([]byte("0123456789abcdef"), 4096) // 64 KiB
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() { s.done <- struct{}{} }()
		w.Header().Set("Content-Type", "text/plain")
		if withLength {
			w.Header().Set("Content-Length", fmt.Sprint(1<<30))
		}
		var out io.Writer = w
		var gz *gzip.Writer
		if encoding == "gzip" {
			w.Header().Set("Content-Encoding", "gzip")
			gz = gzip.NewWriter(countWriter{w, &s.written})
			out = gz
		} else {
			out = countWriter{w, &s.written}
		}
		for i := 0; i < (1<<30)/len(chunk); i++ {
			if _, err := out.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(s.Close)
	return s
}

type countWriter struct {
	w io.Writer
	n *atomic.Int64
}

func (c countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n.Add(int64(n))
	return n, err
}

func (s *endlessServer) waitDone(t *testing.T) {
	t.Helper()
	select {
	case <-s.done:
	case <-time.After(20 * time.Second):
		t.Fatal("server handler still streaming 20 s after the client stopped")
	}
}

func TestCutOff(t *testing.T) {
	const cut = 100 << 10
	const bound = 32 << 20 // socket buffers may absorb some megabytes; never the whole GiB
	t.Run("truncate", func(t *testing.T) {
		s := newEndless(t, false, "")
		f := newFetcher(t, func(o *Options) { o.CutOff, o.Truncate = cut, true })
		resp, err := f.Fetch(context.Background(), Request{URL: s.URL})
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || len(resp.Body) != cut {
			t.Errorf("Truncated=%v len=%d", resp.Truncated, len(resp.Body))
		}
		if resp.BytesOnWire > cut+64<<10 {
			t.Errorf("read %d bytes from the wire for a %d cut", resp.BytesOnWire, cut)
		}
		f.CloseIdle()
		s.waitDone(t)
		t.Logf("server wrote %d bytes before the client hung up", s.written.Load())
		if w := s.written.Load(); w > bound {
			t.Errorf("server wrote %d bytes", w)
		}
	})
	t.Run("truncate gzip", func(t *testing.T) {
		s := newEndless(t, false, "gzip")
		f := newFetcher(t, func(o *Options) { o.CutOff, o.Truncate = cut, true })
		resp, err := f.Fetch(context.Background(), Request{URL: s.URL})
		if err != nil {
			t.Fatal(err)
		}
		if !resp.Truncated || len(resp.Body) != cut {
			t.Errorf("Truncated=%v len=%d", resp.Truncated, len(resp.Body))
		}
		f.CloseIdle()
		s.waitDone(t)
	})
	t.Run("reject chunked", func(t *testing.T) {
		s := newEndless(t, false, "")
		f := newFetcher(t, func(o *Options) { o.CutOff, o.Truncate = cut, false })
		resp, err := f.Fetch(context.Background(), Request{URL: s.URL})
		if KindOf(err) != KindTooLarge || resp == nil || resp.Body != nil {
			t.Fatalf("err %v", err)
		}
		f.CloseIdle()
		s.waitDone(t)
		t.Logf("server wrote %d bytes before the client hung up", s.written.Load())
		if w := s.written.Load(); w > bound {
			t.Errorf("server wrote %d bytes", w)
		}
	})
	t.Run("reject by content length", func(t *testing.T) {
		s := newEndless(t, true, "")
		f := newFetcher(t, func(o *Options) { o.CutOff, o.Truncate = cut, false })
		resp, err := f.Fetch(context.Background(), Request{URL: s.URL})
		if KindOf(err) != KindTooLarge || resp.BytesOnWire != 0 {
			t.Fatalf("err %v, %d bytes read", err, resp.BytesOnWire)
		}
		f.CloseIdle()
		s.waitDone(t)
		t.Logf("server wrote %d bytes before the client hung up", s.written.Load())
		if w := s.written.Load(); w > bound {
			t.Errorf("server wrote %d bytes", w)
		}
	})
	t.Run("small body untouched", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			w.Write(bytes.Repeat([]byte("x"), cut))
		}))
		defer srv.Close()
		f := newFetcher(t, func(o *Options) { o.CutOff, o.Truncate = cut, false })
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL})
		if err != nil || resp.Truncated || len(resp.Body) != cut {
			t.Fatalf("exactly cut_off bytes: %v truncated=%v len=%d", err, resp.Truncated, len(resp.Body))
		}
	})
}

func TestTimeout(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/cancel" {
			arrived <- struct{}{}
		}
		if r.URL.Path == "/body" {
			w.Header().Set("Content-Type", "text/plain")
			w.Write([]byte("partial "))
			w.(http.Flusher).Flush()
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	for _, path := range []string{"/headers", "/body"} {
		t.Run(path, func(t *testing.T) {
			f := newFetcher(t, func(o *Options) { o.Timeout = 300 * time.Millisecond })
			start := time.Now()
			_, err := f.Fetch(context.Background(), Request{URL: srv.URL + path})
			if KindOf(err) != KindTimeout {
				t.Fatalf("err %v (kind %v), want timeout", err, KindOf(err))
			}
			if el := time.Since(start); el > 5*time.Second {
				t.Errorf("timeout took %v", el)
			}
			if KindTimeout.ErrorClass() != "ttl" {
				t.Error("timeout class")
			}
		})
	}
	t.Run("canceled", func(t *testing.T) {
		f := newFetcher(t, nil)
		ctx, cancel := context.WithCancel(context.Background())
		go func() { <-arrived; cancel() }() // cancel once the server holds the request
		_, err := f.Fetch(ctx, Request{URL: srv.URL + "/cancel"})
		if KindOf(err) != KindCanceled {
			t.Fatalf("err %v (kind %v), want canceled", err, KindOf(err))
		}
	})
}

func typeServer(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ct := r.URL.Query().Get("ct")
		if ct == "none" {
			w.Header()["Content-Type"] = nil // suppress Go's own sniffing
		} else {
			w.Header().Set("Content-Type", ct)
		}
		switch r.URL.Query().Get("body") {
		case "pdf":
			io.WriteString(w, "%PDF-1.4\n%...")
		case "png":
			w.Write([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
		default:
			io.WriteString(w, "<!DOCTYPE html><html><body>hi</body></html>")
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestAllowedTypes(t *testing.T) {
	srv := typeServer(t)
	tests := []struct {
		name    string
		allowed []string
		force   bool
		query   string
		wantCT  string
		wantErr Kind
	}{
		{"default html", DefaultAllowedTypes, false, "ct=text/html;+charset=utf-8", "text/html", -1},
		{"default rejects image", DefaultAllowedTypes, false, "ct=image/png&body=png", "image/png", KindTypeNotAllowed},
		{"text wildcard", []string{"text/*"}, false, "ct=text/csv", "text/csv", -1},
		{"text wildcard rejects", []string{"text/*"}, false, "ct=application/json", "application/json", KindTypeNotAllowed},
		{"all wildcard", []string{"*/*"}, false, "ct=image/png&body=png", "image/png", -1},
		{"subtype wildcard", []string{"*/pdf"}, false, "ct=application/pdf&body=pdf", "application/pdf", -1},
		{"case-insensitive", []string{"Text/HTML"}, false, "ct=TEXT/html", "text/html", -1},
		{"empty list allows", nil, false, "ct=video/mp4", "video/mp4", -1},
		{"missing type detected", DefaultAllowedTypes, false, "ct=none", "text/html", -1},
		{"missing type detected and rejected", DefaultAllowedTypes, false, "ct=none&body=png", "image/png", KindTypeNotAllowed},
		{"forced detection overrides header", DefaultAllowedTypes, true, "ct=application/octet-stream", "text/html", -1},
		{"forced detection of pdf", DefaultAllowedTypes, true, "ct=text/html&body=pdf", "application/pdf", -1},
		{"forced detection rejects", DefaultAllowedTypes, true, "ct=text/html&body=png", "image/png", KindTypeNotAllowed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFetcher(t, func(o *Options) { o.AllowedTypes, o.ForceMimeDetection = tt.allowed, tt.force })
			resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/?" + tt.query})
			if tt.wantErr >= 0 {
				if KindOf(err) != tt.wantErr {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if resp == nil || resp.ContentType != tt.wantCT {
				t.Errorf("ContentType = %v, want %s", resp, tt.wantCT)
			}
		})
	}
	// Error statuses are returned whatever their type, for http_errors.
	f := newFetcher(t, func(o *Options) { o.AllowedTypes = []string{"application/pdf"} })
	srv404 := httptest.NewServer(http.NotFoundHandler())
	defer srv404.Close()
	resp, err := f.Fetch(context.Background(), Request{URL: srv404.URL})
	if err != nil || resp.Status != 404 || ErrorKey(resp.Status, err) != "404" {
		t.Errorf("404: %v %v", err, resp)
	}
}

func TestTypeAllowed(t *testing.T) {
	tests := []struct {
		patterns []string
		mt       string
		want     bool
	}{
		{[]string{"text/*"}, "text/plain", true},
		{[]string{"text/*"}, "texts/plain", false},
		{[]string{"text/h*"}, "text/html", false}, // wildcards cover a whole field only
		{[]string{"*/*"}, "x/y", true},
		{[]string{"*"}, "x/y", true},
		{[]string{"*/html"}, "text/html", true},
		{[]string{"application/pdf"}, "application/PDF", true},
		{[]string{"application/pdf"}, "", false},
		{nil, "", true},
	}
	for _, tt := range tests {
		if got := TypeAllowed(tt.patterns, tt.mt); got != tt.want {
			t.Errorf("TypeAllowed(%v, %q) = %v", tt.patterns, tt.mt, got)
		}
	}
	if _, err := New(Options{AllowedTypes: []string{"html"}}); err == nil {
		t.Error("bad allowed type accepted")
	}
}

func TestHeadersSent(t *testing.T) {
	got := make(chan http.Header, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got <- r.Header.Clone()
		w.Header().Set("Content-Type", "text/plain")
	}))
	defer srv.Close()
	extra, err := ParseHeaderLines([]string{"X-Crawl: trawl test", "Accept-Language: en, nb"})
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, func(o *Options) { o.UserAgent = "trawl/1.0 (+http://example.com/bot)"; o.Headers = extra })
	if _, err := f.Fetch(context.Background(), Request{URL: srv.URL, Header: http.Header{"Cookie": {"a=b"}}}); err != nil {
		t.Fatal(err)
	}
	h := <-got
	for k, v := range map[string]string{"User-Agent": "trawl/1.0 (+http://example.com/bot)", "X-Crawl": "trawl test",
		"Accept-Language": "en, nb", "Cookie": "a=b", "Accept-Encoding": "gzip, deflate"} {
		if h.Get(k) != v {
			t.Errorf("%s = %q, want %q", k, h.Get(k), v)
		}
	}
	if h.Get("If-Modified-Since") != "" {
		t.Error("If-Modified-Since sent without a date")
	}
	// A User-Agent in headers wins over UserAgent (the MS-FSCCFG default
	// puts the user agent in headers).
	ua, _ := ParseHeaderLines([]string{"User-Agent: FAST Search Web Crawler"})
	f2 := newFetcher(t, func(o *Options) { o.Headers = ua })
	f2.Fetch(context.Background(), Request{URL: srv.URL})
	if h := <-got; h.Get("User-Agent") != "FAST Search Web Crawler" {
		t.Errorf("User-Agent = %q", h.Get("User-Agent"))
	}
	for _, bad := range []string{"no colon", ": empty name", "Bad Name: x"} {
		if _, err := ParseHeaderLines([]string{bad}); err == nil {
			t.Errorf("ParseHeaderLines(%q) accepted", bad)
		}
	}
}

func TestExcludeHeaders(t *testing.T) {
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("X-Robots-Tag", r.URL.Query().Get("tag"))
		n, _ := w.Write(bytes.Repeat([]byte("x"), 1000))
		served.Add(int64(n))
	}))
	defer srv.Close()
	ex, err := NewHeaderExcluder(map[string][]string{"x-robots-tag": {`(?i)^private\b`, `secret`}})
	if err != nil {
		t.Fatal(err)
	}
	f := newFetcher(t, func(o *Options) { o.ExcludeHeaders = ex })
	for tag, want := range map[string]bool{"Private, x": true, "top secret": true, "public": false} {
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL + "/?tag=" + url.QueryEscape(tag)})
		if excluded := KindOf(err) == KindExcludedHeader; excluded != want {
			t.Errorf("tag %q: err %v, want excluded=%v", tag, err, want)
		}
		if want && resp.Body != nil {
			t.Errorf("excluded document has a body")
		}
	}
	if _, err := NewHeaderExcluder(map[string][]string{"a": {"(unclosed"}}); err == nil || !strings.HasPrefix(err.Error(), "fetch: ") {
		t.Errorf("bad regexp: %v", err)
	}
}

func TestErrorKinds(t *testing.T) {
	t.Run("connect refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		_, err = newFetcher(t, nil).Fetch(context.Background(), Request{URL: "http://" + addr + "/"})
		if KindOf(err) != KindConnectRefused || KindOf(err).ErrorClass() != "net" || !KindOf(err).ConnectionFailure() {
			t.Errorf("err %v kind %v", err, KindOf(err))
		}
		if !strings.HasPrefix(err.Error(), "fetch: ") {
			t.Errorf("error text %q", err)
		}
	})
	t.Run("dns", func(t *testing.T) {
		f := newFetcher(t, func(o *Options) {
			o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				host, _, _ := net.SplitHostPort(addr)
				return nil, &net.OpError{Op: "dial", Net: network, Err: &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}}
			}
		})
		_, err := f.Fetch(context.Background(), Request{URL: "http://nowhere.invalid/"})
		if KindOf(err) != KindDNS {
			t.Errorf("err %v kind %v", err, KindOf(err))
		}
	})
	t.Run("dial through resolver", func(t *testing.T) {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/plain")
			io.WriteString(w, r.Host)
		}))
		defer srv.Close()
		var dialed atomic.Value
		f := newFetcher(t, func(o *Options) {
			o.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
				dialed.Store(addr)
				var d net.Dialer
				return d.DialContext(ctx, network, srv.Listener.Addr().String())
			}
		})
		resp, err := f.Fetch(context.Background(), Request{URL: "http://www.example.com:8080/"})
		if err != nil || string(resp.Body) != "www.example.com:8080" || dialed.Load() != "www.example.com:8080" {
			t.Errorf("err %v body %q dialed %v", err, resp.Body, dialed.Load())
		}
	})
	t.Run("tls", func(t *testing.T) {
		srv := httptest.NewUnstartedServer(http.NotFoundHandler())
		srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake is expected
		srv.StartTLS()
		defer srv.Close()
		_, err := newFetcher(t, nil).Fetch(context.Background(), Request{URL: srv.URL})
		if KindOf(err) != KindTLS {
			t.Errorf("err %v kind %v", err, KindOf(err))
		}
		// With the test CA trusted, it works.
		f := newFetcher(t, func(o *Options) { o.TLSConfig = srv.Client().Transport.(*http.Transport).TLSClientConfig })
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL})
		if err != nil || resp.Status != 404 {
			t.Errorf("trusted TLS: %v", err)
		}
	})
	t.Run("protocol", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		defer l.Close()
		go func() {
			c, err := l.Accept()
			if err != nil {
				return
			}
			bufio.NewReader(c).ReadString('\n')
			io.WriteString(c, "THIS IS NOT HTTP\r\n\r\n")
			c.Close()
		}()
		_, err = newFetcher(t, nil).Fetch(context.Background(), Request{URL: "http://" + l.Addr().String() + "/"})
		if KindOf(err) != KindProtocol {
			t.Errorf("err %v kind %v", err, KindOf(err))
		}
	})
	t.Run("bad url", func(t *testing.T) {
		for _, u := range []string{"gopher://a/", "/relative", "http://", "%zz"} {
			_, err := newFetcher(t, nil).Fetch(context.Background(), Request{URL: u})
			if KindOf(err) != KindBadURL || KindOf(err).ErrorClass() != "int" {
				t.Errorf("%q: err %v", u, err)
			}
		}
	})
}

func TestTimingAndKeepAlive(t *testing.T) {
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		io.WriteString(w, "ok")
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	f := newFetcher(t, nil)
	for i := 0; i < 5; i++ {
		resp, err := f.Fetch(context.Background(), Request{URL: srv.URL})
		if err != nil {
			t.Fatal(err)
		}
		if resp.Timing.Total <= 0 || resp.Timing.Total < resp.Timing.FirstByte {
			t.Errorf("timing %+v", resp.Timing)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("%d connections for 5 sequential fetches, want 1 (keep-alive)", n)
	}
}

func TestMatchErrorRule(t *testing.T) {
	names := []string{"408", "4xx", "5XX", "net", "int", "ttl", "40x"}
	tests := map[string]string{"408": "408", "404": "40x", "410": "4xx", "503": "5XX", "net": "net", "ttl": "ttl", "302": ""}
	for key, want := range tests {
		got, ok := MatchErrorRule(names, key)
		if got != want || ok != (want != "") {
			t.Errorf("MatchErrorRule(%q) = %q %v, want %q", key, got, ok, want)
		}
	}
	if ErrorKey(200, nil) != "" || ErrorKey(503, nil) != "503" || ErrorKey(0, &Error{Kind: KindTimeout}) != "ttl" {
		t.Error("ErrorKey")
	}
}

func TestBackoff(t *testing.T) {
	b := Backoff{MaxFailures: 3, MaxDelay: 600 * time.Second}
	base := 60 * time.Second
	var s BackoffState
	var wantDelays = []time.Duration{120 * time.Second, 240 * time.Second, 480 * time.Second, 600 * time.Second}
	for i, want := range wantDelays {
		var d time.Duration
		var stop bool
		s, d, stop = b.Failure(s, base)
		if d != want || s.Next(base) != want {
			t.Errorf("failure %d: delay %v, want %v", i+1, d, want)
		}
		if stop != (i+1 > 3) {
			t.Errorf("failure %d: stop=%v", i+1, stop)
		}
	}
	s = b.Success(s)
	if s.Failures != 0 || s.Next(base) != base {
		t.Errorf("after success %+v", s)
	}
	// A zero delay backs off from one second.
	s, d, _ := b.Failure(BackoffState{}, 0)
	if d != 2*time.Second || s.Failures != 1 {
		t.Errorf("zero base: %v", d)
	}
	// A configured delay above MaxDelay is never shortened.
	_, d, _ = b.Failure(BackoffState{}, 900*time.Second)
	if d != 900*time.Second {
		t.Errorf("long base: %v", d)
	}
}
