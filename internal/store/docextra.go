package store

import (
	"fmt"
	"sync"
)

// This file holds what the storage section of MS-FSCCFG (2.2.4.6) and its
// limits section (2.2.4.18) need from the store beyond bodies: the
// response header kept with a document (store_http_header), and the number
// of stored documents of a collection (limits max_doc).
//
//	'x' lp(collection) uri -> response header (HTTP/1.x header block)
//
// A header is deleted with its document (DeleteDocument, DeleteURI).

// MaxHeaderSize caps a stored response header.
const MaxHeaderSize = 64 << 10

// PutHeader stores the response header of uri's document.
func (b *Batch) PutHeader(collection, uri string, header []byte) error {
	if len(header) > MaxHeaderSize {
		return fmt.Errorf("store: header of %d bytes exceeds the %d byte limit", len(header), MaxHeaderSize)
	}
	return b.b.Set(key(SpaceHeader, uri, collection), header, nil)
}

// DeleteHeader removes the stored response header of uri.
func (b *Batch) DeleteHeader(collection, uri string) error {
	return b.b.Delete(key(SpaceHeader, uri, collection), nil)
}

// Header returns the stored response header of uri's document.
func (s *Store) Header(collection, uri string) ([]byte, bool, error) {
	v, ok, err := s.get(key(SpaceHeader, uri, collection))
	if err != nil || !ok {
		return nil, false, err
	}
	if len(v) > MaxHeaderSize {
		return nil, false, fmt.Errorf("%w: header of %s: %d bytes", errCorrupt, uri, len(v))
	}
	return v, true, nil
}

// docCounts are counts of keys per collection (the stored documents of
// DocumentCount, the owned checksums of ChecksumCount), of the collections
// whose count was asked for: the first call counts them, then every batch
// keeps the count up to date as it commits.
type docCounts struct {
	mu sync.Mutex
	n  map[string]int64
}

// batchDocs is what a batch changes in one docCounts: whether each
// key it touched exists after its operations so far, and the change per
// collection.
type batchDocs struct {
	exists map[string]bool // collection "\x00" uri (or checksum) -> exists
	delta  map[string]int64
	reset  bool // a range delete of documents: forget every count
}

func (d *docCounts) tracked(collection string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.n[collection]
	return ok
}

func (d *docCounts) apply(bd *batchDocs) {
	if len(bd.delta) == 0 && !bd.reset {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if bd.reset {
		d.n = nil
		return
	}
	for c, v := range bd.delta {
		if n, ok := d.n[c]; ok {
			d.n[c] = max(0, n+v)
		}
	}
}

// count returns the count of collection, counting it with scan the first
// time; from then on batches keep it (apply).
func (d *docCounts) count(collection string, scan func() (int, error)) (int64, error) {
	d.mu.Lock()
	n, ok := d.n[collection]
	d.mu.Unlock()
	if ok {
		return n, nil
	}
	c, err := scan()
	if err != nil {
		return 0, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n == nil {
		d.n = map[string]int64{}
	}
	if n, ok := d.n[collection]; ok {
		return n, nil
	}
	d.n[collection] = int64(c)
	return int64(c), nil
}

// track records in bd that the batch makes member (the key of space sp in
// collection) exist or not, for the counts of d; it reads the store only
// for a collection whose count d keeps, and not when the caller knows the
// key is absent from the store (absent: the checksum filter said so).
func (b *Batch) track(d *docCounts, bd *batchDocs, sp Space, collection, member string, exists, absent bool) error {
	if !d.tracked(collection) {
		return nil
	}
	k := collection + "\x00" + member
	before, seen := bd.exists[k]
	if !seen && !absent {
		_, found, err := b.s.get(key(sp, member, collection))
		if err != nil {
			return err
		}
		before = found
	}
	if bd.exists == nil {
		bd.exists, bd.delta = map[string]bool{}, map[string]int64{}
	}
	bd.exists[k] = exists
	switch {
	case exists && !before:
		bd.delta[collection]++
	case !exists && before:
		bd.delta[collection]--
	}
	return nil
}

// trackDoc records that the batch makes uri's document exist or not; it
// reads the store only for a collection whose count is kept.
func (b *Batch) trackDoc(collection, uri string, exists bool) error {
	return b.track(b.s.docs, &b.docs, SpaceDoc, collection, uri, exists, false)
}

// DocumentCount returns the number of stored documents of collection. The
// first call counts them (a scan); from then on the store keeps the count
// as batches commit, at the cost of one read per document written or
// deleted in that collection. Batches begun before the first call and
// committed after it are not counted; call it before writing.
func (s *Store) DocumentCount(collection string) (int64, error) {
	return s.docs.count(collection, func() (int, error) { return s.CountDocuments(collection) })
}

// DocumentCodec returns the codec uri's document is stored with.
func (s *Store) DocumentCodec(collection, uri string) (Codec, bool, error) {
	v, ok, err := s.get(key(SpaceDoc, uri, collection))
	if err != nil || !ok {
		return 0, false, err
	}
	if len(v) == 0 || Codec(v[0]) > CodecFlate {
		return 0, false, fmt.Errorf("%w: document of %s: bad codec", errCorrupt, uri)
	}
	return Codec(v[0]), true, nil
}

// Dir is the directory the store was opened in (on the options' file
// system).
func (s *Store) Dir() string { return s.dir }

// trackOwner records that the batch makes cs owned or not in collection
// (the count of ChecksumCount); it reads the store only for a collection
// whose count is kept, and only when the checksum filter does not already
// say that cs has no owner (a new checksum, almost every document's).
func (b *Batch) trackOwner(collection string, cs [16]byte, owned bool) error {
	absent := !b.s.csums.mayHave(collection, cs)
	return b.track(b.s.owners, &b.owners, SpaceChecksum, collection, string(cs[:]), owned, absent)
}

// ChecksumCount returns the number of unique document checksums owned in
// collection (MS-FSCADM PPChecksums). Like DocumentCount, the first call
// counts them and later batches keep the count.
func (s *Store) ChecksumCount(collection string) (int64, error) {
	return s.owners.count(collection, func() (int, error) { return s.count(key(SpaceChecksum, "", collection)) })
}
