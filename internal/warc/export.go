package warc

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/trawl/trawl/internal/store"
)

// ExportStats counts what Export wrote.
type ExportStats struct {
	Documents int // documents queued to the writer
	Skipped   int // URIs without a stored document
}

// Export queues every document the crawl store holds for the collections
// (all of them when none is named) to w, as a response record each: the
// stored HTTP header (store_http_header) or, without one, a header made of
// the stored status and type, then the stored body. The store keeps
// bodies decoded, so the header loses its Content-Encoding and
// Transfer-Encoding and gets the body's Content-Length: the payload is
// the crawl-time payload when the server sent no content coding, and the
// decoded one otherwise. There is no request record (the store does not
// keep the request); the metadata record names the collection.
func Export(ctx context.Context, st *store.Store, w *Writer, collections []string) (ExportStats, error) {
	var es ExportStats
	if len(collections) == 0 {
		var err error
		if collections, err = Collections(st); err != nil {
			return es, err
		}
	}
	for _, coll := range collections {
		err := st.URIs(coll, "", func(r *store.URIRecord) error {
			body, ok, err := st.Document(coll, r.URI)
			if err != nil {
				return err
			}
			if !ok {
				es.Skipped++
				return nil
			}
			hdr, hasHdr, err := st.Header(coll, r.URI)
			if err != nil {
				return err
			}
			status := r.HTTPCode
			if status == 0 {
				status = http.StatusOK
			}
			if !hasHdr {
				hdr = []byte(fmt.Sprintf("HTTP/1.1 %d %s\r\nContent-Type: %s\r\n\r\n", status, http.StatusText(status), r.ContentType))
			}
			x := Exchange{URL: r.URI, Date: r.LastFetched, Status: status, Header: exportHeader(hdr, len(body)), Body: body}
			es.Documents++
			return w.Add(ctx, &Capture{Exchanges: []Exchange{x}, Collection: coll})
		})
		if err != nil {
			return es, fmt.Errorf("warc: export %s: %w", coll, err)
		}
	}
	return es, nil
}

// exportHeader rewrites a stored header block for a decoded body of n
// bytes.
func exportHeader(hdr []byte, n int) []byte {
	var b bytes.Buffer
	lines := strings.Split(strings.TrimRight(string(hdr), "\r\n"), "\n")
	for i, l := range lines {
		l = strings.TrimRight(l, "\r")
		if i > 0 {
			name, _, _ := strings.Cut(l, ":")
			switch http.CanonicalHeaderKey(strings.TrimSpace(name)) {
			case "Content-Encoding", "Content-Length", "Transfer-Encoding":
				continue
			}
		}
		b.WriteString(l + "\r\n")
	}
	b.WriteString("Content-Length: " + strconv.Itoa(n) + "\r\n\r\n")
	return b.Bytes()
}

// Collections lists the collections a crawl store holds URIs of.
func Collections(st *store.Store) ([]string, error) {
	seen := map[string]bool{}
	var names []string
	err := st.IterRaw(store.SpaceURI, nil, func(k, _ []byte) error {
		name, _, err := store.ReadLP(k)
		if err != nil {
			return err
		}
		if !seen[name] {
			seen[name] = true
			names = append(names, name)
		}
		return nil
	})
	return names, err
}
