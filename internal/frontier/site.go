package frontier

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/trawl/trawl/internal/store"
)

type siteMode uint8

const (
	modeIdle      siteMode = iota // holds no slot
	modeWaiting                   // in the wait heap for a slot
	modeResolving                 // holds a slot, waits for its IP
	modeGranting                  // holds a slot, waits for CMD_UM_START_CRAWL_IP's answer
	modeActive                    // holds a slot, served
)

// headEntry is a queue entry loaded into memory.
type headEntry struct {
	seq   uint64
	e     Entry
	fresh bool
}

// levelQ is one priority class of one site: the entries on disk are keyed
// by seq; head holds the first few of those not in flight.
type levelQ struct {
	count   int         // entries on disk, in flight included
	head    []headEntry // ascending seq
	from    uint64      // every live entry below from is in head or in flight
	headSeq uint64      // the next prepended entry gets headSeq-1
	tailSeq uint64      // the next appended entry gets tailSeq
}

const seqMid = 1 << 63

type inflight struct {
	class uint8
	seq   uint64
	epoch uint64
}

type site struct {
	name string
	ip   string
	q    []levelQ
	nq   int // the sum of q's counts (queued)
	fly  []inflight

	mode      siteMode
	holds     bool // holds one of the max_sites slots
	granted   bool // holds a crawl-IP grant (send STOP_CRAWL_IP when done)
	leaving   bool // yields its slot once nothing is in flight (max_inter_docs)
	front     bool // rejoin the wait heap at the front (requeue)
	stopped   bool // max_backoff_counter exceeded: no crawling until the next cycle
	turnDocs  int
	docsCycle int
	cycle     int64
	epoch     uint64 // bumped when the site's queue is truncated

	lastStart    time.Time
	backoff      int
	backoffUntil time.Time
	blockedUntil time.Time
	crawlDelay   time.Duration

	// the site's own delay and max_doc (Config.SiteDelay, SiteMaxDoc),
	// looked up once
	own       bool
	ownDelay  time.Duration
	ownMaxDoc int

	// scheduling bookkeeping
	waitVer, readyVer, timerVer uint64
	inReady, inTimer            bool
	wrr                         []int // smooth weighted round robin state per level
	rrLast                      int
	servedResched, servedNew    int
	dirty                       bool
}

func newSite(name string, classes int) *site {
	st := &site{name: name, q: make([]levelQ, classes), wrr: make([]int, classes)}
	for i := range st.q {
		st.q[i].headSeq, st.q[i].tailSeq = seqMid, seqMid
	}
	return st
}

func (st *site) flyCount(class int) int {
	n := 0
	for _, f := range st.fly {
		if int(f.class) == class && f.epoch == st.epoch {
			n++
		}
	}
	return n
}

func (st *site) isFlying(class int, seq uint64) bool {
	for _, f := range st.fly {
		if int(f.class) == class && f.seq == seq && f.epoch == st.epoch {
			return true
		}
	}
	return false
}

// unloaded is the number of entries of class on disk neither in head nor in flight.
func (st *site) unloaded(class int) int {
	return st.q[class].count - len(st.q[class].head) - st.flyCount(class)
}

func (st *site) available(class int) int {
	return st.q[class].count - st.flyCount(class)
}

// queued is the number of entries of every class, in flight included:
// nq, kept as the classes' counts change (addCount, setCount), so that
// the statistics of every loop iteration do not add up each site's
// classes.
func (st *site) queued() int {
	if checkQueued {
		n := 0
		for i := range st.q {
			n += st.q[i].count
		}
		if n != st.nq {
			panic(fmt.Sprintf("frontier: site %s: %d entries queued, counted %d", st.name, n, st.nq))
		}
	}
	return st.nq
}

// checkQueued makes queued check its total against the classes (tests).
var checkQueued = false

// addCount changes the count of class by d.
func (st *site) addCount(class, d int) {
	st.q[class].count += d
	st.nq += d
}

// setCount sets the count of class to n.
func (st *site) setCount(class, n int) {
	st.nq += n - st.q[class].count
	st.q[class].count = n
}

func (st *site) hasWork() bool {
	for i := range st.q {
		if st.available(i) > 0 {
			return true
		}
	}
	return false
}

// --- keys ---

// queuePrefix is lp(collection) lp(site).
func (f *Frontier) queuePrefix(site string) []byte {
	return store.AppendLP(append([]byte(nil), f.coll...), site)
}

func (f *Frontier) queueKey(site string, class uint8, seq uint64) []byte {
	k := f.queuePrefix(site)
	k = append(k, class)
	return binary.BigEndian.AppendUint64(k, seq)
}

func (f *Frontier) seenKey(uri string) []byte {
	return append(append(make([]byte, 0, len(f.coll)+len(uri)), f.coll...), uri...)
}

func (f *Frontier) knownKey(site, uri string) []byte {
	return append(f.queuePrefix(site), uri...)
}

func (f *Frontier) metaKey(kind byte, rest string) []byte {
	k := append(append([]byte(nil), f.coll...), kind)
	return append(k, rest...)
}

func (f *Frontier) deferredPrefix(site string) []byte {
	k := append(append([]byte(nil), f.coll...), 'd')
	return store.AppendLP(k, site)
}

// --- site metadata ---

const metaVersion = 1

func (st *site) low(class int) uint64 {
	q := &st.q[class]
	lo := q.from
	if len(q.head) > 0 && q.head[0].seq < lo {
		lo = q.head[0].seq
	}
	for _, fl := range st.fly {
		if int(fl.class) == class && fl.epoch == st.epoch && fl.seq < lo {
			lo = fl.seq
		}
	}
	return lo
}

func encodeSiteMeta(st *site) []byte {
	b := []byte{metaVersion}
	var flags uint64
	if st.stopped {
		flags |= 1
	}
	if st.front {
		flags |= 2
	}
	b = binary.AppendUvarint(b, flags)
	b = binary.AppendUvarint(b, uint64(st.docsCycle))
	b = binary.AppendVarint(b, st.cycle)
	b = binary.AppendUvarint(b, uint64(st.backoff))
	b = binary.AppendVarint(b, unixNano(st.lastStart))
	b = binary.AppendVarint(b, unixNano(st.backoffUntil))
	b = binary.AppendVarint(b, unixNano(st.blockedUntil))
	b = binary.AppendVarint(b, int64(st.crawlDelay))
	b = binary.AppendUvarint(b, uint64(len(st.q)))
	for i := range st.q {
		q := &st.q[i]
		b = binary.AppendUvarint(b, uint64(q.count))
		b = binary.AppendUvarint(b, q.headSeq)
		b = binary.AppendUvarint(b, q.tailSeq)
		b = binary.AppendUvarint(b, st.low(i))
	}
	return b
}

// decodeSiteMeta restores a site; classes is the configuration's class
// count (a store written with more levels keeps its extra classes).
func decodeSiteMeta(name string, b []byte, classes int) (*site, error) {
	if len(b) < 1 || b[0] != metaVersion {
		return nil, fmt.Errorf("%w: site meta header", errCorrupt)
	}
	r := reader{b: b[1:]}
	flags := r.uvarint(3)
	docs := r.uvarint(1 << 40)
	cycle := r.varint()
	backoff := r.uvarint(1 << 31)
	last, bu, blk, cd := r.varint(), r.varint(), r.varint(), r.varint()
	n := int(r.uvarint(256))
	if r.err != nil {
		return nil, r.err
	}
	st := newSite(name, max(n, classes))
	st.stopped, st.front = flags&1 != 0, flags&2 != 0
	st.docsCycle, st.cycle, st.backoff = int(docs), cycle, int(backoff)
	st.lastStart, st.backoffUntil, st.blockedUntil = fromUnixNano(last), fromUnixNano(bu), fromUnixNano(blk)
	st.crawlDelay = time.Duration(cd)
	for i := 0; i < n; i++ {
		q := &st.q[i]
		st.setCount(i, int(r.uvarint(1<<40)))
		q.headSeq = r.uvarint(1<<64 - 1)
		q.tailSeq = r.uvarint(1<<64 - 1)
		q.from = r.uvarint(1<<64 - 1)
	}
	if err := r.end(); err != nil {
		return nil, err
	}
	return st, nil
}

// refill loads up to n entries of class from disk into head (one iterator
// per refill: a site being served loads RefillSize at a time).
func (f *Frontier) refill(st *site, class, n int) error {
	q := &st.q[class]
	if len(q.head) > 0 || st.unloaded(class) <= 0 {
		return nil
	}
	prefix := append(f.queuePrefix(st.name), byte(class))
	it, err := f.st.NewRawIter(store.SpaceQueue, prefix)
	if err != nil {
		return err
	}
	defer it.Close()
	start := binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), q.from)
	if want := st.unloaded(class); want < n {
		n = want
	}
	if cap(q.head) < n {
		q.head = make([]headEntry, 0, n)
	}
	for ok := it.SeekGE(store.SpaceQueue, start); ok && len(q.head) < n; ok = it.Next() {
		k := it.Key()
		if len(k) != len(prefix)+8 {
			return fmt.Errorf("%w: queue key of %d bytes", errCorrupt, len(k))
		}
		seq := binary.BigEndian.Uint64(k[len(prefix):])
		q.from = seq + 1
		if st.isFlying(class, seq) {
			continue
		}
		e, _, fresh, err := decodeQueued(it.Value())
		if err != nil {
			return err
		}
		q.head = append(q.head, headEntry{seq: seq, e: e, fresh: fresh})
	}
	if len(q.head) == 0 && st.unloaded(class) > 0 {
		// The count says there is more but the disk has none: repair the count.
		f.log.Error("frontier: queue count out of step with disk; repaired",
			"site", st.name, "class", class, "count", q.count)
		st.setCount(class, st.flyCount(class))
		st.dirty = true
	}
	return nil
}
