package warc

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/nlnwa/gowarc/v3"
)

// WriteCDXJ writes the CDXJ index (the format of pywb and cdxj-indexer)
// of the response and revisit records of files to out: one line per
// record, "SURT TIMESTAMP JSON", sorted. The JSON holds url, mime, status,
// digest (the payload's base32 SHA-1, without "sha1:"), length and offset
// (of the gzip member in the file) and filename (the file's base name).
// Revisits have mime "warc/revisit", as pywb writes them.
func WriteCDXJ(out io.Writer, files []string) error {
	var lines []string
	for _, f := range files {
		ls, err := cdxjLines(f)
		if err != nil {
			return err
		}
		lines = append(lines, ls...)
	}
	sort.Strings(lines)
	bw := bufio.NewWriter(out)
	for _, l := range lines {
		bw.WriteString(l)
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

func cdxjLines(file string) ([]string, error) {
	gowarcMu.Lock() // gowarc's options (writer.go)
	defer gowarcMu.Unlock()
	r, err := gowarc.NewWarcFileReader(file, 0, gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore), gowarc.WithSyntaxErrorPolicy(gowarc.ErrIgnore))
	if err != nil {
		return nil, fmt.Errorf("warc: cdxj: %w", err)
	}
	defer r.Close()
	var lines []string
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			return lines, nil
		}
		if err != nil {
			return nil, fmt.Errorf("warc: cdxj: %s: %w", file, err)
		}
		wr := rec.WarcRecord
		if t := wr.Type(); t != gowarc.Response && t != gowarc.Revisit {
			rec.Close()
			continue
		}
		h := wr.WarcHeader()
		uri := h.Get(gowarc.WarcTargetURI)
		date, _ := wr.Date()
		status, mime := 0, ""
		if raw, err := wr.Block().RawBytes(); err == nil {
			if resp, err := http.ReadResponse(bufio.NewReader(raw), nil); err == nil {
				status = resp.StatusCode
				mime, _, _ = strings.Cut(resp.Header.Get("Content-Type"), ";")
			}
		}
		if wr.Type() == gowarc.Revisit {
			mime = "warc/revisit"
		}
		rec.Close()
		fields := map[string]string{
			"url":      uri,
			"mime":     strings.TrimSpace(mime),
			"status":   strconv.Itoa(status),
			"digest":   strings.TrimPrefix(h.Get(gowarc.WarcPayloadDigest), "sha1:"),
			"length":   strconv.FormatInt(rec.Size, 10),
			"offset":   strconv.FormatInt(rec.Offset, 10),
			"filename": filepath.Base(file),
		}
		var js bytes.Buffer
		enc := json.NewEncoder(&js)
		enc.SetEscapeHTML(false)
		if err := enc.Encode(fields); err != nil {
			return nil, err
		}
		lines = append(lines, SURT(uri)+" "+date.UTC().Format("20060102150405")+" "+strings.TrimSpace(js.String()))
	}
}

// SURT is the Sort-friendly URI Reordering Transform of a URL as pywb keys
// its index: the host's labels reversed and comma-separated (without a
// leading "www"), the port when not the scheme's default, ")" and the
// path and query, lower case.
func SURT(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return strings.ToLower(raw)
	}
	host := strings.ToLower(u.Hostname())
	labels := strings.Split(host, ".")
	if len(labels) > 1 && labels[0] == "www" {
		labels = labels[1:]
	}
	for i, j := 0, len(labels)-1; i < j; i, j = i+1, j-1 {
		labels[i], labels[j] = labels[j], labels[i]
	}
	s := strings.Join(labels, ",")
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		s += ":" + p
	}
	path := u.EscapedPath()
	if path == "" {
		path = "/"
	}
	if u.RawQuery != "" {
		path += "?" + u.RawQuery
	}
	return s + ")" + strings.ToLower(path)
}
