package opensearch

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/opensearch-project/opensearch-go/v4/opensearchapi"
	"github.com/opensearch-project/opensearch-go/v4/opensearchutil"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/index"
)

// closeGrace is how long a session's Close lets the bulk requests under
// way finish before it stops waiting for them.
const closeGrace = 5 * time.Second

// logFirst is how many refused items a session logs (the feeder then
// closes it and backs off, so a lasting cause logs this many per retry).
const logFirst = 3

// Dial is a feed.Dialer: it sets up the index (Setup) and returns a
// session that feeds it through a bulk indexer. A setup error (cluster
// unreachable, mapping conflict) fails the dial; the feeder backs off and
// dials again while the operations wait in the outbox.
func (c *Client) Dial(ctx context.Context, t feed.Target) (feed.Session, error) {
	if err := c.Setup(ctx); err != nil {
		return nil, err
	}
	s := &session{c: c, target: t.Name}
	s.ctx, s.cancel = context.WithCancel(context.Background())
	bi, err := opensearchutil.NewBulkIndexer(opensearchutil.BulkIndexerConfig{
		Client:        c.api,
		Index:         c.cfg.Index,
		NumWorkers:    2,
		FlushBytes:    4 << 20,
		FlushInterval: c.flush,
		Context:       s.ctx,
		OnError: func(_ context.Context, err error) {
			if s.ctx.Err() == nil {
				s.refused(fmt.Errorf("opensearch: bulk request: %w", describe(err)))
			}
		},
	})
	if err != nil {
		s.cancel()
		return nil, fmt.Errorf("opensearch: bulk indexer: %w", err)
	}
	s.bi = bi
	return s, nil
}

// session is a feed.Session over one bulk indexer.
type session struct {
	c      *Client
	target string
	bi     opensearchutil.BulkIndexer
	ctx    context.Context
	cancel context.CancelFunc
	mu     sync.Mutex
	closed bool
	failed atomic.Bool
	logged atomic.Int32
}

// refused records a retryable failure: the session fails its next Submit
// (so the feeder backs off before it sends again) and logs the first few.
func (s *session) refused(err error) {
	s.failed.Store(true)
	if s.logged.Add(1) <= logFirst {
		s.c.log.Warn("opensearch: operation not taken; it stays in the outbox and is sent again", "target", s.target, "index", s.c.cfg.Index, "err", err)
	}
}

// Submit implements feed.Session: every operation becomes one bulk action
// whose answer is the operation's callback.
func (s *session) Submit(ctx context.Context, batch []feed.Operation, cb feed.Callback) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return errors.New("opensearch: session closed")
	}
	if s.failed.Load() {
		return errors.New("opensearch: session failed (see the errors above)")
	}
	for i := range batch {
		item, err := s.item(batch[i], cb)
		if err != nil {
			seq := batch[i].Seq
			go cb(seq, err)
			continue
		}
		if err := s.bi.Add(ctx, item); err != nil {
			return fmt.Errorf("opensearch: bulk indexer: %w", err)
		}
	}
	return nil
}

// item is the bulk action of op.
func (s *session) item(op feed.Operation, cb feed.Callback) (opensearchutil.BulkIndexerItem, error) {
	iop, err := feed.IndexOp(op)
	if err != nil {
		return opensearchutil.BulkIndexerItem{}, err
	}
	version := int64(op.Seq)
	external := "external"
	item := opensearchutil.BulkIndexerItem{
		Action:      "index",
		DocumentID:  DocID(iop.Doc.Collection, iop.Doc.URL),
		Version:     &version,
		VersionType: &external,
	}
	switch {
	case iop.Remove:
		item.Action = "delete"
	case iop.Fields:
		// A partial update: OpenSearch merges the fields into the stored
		// document (update takes no external version; a later content
		// update replaces the rank and anchor text until the next analysis).
		item.Action, item.Version, item.VersionType = "update", nil, nil
		body, err := json.Marshal(map[string]any{"doc": map[string]any{index.FieldRank: iop.Doc.Rank, index.FieldAnchor: iop.Doc.Anchor}})
		if err != nil {
			return item, fmt.Errorf("%w: %s: %v", feed.ErrRejected, op.URI, err)
		}
		item.Body = bytes.NewReader(body)
	default:
		body, err := json.Marshal(Source(iop.Doc))
		if err != nil {
			return item, fmt.Errorf("%w: %s: %v", feed.ErrRejected, op.URI, err)
		}
		item.Body = bytes.NewReader(body)
	}
	seq, uri, action := op.Seq, op.URI, item.Action
	item.OnSuccess = func(context.Context, opensearchutil.BulkIndexerItem, opensearchapi.BulkRespItem) { cb(seq, nil) }
	item.OnFailure = func(_ context.Context, _ opensearchutil.BulkIndexerItem, res opensearchapi.BulkRespItem, err error) {
		err = itemError(action, uri, res, err)
		if err != nil {
			s.refused(err)
		}
		cb(seq, err)
	}
	return item, nil
}

// itemError is the outcome of a failed bulk item: nil for a version
// conflict (the document holds this operation or a newer one) and for the
// delete of a missing document, else a retryable error with OpenSearch's
// reason.
func itemError(action, uri string, res opensearchapi.BulkRespItem, err error) error {
	if err != nil {
		return fmt.Errorf("opensearch: %s %s: %w", action, uri, describe(err))
	}
	if res.Status == http.StatusConflict {
		return nil
	}
	if (action == "delete" || action == "update") && res.Status == http.StatusNotFound {
		return nil
	}
	typ, reason := "", ""
	if res.Error != nil {
		typ, reason = res.Error.Type, res.Error.Reason
		if res.Error.Cause.Reason != "" {
			reason += " (" + res.Error.Cause.Type + ": " + res.Error.Cause.Reason + ")"
		}
	}
	return fmt.Errorf("opensearch: %s %s refused: status %d: %s: %s", action, uri, res.Status, typ, reason)
}

// Close implements feed.Session: it flushes what the bulk indexer holds
// and waits for the answers, at most closeGrace, then stops.
func (s *session) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), closeGrace)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- s.bi.Close(ctx) }()
	var err error
	select {
	case err = <-done:
	case <-ctx.Done():
		// Requests under way (a hung node) are cut off; their operations
		// are taken back by the feeder.
		s.cancel()
		err = <-done
	}
	s.cancel()
	if err != nil && !errors.Is(err, context.DeadlineExceeded) && !errors.Is(err, context.Canceled) {
		return fmt.Errorf("opensearch: closing the bulk indexer: %w", err)
	}
	return nil
}

// Source is the OpenSearch document (_source) of d: the fields of the
// embedded index (see the package comment).
func Source(d index.Doc) map[string]any {
	site := index.Site(d.URL)
	summary := d.Description
	if summary == "" {
		summary = d.Body
	}
	m := map[string]any{
		index.FieldURL:        d.URL,
		index.FieldSite:       site,
		index.FieldDomains:    index.Domains(site),
		index.FieldTitle:      d.Title,
		index.FieldBody:       d.Body,
		index.FieldAnchor:     d.Anchor,
		index.FieldSummary:    index.Truncate(summary, index.SummaryBytes),
		index.FieldMIME:       index.NormalizeMIME(d.MIME),
		index.FieldType:       index.TypeOf(d.MIME),
		index.FieldCollection: d.Collection,
		index.FieldLang:       strings.ToLower(d.Language),
		index.FieldRank:       d.Rank,
	}
	if !d.Modified.IsZero() {
		m[index.FieldModified] = d.Modified.UTC().Format(time.RFC3339Nano)
	}
	for f, v := range map[string][]string{index.FieldLinks: d.Links, index.FieldDuplicates: d.Duplicates, index.FieldRedirects: d.Redirects, index.FieldMirrors: d.Mirrors} {
		if len(v) > 0 {
			m[f] = v
		}
	}
	return m
}
