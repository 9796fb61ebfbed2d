package warc

import (
	"bytes"
	"net/url"
	"strings"
	"testing"
)

// FuzzSURT: any URL gets a key, without panicking; an http URL with a
// host gets one with the ")" that ends the host part.
func FuzzSURT(f *testing.F) {
	for _, s := range []string{"http://www.example.com/a?b=c", "https://example.com:443/", "http://site0000.farm.test:8080/x.html",
		"", "not a url", "http://[::1]:80/", "ftp://x/"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		k := SURT(s)
		if u, err := url.Parse(s); err == nil && u.Host != "" && !strings.Contains(k, ")") {
			t.Fatalf("SURT(%q) = %q: no \")\" after the host", s, k)
		}
	})
}

// FuzzExportHeader: a stored header block of any shape becomes a block
// that ends in the empty line, announces the body's length once, and has
// no Content-Encoding or Transfer-Encoding left.
func FuzzExportHeader(f *testing.F) {
	f.Add([]byte("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: 12\r\nContent-Type: text/html\r\n\r\n"), 5)
	f.Add([]byte("HTTP/1.1 404 Not Found\r\n\r\n"), 0)
	f.Add([]byte(""), 3)
	f.Add([]byte("\n\n\ntransfer-encoding: chunked\n"), 1)
	f.Fuzz(func(t *testing.T, hdr []byte, n int) {
		if n < 0 {
			n = -n
		}
		out := exportHeader(hdr, n)
		if !bytes.HasSuffix(out, []byte("\r\n\r\n")) {
			t.Fatalf("block does not end in the empty line: %q", out)
		}
		lower := strings.ToLower(string(out))
		if strings.Count(lower, "\ncontent-length:") != 1 {
			t.Fatalf("Content-Length not exactly once: %q", out)
		}
		for _, h := range []string{"\ncontent-encoding:", "\ntransfer-encoding:"} {
			if strings.Contains(lower, h) {
				t.Fatalf("%s left in %q", h, out)
			}
		}
	})
}
