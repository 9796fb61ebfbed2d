package nodesched

import (
	"sort"
	"time"

	"github.com/trawl/trawl/internal/cmt"
)

// DefaultMaxMissedKeepAlives is how many keep-alive periods in a row a peer
// may leave unanswered before the node scheduler drops the link as dead and
// dials again (docs/decisions/links.md).
const DefaultMaxMissedKeepAlives = 2

// linkState is what the machine keeps so that a broken link loses nothing
// it can re-ask for: the crawl-IP grants asked and not answered, and the
// keep-alive periods each peer left unanswered.
type linkState struct {
	grants map[grantKey]string // (collection, site) -> IP asked for
	misses map[Peer]int
	dead   []Peer
}

type grantKey struct{ coll, site string }

func (c MachineConfig) keepAlive() time.Duration {
	if c.KeepAlive > 0 {
		return c.KeepAlive
	}
	return KeepaliveInterval
}

func (c MachineConfig) statsInterval() time.Duration {
	if c.StatsInterval > 0 {
		return c.StatsInterval
	}
	return StatsInterval
}

func (c MachineConfig) maxMissed() int {
	if c.MaxMissedKeepAlives > 0 {
		return c.MaxMissedKeepAlives
	}
	return DefaultMaxMissedKeepAlives
}

// grantAsked records a CMD_UM_START_CRAWL_IP waiting for its answer.
func (m *Machine) grantAsked(coll, site, ip string) {
	if m.lk.grants == nil {
		m.lk.grants = map[grantKey]string{}
	}
	m.lk.grants[grantKey{coll, site}] = ip
}

// grantAnswered forgets it.
func (m *Machine) grantAnswered(coll, site string) {
	delete(m.lk.grants, grantKey{coll, site})
}

// missedKeepAlive counts a keep-alive period p left unanswered; at the
// limit p is reported dead (DeadPeers).
func (m *Machine) missedKeepAlive(p Peer) {
	if m.lk.misses == nil {
		m.lk.misses = map[Peer]int{}
	}
	m.lk.misses[p]++
	if m.lk.misses[p] >= m.cfg.maxMissed() {
		m.log.Error("nodesched: peer dead (keep-alives unanswered), dropping the link", "peer", p, "missed", m.lk.misses[p])
		m.lk.dead = append(m.lk.dead, p)
		delete(m.lk.misses, p)
	}
}

// keepAliveAnswered clears p's count.
func (m *Machine) keepAliveAnswered(p Peer) { delete(m.lk.misses, p) }

// DeadPeers returns and clears the peers whose links the driver must close
// (and dial again) because they stopped answering keep-alives.
func (m *Machine) DeadPeers() []Peer {
	d := m.lk.dead
	m.lk.dead = nil
	return d
}

// askAgain sends again, after CMD_UM_INIT on a new link to the multinode
// scheduler, the DNS requests and crawl-IP requests still unanswered: the
// old link (or the old multinode scheduler) may have lost them, and the
// sites waiting for them would wait forever.
func (m *Machine) askAgain() {
	hosts := make([]string, 0, len(m.dnsPending))
	for h := range m.dnsPending {
		hosts = append(hosts, h)
	}
	sort.Strings(hosts)
	for _, h := range hosts {
		coll := ""
		if w := m.dnsPending[h]; len(w) > 0 {
			coll = w[0].coll
		}
		m.send(MNS, &cmt.UMDNSRequest{Collection: coll, Site: h})
	}
	keys := make([]grantKey, 0, len(m.lk.grants))
	for k := range m.lk.grants {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].coll != keys[j].coll {
			return keys[i].coll < keys[j].coll
		}
		return keys[i].site < keys[j].site
	})
	for _, k := range keys {
		if m.colls[k.coll] == nil {
			delete(m.lk.grants, k)
			continue
		}
		m.send(MNS, &cmt.UMStartCrawlIP{Collection: k.coll, IP: m.lk.grants[k], Site: k.site})
	}
}
