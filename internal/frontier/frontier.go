package frontier

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/trawl/trawl/internal/store"
)

// ActionKind names what the driver must do for the frontier.
type ActionKind int

// Actions.
const (
	// ActResolve: resolve Site's IP, then call SetIP.
	ActResolve ActionKind = iota
	// ActRequestGrant: send CMD_UM_START_CRAWL_IP (IP, Site) to the
	// multinode scheduler, then call Grant with its answer.
	ActRequestGrant
	// ActStopCrawlIP: send CMD_UM_STOP_CRAWL_IP (IP, Site).
	ActStopCrawlIP
)

// Action is a request from the frontier to its driver.
type Action struct {
	Kind ActionKind
	Site string
	IP   string
}

// Stats is a snapshot of the frontier's state.
type Stats struct {
	Cycle        int64
	Queued       int // entries on disk, in flight included
	InFlight     int
	Sites        int // sites in memory (with work, in flight, blocked or holding a slot)
	ActiveSites  int // sites holding a max_sites slot
	WaitingSites int
	BlockedSites int
	Served       int64 // fetches handed out
	Completed    int64 // Done calls
	Added        int64 // entries queued
	Duplicates   int64 // entries the seen-set filtered
	TooDeep      int64 // entries beyond crawlmode DEPTH
	Recursive    int64 // entries over max_uri_recursion
	Invalid      int64 // entries without URI or site, or with oversized Extra
	Dropped      int64 // queued entries dropped (site stopped after max_backoff_counter, DropSite, DropURIs)
	Shorter      int64 // entries that lowered the depth of a URI already seen this cycle (crawlmode DEPTH)
	CacheHits    int64 // duplicates found by the seen-set cache, without a disk read
}

type ipState struct {
	lastStart time.Time
	sites     int // sites holding a grant on this IP
}

type waitItem struct {
	st                *site
	front, urgent, pr int
	seq, ver          uint64
}

type timeItem struct {
	st  *site
	at  time.Time
	seq uint64
	ver uint64
}

// Frontier is the crawl frontier of one collection: per-site queues on disk
// with their heads in memory, the seen-set, and the politeness rules. It is
// a state machine: it reads no clock and starts no goroutine, and it is not
// safe for concurrent use.
type Frontier struct {
	cfg  Config
	st   Store
	log  *slog.Logger
	coll []byte // lp(collection)

	sites   map[string]*site
	ips     map[string]*ipState
	wait    pq[waitItem]
	ready   pq[timeItem]
	timers  pq[timeItem]
	slots   int
	seq     uint64
	classes int

	cycle      int64
	cycleStart time.Time
	bloom      *bloom
	seenc      *seenCache // in front of the exact seen-set (wqfilter)
	bloomAuto  bool       // the filter is the automatic one in front of the exact seen-set
	bloomN     int        // URIs added to the filter
	bloomCap   int        // URIs the automatic filter is sized for
	actions    []Action
	stats      Stats
	txOpen     bool
	err        error // sticky: a failed commit leaves memory ahead of disk
	// curDelay is the delay of the variable_delay slot of the last Next
	// (Config.Delay outside every slot).
	curDelay time.Duration
	inSlot   bool // curDelay is a slot's (it overrides the sites' own delays)
	// minor is the adaptive minor refresh cycle last rescheduled in the
	// current cycle (adaptive.go).
	minor int
	// gen grows at every subcollection round; subs are the rounds of
	// Config.Subs (subrefresh.go).
	gen  uint64
	subs []subState
}

// Store is the part of the crawl store (*store.Store) the frontier uses:
// its raw key spaces, and batches for its writes. A node scheduler gives
// it its staged view (store.Store.Staged), on which committing a batch
// stages it for the driver.
type Store interface {
	GetRaw(sp store.Space, k []byte) ([]byte, bool, error)
	IterRaw(sp store.Space, prefix []byte, fn func(k, v []byte) error) error
	NewRawIter(sp store.Space, prefix []byte) (*store.RawIter, error)
	NewBatch() *store.Batch
}

// ErrBroken is wrapped by every call after a commit failed; reopen the
// frontier from the store.
var ErrBroken = errors.New("frontier: a commit failed; reopen from the store")

// Open loads the frontier of cfg.Collection from s. The store holds
// everything; the frontier keeps only queue heads and per-site state in
// memory. log may be nil.
func Open(s Store, cfg Config, log *slog.Logger, now time.Time) (*Frontier, error) {
	if err := cfg.setDefaults(); err != nil {
		return nil, err
	}
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Frontier{
		cfg: cfg, st: s, log: log, coll: store.AppendLP(nil, cfg.Collection),
		sites: map[string]*site{}, ips: map[string]*ipState{}, classes: cfg.Levels + 2,
		curDelay: cfg.Delay,
	}
	f.wait.less = func(a, b waitItem) bool {
		if a.front != b.front {
			return a.front < b.front
		}
		if a.urgent != b.urgent {
			return a.urgent < b.urgent
		}
		if a.pr != b.pr {
			return a.pr < b.pr
		}
		return a.seq < b.seq
	}
	byTime := func(a, b timeItem) bool {
		if !a.at.Equal(b.at) {
			return a.at.Before(b.at)
		}
		return a.seq < b.seq
	}
	f.ready.less, f.timers.less = byTime, byTime

	g, ok, err := s.GetRaw(store.SpaceFrontier, f.metaKey('g', ""))
	if err != nil {
		return nil, err
	}
	if ok {
		r := reader{b: g}
		f.cycle = r.varint()
		f.cycleStart = fromUnixNano(r.varint())
		f.readSubs(&r)
		if err := r.end(); err != nil {
			return nil, err
		}
	} else {
		f.cycle, f.cycleStart = 1, now
		f.readSubs(&reader{})
		b := s.NewBatch()
		if err := f.writeGlobal(b); err != nil {
			b.Discard()
			return nil, err
		}
		if err := b.Commit(); err != nil {
			return nil, err
		}
	}
	if n := cfg.SeenCacheSize; cfg.WQFilter && n >= 0 {
		if n == 0 {
			n = DefaultSeenCacheSize
		}
		f.seenc = newSeenCache(max(n, 2))
	}
	switch {
	case cfg.SMFilterBits > 0:
		f.bloom = newBloom(cfg.SMFilterBits, cfg.BloomFPRate)
		if err := f.loadBloom(); err != nil {
			return nil, err
		}
	case cfg.WQFilter:
		// A filter in front of the exact seen-set lets certainly new URIs
		// skip the disk; a false positive only costs the disk read.
		if err := f.resizeBloom(autoBloomMin); err != nil {
			return nil, err
		}
	}
	sp := f.metaKey('s', "")
	err = s.IterRaw(store.SpaceFrontier, sp, func(k, v []byte) error {
		st, err := decodeSiteMeta(string(k[len(sp):]), v, f.classes)
		if err != nil {
			return fmt.Errorf("frontier: site %q: %w", k[len(sp):], err)
		}
		if st.queued() > 0 || st.blockedUntil.After(now) {
			f.sites[st.name] = st
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, st := range f.sites {
		f.settle(st, now)
	}
	return f, nil
}

// autoBloomMin is the capacity the automatic seen filter starts with
// (about 1.2 MiB at 1% false positives); it grows fourfold when full.
const autoBloomMin = 1 << 20

// resizeBloom rebuilds the automatic seen filter from the seen-set on disk
// for at least capacity URIs.
func (f *Frontier) resizeBloom(capacity int) error {
	for {
		bits := int(float64(capacity) * -math.Log(f.cfg.BloomFPRate) / (math.Ln2 * math.Ln2))
		f.bloom, f.bloomAuto, f.bloomCap, f.bloomN = newBloom(bits, f.cfg.BloomFPRate), true, capacity, 0
		err := f.st.IterRaw(store.SpaceSeen, f.coll, func(k, _ []byte) error {
			f.bloom.addBytes(k[len(f.coll):])
			f.bloomN++
			return nil
		})
		if err != nil {
			return err
		}
		if f.bloomN <= capacity {
			return nil
		}
		capacity = 4 * f.bloomN
	}
}

func (f *Frontier) loadBloom() error {
	if f.cfg.WQFilter {
		// The exact seen-set is on disk: the filter in front of it is rebuilt.
		return f.st.IterRaw(store.SpaceSeen, f.coll, func(k, v []byte) error {
			f.bloom.addBytes(k[len(f.coll):])
			return nil
		})
	}
	b, ok, err := f.st.GetRaw(store.SpaceFrontier, f.metaKey('b', ""))
	if err != nil || !ok {
		return err
	}
	if err := f.bloom.load(b); err != nil {
		f.log.Warn("frontier: saved bloom filter ignored", "err", err)
	}
	return nil
}

// Close saves what is kept only in memory (a bloom-only seen filter). It does
// not close the store.
func (f *Frontier) Close() error {
	if f.err != nil {
		return f.err
	}
	if f.bloom == nil || f.cfg.WQFilter {
		return nil
	}
	b := f.st.NewBatch()
	if err := b.SetRaw(store.SpaceFrontier, f.metaKey('b', ""), f.bloom.marshal()); err != nil {
		b.Discard()
		return err
	}
	return b.Commit()
}

func (f *Frontier) writeGlobal(b *store.Batch) error {
	v := binary.AppendVarint(nil, f.cycle)
	v = binary.AppendVarint(v, unixNano(f.cycleStart))
	v = f.appendSubs(v)
	return b.SetRaw(store.SpaceFrontier, f.metaKey('g', ""), v)
}

func (f *Frontier) writeMeta(b *store.Batch, st *site) error {
	st.dirty = false
	return b.SetRaw(store.SpaceFrontier, f.metaKey('s', st.name), encodeSiteMeta(st))
}

// saveMeta writes one site's metadata in its own batch.
func (f *Frontier) saveMeta(st *site) error {
	b := f.st.NewBatch()
	if err := f.writeMeta(b, st); err != nil {
		b.Discard()
		return err
	}
	return f.commit(b)
}

func (f *Frontier) commit(b *store.Batch) error {
	if err := b.Commit(); err != nil {
		f.err = fmt.Errorf("%w: %v", ErrBroken, err)
		return f.err
	}
	return nil
}

// getSite returns the in-memory site, loading its metadata or creating it.
func (f *Frontier) getSite(name string) (*site, error) {
	if st := f.sites[name]; st != nil {
		return st, nil
	}
	v, ok, err := f.st.GetRaw(store.SpaceFrontier, f.metaKey('s', name))
	if err != nil {
		return nil, err
	}
	var st *site
	if ok {
		if st, err = decodeSiteMeta(name, v, f.classes); err != nil {
			return nil, fmt.Errorf("frontier: site %q: %w", name, err)
		}
	} else {
		st = newSite(name, f.classes)
		st.cycle = f.cycle
	}
	if f.cfg.RefreshMode != RefreshSoft && st.cycle < f.cycle {
		f.refreshSite(st)
	}
	f.sites[name] = st
	return st, nil
}

// refreshSite starts the site's new refresh cycle.
func (f *Frontier) refreshSite(st *site) {
	st.cycle = f.cycle
	st.docsCycle = 0
	st.stopped = false
	st.backoff = 0
	st.backoffUntil = time.Time{}
	st.dirty = true
}

// --- politeness ---

// own looks up the site's own delay and max_doc once.
func (f *Frontier) own(st *site) {
	if st.own {
		return
	}
	st.own, st.ownDelay, st.ownMaxDoc = true, f.cfg.Delay, f.cfg.MaxDoc
	if f.cfg.SiteDelay != nil {
		st.ownDelay = f.cfg.SiteDelay(st.name)
	}
	if f.cfg.SiteMaxDoc != nil {
		st.ownMaxDoc = f.cfg.SiteMaxDoc(st.name)
	}
}

func (f *Frontier) delay(st *site) time.Duration {
	f.own(st)
	d := st.ownDelay
	if f.inSlot {
		d = f.curDelay // a variable_delay slot sets every site's delay
	}
	if f.cfg.ObeyRobotsDelay && st.crawlDelay > d {
		d = st.crawlDelay
	}
	return d
}

// earliest is when st may start its next fetch.
func (f *Frontier) earliest(st *site) time.Time {
	d := f.delay(st)
	var t time.Time
	if !st.lastStart.IsZero() {
		t = st.lastStart.Add(d)
	}
	if f.cfg.EnforceDelayPerIP && st.ip != "" {
		if ip := f.ips[st.ip]; ip != nil && !ip.lastStart.IsZero() {
			if it := ip.lastStart.Add(d); it.After(t) {
				t = it
			}
		}
	}
	if st.backoffUntil.After(t) {
		t = st.backoffUntil
	}
	return t
}

func (f *Frontier) capped(st *site) bool {
	f.own(st)
	return st.stopped || (st.ownMaxDoc > 0 && st.docsCycle >= st.ownMaxDoc)
}

func (f *Frontier) servable(st *site, now time.Time) bool {
	return st.mode == modeActive && !st.leaving && !st.blockedUntil.After(now) && len(st.fly) < f.cfg.MaxPending &&
		!f.capped(st) && st.hasWork()
}

// settle moves st to where its state says it belongs: ready, waiting,
// timed, released, or out of memory.
func (f *Frontier) settle(st *site, now time.Time) {
	blocked := st.blockedUntil.After(now)
	if st.holds && len(st.fly) == 0 && (st.leaving || blocked || !st.hasWork() || f.capped(st)) {
		f.release(st)
	}
	if st.holds {
		if f.servable(st, now) && !st.inReady {
			f.pushReady(st, f.earliest(st))
		}
		return
	}
	switch {
	case blocked:
		if !st.inTimer {
			st.timerVer++
			st.inTimer = true
			f.seq++
			f.timers.push(timeItem{st: st, at: st.blockedUntil, seq: f.seq, ver: st.timerVer})
		}
	case st.mode == modeWaiting:
	case st.hasWork() && !f.capped(st):
		st.mode = modeWaiting
		st.waitVer++
		f.seq++
		it := waitItem{st: st, front: 1, urgent: 1, seq: f.seq, ver: st.waitVer}
		if st.front {
			it.front = 0
		}
		if st.available(0) > 0 {
			it.urgent = 0
		}
		if f.cfg.PopScheme == PopPri {
			it.pr = f.bestLevel(st)
		}
		f.wait.push(it)
	case st.queued() == 0 && len(st.fly) == 0 && !st.dirty:
		delete(f.sites, st.name)
		if ip := f.ips[st.ip]; ip != nil && ip.sites == 0 && !ip.lastStart.Add(f.delay(st)).After(now) {
			delete(f.ips, st.ip)
		}
	}
}

func (f *Frontier) bestLevel(st *site) int {
	for c := 1; c < len(st.q); c++ {
		if st.available(c) > 0 {
			return c
		}
	}
	return len(st.q)
}

func (f *Frontier) pushReady(st *site, at time.Time) {
	st.readyVer++
	st.inReady = true
	f.seq++
	f.ready.push(timeItem{st: st, at: at, seq: f.seq, ver: st.readyVer})
}

func (f *Frontier) release(st *site) {
	st.holds = false
	f.slots--
	if st.granted {
		st.granted = false
		if ip := f.ips[st.ip]; ip != nil {
			ip.sites--
		}
		f.actions = append(f.actions, Action{Kind: ActStopCrawlIP, Site: st.name, IP: st.ip})
	}
	st.mode = modeIdle
	st.leaving = false
	st.turnDocs = 0
	st.inReady = false
	st.readyVer++
}

// activate gives free slots to waiting sites.
func (f *Frontier) activate(now time.Time) {
	for f.slots < f.cfg.MaxSites && f.wait.len() > 0 {
		it := f.wait.pop()
		st := it.st
		if st.waitVer != it.ver || st.mode != modeWaiting || f.sites[st.name] != st {
			continue
		}
		st.mode = modeIdle
		if st.blockedUntil.After(now) || !st.hasWork() || f.capped(st) {
			f.settle(st, now)
			continue
		}
		st.front = false
		st.holds = true
		f.slots++
		f.startSite(st, now)
	}
}

// startSite moves a site holding a slot towards modeActive.
func (f *Frontier) startSite(st *site, now time.Time) {
	switch {
	case f.cfg.RequireIP && st.ip == "":
		st.mode = modeResolving
		f.actions = append(f.actions, Action{Kind: ActResolve, Site: st.name})
	case f.cfg.RequireGrant && !st.granted:
		st.mode = modeGranting
		f.actions = append(f.actions, Action{Kind: ActRequestGrant, Site: st.name, IP: st.ip})
	default:
		st.mode = modeActive
		st.turnDocs = 0
		f.settle(st, now)
	}
}

// Actions returns and clears what the driver must do (resolve, ask for or
// give back crawl-IP grants).
func (f *Frontier) Actions() []Action {
	a := f.actions
	f.actions = nil
	return a
}

// Next returns the next URI to fetch at now, respecting every rule. When
// there is none, wakeAt is the earliest time one may become available
// without outside events (zero if only an event can help: Add, Done,
// SetIP, Grant).
func (f *Frontier) Next(now time.Time) (fe Fetch, ok bool, wakeAt time.Time) {
	if f.err != nil || f.txOpen {
		return Fetch{}, false, time.Time{}
	}
	if suspended, until := f.applySlot(now); suspended {
		return Fetch{}, false, until
	}
	for f.timers.len() > 0 && !f.timers.peek().at.After(now) {
		it := f.timers.pop()
		if it.ver != it.st.timerVer || f.sites[it.st.name] != it.st {
			continue
		}
		it.st.inTimer = false
		f.settle(it.st, now)
	}
	f.activate(now)
	for f.ready.len() > 0 {
		it := f.ready.peek()
		st := it.st
		if it.ver != st.readyVer || f.sites[st.name] != st {
			f.ready.pop()
			continue
		}
		if !f.servable(st, now) {
			f.ready.pop()
			st.inReady = false
			f.settle(st, now)
			continue
		}
		if at := f.earliest(st); at.After(it.at) {
			f.ready.pop()
			f.pushReady(st, at)
			continue
		}
		if it.at.After(now) {
			return Fetch{}, false, f.wake(it.at)
		}
		f.ready.pop()
		st.inReady = false
		fe, ok, err := f.serve(st, now)
		if err != nil {
			f.err = fmt.Errorf("%w: %v", ErrBroken, err)
			return Fetch{}, false, time.Time{}
		}
		f.settle(st, now)
		if ok {
			return fe, true, time.Time{}
		}
	}
	f.activate(now)
	return Fetch{}, false, f.wake(time.Time{})
}

func (f *Frontier) wake(t time.Time) time.Time {
	for f.timers.len() > 0 {
		it := f.timers.peek()
		if it.ver != it.st.timerVer {
			f.timers.pop()
			continue
		}
		if t.IsZero() || it.at.Before(t) {
			t = it.at
		}
		break
	}
	return t
}

// pickClass chooses which class of st to serve next (-1: none).
func (f *Frontier) pickClass(st *site) int {
	if st.available(0) > 0 {
		return 0 // urgent
	}
	rs := f.cfg.Levels + 1
	if st.available(rs) > 0 {
		normal := false
		for c := 1; c <= f.cfg.Levels; c++ {
			if st.available(c) > 0 {
				normal = true
				break
			}
		}
		q := f.cfg.Adaptive.RefreshQuota
		if !normal || st.servedResched*100 < q*(st.servedResched+st.servedNew+1) {
			st.servedResched++
			return rs
		}
	}
	c := f.pickLevel(st)
	if c < 0 {
		// Classes beyond the configuration (levels were lowered): serve last.
		for x := rs + 1; x < len(st.q); x++ {
			if st.available(x) > 0 {
				return x
			}
		}
		return -1
	}
	st.servedNew++
	return c
}

func (f *Frontier) pickLevel(st *site) int {
	L := f.cfg.Levels
	switch f.cfg.PopScheme {
	case PopPri:
		for c := 1; c <= L; c++ {
			if st.available(c) > 0 {
				return c
			}
		}
	case PopRR:
		for i := 1; i <= L; i++ {
			c := (st.rrLast+i-1)%L + 1
			if st.available(c) > 0 {
				st.rrLast = c
				return c
			}
		}
	default: // smooth weighted round robin over the levels with work
		best, total := -1, 0
		for c := 1; c <= L; c++ {
			if st.available(c) == 0 {
				continue
			}
			w := f.cfg.share(c)
			st.wrr[c] += w
			total += w
			if best < 0 || st.wrr[c] > st.wrr[best] {
				best = c
			}
		}
		if best > 0 {
			st.wrr[best] -= total
		}
		return best
	}
	return -1
}

// serve hands out the next entry of st.
func (f *Frontier) serve(st *site, now time.Time) (Fetch, bool, error) {
	for {
		c := f.pickClass(st)
		if c < 0 {
			return Fetch{}, false, nil
		}
		if err := f.refill(st, c, max(f.cfg.HeadSize, f.cfg.RefillSize)); err != nil {
			return Fetch{}, false, err
		}
		q := &st.q[c]
		if len(q.head) == 0 {
			continue // refill repaired the count; pick again
		}
		h := q.head[0]
		q.head[0] = headEntry{}
		q.head = q.head[1:]
		if len(q.head) == 0 {
			q.head = nil
		}
		st.fly = append(st.fly, inflight{class: uint8(c), seq: h.seq, epoch: st.epoch})
		st.lastStart = now
		if st.ip != "" {
			ip := f.ips[st.ip]
			if ip == nil {
				ip = &ipState{}
				f.ips[st.ip] = ip
			}
			ip.lastStart = now
		}
		st.docsCycle++
		st.turnDocs++
		if f.cfg.MaxInterDocs > 0 && st.turnDocs >= f.cfg.MaxInterDocs {
			if f.someoneWaits() {
				st.leaving = true
			} else {
				st.turnDocs = 0
			}
		}
		f.stats.Served++
		return Fetch{Entry: h.e, IP: st.ip, Cycle: st.cycle, Fresh: h.fresh, class: uint8(c), seq: h.seq, epoch: st.epoch, fresh: h.fresh}, true, nil
	}
}

func (f *Frontier) someoneWaits() bool {
	for f.wait.len() > 0 {
		it := f.wait.peek()
		if it.ver == it.st.waitVer && it.st.mode == modeWaiting && f.sites[it.st.name] == it.st {
			return true
		}
		f.wait.pop()
	}
	return false
}

// SetIP gives a resolving site its IP address; an empty ip means the lookup
// failed, which counts as a network failure of the site.
func (f *Frontier) SetIP(site, ip string, now time.Time) {
	st := f.sites[site]
	if st == nil || f.err != nil {
		return
	}
	if ip == "" {
		f.backoffSite(st, now)
		f.block(st, st.backoffUntil, false, now)
		return
	}
	st.ip = ip
	if st.mode == modeResolving {
		f.startSite(st, now)
	}
}

// Grant answers an ActRequestGrant (CMD_UM_START_CRAWL_IP, MS-FSCMT
// §3.1.5.21). A denied site, or one that would make more than MaxSitesPerIP
// sites crawl the same IP, is blocked for BlockDuration and requeued at the
// front.
func (f *Frontier) Grant(site, ip string, allowed bool, now time.Time) {
	st := f.sites[site]
	if f.err != nil {
		return
	}
	if st == nil || st.mode != modeGranting {
		if allowed { // nobody asked any more: give it back
			f.actions = append(f.actions, Action{Kind: ActStopCrawlIP, Site: site, IP: ip})
		}
		return
	}
	if allowed {
		is := f.ips[ip]
		if is == nil {
			is = &ipState{}
			f.ips[ip] = is
		}
		is.sites++
		st.granted = true
		if is.sites > f.cfg.MaxSitesPerIP {
			f.block(st, now.Add(f.cfg.BlockDuration), true, now)
			return
		}
		st.mode = modeActive
		st.turnDocs = 0
		f.settle(st, now)
		return
	}
	f.block(st, now.Add(f.cfg.BlockDuration), true, now)
}

func (f *Frontier) block(st *site, until time.Time, front bool, now time.Time) {
	st.blockedUntil = until
	st.front = front
	if st.mode == modeResolving || st.mode == modeGranting {
		st.mode = modeActive
	}
	st.dirty = true
	if err := f.saveMeta(st); err != nil {
		return
	}
	f.settle(st, now)
}

// Quarantine stops crawling site until the given time (CMD_UM_QUARANTINE_SITE);
// with requeue the site is put at the front of the queue of waiting sites
// when it expires (CMD_UM_QUARANTINE_SITE_REQUEUE). Fetches in flight finish.
func (f *Frontier) Quarantine(site string, until time.Time, requeue bool, now time.Time) error {
	if f.err != nil {
		return f.err
	}
	st, err := f.getSite(site)
	if err != nil {
		return err
	}
	f.block(st, until, requeue, now)
	return f.err
}

// SetCrawlDelay records a robots.txt Crawl-delay for site (used when
// ObeyRobotsDelay is set).
func (f *Frontier) SetCrawlDelay(site string, d time.Duration, now time.Time) error {
	if f.err != nil {
		return f.err
	}
	st, err := f.getSite(site)
	if err != nil {
		return err
	}
	if st.crawlDelay != d {
		st.crawlDelay = d
		st.dirty = true
		if err := f.saveMeta(st); err != nil {
			return err
		}
	}
	if st.inReady {
		st.readyVer++
		st.inReady = false
	}
	f.settle(st, now)
	return nil
}

func (f *Frontier) backoffSite(st *site, now time.Time) {
	st.backoff++
	base := f.delay(st)
	if base < time.Second {
		base = time.Second
	}
	d := f.cfg.MaxBackoffDelay
	if st.backoff < 32 && base<<(st.backoff-1) < d {
		d = base << (st.backoff - 1)
	}
	st.backoffUntil = now.Add(d)
	st.dirty = true
}

// Cycle is the current refresh cycle.
func (f *Frontier) Cycle() int64 { return f.cycle }

// Stats returns a snapshot.
func (f *Frontier) Stats() Stats {
	s := f.stats
	s.Cycle = f.cycle
	s.Sites = len(f.sites)
	s.ActiveSites = f.slots
	for _, st := range f.sites {
		s.Queued += st.queued()
		s.InFlight += len(st.fly)
		if st.mode == modeWaiting {
			s.WaitingSites++
		}
		if st.inTimer {
			s.BlockedSites++
		}
	}
	return s
}

// Idle reports whether nothing is in flight and nothing queued can be
// served in this cycle (a site at its max_doc, or stopped by
// max_backoff_counter, waits for the next cycle).
func (f *Frontier) Idle() bool {
	for _, st := range f.sites {
		if (st.queued() > 0 && !f.capped(st)) || len(st.fly) > 0 {
			return false
		}
	}
	return true
}

// RefreshDue reports whether a new refresh cycle should start: the refresh
// period has passed, or refresh_when_idle is set and the frontier is idle.
func (f *Frontier) RefreshDue(now time.Time) bool {
	if !now.Before(f.cycleStart.Add(f.cfg.Refresh)) {
		return true
	}
	return f.cfg.RefreshWhenIdle && f.Idle()
}

// Err returns the sticky error after a failed commit.
func (f *Frontier) Err() error { return f.err }
