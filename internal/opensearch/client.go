package opensearch

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/opensearch-project/opensearch-go/v4"
	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"

	"github.com/trawl/trawl/internal/index"
)

// Scheme and SecureScheme start an OpenSearch destination's address.
const (
	Scheme       = "opensearch://"
	SecureScheme = "opensearchs://"
)

// IsURL reports whether s names an OpenSearch destination.
func IsURL(s string) bool {
	return strings.HasPrefix(s, Scheme) || strings.HasPrefix(s, SecureScheme)
}

// Config is a parsed OpenSearch address.
type Config struct {
	// Addresses are the nodes' base URLs (http://HOST:PORT).
	Addresses []string
	// Index is the OpenSearch index fed and searched.
	Index string
}

// maxIDBytes is OpenSearch's limit on a document _id.
const maxIDBytes = 512

// ParseURL parses opensearch://HOST:PORT[,HOST:PORT...]/INDEX (or
// opensearchs:// for https).
func ParseURL(s string) (Config, error) {
	proto := "http://"
	rest, ok := strings.CutPrefix(s, Scheme)
	if !ok {
		if rest, ok = strings.CutPrefix(s, SecureScheme); !ok {
			return Config{}, fmt.Errorf("opensearch: %q does not start with %s or %s", s, Scheme, SecureScheme)
		}
		proto = "https://"
	}
	hosts, idx, ok := strings.Cut(rest, "/")
	if !ok || hosts == "" {
		return Config{}, fmt.Errorf("opensearch: %q: want %sHOST:PORT/INDEX", s, Scheme)
	}
	if err := checkIndexName(idx); err != nil {
		return Config{}, fmt.Errorf("opensearch: %q: %w", s, err)
	}
	var c Config
	for _, h := range strings.Split(hosts, ",") {
		host, port, err := net.SplitHostPort(h)
		if err != nil || host == "" {
			return Config{}, fmt.Errorf("opensearch: %q: bad node address %q (want HOST:PORT)", s, h)
		}
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return Config{}, fmt.Errorf("opensearch: %q: bad port in %q", s, h)
		}
		c.Addresses = append(c.Addresses, proto+net.JoinHostPort(host, port))
	}
	c.Index = idx
	return c, nil
}

func checkIndexName(n string) error {
	switch {
	case n == "" || n == "." || n == "..":
		return errors.New("no index name")
	case len(n) > 255:
		return errors.New("index name longer than 255 bytes")
	case strings.ContainsAny(n[:1], "_-+"):
		return fmt.Errorf("index name %q starts with %q", n, n[:1])
	case strings.ContainsAny(n, "\\/*?\"<>| ,#:"):
		return fmt.Errorf("index name %q holds one of \\ / * ? \" < > | space , # :", n)
	case strings.ToLower(n) != n:
		return fmt.Errorf("index name %q is not lower case", n)
	}
	return nil
}

// Client is a connection to an OpenSearch cluster for one index: the
// feeding destination (Dial) and a Searcher.
type Client struct {
	api   *opensearchapi.Client
	cfg   Config
	log   *slog.Logger
	url   string
	flush time.Duration
}

// Options configure New.
type Options struct {
	Logger *slog.Logger
	// FlushInterval bounds how long the bulk indexer holds a partial
	// request (default 20ms; the feeder has sized the batch already).
	FlushInterval time.Duration
	// RequestTimeout bounds one HTTP request (default 2 minutes).
	RequestTimeout time.Duration
}

// New returns a client for the address rawURL (see ParseURL). It does not
// connect: Dial and Search do.
func New(rawURL string, o Options) (*Client, error) {
	cfg, err := ParseURL(rawURL)
	if err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.FlushInterval <= 0 {
		o.FlushInterval = 20 * time.Millisecond
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = 2 * time.Minute
	}
	api, err := opensearchapi.NewClient(opensearchapi.Config{Client: opensearch.Config{
		Addresses:      cfg.Addresses,
		MaxRetries:     2,
		RetryOnStatus:  []int{502, 503, 504},
		RequestTimeout: o.RequestTimeout,
	}})
	if err != nil {
		return nil, fmt.Errorf("opensearch: client: %w", err)
	}
	return &Client{api: api, cfg: cfg, log: o.Logger, url: rawURL, flush: o.FlushInterval}, nil
}

// Index is the OpenSearch index the client feeds and searches.
func (c *Client) Index() string { return c.cfg.Index }

// String is the client's address.
func (c *Client) String() string { return c.url }

// API is the underlying opensearch-go client.
func (c *Client) API() *opensearchapi.Client { return c.api }

// Close releases the client's connections.
func (c *Client) Close() error { return c.api.Client.Close() }

// DocID is the OpenSearch _id of a URL in a content collection: the
// embedded index's ID, or its SHA-256 when that is too long for an _id.
func DocID(collection, rawURL string) string {
	id := index.DocID(collection, rawURL)
	if len(id) <= maxIDBytes {
		return id
	}
	sum := sha256.Sum256([]byte(id))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Mapping is the mapping of trawl's OpenSearch index (see the package
// comment).
func Mapping() map[string]any {
	kw := map[string]any{"type": "keyword"}
	text := map[string]any{"type": "text"}
	stored := map[string]any{"type": "keyword", "index": false, "doc_values": false}
	return map[string]any{
		"dynamic": false,
		"properties": map[string]any{
			index.FieldURL: kw, index.FieldSite: kw, index.FieldDomains: kw, index.FieldMIME: kw,
			index.FieldType: kw, index.FieldCollection: kw, index.FieldLang: kw,
			index.FieldTitle: text, index.FieldBody: text, index.FieldAnchor: text,
			index.FieldSummary:  map[string]any{"type": "text", "index": false},
			index.FieldModified: map[string]any{"type": "date"},
			index.FieldRank:     map[string]any{"type": "float"},
			index.FieldLinks:    stored, index.FieldDuplicates: stored, index.FieldRedirects: stored, index.FieldMirrors: stored,
		},
	}
}

// Setup installs the index template, creates the index if it is missing
// and puts the mapping on it. A mapping conflict with an existing index
// is an error naming the field.
func (c *Client) Setup(ctx context.Context) error {
	tmpl, _ := json.Marshal(map[string]any{
		"index_patterns": []string{c.cfg.Index},
		"priority":       100,
		"template":       map[string]any{"mappings": Mapping()},
		"_meta":          map[string]any{"description": "trawl's crawled documents (internal/opensearch)"},
	})
	if _, err := c.api.IndexTemplate.Create(ctx, opensearchapi.IndexTemplateCreateReq{IndexTemplate: "trawl-" + c.cfg.Index, Body: bytes.NewReader(tmpl)}); err != nil {
		return fmt.Errorf("opensearch: index template trawl-%s: %w", c.cfg.Index, describe(err))
	}
	if _, err := c.api.Indices.Create(ctx, opensearchapi.IndicesCreateReq{Index: c.cfg.Index}); err != nil && !isType(err, "resource_already_exists_exception") {
		return fmt.Errorf("opensearch: creating index %s: %w", c.cfg.Index, describe(err))
	}
	m, _ := json.Marshal(Mapping())
	if _, err := c.api.Indices.Mapping.Put(ctx, opensearchapi.MappingPutReq{Indices: []string{c.cfg.Index}, Body: bytes.NewReader(m)}); err != nil {
		hint := ""
		if isType(err, "illegal_argument_exception") || isType(err, "mapper_parsing_exception") {
			hint = " (a mapping conflict: fix or delete the index; the operations wait in the outbox)"
		}
		return fmt.Errorf("opensearch: mapping of index %s%s: %w", c.cfg.Index, hint, describe(err))
	}
	return nil
}

// Refresh makes every operation acknowledged so far searchable.
func (c *Client) Refresh(ctx context.Context) error {
	if _, err := c.api.Indices.Refresh(ctx, &opensearchapi.IndicesRefreshReq{Index: []string{c.cfg.Index}}); err != nil {
		return fmt.Errorf("opensearch: refresh %s: %w", c.cfg.Index, describe(err))
	}
	return nil
}

// Count returns the number of documents in the index (searchable ones:
// Refresh first to count everything acknowledged).
func (c *Client) Count(ctx context.Context) (uint64, error) {
	r, err := c.api.Indices.Count(ctx, &opensearchapi.IndicesCountReq{Indices: []string{c.cfg.Index}})
	if err != nil {
		return 0, fmt.Errorf("opensearch: count %s: %w", c.cfg.Index, describe(err))
	}
	return uint64(r.Count), nil
}

// describe turns an opensearch-go error into one line with OpenSearch's
// status, error type and reason.
func describe(err error) error {
	var se *opensearch.StructError
	if errors.As(err, &se) {
		return fmt.Errorf("status %d: %s: %s", se.Status, se.Err.Type, se.Err.Reason)
	}
	return err
}

func isType(err error, typ string) bool {
	var se *opensearch.StructError
	return errors.As(err, &se) && se.Err.Type == typ
}
