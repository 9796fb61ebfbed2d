package nodesched

import (
	"encoding/binary"
	"fmt"
	"time"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/diskspace"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
)

// The limits section (MS-FSCCFG 2.2.4.18): fail-safe limits on the free
// disk space of the data directory's file system and on the number of
// stored documents. When a collection passes one it enters the crawl mode
// "refresh only" (MS-FSCADM 2.2.3.6: Refreshing(limit=disk_free) or
// Refreshing(limit=max_doc)): only URIs already in the crawl store are
// fetched again. A new URI served meanwhile is not lost: it is held on
// disk, in the same batch as the frontier's Done,
//
//	'm' "nodesched/held/" lp(collection) uri -> held entry (heldEntry)
//
// and queued again (bypassing the seen-set) when the collection leaves the
// mode. It leaves it with a margin, so that it does not flap at the
// threshold (docs/decisions/pipeline.md): when the free space is back at disk_free
// plus disk_free_slack percent, and when the stored documents are down to
// max_doc minus max_doc_slack.

// DiskSpaceFunc reports the free and total bytes of the file system that
// holds dir (the data directory).
type DiskSpaceFunc func(dir string) (free, total uint64, err error)

// LimitCheckInterval is how often the free disk space is read (the
// document count is checked after every crawl step as well).
const LimitCheckInterval = 5 * time.Second

type limitSettings struct {
	diskFree, diskFreeSlack int // percent; diskFree 0: off
	maxDoc, maxDocSlack     int // documents; maxDoc 0: off
}

func compileLimits(eff *config.Effective) (limitSettings, error) {
	l := eff.Limits()
	ls := limitSettings{diskFree: l.DiskFree, diskFreeSlack: l.DiskFreeSlack, maxDoc: l.MaxDoc, maxDocSlack: l.MaxDocSlack}
	if ls.diskFree < 0 || ls.diskFree > 100 || ls.diskFreeSlack < 0 || ls.maxDoc < 0 || ls.maxDocSlack < 0 {
		return ls, fmt.Errorf("limits: negative or out of range value %+v", l)
	}
	return ls, nil
}

func (l limitSettings) on() bool { return l.diskFree > 0 || l.maxDoc > 0 }

// limitState is a collection's limits mode: "" (normal), "disk_free" or
// "max_doc".
type limitState struct {
	mode string
	// freePct is the last free disk space read, in percent (valid when
	// freeKnown).
	freePct   int
	freeKnown bool
}

// limitMachine is the machine's part: when the disk is read next, and
// whether a failing read was logged.
type limitMachine struct {
	next      time.Time
	warnedErr bool
}

func (m *Machine) limitInterval() time.Duration {
	if m.cfg.LimitCheckInterval > 0 {
		return m.cfg.LimitCheckInterval
	}
	return LimitCheckInterval
}

// LimitMode returns a collection's crawl mode as MS-FSCADM 2.2.3.6 names
// it when a limit holds it (stats.CrawlModeDiskFree, stats.CrawlModeMaxDoc),
// or "".
func (m *Machine) LimitMode(coll string) string {
	c := m.colls[coll]
	if c == nil {
		return ""
	}
	switch c.lim.mode {
	case "disk_free":
		return stats.CrawlModeDiskFree
	case "max_doc":
		return stats.CrawlModeMaxDoc
	}
	return ""
}

// limitsOn reports whether a collection has a limit or is held by one.
func (m *Machine) limitsOn() bool {
	for _, c := range m.colls {
		if c.limits.on() || c.lim.mode != "" {
			return true
		}
	}
	return false
}

// checkLimits reads the free disk space when it is due (disk) and the
// document count, and moves collections in and out of the limits mode.
func (m *Machine) checkLimits(now time.Time, disk bool) error {
	freePct := -1
	if disk && !now.Before(m.lim.next) {
		m.lim.next = now.Add(m.limitInterval())
		need := false
		for _, c := range m.colls {
			need = need || c.limits.diskFree > 0
		}
		if need {
			freePct = m.readDiskFree()
		}
	}
	for _, name := range m.order {
		c := m.colls[name]
		if err := m.checkCollectionLimits(c, freePct, now); err != nil {
			return err
		}
	}
	return nil
}

// readDiskFree returns the free space of the data directory's file system
// in percent, or -1 when it cannot be read.
func (m *Machine) readDiskFree() int {
	fn := m.cfg.DiskSpace
	if fn == nil {
		fn = diskspace.Read
	}
	free, total, err := fn(m.st.Dir())
	if err != nil || total == 0 {
		if !m.lim.warnedErr {
			m.lim.warnedErr = true
			m.log.Warn("nodesched: cannot read the free disk space; limits/disk_free is not applied", "dir", m.st.Dir(), "err", err)
		}
		return -1
	}
	return int(free * 100 / total)
}

func (m *Machine) checkCollectionLimits(c *collection, freePct int, now time.Time) error {
	ls := c.limits
	if !ls.on() && c.lim.mode == "" {
		return nil
	}
	if freePct >= 0 {
		c.lim.freePct, c.lim.freeKnown = freePct, true
	}
	docs := int64(-1)
	if ls.maxDoc > 0 {
		n, err := m.st.DocumentCount(c.s.Name)
		if err != nil {
			return err
		}
		docs = n
	}
	diskLow := ls.diskFree > 0 && c.lim.freeKnown && c.lim.freePct < ls.diskFree
	diskBack := ls.diskFree == 0 || !c.lim.freeKnown || c.lim.freePct >= ls.diskFree+ls.diskFreeSlack
	docsFull := ls.maxDoc > 0 && docs >= int64(ls.maxDoc)
	docsBack := ls.maxDoc == 0 || docs <= int64(ls.maxDoc-ls.maxDocSlack)
	mode := c.lim.mode
	switch {
	case diskLow:
		mode = "disk_free"
	case docsFull:
		mode = "max_doc"
	case mode == "disk_free" && diskBack && !docsBack:
		mode = "max_doc" // still over max_doc's margin
	case mode == "max_doc" && docsBack && !diskBack:
		mode = "disk_free"
	case (mode == "disk_free" || mode == "max_doc") && diskBack && docsBack:
		mode = ""
	}
	if mode == c.lim.mode {
		return nil
	}
	was := c.lim.mode
	c.lim.mode = mode
	if mode != "" {
		c.count("limit_entered_"+mode, 1)
		m.log.Warn("nodesched: collection enters refresh-only mode (limits)", "collection", c.s.Name, "limit", mode,
			"free_pct", c.lim.freePct, "disk_free", ls.diskFree, "documents", docs, "max_doc", ls.maxDoc)
		return nil
	}
	m.log.Info("nodesched: collection leaves refresh-only mode (limits)", "collection", c.s.Name, "limit", was,
		"free_pct", c.lim.freePct, "documents", docs)
	return m.releaseHeld(c, now)
}

// holdForLimit holds a new URI served while a limit holds the collection:
// the frontier is done with it and it waits on disk. It reports whether
// it did.
func (m *Machine) holdForLimit(c *collection, fe frontier.Fetch, now time.Time) (bool, error) {
	if c.lim.mode == "" {
		return false, nil
	}
	if c.inflight[fe.Site]--; c.inflight[fe.Site] <= 0 {
		delete(c.inflight, fe.Site)
	}
	tx, err := c.front.Begin(now)
	if err != nil {
		return true, err
	}
	if err := tx.Done(fe, frontier.Result{Outcome: frontier.Skipped}); err != nil {
		tx.Discard()
		return true, err
	}
	if err := tx.Batch().SetRaw(store.SpaceMeta, heldKey(c.s.Name, fe.URI), encodeHeld(fe.Entry)); err != nil {
		tx.Discard()
		return true, err
	}
	if err := tx.Commit(); err != nil {
		return true, err
	}
	c.setCur(fe.Site)
	c.count("limit_held", 1)
	c.clearCur()
	return true, nil
}

const heldPrefix = "nodesched/held/"

func heldCollPrefix(coll string) []byte { return store.AppendLP([]byte(heldPrefix), coll) }

func heldKey(coll, uri string) []byte { return append(heldCollPrefix(coll), uri...) }

// encodeHeld writes an entry: version 1, uvarint hops, level, URI flags,
// then lp(site), lp(referrer), lp(extra).
func encodeHeld(e frontier.Entry) []byte {
	b := []byte{1}
	b = binary.AppendUvarint(b, uint64(max(e.Hops, 0)))
	b = binary.AppendUvarint(b, uint64(max(e.Level, 0)))
	b = binary.AppendUvarint(b, uint64(e.URIFlags))
	b = store.AppendLP(b, e.Site)
	b = store.AppendLP(b, e.Referrer)
	return store.AppendLP(b, string(e.Extra))
}

func decodeHeld(uri string, b []byte) (frontier.Entry, error) {
	e := frontier.Entry{URI: uri}
	bad := fmt.Errorf("nodesched: held entry of %s: corrupt", uri)
	if len(b) < 1 || b[0] != 1 {
		return e, bad
	}
	b = b[1:]
	var vals [3]uint64
	for i := range vals {
		v, n := binary.Uvarint(b)
		if n <= 0 || v > 1<<32 {
			return e, bad
		}
		vals[i], b = v, b[n:]
	}
	e.Hops, e.Level, e.URIFlags = int(vals[0]), int(vals[1]), uint32(vals[2])
	var extra string
	var err error
	if e.Site, b, err = store.ReadLP(b); err != nil {
		return e, bad
	}
	if e.Referrer, b, err = store.ReadLP(b); err != nil {
		return e, bad
	}
	if extra, b, err = store.ReadLP(b); err != nil || len(b) != 0 {
		return e, bad
	}
	if extra != "" {
		e.Extra = []byte(extra)
	}
	return e, nil
}

// heldChunk bounds the entries released in one batch.
const heldChunk = 512

// releaseHeld queues the held entries of c again, heldChunk per batch
// (each batch adds its entries and deletes their held keys).
func (m *Machine) releaseHeld(c *collection, now time.Time) error {
	p := heldCollPrefix(c.s.Name)
	for {
		var es []frontier.Entry
		var keys [][]byte
		err := m.st.IterRaw(store.SpaceMeta, p, func(k, v []byte) error {
			uri := string(k[len(p):])
			keys = append(keys, append([]byte(nil), k...))
			if e, err := decodeHeld(uri, v); err == nil {
				e.QueueFlags |= frontier.QFForce // the seen-set has it already
				es = append(es, e)
			} else {
				m.log.Warn("nodesched: dropping a held entry", "collection", c.s.Name, "err", err)
			}
			if len(keys) >= heldChunk {
				return store.ErrStop
			}
			return nil
		})
		if err != nil {
			return err
		}
		if len(keys) == 0 {
			m.pump(c)
			return nil
		}
		tx, err := c.front.Begin(now)
		if err != nil {
			return err
		}
		res, err := tx.Add(es...)
		if err != nil {
			tx.Discard()
			return err
		}
		for _, k := range keys {
			if err := tx.Batch().DeleteRaw(store.SpaceMeta, k); err != nil {
				tx.Discard()
				return err
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
		c.count("limit_released", int64(res.Queued))
	}
}
