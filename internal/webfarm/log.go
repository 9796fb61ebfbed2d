package webfarm

import (
	"bufio"
	"io"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Request is one request the farm received, logged when its response
// ended.
type Request struct {
	// Time is when the request arrived (nanosecond resolution).
	Time time.Time `json:"time"`
	// Duration is how long the response took.
	Duration time.Duration `json:"dur_ns"`
	// Host is the Host header without its port, lower-cased; HostIndex
	// the host's index, or -1 when the name is not one of the farm's.
	Host      string `json:"host"`
	HostIndex int    `json:"host_index"`
	// Local is the address the request came in on, Remote the client's.
	Local  string `json:"local"`
	Remote string `json:"remote"`
	// ConnSeq is the request's position on its connection (1: the
	// connection's first request); a remote address alone cannot tell
	// connections apart, as the client may reuse a port.
	ConnSeq int64  `json:"conn_seq"`
	Method  string `json:"method"`
	// Proto is the request's protocol version ("HTTP/1.1", "HTTP/1.0").
	Proto string `json:"proto"`
	// URI is the request target (path and query) as received; URL is the
	// absolute URL http://host[:port]URI.
	URI    string `json:"uri"`
	URL    string `json:"url"`
	Status int    `json:"status"`
	// Bytes is the number of body bytes sent (after compression).
	Bytes           int64  `json:"bytes"`
	UserAgent       string `json:"ua,omitempty"`
	IfModifiedSince string `json:"ims,omitempty"`
	IfNoneMatch     string `json:"inm,omitempty"`
	AcceptEncoding  string `json:"ae,omitempty"`
	ContentEncoding string `json:"ce,omitempty"`
	// Cycle is the refresh cycle the farm was in.
	Cycle int `json:"cycle"`
	// Aborted is set when the client went away before the response ended.
	Aborted bool `json:"aborted,omitempty"`
}

// requestLog keeps requests in memory (a ring of at most capN entries when
// capN > 0) and writes them as JSON lines to an optional writer.
type requestLog struct {
	mu      sync.Mutex
	capN    int
	entries []Request
	start   int // ring start when full
	dropped int64
	total   int64
	w       *bufio.Writer
	werr    error
	line    []byte
}

func newRequestLog(capN int, w io.Writer) *requestLog {
	l := &requestLog{capN: capN}
	if w != nil {
		l.w = bufio.NewWriterSize(w, 64<<10)
	}
	return l
}

func (l *requestLog) add(r *Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.total++
	if l.capN > 0 && len(l.entries) == l.capN {
		l.entries[l.start] = *r
		l.start = (l.start + 1) % l.capN
		l.dropped++
	} else {
		l.entries = append(l.entries, *r)
	}
	if l.w != nil && l.werr == nil {
		l.line = appendRequestJSON(l.line[:0], r)
		_, l.werr = l.w.Write(l.line)
	}
}

func (l *requestLog) snapshot() []Request {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]Request, 0, len(l.entries))
	out = append(out, l.entries[l.start:]...)
	out = append(out, l.entries[:l.start]...)
	return out
}

func (l *requestLog) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.w == nil {
		return nil
	}
	if l.werr != nil {
		return l.werr
	}
	l.werr = l.w.Flush()
	return l.werr
}

// Requests returns the logged requests, oldest first (in the order their
// responses ended).
func (f *Farm) Requests() []Request { return f.log.snapshot() }

// RequestCount returns how many requests were logged in all and how many
// of them were dropped from memory because of Config.LogCap.
func (f *Farm) RequestCount() (total, dropped int64) {
	f.log.mu.Lock()
	defer f.log.mu.Unlock()
	return f.log.total, f.log.dropped
}

// FlushLog flushes the JSON-lines log writer and reports its first error.
func (f *Farm) FlushLog() error { return f.log.flush() }

func appendRequestJSON(b []byte, r *Request) []byte {
	b = append(b, `{"time":"`...)
	b = r.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","dur_ns":`...)
	b = strconv.AppendInt(b, int64(r.Duration), 10)
	b = appendJSONField(b, "host", r.Host)
	b = append(b, `,"host_index":`...)
	b = strconv.AppendInt(b, int64(r.HostIndex), 10)
	b = appendJSONField(b, "local", r.Local)
	b = appendJSONField(b, "remote", r.Remote)
	b = append(b, `,"conn_seq":`...)
	b = strconv.AppendInt(b, r.ConnSeq, 10)
	b = appendJSONField(b, "method", r.Method)
	b = appendJSONField(b, "uri", r.URI)
	b = appendJSONField(b, "url", r.URL)
	b = append(b, `,"status":`...)
	b = strconv.AppendInt(b, int64(r.Status), 10)
	b = append(b, `,"bytes":`...)
	b = strconv.AppendInt(b, r.Bytes, 10)
	for _, kv := range [...][2]string{{"ua", r.UserAgent}, {"ims", r.IfModifiedSince},
		{"inm", r.IfNoneMatch}, {"ae", r.AcceptEncoding}, {"ce", r.ContentEncoding}} {
		if kv[1] != "" {
			b = appendJSONField(b, kv[0], kv[1])
		}
	}
	b = append(b, `,"cycle":`...)
	b = strconv.AppendInt(b, int64(r.Cycle), 10)
	if r.Aborted {
		b = append(b, `,"aborted":true`...)
	}
	return append(b, "}\n"...)
}

func appendJSONField(b []byte, key, val string) []byte {
	b = append(b, ',', '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return appendJSONString(b, val)
}

// appendJSONString appends s as a JSON string; invalid UTF-8 becomes U+FFFD.
func appendJSONString(b []byte, s string) []byte {
	const hexd = "0123456789abcdef"
	b = append(b, '"')
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			switch {
			case c == '"' || c == '\\':
				b = append(b, '\\', c)
			case c < 0x20 || c == 0x7f:
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			case c == '<' || c == '>' || c == '&':
				b = append(b, '\\', 'u', '0', '0', hexd[c>>4], hexd[c&15])
			default:
				b = append(b, c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, `\ufffd`...)
		} else if r == '\u2028' || r == '\u2029' {
			b = append(b, '\\', 'u', '2', '0', '2', hexd[r&15])
		} else {
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return append(b, '"')
}
