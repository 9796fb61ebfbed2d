package store

import (
	"encoding/binary"
	"fmt"
	"time"
)

// Status is what the crawler knows about a URI.
type Status uint8

// URI statuses.
const (
	StatusNew         Status = iota // queued, never fetched
	StatusFetched                   // fetched and stored
	StatusError                     // the last fetch failed
	StatusRedirect                  // the URI redirects (Location holds the target)
	StatusDuplicate                 // content equals Owner's
	StatusDeleted                   // removed (http_errors DELETE, dbswitch_delete, admin)
	StatusExcluded                  // excluded by the crawl rules
	StatusNotModified               // the last fetch answered 304
	statusMax
)

var statusNames = [...]string{"new", "fetched", "error", "redirect", "duplicate", "deleted", "excluded", "not-modified"}

func (s Status) String() string {
	if int(s) < len(statusNames) {
		return statusNames[s]
	}
	return fmt.Sprintf("status(%d)", uint8(s))
}

// URIRecord is everything the store keeps about one URI of one collection.
type URIRecord struct {
	URI  string
	Site string // the crawl site (host[:port]); keys the site index

	Status      Status
	HTTPCode    int
	Checksum    [16]byte // MD5 of the content; HasChecksum says whether it is set
	HasChecksum bool
	Owner       string // for StatusDuplicate: the URI owning the checksum
	Location    string // for StatusRedirect: the redirect target

	LastModified string // the Last-Modified header, verbatim
	ETag         string
	ContentType  string
	Size         int64 // body size in bytes
	Referrer     string
	Hops         int // page hops from a start URI

	FirstSeenCycle   int64 // refresh cycle in which the URI was first queued
	LastFetchedCycle int64 // refresh cycle of the last fetch
	FirstSeen        time.Time
	LastFetched      time.Time
	LastChanged      time.Time // the last fetch that found new content

	FetchDuration time.Duration // time to download the last fetch
	ErrorCount    int           // consecutive failed fetches (backoff, DELETE:X)
	RetryCount    int           // retries in the current cycle (RETRY:X)
	ChangeCount   int           // fetches that found changed content
	FetchCount    int           // fetches in total
}

const recordVersion = 1

// presence bits for optional fields.
const (
	hasChecksum = 1 << iota
	hasFirstSeen
	hasLastFetched
	hasLastChanged
)

// maxRecordInts bounds the integers a record decoder accepts.
const maxRecordInt = 1 << 62

// MarshalRecord encodes r (without its URI, which is the key).
func MarshalRecord(r *URIRecord) []byte {
	b := make([]byte, 0, 64+len(r.Site)+len(r.Owner)+len(r.Location)+len(r.LastModified)+len(r.ETag)+len(r.ContentType)+len(r.Referrer))
	return appendRecord(b, r)
}

func appendRecord(b []byte, r *URIRecord) []byte {
	var bits uint64
	if r.HasChecksum {
		bits |= hasChecksum
	}
	if !r.FirstSeen.IsZero() {
		bits |= hasFirstSeen
	}
	if !r.LastFetched.IsZero() {
		bits |= hasLastFetched
	}
	if !r.LastChanged.IsZero() {
		bits |= hasLastChanged
	}
	b = append(b, recordVersion)
	b = binary.AppendUvarint(b, bits)
	b = binary.AppendUvarint(b, uint64(r.Status))
	b = binary.AppendVarint(b, int64(r.HTTPCode))
	if r.HasChecksum {
		b = append(b, r.Checksum[:]...)
	}
	for _, s := range []string{r.Site, r.Owner, r.Location, r.LastModified, r.ETag, r.ContentType, r.Referrer} {
		b = AppendLP(b, s)
	}
	for _, v := range []int64{r.Size, int64(r.Hops), r.FirstSeenCycle, r.LastFetchedCycle, int64(r.FetchDuration),
		int64(r.ErrorCount), int64(r.RetryCount), int64(r.ChangeCount), int64(r.FetchCount)} {
		b = binary.AppendVarint(b, v)
	}
	for _, t := range []time.Time{r.FirstSeen, r.LastFetched, r.LastChanged} {
		if !t.IsZero() {
			b = binary.AppendVarint(b, t.UnixNano())
		}
	}
	return b
}

// recordReader reads fields and remembers the first error.
type recordReader struct {
	b   []byte
	err error
}

func (d *recordReader) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad uvarint", errCorrupt)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recordReader) varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = fmt.Errorf("%w: bad varint", errCorrupt)
		return 0
	}
	if v > maxRecordInt || v < -maxRecordInt {
		d.err = fmt.Errorf("%w: integer %d out of range", errCorrupt, v)
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *recordReader) int() int {
	v := d.varint()
	if int64(int(v)) != v {
		d.err = fmt.Errorf("%w: integer %d overflows int", errCorrupt, v)
		return 0
	}
	return int(v)
}

func (d *recordReader) str() string {
	if d.err != nil {
		return ""
	}
	s, rest, err := ReadLP(d.b)
	if err != nil {
		d.err = err
		return ""
	}
	d.b = rest
	return s
}

func (d *recordReader) time() time.Time {
	v := d.varint()
	if d.err != nil {
		return time.Time{}
	}
	return time.Unix(0, v).UTC()
}

// UnmarshalRecord decodes a value written by MarshalRecord; uri is the key's URI.
func UnmarshalRecord(uri string, b []byte) (*URIRecord, error) {
	if len(b) == 0 {
		return nil, fmt.Errorf("%w: empty record", errCorrupt)
	}
	if b[0] != recordVersion {
		return nil, fmt.Errorf("%w: record version %d", errCorrupt, b[0])
	}
	d := recordReader{b: b[1:]}
	r := &URIRecord{URI: uri}
	bits := d.uvarint()
	if bits&^uint64(hasChecksum|hasFirstSeen|hasLastFetched|hasLastChanged) != 0 {
		return nil, fmt.Errorf("%w: unknown presence bits %#x", errCorrupt, bits)
	}
	st := d.uvarint()
	if d.err == nil && st >= uint64(statusMax) {
		return nil, fmt.Errorf("%w: status %d", errCorrupt, st)
	}
	r.Status = Status(st)
	r.HTTPCode = d.int()
	if bits&hasChecksum != 0 && d.err == nil {
		if len(d.b) < 16 {
			return nil, fmt.Errorf("%w: short checksum", errCorrupt)
		}
		copy(r.Checksum[:], d.b[:16])
		r.HasChecksum = true
		d.b = d.b[16:]
	}
	r.Site = d.str()
	r.Owner = d.str()
	r.Location = d.str()
	r.LastModified = d.str()
	r.ETag = d.str()
	r.ContentType = d.str()
	r.Referrer = d.str()
	r.Size = d.varint()
	r.Hops = d.int()
	r.FirstSeenCycle = d.varint()
	r.LastFetchedCycle = d.varint()
	r.FetchDuration = time.Duration(d.varint())
	r.ErrorCount = d.int()
	r.RetryCount = d.int()
	r.ChangeCount = d.int()
	r.FetchCount = d.int()
	if bits&hasFirstSeen != 0 {
		r.FirstSeen = d.time()
	}
	if bits&hasLastFetched != 0 {
		r.LastFetched = d.time()
	}
	if bits&hasLastChanged != 0 {
		r.LastChanged = d.time()
	}
	if d.err != nil {
		return nil, d.err
	}
	if len(d.b) != 0 {
		return nil, fmt.Errorf("%w: %d trailing bytes", errCorrupt, len(d.b))
	}
	return r, nil
}
