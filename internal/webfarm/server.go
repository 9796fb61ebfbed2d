package webfarm

import (
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// server is the running side of a farm.
type server struct {
	srv       *http.Server
	listeners []net.Listener
	stop      chan struct{}
	done      chan struct{} // closed when every Serve has returned
	closeOnce sync.Once
	closeErr  error
}

// Start listens on every address of the farm and serves in the background
// until ctx ends or Close is called. With Config.Port 0 it picks a port
// that is free on every address (Port tells which).
func (f *Farm) Start(ctx context.Context) error {
	f.srvMu.Lock()
	defer f.srvMu.Unlock()
	if f.srv != nil {
		return errors.New("webfarm: already started")
	}
	addrs := make([]netip.Addr, 0, len(f.byAddr))
	seen := map[netip.Addr]bool{}
	for _, h := range f.hosts {
		if !seen[h.addr] {
			seen[h.addr] = true
			addrs = append(addrs, h.addr)
		}
	}
	lns, port, err := listenAll(ctx, addrs, f.cfg.Port)
	if err != nil {
		return err
	}
	f.setPort(port)
	s := &server{
		listeners: lns,
		stop:      make(chan struct{}),
		done:      make(chan struct{}),
	}
	s.srv = &http.Server{
		Handler:           f,
		ReadHeaderTimeout: 30 * time.Second,
		IdleTimeout:       120 * time.Second,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          log.New(io.Discard, "", 0),
		ConnContext: func(ctx context.Context, _ net.Conn) context.Context {
			return context.WithValue(ctx, connSeqKey{}, new(atomic.Int64))
		},
	}
	f.srv = s
	var wg sync.WaitGroup
	for _, ln := range lns {
		wg.Add(1)
		go func(ln net.Listener) {
			defer wg.Done()
			if err := s.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
				f.cfg.Logger.Error("webfarm: serve", "addr", ln.Addr().String(), "err", err)
			}
		}(ln)
	}
	go func() {
		wg.Wait()
		close(s.done)
	}()
	go func() {
		select {
		case <-ctx.Done():
			_ = f.Close()
		case <-s.stop:
		}
	}()
	f.cfg.Logger.Info("webfarm: serving", "hosts", len(f.hosts), "addresses", len(lns), "port", port)
	return nil
}

// Run serves until ctx ends, then stops the farm.
func (f *Farm) Run(ctx context.Context) error {
	if err := f.Start(ctx); err != nil {
		return err
	}
	<-ctx.Done()
	return f.Close()
}

// Close stops serving: stalled and slow responses end, connections close,
// and the request log is flushed. It is safe to call more than once.
func (f *Farm) Close() error {
	f.srvMu.Lock()
	s := f.srv
	f.srvMu.Unlock()
	if s == nil {
		return f.FlushLog()
	}
	s.closeOnce.Do(func() {
		close(s.stop)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		if err := s.srv.Shutdown(ctx); err != nil {
			_ = s.srv.Close()
		}
		<-s.done
		s.closeErr = f.FlushLog()
	})
	return s.closeErr
}

// listenAll binds port on every address; port 0 picks one free on all.
func listenAll(ctx context.Context, addrs []netip.Addr, port int) ([]net.Listener, int, error) {
	var lc net.ListenConfig
	tries := 1
	if port == 0 {
		tries = 20
	}
	var lastErr error
	for try := 0; try < tries; try++ {
		var lns []net.Listener
		p := port
		ok := true
		for _, a := range addrs {
			ln, err := lc.Listen(ctx, "tcp4", netip.AddrPortFrom(a, uint16(p)).String())
			if err != nil {
				lastErr = err
				ok = false
				break
			}
			if p == 0 {
				p = ln.Addr().(*net.TCPAddr).Port
			}
			lns = append(lns, ln)
		}
		if ok {
			return lns, p, nil
		}
		for _, ln := range lns {
			ln.Close()
		}
	}
	return nil, 0, fmt.Errorf("webfarm: listen: %w", lastErr)
}

var genPool = sync.Pool{New: func() any { return &gen{buf: make([]byte, 0, 8<<10)} }}

// countWriter counts body bytes and remembers the first write error.
type countWriter struct {
	w   io.Writer
	n   int64
	err error
}

func (c *countWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	c.err = err
	return n, err
}

var (
	gzipPool = sync.Pool{New: func() any {
		w, _ := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
		return w
	}}
	zlibPool = sync.Pool{New: func() any {
		w, _ := zlib.NewWriterLevel(io.Discard, zlib.BestSpeed)
		return w
	}}
)

// ServeHTTP serves the farm: the Host header picks the site.
func (f *Farm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := f.cfg.Now()
	cycle := f.Cycle()
	name := r.Host
	if i := strings.LastIndexByte(name, ':'); i >= 0 && !strings.HasSuffix(name, "]") {
		name = name[:i]
	}
	name = lowerASCII(name)
	h, known := f.byName[name]
	if !known {
		h = -1
		if a, err := netip.ParseAddr(name); err == nil && len(f.byAddr[a]) > 0 {
			h, known = f.byAddr[a][0], true
		}
	}
	local := ""
	if la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr); ok {
		local = la.String()
	}
	var connSeq int64
	if n, ok := r.Context().Value(connSeqKey{}).(*atomic.Int64); ok {
		connSeq = n.Add(1)
	}
	rec := Request{
		Time: start, Host: name, HostIndex: h, Local: local, Remote: r.RemoteAddr, ConnSeq: connSeq,
		Method: r.Method, Proto: r.Proto, URI: r.RequestURI, UserAgent: r.Header.Get("User-Agent"),
		IfModifiedSince: r.Header.Get("If-Modified-Since"), IfNoneMatch: r.Header.Get("If-None-Match"),
		AcceptEncoding: r.Header.Get("Accept-Encoding"), Cycle: cycle,
	}
	cw := &countWriter{w: w}
	defer func() {
		rec.Bytes = cw.n
		if cw.err != nil {
			rec.Aborted = true
		}
		rec.Duration = f.cfg.Now().Sub(start)
		f.log.add(&rec)
	}()
	if h >= 0 {
		rec.URL = (*f.prefix.Load())[h] + r.URL.RequestURI()
	}
	hdr := w.Header()
	hdr.Set("Server", "trawl-webfarm")
	switch {
	case !known:
		rec.Status = http.StatusNotFound
		http.Error(cw.wrap(w), "unknown host", rec.Status)
		return
	case !f.localMatches(h, r):
		// The connection reached an address the host does not live on:
		// the client resolved the name wrongly.
		rec.Status = http.StatusMisdirectedRequest
		http.Error(cw.wrap(w), "misdirected request", rec.Status)
		return
	case r.Method != http.MethodGet && r.Method != http.MethodHead:
		rec.Status = http.StatusMethodNotAllowed
		hdr.Set("Allow", "GET, HEAD")
		http.Error(cw.wrap(w), "method not allowed", rec.Status)
		return
	}
	rs := f.resolve(h, r.URL.Path, r.URL.RawQuery, cycle)
	g := genPool.Get().(*gen)
	defer genPool.Put(g)
	g.reset(f, h, false)
	d := f.render(g, &rs)
	rec.Status = d.status
	hdr.Set("Content-Type", d.ctype)
	if d.location != "" {
		hdr.Set("Location", d.location)
	}
	if d.retryAfter > 0 {
		hdr.Set("Retry-After", strconv.Itoa(d.retryAfter))
	}
	if d.status == 200 && d.version >= 0 {
		etag := f.etag(h, r.URL.Path, r.URL.RawQuery, d.version)
		lm := f.lastModified(h, r.URL.Path, d.version)
		hdr.Set("ETag", etag)
		hdr.Set("Last-Modified", lm.Format(http.TimeFormat))
		if notModified(r, etag, lm) {
			rec.Status = http.StatusNotModified
			w.WriteHeader(http.StatusNotModified)
			return
		}
	}
	head := r.Method == http.MethodHead
	switch rs.kind {
	case rStall:
		f.serveStall(w, r, cw, g.buf, head, &rec)
		return
	case rSlow:
		if d.status == 200 {
			f.serveSlow(w, r, cw, g.buf, head)
			return
		}
	case rBig:
		f.serveBig(w, r, cw, g, head, &rec)
		return
	}
	body := g.buf
	if enc := chooseEncoding(r.Header.Get("Accept-Encoding")); enc != "" && compressible(d.ctype) && len(body) > 0 {
		hdr.Set("Content-Encoding", enc)
		hdr.Add("Vary", "Accept-Encoding")
		rec.ContentEncoding = enc
		zb := genPool.Get().(*gen)
		defer genPool.Put(zb)
		zb.buf = compress(zb.buf[:0], enc, body)
		body = zb.buf
	}
	hdr.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(d.status)
	if !head {
		_, _ = cw.Write(body)
	}
}

func (c *countWriter) wrap(w http.ResponseWriter) http.ResponseWriter {
	return countingRW{ResponseWriter: w, cw: c}
}

type countingRW struct {
	http.ResponseWriter
	cw *countWriter
}

func (c countingRW) Write(p []byte) (int, error) { return c.cw.Write(p) }

func (f *Farm) localMatches(h int, r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	if !ok {
		return true
	}
	ta, ok := la.(*net.TCPAddr)
	if !ok {
		return true
	}
	a, ok := netip.AddrFromSlice(ta.IP)
	return !ok || a.Unmap() == f.hosts[h].addr
}

// etag is the entity tag of a document version.
func (f *Farm) etag(h int, path, query string, version int) string {
	x := hash(f.seed, saltETag, h, int(fnv64(path)^fnv64(query)>>1), version)
	b := make([]byte, 0, 20)
	b = append(b, '"')
	b = strconv.AppendUint(b, x, 36)
	b = append(b, '"')
	return string(b)
}

// lastModified is the Last-Modified time of a document version: the epoch,
// plus a day per version, plus a per-path offset within the day.
func (f *Farm) lastModified(h int, path string, version int) time.Time {
	off := hash(f.seed, saltLastMod, h, int(fnv64(path)>>1), 0) % 86400
	return f.cfg.Epoch.Add(time.Duration(version)*24*time.Hour + time.Duration(off)*time.Second)
}

// notModified applies If-None-Match (first) and If-Modified-Since.
func notModified(r *http.Request, etag string, lm time.Time) bool {
	if inm := r.Header.Get("If-None-Match"); inm != "" {
		for _, t := range strings.Split(inm, ",") {
			t = strings.TrimSpace(t)
			t = strings.TrimPrefix(t, "W/")
			if t == "*" || t == etag {
				return true
			}
		}
		return false
	}
	if ims := r.Header.Get("If-Modified-Since"); ims != "" {
		if t, err := http.ParseTime(ims); err == nil && !lm.Truncate(time.Second).After(t) {
			return true
		}
	}
	return false
}

// chooseEncoding picks gzip or deflate from Accept-Encoding ("" for none).
func chooseEncoding(ae string) string {
	if ae == "" {
		return ""
	}
	gz, df := false, false
	for _, part := range strings.Split(ae, ",") {
		tok, params, _ := strings.Cut(part, ";")
		tok = strings.ToLower(strings.TrimSpace(tok))
		q := strings.ReplaceAll(strings.TrimSpace(params), " ", "")
		if q == "q=0" || q == "q=0.0" || q == "q=0.00" || q == "q=0.000" {
			continue
		}
		switch tok {
		case "gzip", "x-gzip":
			gz = true
		case "deflate":
			df = true
		}
	}
	switch {
	case gz:
		return "gzip"
	case df:
		return "deflate"
	}
	return ""
}

func compressible(ct string) bool {
	return strings.HasPrefix(ct, "text/") || ct == "application/xml" || ct == "application/javascript"
}

// compress appends body compressed with enc ("gzip" or "deflate", the
// zlib format of RFC 9110 section 8.4.1.2).
func compress(dst []byte, enc string, body []byte) []byte {
	bw := &appendWriter{b: dst}
	switch enc {
	case "gzip":
		zw := gzipPool.Get().(*gzip.Writer)
		zw.Reset(bw)
		_, _ = zw.Write(body)
		_ = zw.Close()
		gzipPool.Put(zw)
	default:
		zw := zlibPool.Get().(*zlib.Writer)
		zw.Reset(bw)
		_, _ = zw.Write(body)
		_ = zw.Close()
		zlibPool.Put(zw)
	}
	return bw.b
}

type appendWriter struct{ b []byte }

func (a *appendWriter) Write(p []byte) (int, error) {
	a.b = append(a.b, p...)
	return len(p), nil
}

// wait blocks for d, or until the request or the farm ends; it reports
// whether the full time passed.
func (f *Farm) wait(r *http.Request, d time.Duration) bool {
	f.srvMu.Lock()
	var stop chan struct{}
	if f.srv != nil {
		stop = f.srv.stop
	}
	f.srvMu.Unlock()
	var tc <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-tc:
		return true
	case <-r.Context().Done():
	case <-stop:
	}
	return false
}

func (f *Farm) serveSlow(w http.ResponseWriter, r *http.Request, cw *countWriter, body []byte, head bool) {
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(http.StatusOK)
	if head {
		return
	}
	rc := http.NewResponseController(w)
	chunks := f.cfg.SlowChunks
	step := (len(body) + chunks - 1) / chunks
	for i := 0; i < len(body); i += step {
		if i > 0 && !f.wait(r, f.cfg.SlowDelay) {
			return
		}
		if _, err := cw.Write(body[i:min(i+step, len(body))]); err != nil {
			return
		}
		_ = rc.Flush()
	}
}

// stallLength is the Content-Length a stalled response promises.
const stallLength = 4096

func (f *Farm) serveStall(w http.ResponseWriter, r *http.Request, cw *countWriter, prefix []byte, head bool, rec *Request) {
	w.Header().Set("Content-Length", strconv.Itoa(stallLength))
	w.WriteHeader(http.StatusOK)
	if head {
		return
	}
	_, _ = cw.Write(prefix)
	_ = http.NewResponseController(w).Flush()
	if !f.wait(r, f.cfg.StallMax) {
		rec.Aborted = r.Context().Err() != nil
	}
	// Returning with fewer bytes than promised makes net/http close the
	// connection, so the client sees a truncated body.
}

func (f *Farm) serveBig(w http.ResponseWriter, r *http.Request, cw *countWriter, g *gen, head bool, rec *Request) {
	hdr := w.Header()
	size := f.cfg.LargeBytes
	headPart := append([]byte(nil), g.buf...)
	g.buf = g.buf[:0]
	f.bigTail(g)
	tail := g.buf
	fill := size - int64(len(headPart)) - int64(len(tail))
	var out io.Writer = cw
	var closer io.Closer
	if enc := chooseEncoding(r.Header.Get("Accept-Encoding")); enc != "" {
		hdr.Set("Content-Encoding", enc)
		hdr.Add("Vary", "Accept-Encoding")
		rec.ContentEncoding = enc
		if enc == "gzip" {
			zw := gzipPool.Get().(*gzip.Writer)
			zw.Reset(cw)
			defer gzipPool.Put(zw)
			out, closer = zw, zw
		} else {
			zw := zlibPool.Get().(*zlib.Writer)
			zw.Reset(cw)
			defer zlibPool.Put(zw)
			out, closer = zw, zw
		}
	} else {
		hdr.Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
	if head {
		return
	}
	if _, err := out.Write(headPart); err != nil {
		return
	}
	for fill > 0 {
		n := min(fill, int64(len(f.filler)))
		if _, err := out.Write(f.filler[:n]); err != nil {
			return
		}
		fill -= n
	}
	if _, err := out.Write(tail); err != nil {
		return
	}
	if closer != nil {
		_ = closer.Close()
	}
}

// connSeqKey is the context key of a connection's request counter.
type connSeqKey struct{}
