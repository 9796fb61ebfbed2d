package warc

import (
	"context"
	"crypto/sha1"
	"encoding/base32"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/klauspost/compress/gzip"
	"github.com/nlnwa/gowarc/v3"
)

// Defaults of Options.
const (
	DefaultMaxSize    = 1 << 30 // bytes at which a file is closed
	DefaultQueue      = 256     // captures waiting to be written
	DefaultMaxDigests = 1 << 20 // payload digests remembered for revisits
	DefaultPrefix     = "trawl"
)

// gowarcMu serializes the use of gowarc in this process: each of its
// record builders (and its file writers' warcinfo builders) writes
// github.com/google/uuid's package-level pool switch, unsynchronized
// (uuid.EnableRandPool in gowarc's default options), so two builders must
// not run at once. A Writer holds it while it builds and writes a
// capture's records; the process's writers take turns.
var gowarcMu sync.Mutex

// Options configure a Writer.
type Options struct {
	Dir    string // directory of the files (created if needed)
	Prefix string // file name prefix (default DefaultPrefix)
	Node   string // the node scheduler's name, the last part of file names
	// MaxSize closes a file before a record would take it past this many
	// bytes (default DefaultMaxSize); a record is never split.
	MaxSize int64
	// Queue is how many captures may wait to be written (default
	// DefaultQueue); Add blocks beyond it.
	Queue int
	// MaxDigests bounds the payload digests remembered to write revisits
	// (default DefaultMaxDigests); past it new payloads are not
	// remembered, and their copies are written whole.
	MaxDigests int
	// Software and Info go into every file's warcinfo record (Info as
	// further "name: value" fields).
	Software string
	Info     map[string]string
	Logger   *slog.Logger
	// Now is the clock for file names (default time.Now).
	Now func() time.Time
}

// Capture is what the crawler fetched for one URI: its HTTP exchanges
// (redirect hops first) and what the metadata record says of it.
type Capture struct {
	Exchanges []Exchange
	// Outlinks are the links extracted from the final response.
	Outlinks []string
	// FetchTime is how long the whole fetch took.
	FetchTime time.Duration
	// Collection names the crawl collection (metadata record).
	Collection string
}

// Exchange is one HTTP request and response (fetch.Exchange).
type Exchange struct {
	URL    string
	Date   time.Time
	IP     string
	Status int
	// Request is the request line and header block (and body).
	Request []byte
	// Header is the response's status line and header block with the
	// blank line; Body the body as received.
	Header, Body []byte
	Truncated    bool
}

// Stats counts what a Writer did.
type Stats struct {
	Responses, Revisits, Requests, Metadata int64
	// NotModified and Identical split Revisits by profile.
	NotModified, Identical int64
	Errors                 int64 // captures lost to write errors
	Files                  int64 // files opened
}

// Writer writes captures to WARC files from its own goroutine (Run), fed
// by a bounded queue (Add).
type Writer struct {
	o      Options
	log    *slog.Logger
	queue  chan *Capture
	done   chan struct{}
	closed sync.Once
	w      *gowarc.WarcFileWriter

	dmu     sync.Mutex // guards digests
	digests map[[sha1.Size]byte]ref

	files                                   atomic.Int64
	responses, revisits, requests, metadata atomic.Int64
	notModified, identical, errs            atomic.Int64
	mu                                      sync.Mutex
	written                                 []string // files completed
}

// ref is an earlier capture of a payload.
type ref struct{ id, uri, date string }

// infoOpts are the options of the warcinfo records gowarc builds: SHA-1
// digests in base32, computed by gowarc.
var infoOpts = []gowarc.WarcRecordOption{
	gowarc.WithDefaultDigestAlgorithm("sha1"),
	gowarc.WithDefaultDigestEncoding(gowarc.Base32),
	gowarc.WithAddMissingDigest(true),
}

// recordOpts are the options of the records the Writer builds: it sets
// WARC-Block-Digest and WARC-Payload-Digest itself (SHA-1, base32), in one
// pass over the bytes, so gowarc neither validates nor copies the block.
var recordOpts = []gowarc.WarcRecordOption{
	gowarc.WithDefaultDigestAlgorithm("sha1"),
	gowarc.WithDefaultDigestEncoding(gowarc.Base32),
	gowarc.WithSpecViolationPolicy(gowarc.ErrIgnore),
	gowarc.WithSyntaxErrorPolicy(gowarc.ErrIgnore),
}

// sha1Digest is the WARC digest (SHA-1, base32) of the parts, in order.
func sha1Digest(parts ...[]byte) string {
	h := sha1.New()
	for _, p := range parts {
		h.Write(p)
	}
	return "sha1:" + base32.StdEncoding.EncodeToString(h.Sum(nil))
}

// New returns a Writer; nothing is written until Run.
func New(o Options) (*Writer, error) {
	if o.Dir == "" {
		return nil, errors.New("warc: no directory")
	}
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if o.Node == "" {
		o.Node = "node"
	}
	if o.MaxSize <= 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.Queue <= 0 {
		o.Queue = DefaultQueue
	}
	if o.MaxDigests <= 0 {
		o.MaxDigests = DefaultMaxDigests
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Software == "" {
		o.Software = "trawl"
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if err := os.MkdirAll(o.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("warc: %w", err)
	}
	w := &Writer{o: o, log: log, queue: make(chan *Capture, o.Queue), done: make(chan struct{}),
		digests: map[[sha1.Size]byte]ref{}}
	names := &nameGenerator{dir: o.Dir, prefix: o.Prefix, node: o.Node, now: o.Now}
	names.serial = names.existing()
	w.w = gowarc.NewWarcFileWriter(
		gowarc.WithFileNameGenerator(names),
		gowarc.WithMaxFileSize(o.MaxSize),
		gowarc.WithCompression(true),
		gowarc.WithCompressionLevel(gzip.BestSpeed),
		gowarc.WithRecordOptions(infoOpts...),
		gowarc.WithWarcInfoFunc(w.warcinfo),
		gowarc.WithAfterFileCreationHook(func(name string, size int64, _ string) error {
			w.mu.Lock()
			w.written = append(w.written, name)
			w.mu.Unlock()
			return nil
		}),
	)
	return w, nil
}

// Dir is the directory the writer writes to.
func (w *Writer) Dir() string { return w.o.Dir }

// Add queues a capture, waiting while the queue is full (back-pressure on
// the crawl rather than a lost record). It fails once ctx ends or the
// writer has stopped.
func (w *Writer) Add(ctx context.Context, c *Capture) error {
	// A stopped writer refuses at once: below, a queue with room and the
	// closed done channel would both be ready, and select picks at random.
	select {
	case <-w.done:
		return errors.New("warc: writer stopped")
	default:
	}
	select {
	case w.queue <- c:
		return nil
	case <-w.done:
		return errors.New("warc: writer stopped")
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Run writes queued captures until ctx ends, then writes what is still
// queued and closes the current file.
func (w *Writer) Run(ctx context.Context) error {
	defer w.closed.Do(func() { close(w.done) })
	for {
		select {
		case c := <-w.queue:
			w.write(c)
		case <-ctx.Done():
			for {
				select {
				case c := <-w.queue:
					w.write(c)
				default:
					gowarcMu.Lock()
					err := w.w.Close()
					gowarcMu.Unlock()
					if err != nil {
						return fmt.Errorf("warc: %w", err)
					}
					return nil
				}
			}
		}
	}
}

// Stats returns the counts so far.
func (w *Writer) Stats() Stats {
	return Stats{Responses: w.responses.Load(), Revisits: w.revisits.Load(), Requests: w.requests.Load(),
		Metadata: w.metadata.Load(), NotModified: w.notModified.Load(), Identical: w.identical.Load(),
		Errors: w.errs.Load(), Files: w.files.Load()}
}

// Files returns the paths of the files completed so far, in order.
func (w *Writer) Files() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.written...)
}

func (w *Writer) warcinfo(rb gowarc.WarcRecordBuilder) error {
	w.files.Add(1)
	fields := fmt.Sprintf("software: %s\r\nformat: WARC File Format 1.1\r\nconformsTo: http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\nhostname: %s\r\n", w.o.Software, w.o.Node)
	keys := make([]string, 0, len(w.o.Info))
	for k := range w.o.Info {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fields += k + ": " + oneLine(w.o.Info[k]) + "\r\n"
	}
	_, err := rb.WriteString(fields)
	return err
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// write writes one capture's records; an error is logged and counted.
func (w *Writer) write(c *Capture) {
	gowarcMu.Lock()
	defer gowarcMu.Unlock()
	for i := range c.Exchanges {
		var meta *Capture
		if i == len(c.Exchanges)-1 {
			meta = c
		}
		if err := w.writeExchange(&c.Exchanges[i], meta); err != nil {
			w.errs.Add(1)
			w.log.Error("warc: writing a capture failed", "uri", c.Exchanges[i].URL, "err", err)
		}
	}
}

// PayloadDigest is the WARC-Payload-Digest of a body: SHA-1 in base32.
func PayloadDigest(body []byte) string {
	sum := sha1.Sum(body)
	return "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
}

// writeExchange writes the response (or revisit), request and, for the
// final exchange of a capture (meta), metadata records of one exchange.
func (w *Writer) writeExchange(x *Exchange, meta *Capture) (err error) {
	date := x.Date.UTC()
	if date.IsZero() {
		date = w.o.Now().UTC()
	}
	sum := sha1.Sum(x.Body)
	digest := "sha1:" + base32.StdEncoding.EncodeToString(sum[:])
	id := "urn:uuid:" + uuid.NewString()
	// The first response with a payload claims it; later ones refer to it
	// (a failed write gives the claim back).
	claimable := x.Status >= 200 && x.Status < 300 && !x.Truncated && len(x.Body) > 0
	w.dmu.Lock()
	old, seen := w.digests[sum]
	claimed := false
	if claimable && !seen && len(w.digests) < w.o.MaxDigests {
		w.digests[sum] = ref{id: id, uri: x.URL, date: date.Format(time.RFC3339)}
		claimed = true
	}
	w.dmu.Unlock()
	if claimed {
		defer func() {
			if err != nil {
				w.dmu.Lock()
				delete(w.digests, sum)
				w.dmu.Unlock()
			}
		}()
	}
	rb := gowarc.NewRecordBuilder(gowarc.Response, recordOpts...)
	rb.AddWarcHeader(gowarc.WarcRecordID, "<"+id+">")
	rb.AddWarcHeader(gowarc.WarcTargetURI, x.URL)
	rb.AddWarcHeaderTime(gowarc.WarcDate, date)
	rb.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=response")
	if x.IP != "" {
		rb.AddWarcHeader(gowarc.WarcIPAddress, x.IP)
	}
	kind := "response"
	switch {
	case x.Status == 304:
		kind = "not-modified"
		rb.SetRecordType(gowarc.Revisit)
		rb.AddWarcHeader(gowarc.WarcProfile, gowarc.ProfileServerNotModifiedV1_1)
		rb.AddWarcHeader(gowarc.WarcTruncated, "length")
	case seen && claimable:
		kind = "identical"
		rb.SetRecordType(gowarc.Revisit)
		rb.AddWarcHeader(gowarc.WarcPayloadDigest, digest)
		rb.AddWarcHeader(gowarc.WarcProfile, gowarc.ProfileIdenticalPayloadDigestV1_1)
		rb.AddWarcHeader(gowarc.WarcRefersTo, "<"+old.id+">")
		rb.AddWarcHeader(gowarc.WarcRefersToTargetURI, old.uri)
		rb.AddWarcHeader(gowarc.WarcRefersToDate, old.date)
		rb.AddWarcHeader(gowarc.WarcTruncated, "length")
	case x.Truncated:
		rb.AddWarcHeader(gowarc.WarcTruncated, "length")
		rb.AddWarcHeader(gowarc.WarcPayloadDigest, digest)
	default:
		rb.AddWarcHeader(gowarc.WarcPayloadDigest, digest)
	}
	if _, err := rb.Write(x.Header); err != nil {
		rb.Close()
		return err
	}
	if kind == "response" {
		rb.AddWarcHeader(gowarc.WarcBlockDigest, sha1Digest(x.Header, x.Body))
		if _, err := rb.Write(x.Body); err != nil {
			rb.Close()
			return err
		}
	} else {
		rb.AddWarcHeader(gowarc.WarcBlockDigest, sha1Digest(x.Header))
	}
	resp, _, err := rb.Build()
	if err != nil {
		return err
	}
	records := []gowarc.WarcRecord{resp}
	if len(x.Request) > 0 {
		q := gowarc.NewRecordBuilder(gowarc.Request, recordOpts...)
		q.AddWarcHeader(gowarc.WarcTargetURI, x.URL)
		q.AddWarcHeaderTime(gowarc.WarcDate, date)
		q.AddWarcHeader(gowarc.ContentType, "application/http;msgtype=request")
		q.AddWarcHeader(gowarc.WarcConcurrentTo, "<"+id+">")
		q.AddWarcHeader(gowarc.WarcBlockDigest, sha1Digest(x.Request))
		if _, err := q.Write(x.Request); err != nil {
			q.Close()
			closeAll(records)
			return err
		}
		r, _, err := q.Build()
		if err != nil {
			closeAll(records)
			return err
		}
		records = append(records, r)
	}
	if meta != nil {
		m := gowarc.NewRecordBuilder(gowarc.Metadata, recordOpts...)
		m.AddWarcHeader(gowarc.WarcTargetURI, x.URL)
		m.AddWarcHeaderTime(gowarc.WarcDate, date)
		m.AddWarcHeader(gowarc.ContentType, gowarc.ApplicationWarcFields)
		m.AddWarcHeader(gowarc.WarcConcurrentTo, "<"+id+">")
		var b strings.Builder
		fmt.Fprintf(&b, "fetchTimeMs: %d\r\n", meta.FetchTime.Milliseconds())
		if x.IP != "" {
			fmt.Fprintf(&b, "ip: %s\r\n", x.IP)
		}
		if meta.Collection != "" {
			fmt.Fprintf(&b, "collection: %s\r\n", oneLine(meta.Collection))
		}
		for _, l := range meta.Outlinks {
			fmt.Fprintf(&b, "outlink: %s\r\n", oneLine(l))
		}
		m.AddWarcHeader(gowarc.WarcBlockDigest, sha1Digest([]byte(b.String())))
		m.WriteString(b.String())
		r, _, err := m.Build()
		if err != nil {
			closeAll(records)
			return err
		}
		records = append(records, r)
	}
	for _, res := range w.w.Write(records...) {
		if res.Err != nil {
			return res.Err
		}
	}
	switch kind {
	case "response":
		w.responses.Add(1)
	case "not-modified":
		w.revisits.Add(1)
		w.notModified.Add(1)
	case "identical":
		w.revisits.Add(1)
		w.identical.Add(1)
	}
	if len(x.Request) > 0 {
		w.requests.Add(1)
	}
	if meta != nil {
		w.metadata.Add(1)
	}
	return nil
}

func closeAll(rs []gowarc.WarcRecord) {
	for _, r := range rs {
		r.Close()
	}
}

// nameGenerator names files <prefix>-<UTC time>-<serial>-<node>.warc
// (gowarc adds .gz, and .open while a file is written).
type nameGenerator struct {
	dir, prefix, node string
	now               func() time.Time
	mu                sync.Mutex // gowarc's writers name files concurrently
	serial            int
}

func (g *nameGenerator) NewWarcfileName() (string, string) {
	g.mu.Lock()
	g.serial++
	n := g.serial
	g.mu.Unlock()
	return g.dir, fmt.Sprintf("%s-%s-%05d-%s.warc", g.prefix, g.now().UTC().Format("20060102150405"), n, g.node)
}

// existing counts the files of this prefix and node already in the
// directory, so that a restarted crawl numbers on after them.
func (g *nameGenerator) existing() int {
	m, _ := filepath.Glob(filepath.Join(g.dir, g.prefix+"-*-"+g.node+".warc*"))
	return len(m)
}
