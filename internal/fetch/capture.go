package fetch

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"time"
)

// Request.Capture asks Fetch to keep every HTTP exchange of a fetch (each
// redirect hop and the final response) for a web archive (package warc):
// the request as sent and the response as received. Without it nothing is
// copied and the fetch costs what it did before.
//
// What "as received" means here: net/http parses the status line and the
// header, so the header block is written back from the parsed response
// (status line as received, fields in canonical case and sorted order, a
// repeated field once per value); the body is kept byte for byte as it
// came off the connection after the transfer coding (chunked) was removed,
// before any content coding (gzip, deflate) was decoded. Transfer-Encoding
// is therefore left out of the header block, which would otherwise
// announce chunks the body no longer has. The request is written the same
// way: request line, Host, then the header fields trawl sent.

// Exchange is one HTTP request and its response, kept under
// Request.Capture.
type Exchange struct {
	URL  string
	Date time.Time // when the request was sent
	IP   string    // the server's address ("" when unknown, e.g. through a proxy)
	// Request is the request line and header block (and the POST body).
	Request []byte
	// Header is the response's status line and header block, ending in
	// the empty line.
	Header []byte
	Status int
	// Body is the response body as received (content coding kept).
	Body []byte
	// Truncated is set when Body is not the whole body: cut at cut_off,
	// or not read because the response was refused (type, headers, size).
	Truncated bool
}

// capture is a fetch's capture in progress.
type capture struct {
	date time.Time
	ip   string
	req  []byte
}

// maxCaptureRedirectBody bounds what is kept of a redirect's body (the same
// the connection reuse reads, discard).
const maxCaptureRedirectBody = 4096

// captureRequest records the request about to be sent on hreq.
func (c *capture) captureRequest(hreq *http.Request, body []byte) {
	var b bytes.Buffer
	uri := hreq.URL.RequestURI()
	host := hreq.Host
	if host == "" {
		host = hreq.URL.Host
	}
	fmt.Fprintf(&b, "%s %s HTTP/1.1\r\nHost: %s\r\n", hreq.Method, uri, host)
	h := hreq.Header.Clone()
	if len(body) > 0 && h.Get("Content-Length") == "" {
		h.Set("Content-Length", fmt.Sprint(len(body)))
	}
	h.Write(&b)
	b.WriteString("\r\n")
	b.Write(body)
	c.req = b.Bytes()
	c.date = time.Now()
	c.ip = ""
}

// gotConn records the server's address.
func (c *capture) gotConn(conn net.Conn) {
	if conn == nil {
		return
	}
	if a, ok := conn.RemoteAddr().(*net.TCPAddr); ok {
		c.ip = a.IP.String()
	}
}

// exchange makes the Exchange of a response whose body is body.
func (c *capture) exchange(url string, hr *http.Response, body []byte, truncated bool) Exchange {
	var b bytes.Buffer
	status := hr.Status
	if status == "" {
		status = fmt.Sprintf("%d %s", hr.StatusCode, http.StatusText(hr.StatusCode))
	}
	proto := hr.Proto
	if proto == "" {
		proto = "HTTP/1.1"
	}
	fmt.Fprintf(&b, "%s %s\r\n", proto, status)
	h := hr.Header
	if _, ok := h["Transfer-Encoding"]; ok {
		h = h.Clone()
		delete(h, "Transfer-Encoding")
	}
	h.Write(&b)
	b.WriteString("\r\n")
	return Exchange{URL: url, Date: c.date, IP: c.ip, Request: c.req, Header: b.Bytes(), Status: hr.StatusCode,
		Body: body, Truncated: truncated}
}

// captureRedirect keeps a redirect hop, reading (at most
// maxCaptureRedirectBody of) its body, and closes it.
func (f *Fetcher) captureRedirect(resp *Response, url string, hr *http.Response) {
	b, err := io.ReadAll(io.LimitReader(hr.Body, maxCaptureRedirectBody+1))
	truncated := err != nil || len(b) > maxCaptureRedirectBody
	if len(b) > maxCaptureRedirectBody {
		b = b[:maxCaptureRedirectBody]
	}
	hr.Body.Close()
	resp.Exchanges = append(resp.Exchanges, resp.capture.exchange(url, hr, b, truncated))
}
