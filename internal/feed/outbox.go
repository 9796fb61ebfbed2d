package feed

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"

	"github.com/cockroachdb/pebble"
	"github.com/trawl/trawl/internal/keyfilter"
)

// OutboxOptions configure an Outbox.
type OutboxOptions struct {
	// Prefix is the key space of the outbox in the Pebble database
	// (default "feed/"). Two outboxes in one database need two prefixes.
	Prefix string
	// NoSync makes Put return before its write reaches the disk. A crash
	// may then lose the last operations put; acknowledgements are never
	// synced (a lost acknowledgement only means a resend).
	NoSync bool
	// SyncOnClaim makes Claim first wait until every write committed to the
	// database so far is fsynced, so that no operation leaves the outbox
	// that a crash could still take back (with its sequence number, which
	// the destination uses as the document's version). Use it when
	// operations are put without sync, for instance with PutWith in the
	// batches of a crawl store that commits without sync.
	SyncOnClaim bool
	// Logger receives Pebble's informational messages at debug level
	// (OpenOutbox only; default: discarded).
	Logger *slog.Logger
}

// pebbleLogger sends Pebble's log to slog; fatal errors keep Pebble's own
// behaviour.
type pebbleLogger struct{ log *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...interface{}) {
	l.log.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}

func (l pebbleLogger) Fatalf(format string, args ...interface{}) {
	pebble.DefaultLogger.Fatalf(format, args...)
}

// Outbox keeps content operations durably, per destination, until their
// destination has acknowledged them. Operations get a monotonic sequence
// number; a destination's operations come out high priority first, then in
// sequence order. A later operation on the same URI (same destination and
// collection) supersedes an earlier one that has not been handed out.
//
// Handing out (Claim) is tracked in memory only: after a restart every
// operation still in the outbox is pending again and is sent again.
//
// An Outbox is safe for concurrent use.
type Outbox struct {
	db     *pebble.DB
	ownDB  bool
	prefix []byte
	wopt   *pebble.WriteOptions
	// syncClaim is OutboxOptions.SyncOnClaim; synced is the highest
	// sequence number known to be durable.
	syncClaim bool
	synced    uint64

	mu      sync.Mutex
	closed  bool
	seq     uint64
	claimed map[uint64]claim
	pending map[string]int // destination -> operations not yet acknowledged
	// nclaimed counts the claimed operations per destination; cursor is,
	// per destination, a queue key below which every operation is claimed
	// (or gone), so that Claim seeks past the operations in flight and the
	// deletion tombstones of those acknowledged instead of scanning them.
	nclaimed map[string]int
	cursor   map[string][]byte
	changed  chan struct{} // closed and replaced on every Put
	// ukeys is a Bloom filter (internal/keyfilter) of the coalescing keys
	// (uKey, and its 'f' form) the outbox may hold: Put reads the key of
	// an operation's URI only when the filter has it. A URI's key lives
	// from its operation's Put to its acknowledgement, so a crawl that
	// feeds each page once finds it absent almost every time. Loaded with
	// the outbox, told of every key Put writes (under mu, before the
	// commit), never of deletions; loaded again when full.
	ukeys *keyfilter.Filter
	// ukeysMin is the least size of ukeys (keyfilter.MinKeys; tests).
	ukeysMin int
}

// claim is an operation handed out and not yet acknowledged or released.
type claim struct {
	qkey, ukey []byte
}

// ErrOutboxClosed is returned after Close.
var ErrOutboxClosed = errors.New("feed: outbox closed")

// OpenOutbox opens (or creates) an outbox in its own Pebble database in dir.
func OpenOutbox(dir string, o OutboxOptions) (*Outbox, error) {
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{log}})
	if err != nil {
		return nil, fmt.Errorf("feed: open outbox %s: %w", dir, err)
	}
	ob, err := NewOutbox(db, o)
	if err != nil {
		_ = db.Close()
		return nil, err
	}
	ob.ownDB = true
	return ob, nil
}

// NewOutbox keeps an outbox in a key space of db (for instance the crawl
// store's database). Close does not close db.
func NewOutbox(db *pebble.DB, o OutboxOptions) (*Outbox, error) {
	if o.Prefix == "" {
		o.Prefix = "feed/"
	}
	ob := &Outbox{
		db:       db,
		prefix:   []byte(o.Prefix),
		wopt:     pebble.Sync,
		claimed:  map[uint64]claim{},
		pending:  map[string]int{},
		nclaimed: map[string]int{},
		cursor:   map[string][]byte{},
		changed:  make(chan struct{}),
	}
	if o.NoSync {
		ob.wopt = pebble.NoSync
	}
	ob.syncClaim = o.SyncOnClaim
	v, closer, err := db.Get(ob.seqKey())
	switch {
	case err == nil:
		if len(v) == 8 {
			ob.seq = binary.BigEndian.Uint64(v)
		}
		closer.Close()
	case errors.Is(err, pebble.ErrNotFound):
	default:
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	// Count what is pending per destination.
	qp := ob.key('q')
	it, err := db.NewIter(&pebble.IterOptions{LowerBound: qp, UpperBound: prefixEnd(qp)})
	if err != nil {
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	for it.First(); it.Valid(); it.Next() {
		dest, _, seq, ok := ob.parseQKey(it.Key())
		if !ok {
			continue
		}
		ob.pending[dest]++
		ob.seq = max(ob.seq, seq)
	}
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	ob.ukeysMin = keyfilter.MinKeys
	if err := ob.loadUKeys(); err != nil {
		return nil, err
	}
	return ob, nil
}

// loadUKeys loads ukeys from the database's coalescing keys.
func (ob *Outbox) loadUKeys() error {
	f, err := keyfilter.Load(ob.ukeysMin, func(visit func(byte, []byte)) error {
		for _, kind := range []byte{'u', 'f'} {
			p := ob.key(kind)
			it, err := ob.db.NewIter(&pebble.IterOptions{LowerBound: p, UpperBound: prefixEnd(p)})
			if err != nil {
				return fmt.Errorf("feed: outbox: %w", err)
			}
			for it.First(); it.Valid(); it.Next() {
				visit(0, it.Key())
			}
			if err := it.Close(); err != nil {
				return fmt.Errorf("feed: outbox: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	ob.ukeys = f
	return nil
}

// Key layout under the prefix P:
//
//	P "s"                                         last sequence number (8 bytes, big endian)
//	P "q" dest 0x00 rank seq(8, big endian)      an operation; rank 0 = high, 1 = normal
//	P "u" dest 0x00 collection 0x00 uri          rank + seq of the URI's latest operation

func (ob *Outbox) key(kind byte) []byte {
	k := make([]byte, 0, len(ob.prefix)+1)
	k = append(k, ob.prefix...)
	return append(k, kind)
}

func (ob *Outbox) seqKey() []byte { return ob.key('s') }

func rankOf(p Priority) byte {
	if p == High {
		return 0
	}
	return 1
}

func (ob *Outbox) qKey(dest string, rank byte, seq uint64) []byte {
	k := ob.key('q')
	k = append(k, dest...)
	k = append(k, 0, rank)
	return binary.BigEndian.AppendUint64(k, seq)
}

func (ob *Outbox) qPrefix(dest string) []byte {
	k := ob.key('q')
	k = append(k, dest...)
	return append(k, 0)
}

func (ob *Outbox) uKey(dest, collection, uri string) []byte {
	k := ob.key('u')
	k = append(k, dest...)
	k = append(k, 0)
	k = append(k, collection...)
	k = append(k, 0)
	return append(k, uri...)
}

// coalesceKey is the key under which op supersedes an earlier operation
// still queued: uKey for content operations, the same layout under 'f' for
// update-fields operations, so that the two kinds never drop each other.
func (ob *Outbox) coalesceKey(op *Operation) []byte {
	k := ob.uKey(op.Destination, op.Collection, op.URI)
	if op.Kind == UpdateFields {
		k[len(ob.prefix)] = 'f'
	}
	return k
}

func (ob *Outbox) parseQKey(k []byte) (dest string, rank byte, seq uint64, ok bool) {
	k = k[len(ob.prefix)+1:]
	i := bytes.IndexByte(k, 0)
	if i < 0 || len(k) != i+1+1+8 {
		return "", 0, 0, false
	}
	return string(k[:i]), k[i+1], binary.BigEndian.Uint64(k[i+2:]), true
}

// prefixEnd returns the smallest key greater than every key with prefix p.
func prefixEnd(p []byte) []byte {
	end := append([]byte(nil), p...)
	for i := len(end) - 1; i >= 0; i-- {
		end[i]++
		if end[i] != 0 {
			return end[:i+1]
		}
	}
	return nil
}

// Put stores ops durably (unless NoSync) and returns their sequence
// numbers. An op's Destination must be set and free of NUL bytes; its
// Seq is overwritten. An earlier operation on the same URI that has not
// been claimed is dropped.
func (ob *Outbox) Put(ops ...Operation) ([]uint64, error) {
	b := ob.db.NewBatch()
	defer b.Close()
	return ob.PutWith(b, func() error { return b.Commit(ob.wopt) }, ops...)
}

// PutWith adds ops to b, a batch of the outbox's database that the caller
// fills with writes of its own, and calls commit, which must commit b: the
// operations are in the outbox exactly when the caller's writes are (a
// crawl step and the operations it produces are one atomic write). The
// outbox is locked while commit runs, so that no Claim, Ack or Release
// comes between the staging and the commit. If commit fails, nothing has
// changed. With no ops, PutWith only calls commit.
func (ob *Outbox) PutWith(b *pebble.Batch, commit func() error, ops ...Operation) ([]uint64, error) {
	if len(ops) == 0 {
		return nil, commit()
	}
	for i := range ops {
		op := &ops[i]
		if op.Destination == "" || strings.IndexByte(op.Destination, 0) >= 0 || strings.IndexByte(op.Collection, 0) >= 0 {
			return nil, fmt.Errorf("feed: operation for %q: bad destination %q or collection %q", op.URI, op.Destination, op.Collection)
		}
		if op.Kind < Add || op.Kind > UpdateFields {
			return nil, fmt.Errorf("feed: operation for %q: bad kind %d", op.URI, op.Kind)
		}
		if op.URI == "" {
			return nil, errors.New("feed: operation without URI")
		}
	}
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return nil, ErrOutboxClosed
	}
	if ob.ukeys.Full() {
		// Every key written so far is committed (Put holds mu to its commit).
		if err := ob.loadUKeys(); err != nil {
			return nil, err
		}
	}
	seqs := make([]uint64, len(ops))
	seq := ob.seq
	delta := map[string]int{}
	lowered := map[string][]byte{} // per destination, the lowest queue key written
	// Within this call, a later op on a URI also supersedes an earlier one.
	written := map[string][]byte{}
	for i := range ops {
		op := ops[i]
		seq++
		op.Seq = seq
		seqs[i] = seq
		uk := ob.coalesceKey(&op)
		prev, hasPrev := written[string(uk)]
		if !hasPrev && ob.ukeys.HasBytes(0, uk) {
			v, closer, err := ob.db.Get(uk)
			switch {
			case err == nil:
				prev, hasPrev = append([]byte(nil), v...), true
				closer.Close()
			case !errors.Is(err, pebble.ErrNotFound):
				return nil, fmt.Errorf("feed: outbox: %w", err)
			}
		}
		if hasPrev && len(prev) == 9 {
			pseq := binary.BigEndian.Uint64(prev[1:])
			if _, inFlight := ob.claimed[pseq]; !inFlight {
				if err := b.Delete(ob.qKey(op.Destination, prev[0], pseq), nil); err != nil {
					return nil, fmt.Errorf("feed: outbox: %w", err)
				}
				delta[op.Destination]--
			}
		}
		val, err := op.MarshalBinary()
		if err != nil {
			return nil, err
		}
		rank := rankOf(op.Priority)
		qk := ob.qKey(op.Destination, rank, seq)
		if err := b.Set(qk, val, nil); err != nil {
			return nil, fmt.Errorf("feed: outbox: %w", err)
		}
		if c, ok := lowered[op.Destination]; !ok || bytes.Compare(qk, c) < 0 {
			lowered[op.Destination] = qk
		}
		uv := binary.BigEndian.AppendUint64([]byte{rank}, seq)
		ob.ukeys.AddBytes(0, uk)
		if err := b.Set(uk, uv, nil); err != nil {
			return nil, fmt.Errorf("feed: outbox: %w", err)
		}
		written[string(uk)] = uv
		delta[op.Destination]++
	}
	if err := b.Set(ob.seqKey(), binary.BigEndian.AppendUint64(nil, seq), nil); err != nil {
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	if err := commit(); err != nil {
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	ob.seq = seq
	for d, n := range delta {
		ob.pending[d] += n
	}
	for d, k := range lowered {
		ob.lowerCursor(d, k)
	}
	close(ob.changed)
	ob.changed = make(chan struct{})
	return seqs, nil
}

// Changed returns a channel that is closed at the next Put.
func (ob *Outbox) Changed() <-chan struct{} {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.changed
}

// Claim hands out up to maxOps operations of dest, of at most maxBytes in
// all (at least one operation is returned if any is pending), high priority
// first. A claimed operation is not handed out again until Release.
func (ob *Outbox) Claim(dest string, maxOps, maxBytes int) ([]Operation, error) {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return nil, ErrOutboxClosed
	}
	if ob.syncClaim && ob.seq > ob.synced {
		// Everything committed before LogData returns is durable: ops up
		// to target. Puts may go on meanwhile; their ops wait for the
		// next Claim.
		target := ob.seq
		ob.mu.Unlock()
		err := ob.db.LogData(nil, pebble.Sync)
		ob.mu.Lock()
		if err != nil {
			return nil, fmt.Errorf("feed: outbox: sync: %w", err)
		}
		if ob.closed {
			return nil, ErrOutboxClosed
		}
		ob.synced = max(ob.synced, target)
	}
	qp := ob.qPrefix(dest)
	it, err := ob.db.NewIter(&pebble.IterOptions{LowerBound: qp, UpperBound: prefixEnd(qp)})
	if err != nil {
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	defer it.Close()
	var ops []Operation
	size := 0
	// next is the key just past the last one examined; left the first one
	// examined and not claimed: the next Claim starts at the lower.
	var next, left []byte
	valid := it.First()
	if c := ob.cursor[dest]; c != nil {
		valid = it.SeekGE(c)
	}
	for ; valid && len(ops) < maxOps; valid = it.Next() {
		_, _, seq, ok := ob.parseQKey(it.Key())
		next = append(append(next[:0], it.Key()...), 0)
		if !ok {
			continue
		}
		if _, inFlight := ob.claimed[seq]; inFlight {
			continue
		}
		if ob.syncClaim && seq > ob.synced {
			if left == nil {
				left = append([]byte(nil), it.Key()...)
			}
			continue // not known to be durable yet
		}
		var op Operation
		if err := op.UnmarshalBinary(it.Value()); err != nil {
			return nil, fmt.Errorf("feed: outbox key %x: %w", it.Key(), err)
		}
		if len(ops) > 0 && size+op.Size() > maxBytes {
			if left == nil {
				left = append([]byte(nil), it.Key()...)
			}
			break
		}
		size += op.Size()
		ops = append(ops, op)
		ob.claimed[seq] = claim{
			qkey: append([]byte(nil), it.Key()...),
			ukey: ob.coalesceKey(&op),
		}
	}
	if err := it.Error(); err != nil {
		for _, op := range ops {
			delete(ob.claimed, op.Seq)
		}
		return nil, fmt.Errorf("feed: outbox: %w", err)
	}
	ob.nclaimed[dest] += len(ops)
	switch {
	case left != nil:
		ob.cursor[dest] = left
	case next != nil:
		ob.cursor[dest] = next
	}
	return ops, nil
}

// lowerCursor makes sure Claim sees the unclaimed operation at key k of
// dest.
func (ob *Outbox) lowerCursor(dest string, k []byte) {
	if c, ok := ob.cursor[dest]; ok && bytes.Compare(k, c) < 0 {
		ob.cursor[dest] = append([]byte(nil), k...)
	}
}

// Unclaimed returns the number of operations of dest that wait to be
// claimed.
func (ob *Outbox) Unclaimed(dest string) int {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.pending[dest] - ob.nclaimed[dest]
}

// Ack deletes claimed operations: their destination has them.
func (ob *Outbox) Ack(seqs ...uint64) error { return ob.AckWith(nil, seqs...) }

// AckWith is Ack with extra's writes in the same batch (nil: none), so
// that they are durable exactly when the acknowledgement is; with extra
// the batch is committed even if seqs is empty. Calls are serialized.
func (ob *Outbox) AckWith(extra func(*pebble.Batch) error, seqs ...uint64) error {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return ErrOutboxClosed
	}
	b := ob.db.NewBatch()
	defer b.Close()
	if extra != nil {
		if err := extra(b); err != nil {
			return fmt.Errorf("feed: outbox: %w", err)
		}
	}
	var done []uint64
	for _, seq := range seqs {
		c, ok := ob.claimed[seq]
		if !ok {
			continue
		}
		if err := ob.deleteClaim(b, seq, c); err != nil {
			return err
		}
		done = append(done, seq)
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("feed: outbox: %w", err)
	}
	for _, seq := range done {
		dest, _, _, _ := ob.parseQKey(ob.claimed[seq].qkey)
		ob.pending[dest]--
		ob.nclaimed[dest]--
		delete(ob.claimed, seq)
	}
	return nil
}

// deleteClaim adds to b the deletion of a claimed operation and, if it is
// still its URI's latest, of the URI's entry.
func (ob *Outbox) deleteClaim(b *pebble.Batch, seq uint64, c claim) error {
	if err := b.Delete(c.qkey, nil); err != nil {
		return fmt.Errorf("feed: outbox: %w", err)
	}
	v, closer, err := ob.db.Get(c.ukey)
	switch {
	case err == nil:
		latest := len(v) == 9 && binary.BigEndian.Uint64(v[1:]) == seq
		closer.Close()
		if latest {
			if err := b.Delete(c.ukey, nil); err != nil {
				return fmt.Errorf("feed: outbox: %w", err)
			}
		}
	case !errors.Is(err, pebble.ErrNotFound):
		return fmt.Errorf("feed: outbox: %w", err)
	}
	return nil
}

// Release returns claimed operations to the pending ones, to be claimed
// again; an operation superseded meanwhile by a later one on its URI is
// dropped instead.
func (ob *Outbox) Release(seqs ...uint64) error {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return ErrOutboxClosed
	}
	b := ob.db.NewBatch()
	defer b.Close()
	var dropped []uint64
	for _, seq := range seqs {
		c, ok := ob.claimed[seq]
		if !ok {
			continue
		}
		v, closer, err := ob.db.Get(c.ukey)
		superseded := false
		switch {
		case err == nil:
			superseded = len(v) == 9 && binary.BigEndian.Uint64(v[1:]) != seq
			closer.Close()
		case !errors.Is(err, pebble.ErrNotFound):
			return fmt.Errorf("feed: outbox: %w", err)
		}
		if superseded {
			if err := b.Delete(c.qkey, nil); err != nil {
				return fmt.Errorf("feed: outbox: %w", err)
			}
			dropped = append(dropped, seq)
		}
	}
	if err := b.Commit(pebble.NoSync); err != nil {
		return fmt.Errorf("feed: outbox: %w", err)
	}
	gone := make(map[uint64]bool, len(dropped))
	for _, seq := range dropped {
		dest, _, _, _ := ob.parseQKey(ob.claimed[seq].qkey)
		ob.pending[dest]--
		gone[seq] = true
	}
	for _, seq := range seqs {
		c, ok := ob.claimed[seq]
		if !ok {
			continue
		}
		dest, _, _, _ := ob.parseQKey(c.qkey)
		ob.nclaimed[dest]--
		if !gone[seq] {
			ob.lowerCursor(dest, c.qkey)
		}
		delete(ob.claimed, seq)
	}
	return nil
}

// Pending returns the number of operations of dest not yet acknowledged
// (claimed ones included).
func (ob *Outbox) Pending(dest string) int {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return ob.pending[dest]
}

// Claimed returns the number of operations handed out and not yet
// acknowledged or released.
func (ob *Outbox) Claimed() int {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	return len(ob.claimed)
}

// Destinations returns the destinations with pending operations.
func (ob *Outbox) Destinations() []string {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	var out []string
	for d, n := range ob.pending {
		if n > 0 {
			out = append(out, d)
		}
	}
	return out
}

// Close closes the outbox (and its database if OpenOutbox opened it).
// Claimed operations stay in the outbox.
func (ob *Outbox) Close() error {
	ob.mu.Lock()
	defer ob.mu.Unlock()
	if ob.closed {
		return nil
	}
	ob.closed = true
	if ob.ownDB {
		if err := ob.db.Close(); err != nil {
			return fmt.Errorf("feed: outbox: %w", err)
		}
	}
	return nil
}
