package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// URI flags the frontier acts on (MS-FSCMT §2.2.2.2.1). The full set lives
// with the protocol; these values are the wire values.
const (
	URIFStartURI     uint32 = 0x00000001
	URIFForce        uint32 = 0x00000002
	URIFStartURIFeed uint32 = 0x00000400
	URIFRescheduled  uint32 = 0x00001000
	URIFSiteURI      uint32 = 0x00010000
	URIFNoCrawl      uint32 = 0x00040000
	URIFCleanSite    uint32 = 0x00800000
)

// Queue flags (MS-FSCMT §2.2.2.2.3).
const (
	QFPrepend uint8 = 0x01 // enqueue at the front of the crawl queue
	QFForce   uint8 = 0x02 // bypass wqfilter/smfilter
	QFUrgent  uint8 = 0x04 // crawl as soon as possible
	// QFReextract marks an entry queued again because a shorter path (fewer
	// hops or redirects) reached a URI already served in this cycle: the
	// driver should take the links again, at the new depth, from what it
	// stored rather than fetch the URI again (it fetches when it has
	// nothing stored from this cycle).
	QFReextract uint8 = 0x08
)

// Entry is a crawl queue entry as the frontier needs it: the parts of the
// MS-FSCMT WQE tuple that affect scheduling, plus the opaque rest in Extra.
type Entry struct {
	URI        string
	Site       string // crawl site (host[:port]); the caller derives it
	Referrer   string
	Hops       int    // page hops from a start URI (crawlmode DEPTH)
	Redirects  int    // redirects at the end of the path (max_redirects); minimised over paths as Hops is
	Level      int    // priority level 1..Levels; 0 picks start_uri_pri or default
	URIFlags   uint32 // URIF_* bits
	QueueFlags uint8  // QF_* bits
	Extra      []byte // opaque to the frontier (the WQE's frame flags, redirect trail, extra dict...)
}

// Fetch is one URI the driver should fetch now.
type Fetch struct {
	Entry
	IP    string // the site's IP as resolved (empty unless RequireIP)
	Cycle int64  // the site's refresh cycle when served
	// Fresh is set when the exact seen-set (wqfilter) had never seen the
	// URI when it was queued: it was never served before in this
	// collection, so the driver has no record of it to read.
	Fresh bool

	class uint8
	seq   uint64
	epoch uint64
	fresh bool
}

// Outcome classifies a finished fetch for scheduling purposes.
type Outcome int

// Outcomes.
const (
	Fetched     Outcome = iota // got a document (any HTTP status the server answered)
	NotModified                // 304
	NetError                   // connection failure or timeout: backs the site off
	Skipped                    // not fetched (robots, excluded after the fact)
)

// Result is what Done needs to know about a fetch.
type Result struct {
	Outcome Outcome
	Changed bool // the content differs from the stored one (adaptive change history)
}

// KnownURI is what the frontier remembers about a URI it has served.
type KnownURI struct {
	URI       string
	Site      string
	Hops      int
	Level     int
	LastCycle int64 // last cycle the URI was fetched successfully
	Fetches   int
	Changes   int
	// LastTick is the minor refresh cycle of the last fetch, counted over
	// the whole crawl (cycle*refresh_count + minor cycle; adaptive.go).
	LastTick int64
}

// DefaultScore is the adaptive score: the weights section's change-history
// rule (changes per fetch, weight 10) plus inverse depth (hops < 10, weight 1).
func DefaultScore(k KnownURI) float64 {
	s := 0.0
	if k.Fetches > 0 {
		s += 10 * float64(k.Changes) / float64(k.Fetches)
	}
	if k.Hops < 10 {
		s += 1 - float64(k.Hops)/10
	}
	return s
}

var errCorrupt = errors.New("frontier: corrupt value")

// Queue entry versions: 1 has no internal flags byte, 2 (written now) has
// one after the queue flags.
const (
	entryVersion  = 1
	entryVersion2 = 2
)

// Internal flags of a stored queue entry.
const (
	entryFresh     = 0x01 // the seen-set had no record of the URI when it was queued
	entryRedirects = 0x02 // a redirect count follows the level
)

func encodeEntry(e *Entry, class uint8) []byte { return appendQueued(nil, e, class, false) }

// appendQueued appends the stored form of a queue entry to b.
func appendQueued(b []byte, e *Entry, class uint8, fresh bool) []byte {
	if b == nil {
		b = make([]byte, 0, 24+len(e.URI)+len(e.Referrer)+len(e.Site)+len(e.Extra))
	}
	var fl byte
	if fresh {
		fl |= entryFresh
	}
	if e.Redirects > 0 {
		fl |= entryRedirects
	}
	b = append(b, entryVersion2, class, e.QueueFlags, fl)
	b = binary.AppendUvarint(b, uint64(e.URIFlags))
	b = binary.AppendUvarint(b, uint64(e.Hops))
	b = binary.AppendUvarint(b, uint64(e.Level))
	if e.Redirects > 0 {
		b = binary.AppendUvarint(b, uint64(e.Redirects))
	}
	b = store.AppendLP(b, e.URI)
	b = store.AppendLP(b, e.Site)
	b = store.AppendLP(b, e.Referrer)
	b = store.AppendLP(b, string(e.Extra))
	return b
}

// reader decodes varints and strings, remembering the first error.
type reader struct {
	b   []byte
	err error
}

func (r *reader) uvarint(max uint64) uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 || v > max {
		r.err = fmt.Errorf("%w: bad integer", errCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) varint() int64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Varint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad integer", errCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *reader) str() string {
	if r.err != nil {
		return ""
	}
	s, rest, err := store.ReadLP(r.b)
	if err != nil {
		r.err = fmt.Errorf("%w: %v", errCorrupt, err)
		return ""
	}
	r.b = rest
	return s
}

func (r *reader) end() error {
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(r.b))
	}
	return r.err
}

func decodeEntry(b []byte) (Entry, uint8, error) {
	e, class, _, err := decodeQueued(b)
	return e, class, err
}

// decodeQueued decodes a stored queue entry (either version) and its fresh flag.
func decodeQueued(b []byte) (e Entry, class uint8, fresh bool, err error) {
	if len(b) < 3 || (b[0] != entryVersion && b[0] != entryVersion2) {
		return Entry{}, 0, false, fmt.Errorf("%w: queue entry header", errCorrupt)
	}
	class = b[1]
	e = Entry{QueueFlags: b[2]}
	rest := b[3:]
	var fl byte
	if b[0] == entryVersion2 {
		if len(rest) < 1 || rest[0]&^(entryFresh|entryRedirects) != 0 {
			return Entry{}, 0, false, fmt.Errorf("%w: queue entry flags", errCorrupt)
		}
		fl = rest[0]
		fresh = fl&entryFresh != 0
		rest = rest[1:]
	}
	r := reader{b: rest}
	e.URIFlags = uint32(r.uvarint(1<<32 - 1))
	e.Hops = int(r.uvarint(1 << 31))
	e.Level = int(r.uvarint(255))
	if fl&entryRedirects != 0 {
		e.Redirects = int(r.uvarint(1 << 31))
	}
	e.URI = r.str()
	e.Site = r.str()
	e.Referrer = r.str()
	if x := r.str(); x != "" {
		e.Extra = []byte(x)
	}
	return e, class, fresh, r.end()
}

func encodeKnown(k *KnownURI) []byte {
	b := []byte{entryVersion}
	b = binary.AppendUvarint(b, uint64(k.Hops))
	b = binary.AppendUvarint(b, uint64(k.Level))
	b = binary.AppendVarint(b, k.LastCycle)
	b = binary.AppendUvarint(b, uint64(k.Fetches))
	b = binary.AppendUvarint(b, uint64(k.Changes))
	b = binary.AppendVarint(b, k.LastTick) // optional: older records end before it
	return b
}

func decodeKnown(site, uri string, b []byte) (KnownURI, error) {
	if len(b) < 1 || b[0] != entryVersion {
		return KnownURI{}, fmt.Errorf("%w: known header", errCorrupt)
	}
	r := reader{b: b[1:]}
	k := KnownURI{URI: uri, Site: site}
	k.Hops = int(r.uvarint(1 << 31))
	k.Level = int(r.uvarint(255))
	k.LastCycle = r.varint()
	k.Fetches = int(r.uvarint(1 << 40))
	k.Changes = int(r.uvarint(1 << 40))
	if r.err == nil && len(r.b) > 0 {
		k.LastTick = r.varint()
	}
	return k, r.end()
}

func unixNano(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixNano()
}

func fromUnixNano(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.Unix(0, v)
}

// seenValue is a seen-set value: the cycle the URI was last queued in,
// its hops then and where its queue entry went (class, seq), so that a
// shorter path found later can lower the queued entry's depth and an
// administrative delete can find the entry. Values written before these
// fields existed hold only the cycle (full is false).
type seenValue struct {
	cycle     int64
	hops      int
	class     uint8
	seq       uint64
	full      bool
	redirects int    // optional trailing field (0 when absent)
	gen       uint64 // optional trailing field after redirects: the subcollection refresh generation when written (subrefresh.go)
}

func appendSeen(b []byte, v seenValue) []byte {
	b = binary.AppendVarint(b, v.cycle)
	b = binary.AppendUvarint(b, uint64(v.hops))
	b = append(b, v.class)
	b = binary.AppendUvarint(b, v.seq)
	if v.redirects > 0 || v.gen > 0 {
		b = binary.AppendUvarint(b, uint64(v.redirects))
	}
	if v.gen > 0 {
		b = binary.AppendUvarint(b, v.gen)
	}
	return b
}

// decodeSeen reads a seen-set value; ok is false when not even the cycle
// can be read.
func decodeSeen(b []byte) (v seenValue, ok bool) {
	c, n := binary.Varint(b)
	if n <= 0 {
		return v, false
	}
	v.cycle = c
	r := reader{b: b[n:]}
	if len(r.b) == 0 {
		return v, true
	}
	v.hops = int(r.uvarint(1 << 31))
	if r.err != nil || len(r.b) == 0 {
		return seenValue{cycle: c}, true
	}
	v.class = r.b[0]
	r.b = r.b[1:]
	v.seq = r.uvarint(1<<64 - 1)
	if r.err == nil && len(r.b) > 0 {
		v.redirects = int(r.uvarint(1 << 31))
	}
	if r.err == nil && len(r.b) > 0 {
		v.gen = r.uvarint(1<<64 - 1)
	}
	if r.end() != nil {
		return seenValue{cycle: c}, true
	}
	v.full = true
	return v, true
}
