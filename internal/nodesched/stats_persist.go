package nodesched

import (
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
)

// Statistics persist (MS-FSCADM 3.3.1: statistics MUST be persisted). A
// collection's counters and its sites' are written into the Pebble batch
// that commits the crawl state they count (a crawl step, a duplicate
// answer, a deletion): stageStats stages them once per driver batch, after
// the steps and before the stage is taken (Machine.Records), so after a
// kill -9 a counted event is either in the store with its count or in
// neither, and is counted once when the work is done again. (Written with
// every step instead, they would be two more keys per step, set again and
// again in one Pebble batch.)
//
//	'm' "stats/c/" lp(collection)      -> uvarint(seq) counters
//	'm' "stats/s/" lp(collection) site -> counters
//	'm' "stats/n/" lp(collection) name -> uvarint(id)
//	counters = uvarint(n) then n times uvarint(id) varint(value)
//
// A counter is named in a record by its id (the "stats/n/" records, each
// written in the batch of the first record that uses it), which keeps a
// crawl step's extra writes to a few hundred bytes.
// seq is the number of CMD_UM_STAT reports sent (each report is written
// before it is sent, so it never carries a count the store may lose).
// Only the sites counted since the last write are written again. The
// feeding chain's answers have their own record, written in the outbox
// batch that acknowledges them (feedColl.onAck), so they are exact after
// a kill -9 too:
//
//	'm' "stats/f/" lp(collection)      -> uvarint pp_fed, pp_succeeded, pp_failed, pp_deleted
//
// See docs/decisions/stats.md.
const (
	statsCollPrefix = "stats/c/"
	statsSitePrefix = "stats/s/"
	statsNamePrefix = "stats/n/"
	statsFeedPrefix = "stats/f/"
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
	// restored are the counters read back when the collection was set up
	// (nil for a new one): what earlier processes counted (RunStats).
	restored Counters
	// ids are the counters' ids in the records, names the other way.
	ids   map[string]uint64
	names map[uint64]string
	buf   []byte
}

// touched records that site s is being counted.
func (p *statsPersist) touched(s string) {
	if p.dirty == nil {
		p.dirty, p.unsent = map[string]bool{}, map[string]bool{}
	}
	p.dirty[s], p.unsent[s] = true, true
}

func statsCollKey(coll string) []byte  { return store.AppendLP([]byte(statsCollPrefix), coll) }
func statsSitesKey(coll string) []byte { return store.AppendLP([]byte(statsSitePrefix), coll) }
func statsNamesKey(coll string) []byte { return store.AppendLP([]byte(statsNamePrefix), coll) }

// appendCounters encodes c, naming a new counter in b.
func (p *statsPersist) appendCounters(dst []byte, b *store.Batch, coll string, c Counters) ([]byte, error) {
	if p.ids == nil {
		p.ids, p.names = map[string]uint64{}, map[uint64]string{}
	}
	dst = binary.AppendUvarint(dst, uint64(len(c)))
	for k, v := range c {
		id, ok := p.ids[k]
		if !ok {
			id = uint64(len(p.ids) + 1)
			key := append(statsNamesKey(coll), k...)
			if err := b.SetRaw(store.SpaceMeta, key, binary.AppendUvarint(nil, id)); err != nil {
				return nil, err
			}
			p.ids[k], p.names[id] = id, k
		}
		dst = binary.AppendUvarint(dst, id)
		dst = binary.AppendVarint(dst, v)
	}
	return dst, nil
}

var errStatsRecord = errors.New("nodesched: bad statistics record")

// decodeCounters reads what appendCounters wrote.
func decodeCounters(b []byte, names map[uint64]string) (Counters, error) {
	n, w := binary.Uvarint(b)
	if w <= 0 || n > maxStatsCounters || n > uint64(len(b)) {
		return nil, errStatsRecord
	}
	b = b[w:]
	out := make(Counters, n)
	for i := uint64(0); i < n; i++ {
		id, w := binary.Uvarint(b)
		if w <= 0 {
			return nil, errStatsRecord
		}
		v, w2 := binary.Varint(b[w:])
		if w2 <= 0 {
			return nil, errStatsRecord
		}
		name, ok := names[id]
		if !ok {
			return nil, errStatsRecord
		}
		out[name], b = v, b[w+w2:]
	}
	return out, nil
}

// loadStatNames reads a collection's counter names.
// statsReader is what reading the saved statistics needs: the store, or
// the machine's View of it.
type statsReader interface {
	GetRaw(sp store.Space, k []byte) ([]byte, bool, error)
	IterRaw(sp store.Space, prefix []byte, fn func(k, v []byte) error) error
}

func loadStatNames(st statsReader, coll string) (map[string]uint64, map[uint64]string, error) {
	ids, names := map[string]uint64{}, map[uint64]string{}
	pre := statsNamesKey(coll)
	err := st.IterRaw(store.SpaceMeta, pre, func(k, v []byte) error {
		id, w := binary.Uvarint(v)
		if w <= 0 || id == 0 {
			return errStatsRecord
		}
		name := string(k[len(pre):])
		ids[name], names[id] = id, name
		return nil
	})
	return ids, names, err
}

// stageStats stages, for each collection whose counters changed since they
// were last written, a batch with them on the machine's view.
func (m *Machine) stageStats() error {
	for _, c := range m.colls {
		if len(c.ps.dirty) == 0 && maps.Equal(c.stats, c.ps.saved) {
			continue
		}
		b := m.st.NewBatch()
		if err := m.persistStats(c, b, false); err != nil {
			b.Discard()
			return err
		}
		if err := b.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// persistStats writes c's counters into b when they changed since the
// last write, with the sites counted meanwhile.
func (m *Machine) persistStats(c *collection, b *store.Batch, force bool) error {
	p := &c.ps
	name := c.s.Name
	if force || !maps.Equal(c.stats, p.saved) {
		v, err := p.appendCounters(binary.AppendUvarint(p.buf[:0], p.seq), b, name, c.stats)
		if err != nil {
			return err
		}
		p.buf = v
		if err := b.SetRaw(store.SpaceMeta, statsCollKey(name), v); err != nil {
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
	pre := statsSitesKey(name)
	for s := range p.dirty {
		cs := c.sites[s]
		if len(cs) == 0 {
			continue
		}
		v, err := p.appendCounters(p.buf[:0], b, name, cs)
		if err != nil {
			return err
		}
		p.buf = v
		if err := b.SetRaw(store.SpaceMeta, append(pre, s...), v); err != nil {
			return err
		}
	}
	clear(p.dirty)
	return nil
}

// savedStats is what the store holds of a collection's statistics.
type savedStats struct {
	seq        uint64
	ids        map[string]uint64
	names      map[uint64]string
	coll       Counters
	sites      map[string]Counters
	unreadable int // site records skipped
}

// readSavedStats reads a collection's saved statistics (coll nil: none).
func readSavedStats(st statsReader, coll string) (savedStats, error) {
	var out savedStats
	v, ok, err := st.GetRaw(store.SpaceMeta, statsCollKey(coll))
	if err != nil || !ok {
		return out, err
	}
	if out.ids, out.names, err = loadStatNames(st, coll); err != nil {
		return out, fmt.Errorf("%w: collection %s", err, coll)
	}
	seq, w := binary.Uvarint(v)
	if w <= 0 {
		return out, fmt.Errorf("%w: collection %s", errStatsRecord, coll)
	}
	if out.coll, err = decodeCounters(v[w:], out.names); err != nil {
		return out, fmt.Errorf("%w: collection %s", err, coll)
	}
	out.seq, out.sites = seq, map[string]Counters{}
	pre := statsSitesKey(coll)
	err = st.IterRaw(store.SpaceMeta, pre, func(k, v []byte) error {
		if sc, err := decodeCounters(v, out.names); err == nil {
			out.sites[string(k[len(pre):])] = sc
		} else {
			out.unreadable++
		}
		return nil
	})
	return out, err
}

// loadStats restores a collection's counters from the store.
func (m *Machine) loadStats(c *collection) error {
	sv, err := readSavedStats(m.st, c.s.Name)
	if err != nil || sv.coll == nil {
		return err
	}
	if sv.unreadable > 0 {
		m.log.Warn("nodesched: unreadable site statistics skipped", "collection", c.s.Name, "sites", sv.unreadable)
	}
	p := &c.ps
	c.stats, p.seq, p.saved, p.ids, p.names = sv.coll, sv.seq, sv.coll.clone(), sv.ids, sv.names
	p.restored = sv.coll.clone()
	p.dirty, p.unsent = map[string]bool{}, map[string]bool{}
	for site, sc := range sv.sites {
		c.sites[site] = sc
		p.unsent[site] = true // reported at the next CMD_UM_STAT
	}
	return nil
}

// forgetStats removes a deleted collection's statistics in b.
func forgetStats(b *store.Batch, coll string) error {
	if err := b.DeleteRaw(store.SpaceMeta, statsCollKey(coll)); err != nil {
		return err
	}
	if err := b.DeletePrefix(store.SpaceMeta, statsNamesKey(coll)); err != nil {
		return err
	}
	if err := b.DeleteRaw(store.SpaceMeta, statsFeedKey(coll)); err != nil {
		return err
	}
	return b.DeletePrefix(store.SpaceMeta, statsSitesKey(coll))
}

func statsFeedKey(coll string) []byte { return store.AppendLP([]byte(statsFeedPrefix), coll) }

// statsFeedRawKey is statsFeedKey as a key of the store's Pebble database
// (the outbox batch writes it).
func statsFeedRawKey(coll string) []byte {
	return append([]byte{byte(store.SpaceMeta)}, statsFeedKey(coll)...)
}

// encode is the "stats/f/" record: uvarint Fed, Succeeded, Failed, Deleted.
func (r FeedResults) encode() []byte {
	var b []byte
	for _, v := range []int64{r.Fed, r.Succeeded, r.Failed, r.Deleted} {
		b = binary.AppendUvarint(b, uint64(max(v, 0)))
	}
	return b
}

// readFeedCounts returns the feeding chain's counters of coll as earlier
// processes left them: the "stats/f/" record, or, in a store written
// before it existed, the collection's saved counters.
func readFeedCounts(st statsReader, coll string) (FeedResults, error) {
	v, ok, err := st.GetRaw(store.SpaceMeta, statsFeedKey(coll))
	if err != nil {
		return FeedResults{}, err
	}
	if !ok {
		sv, err := readSavedStats(st, coll)
		if err != nil {
			return FeedResults{}, err
		}
		c := sv.coll
		return FeedResults{Fed: c["pp_fed"], Succeeded: c["pp_succeeded"], Failed: c["pp_failed"], Deleted: c["pp_deleted"]}, nil
	}
	var out [4]int64
	for i := range out {
		n, w := binary.Uvarint(v)
		if w <= 0 || n > math.MaxInt64 {
			return FeedResults{}, fmt.Errorf("%w: feeding counters of collection %s", errStatsRecord, coll)
		}
		out[i], v = int64(n), v[w:]
	}
	return FeedResults{Fed: out[0], Succeeded: out[1], Failed: out[2], Deleted: out[3]}, nil
}

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

// reportStats sends CMD_UM_STAT for c: its cumulative counters as the
// statistics structure of MS-FSCADM 2.2.5 (stats.EncodeStat), written to
// the store first (so a report never carries a count a crash can take
// back), with the report's sequence number, the frontier's gauges, and
// the structures of the sites that changed since the last report:
//
//	{"seq": n, member: value, ..., "trawl": {counter: int, ...},
//	 "queued": n, "last_uri": uri,
//	 "sites": {site: {member: value, ..., "last_uri": uri}, ...}}
//
// DocSizeMax and DLTimeMax are the largest samples so far: the multinode
// scheduler keeps the largest over its node schedulers.
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
	fs := c.front.Stats()
	cur := c.stats.clone()
	cur["active_sites"] = int64(fs.ActiveSites)
	cur["pp_checksums"], _ = m.st.ChecksumCount(c.s.Name)
	d := append(marshal.Dict{{Key: marshal.Str("seq"), Value: marshal.Int(int64(c.ps.seq))}}, stats.EncodeStat(cur)...)
	d = append(d, marshal.Pair{Key: marshal.Str("queued"), Value: marshal.Int(fs.Queued)})
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
			sub := stats.EncodeStat(c.sites[site])
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
	sv, err := readSavedStats(st, coll)
	if err == nil && sv.unreadable > 0 {
		err = fmt.Errorf("%w: %d sites of collection %s", errStatsRecord, sv.unreadable, coll)
	}
	return sv.coll, sv.sites, err
}

// Restored returns the counters collection coll read back from the store
// when it was set up (nil when there were none): subtracted from Stats,
// what this process counted.
func (m *Machine) Restored(coll string) Counters {
	if c := m.colls[coll]; c != nil && c.ps.restored != nil {
		return c.ps.restored.clone()
	}
	return nil
}

// ThisRun returns the counters of stats that this process counted:
// cumulative counters less what restored holds; maxima (k_max) and
// gauges are kept as they are.
func ThisRun(stats, restored Counters) Counters {
	out := stats.clone()
	for k, v := range restored {
		if strings.HasSuffix(k, "_max") {
			continue
		}
		if _, ok := out[k]; ok {
			out[k] -= v
		}
	}
	return out
}
