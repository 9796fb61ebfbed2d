package nodesched

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"sort"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/store"
)

// Statistics persist (MS-FSCADM 3.3.1: statistics MUST be persisted). A
// collection's counters and its sites' are written into the store batch
// that commits the crawl state they count (feedCommit: a crawl step, a
// duplicate answer, a deletion), so after a kill -9 a counted event is
// either in the store with its count or in neither, and is counted once
// when the work is done again:
//
//	'm' "stats/c/" lp(collection)      -> uvarint(seq) counters
//	'm' "stats/s/" lp(collection) site -> counters
//	counters = uvarint(n) then n times lp(name) varint(value)
//
// seq is the number of CMD_UM_STAT reports sent (each report is written
// before it is sent, so it never carries a count the store may lose).
// Only the sites counted since the last write are written again. Counts
// made outside those batches (the frontier's own writes for received
// URIs, the feeding chain's answers) reach the store with the next batch
// or report: a kill -9 in between loses them (docs/decisions/stats.md).
const (
	statsCollPrefix = "stats/c/"
	statsSitePrefix = "stats/s/"
)

// maxStatsCounters caps the counters of one persisted record.
const maxStatsCounters = 1 << 16

// statsPersist is what a collection keeps to persist and report its
// counters.
type statsPersist struct {
	// saved are the collection's counters as last written.
	saved Counters
	// dirty are the sites counted since their last write, unsent those
	// changed since the last CMD_UM_STAT.
	dirty, unsent map[string]bool
	// seq counts the CMD_UM_STAT reports (persisted).
	seq uint64
	// feedBase are the feeding chain's counters restored from the store:
	// the chain counts from zero in each process.
	feedBase Counters
}

// touched records that site s is being counted.
func (p *statsPersist) touched(s string) {
	if p.dirty == nil {
		p.dirty, p.unsent = map[string]bool{}, map[string]bool{}
	}
	p.dirty[s], p.unsent[s] = true, true
}

func statsCollKey(coll string) []byte { return store.AppendLP([]byte(statsCollPrefix), coll) }
func statsSitesKey(coll string) []byte {
	return store.AppendLP([]byte(statsSitePrefix), coll)
}

func appendCounters(dst []byte, c Counters) []byte {
	dst = binary.AppendUvarint(dst, uint64(len(c)))
	for _, k := range sortedKeys(c) {
		dst = store.AppendLP(dst, k)
		dst = binary.AppendVarint(dst, c[k])
	}
	return dst
}

var errStatsRecord = errors.New("nodesched: bad statistics record")

func decodeCounters(b []byte) (Counters, []byte, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > maxStatsCounters || n > uint64(len(b)) {
		return nil, nil, errStatsRecord
	}
	b = b[w:]
	out := make(Counters, n)
	for i := uint64(0); i < n; i++ {
		k, rest, err := store.ReadLP(b)
		if err != nil {
			return nil, nil, errStatsRecord
		}
		v, w := binary.Varint(rest)
		if w <= 0 {
			return nil, nil, errStatsRecord
		}
		out[k], b = v, rest[w:]
	}
	return out, b, nil
}

// persistStats writes c's counters into b when they changed since the
// last write, with the sites counted meanwhile.
func (m *Machine) persistStats(c *collection, b *store.Batch, force bool) error {
	p := &c.ps
	if force || !maps.Equal(c.stats, p.saved) {
		v := binary.AppendUvarint(nil, p.seq)
		if err := b.SetRaw(store.SpaceMeta, statsCollKey(c.s.Name), appendCounters(v, c.stats)); err != nil {
			return err
		}
		if p.saved == nil {
			p.saved = Counters{}
		}
		clear(p.saved)
		maps.Copy(p.saved, c.stats)
	}
	if len(p.dirty) == 0 {
		return nil
	}
	pre := statsSitesKey(c.s.Name)
	for s := range p.dirty {
		cs := c.sites[s]
		if len(cs) == 0 {
			continue
		}
		k := append(append([]byte(nil), pre...), s...)
		if err := b.SetRaw(store.SpaceMeta, k, appendCounters(nil, cs)); err != nil {
			return err
		}
	}
	clear(p.dirty)
	return nil
}

// loadStats restores a collection's counters from the store.
func (m *Machine) loadStats(c *collection) error {
	v, ok, err := m.st.GetRaw(store.SpaceMeta, statsCollKey(c.s.Name))
	if err != nil || !ok {
		return err
	}
	seq, w := binary.Uvarint(v)
	if w <= 0 {
		return fmt.Errorf("%w: collection %s", errStatsRecord, c.s.Name)
	}
	cs, _, err := decodeCounters(v[w:])
	if err != nil {
		return fmt.Errorf("%w: collection %s", err, c.s.Name)
	}
	c.stats, c.ps.seq, c.ps.saved = cs, seq, cs.clone()
	c.ps.feedBase = Counters{}
	for _, k := range feedCounterNames {
		c.ps.feedBase[k] = cs[k]
	}
	pre := statsSitesKey(c.s.Name)
	return m.st.IterRaw(store.SpaceMeta, pre, func(k, v []byte) error {
		site := string(k[len(pre):])
		sc, _, err := decodeCounters(v)
		if err != nil {
			m.log.Warn("nodesched: unreadable site statistics skipped", "collection", c.s.Name, "site", site, "err", err)
			return nil
		}
		c.sites[site] = sc
		if c.ps.unsent == nil {
			c.ps.dirty, c.ps.unsent = map[string]bool{}, map[string]bool{}
		}
		c.ps.unsent[site] = true
		return nil
	})
}

// forgetStats removes a deleted collection's statistics in b.
func forgetStats(b *store.Batch, coll string) error {
	if err := b.DeleteRaw(store.SpaceMeta, statsCollKey(coll)); err != nil {
		return err
	}
	return b.DeletePrefix(store.SpaceMeta, statsSitesKey(coll))
}

// feedCounterNames are the counters the feeding chain counts (syncFeedCounters).
var feedCounterNames = []string{"pp_fed", "pp_succeeded", "pp_failed", "pp_deleted"}

// statsResend makes the next CMD_UM_STAT of every collection carry every
// site (a new link to the multinode scheduler, which may have lost what
// the old one carried).
func (m *Machine) statsResend() {
	for _, c := range m.colls {
		for s := range c.sites {
			c.ps.touched(s)
		}
	}
}

// reportStats sends CMD_UM_STAT for c: its cumulative counters, written
// to the store first (so a report never carries a count a crash can take
// back), with the report's sequence number, the frontier's gauges, and
// the counters of the sites that changed since the last report:
//
//	{"seq": n, counter: int, ..., "queued": n, "active_sites": n,
//	 "last_uri": uri, "sites": {site: {counter: int, ..., "last_uri": uri}}}
//
// Maxima (k_max) are the largest samples so far: the multinode scheduler
// keeps the largest over its node schedulers.
func (m *Machine) reportStats(c *collection) {
	m.syncFeedCounters(c)
	c.ps.seq++
	b := m.st.NewBatch()
	if err := m.persistStats(c, b, true); err != nil {
		b.Discard()
		c.ps.seq--
		m.log.Error("nodesched: saving statistics", "collection", c.s.Name, "err", err)
		return
	}
	if err := b.Commit(); err != nil {
		c.ps.seq--
		m.log.Error("nodesched: saving statistics", "collection", c.s.Name, "err", err)
		return
	}
	d := marshal.Dict{{Key: marshal.Str("seq"), Value: marshal.Int(int64(c.ps.seq))}}
	for _, k := range sortedKeys(c.stats) {
		d = append(d, marshal.Pair{Key: marshal.Str(k), Value: marshal.Int(c.stats[k])})
	}
	fs := c.front.Stats()
	d = append(d, marshal.Pair{Key: marshal.Str("queued"), Value: marshal.Int(fs.Queued)},
		marshal.Pair{Key: marshal.Str("active_sites"), Value: marshal.Int(fs.ActiveSites)})
	if c.lastURI != "" {
		d = append(d, marshal.Pair{Key: marshal.Str("last_uri"), Value: marshal.Str(c.lastURI)})
	}
	send := map[string]bool{}
	for s := range c.ps.unsent {
		send[s] = true
	}
	for s := range c.siteLast {
		send[s] = true
	}
	if len(send) > 0 {
		names := make([]string, 0, len(send))
		for s := range send {
			names = append(names, s)
		}
		sort.Strings(names)
		sites := make(marshal.Dict, 0, len(names))
		for _, site := range names {
			cs := c.sites[site]
			sub := make(marshal.Dict, 0, len(cs)+1)
			for _, k := range sortedKeys(cs) {
				sub = append(sub, marshal.Pair{Key: marshal.Str(k), Value: marshal.Int(cs[k])})
			}
			if u := c.siteLast[site]; u != "" {
				sub = append(sub, marshal.Pair{Key: marshal.Str("last_uri"), Value: marshal.Str(u)})
			}
			sites = append(sites, marshal.Pair{Key: marshal.Str(site), Value: sub})
		}
		d = append(d, marshal.Pair{Key: marshal.Str("sites"), Value: sites})
	}
	c.lastURI, c.siteLast = "", nil
	clear(c.ps.unsent)
	m.send(MNS, &cmt.UMStat{Collection: c.s.Name, Stats: d})
}

// SavedStats reads the counters a node scheduler saved for a collection
// in st: the collection's and its sites' (nil, nil when none were saved).
func SavedStats(st *store.Store, coll string) (Counters, map[string]Counters, error) {
	v, ok, err := st.GetRaw(store.SpaceMeta, statsCollKey(coll))
	if err != nil || !ok {
		return nil, nil, err
	}
	_, w := binary.Uvarint(v)
	if w <= 0 {
		return nil, nil, errStatsRecord
	}
	cs, _, err := decodeCounters(v[w:])
	if err != nil {
		return nil, nil, err
	}
	sites := map[string]Counters{}
	pre := statsSitesKey(coll)
	err = st.IterRaw(store.SpaceMeta, pre, func(k, v []byte) error {
		sc, _, err := decodeCounters(v)
		if err == nil {
			sites[string(k[len(pre):])] = sc
		}
		return err
	})
	return cs, sites, err
}

// statsEvery is the period of CMD_UM_STAT.
func (c MachineConfig) statsEvery() time.Duration {
	if c.StatsEvery > 0 {
		return c.StatsEvery
	}
	return StatsInterval
}
