package nodesched

import (
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/store"
)

// Checksum operations survive a crash. A PPDUP_ADD or PPDUP_REMOVE is
// recorded in the crawl store in the batch of the step that sends it and
// forgotten in the batch that applies its answer (PPDUP_ADD_OK,
// PPDUP_REMOVE_OK). The driver sends an unanswered operation again on a
// new link (reliable.go), but its list lives in memory: a node scheduler
// killed between the step and the answer would otherwise keep a document
// it fetched as the owner of its checksum while the duplicate server made
// it a duplicate of another URI, and the duplicate group would have two
// owners. When a duplicate server's link first comes up in a process, the
// machine sends every operation recorded for it again (after the
// collection configurations); the duplicate server's answer to an
// operation it already has is the same (MS-FSCMT 3.1.5.23).
//
// Key: dsOpPrefix, lp(collection), 'a' (add) or 'r' (remove), the 16-byte
// checksum, the URI. The value is empty.
const dsOpPrefix = "nodesched/dsop/"

func dsOpCollPrefix(coll string) []byte { return store.AppendLP([]byte(dsOpPrefix), coll) }

func dsOpStoreKey(coll string, add bool, cs cmt.Checksum, uri string) []byte {
	k := dsOpCollPrefix(coll)
	if add {
		k = append(k, 'a')
	} else {
		k = append(k, 'r')
	}
	k = append(k, cs[:]...)
	return append(k, uri...)
}

// recordDSOp records an operation sent in the step whose batch is b.
func recordDSOp(b *store.Batch, coll string, add bool, cs cmt.Checksum, uri string) error {
	return b.SetRaw(store.SpaceMeta, dsOpStoreKey(coll, add, cs, uri), nil)
}

// answeredDSOp forgets an operation in the batch that applies its answer.
func answeredDSOp(b *store.Batch, coll string, add bool, cs cmt.Checksum, uri string) error {
	return b.DeleteRaw(store.SpaceMeta, dsOpStoreKey(coll, add, cs, uri))
}

// dsColl names a duplicate server and a collection.
type dsColl struct {
	ds   int
	coll string
}

// resendDSOps sends again the recorded operations of collection c that
// belong to duplicate server i, after the collection's configuration,
// once per process (the driver resends on later links itself). A node
// scheduler learns its collections after it starts (from its store or the
// multinode scheduler), so this runs when a configuration is sent, not
// when the link comes up.
func (m *Machine) resendDSOps(i int, c *collection) {
	k := dsColl{i, c.s.Name}
	if m.dsOpsResent == nil {
		m.dsOpsResent = map[dsColl]bool{}
	}
	if m.dsOpsResent[k] {
		return
	}
	m.dsOpsResent[k] = true
	name := c.s.Name
	n := 0
	p := dsOpCollPrefix(name)
	err := m.st.IterRaw(store.SpaceMeta, p, func(k, _ []byte) error {
		rest := k[len(p):]
		if len(rest) < 17 || (rest[0] != 'a' && rest[0] != 'r') {
			return nil
		}
		var cs cmt.Checksum
		copy(cs[:], rest[1:17])
		if m.dsFor(cs) != DS(i) {
			return nil
		}
		uri := string(rest[17:])
		if rest[0] == 'a' {
			m.send(DS(i), &cmt.PPDUPAdd{Collection: name, NodeID: m.cfg.NodeID, URI: uri, Checksum: cs})
		} else {
			m.send(DS(i), &cmt.PPDUPRemove{Collection: name, NodeID: m.cfg.NodeID, URI: uri, Checksum: cs})
		}
		n++
		return nil
	})
	if err != nil {
		m.log.Warn("nodesched: reading unanswered checksum operations", "collection", name, "err", err)
	}
	if n > 0 {
		m.log.Info("nodesched: checksum operations unanswered before a restart sent again", "dupserver", i, "collection", name, "operations", n)
	}
}
