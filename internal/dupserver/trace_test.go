package dupserver

import (
	"crypto/md5"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/loop/looptest"
)

// TestTraces runs the scenario traces of testdata/*.trace: each is one
// sequence of MS-FSCMT section 3.3 or 3.4, events in, batches out.
//
//	new ds|replica|failover [replica] [replica-addr=A] [window=N] [max-queued=N]
//	    [keepalive=D] [replica-timeout=D] [promote-after=D] [keep-store]
//	connect peer=N [tag=listen|replica|failover]
//	close peer=N
//	dial-failed [tag=replica] [err=TEXT]
//	recv peer=N          one message a line: VERB key=value ...
//	store                the checksum store's mappings, dirty keys, collections
//	status               the duplicate server's DSStatus
//
// Message verbs: set-config coll vc; add and remove coll node uri cs [ppdup
// db]; add-ok and remove-ok coll node uri cs [owner ppdup db]; config-ack
// vc; conf-remove coll [ppdup]; conf-remove2 coll; keepalive;
// keepalive-ack; error coll why. A checksum cs=WORD is the MD5 of WORD and
// prints as WORD.
func TestTraces(t *testing.T) {
	looptest.Run[cmt.Message](t, "testdata/*.trace", &traceHarness{})
}

type traceHarness struct {
	st    *MemStore
	words map[cmt.Checksum]string
}

func (h *traceHarness) sum(word string) cmt.Checksum {
	cs := cmt.Checksum(md5.Sum([]byte(word)))
	if h.words == nil {
		h.words = map[cmt.Checksum]string{}
	}
	h.words[cs] = word
	return cs
}

func (h *traceHarness) name(cs cmt.Checksum) string { return h.words[cs] }

func (h *traceHarness) New(t *testing.T, d *datadriven.TestData) loop.Machine[cmt.Message] {
	if h.st == nil || !d.HasArg("keep-store") {
		h.st = NewMemStore()
	}
	if len(d.CmdArgs) == 0 {
		d.Fatalf(t, "new: which role?")
	}
	dur := func(key string) time.Duration {
		if !d.HasArg(key) {
			return 0
		}
		var s string
		d.ScanArgs(t, key, &s)
		v, err := time.ParseDuration(s)
		if err != nil {
			d.Fatalf(t, "%s: %v", key, err)
		}
		return v
	}
	num := func(key string) int {
		if !d.HasArg(key) {
			return 0
		}
		var n int
		d.ScanArgs(t, key, &n)
		return n
	}
	str := func(key string) string {
		if !d.HasArg(key) {
			return ""
		}
		var s string
		d.ScanArgs(t, key, &s)
		return s
	}
	if d.HasArg("epoch") {
		// The store's fencing record before the machine is built.
		h.st.SetFence(Fence{Epoch: uint64(num("epoch")), PromotablePeer: d.HasArg("promotable-peer"), Deposed: d.HasArg("deposed")})
	}
	cfg := DSConfig{NodeID: "ds-1", DBDir: "/data/ds", Replica: d.HasArg("replica") || d.HasArg("replica-addr"),
		ReplicaAddr: str("replica-addr"), KeepAlive: dur("keepalive"), ReplicaTimeout: dur("replica-timeout"),
		Window: num("window"), MaxQueued: num("max-queued")}
	switch d.CmdArgs[0].Key {
	case "ds":
		ds, err := NewDS(cfg, h.st)
		if err != nil {
			d.Fatalf(t, "new ds: %v", err)
		}
		return ds
	case "replica":
		return NewReplica(ReplicaConfig{KeepAlive: cfg.KeepAlive}, h.st)
	case "failover":
		cfg.Replica, cfg.ReplicaAddr = false, str("failover-replica")
		return NewFailover(FailoverConfig{Replica: ReplicaConfig{KeepAlive: cfg.KeepAlive}, DS: cfg,
			PromoteAfter: dur("promote-after"), Start: looptest.Start}, h.st)
	}
	d.Fatalf(t, "new: unknown role %s", d.CmdArgs[0].Key)
	return nil
}

func (h *traceHarness) Events(t *testing.T, d *datadriven.TestData) ([]loop.Event[cmt.Message], error) {
	peer := func() loop.Peer {
		var n int
		d.ScanArgs(t, "peer", &n)
		return loop.Peer(n)
	}
	tag := func(def string) string {
		if d.HasArg("tag") {
			d.ScanArgs(t, "tag", &def)
		}
		return def
	}
	switch d.Cmd {
	case "connect":
		return []loop.Event[cmt.Message]{{Kind: loop.Connected, Peer: peer(), Tag: tag(TagListen)}}, nil
	case "close":
		return []loop.Event[cmt.Message]{{Kind: loop.Closed, Peer: peer()}}, nil
	case "tick":
		return []loop.Event[cmt.Message]{{Kind: loop.Tick}}, nil
	case "dial-failed":
		why := "connection refused"
		if d.HasArg("err") {
			d.ScanArgs(t, "err", &why)
		}
		return []loop.Event[cmt.Message]{{Kind: loop.DialFailed, Tag: tag(TagReplica), Err: fmt.Errorf("%s", why)}}, nil
	case "recv":
		p := peer()
		var evs []loop.Event[cmt.Message]
		for _, line := range strings.Split(strings.TrimSpace(d.Input), "\n") {
			if line = strings.TrimSpace(line); line == "" {
				continue
			}
			m, err := h.parse(line)
			if err != nil {
				return nil, err
			}
			evs = append(evs, loop.Event[cmt.Message]{Kind: loop.Received, Peer: p, Msg: m})
		}
		return evs, nil
	}
	return nil, fmt.Errorf("unknown command %s", d.Cmd)
}

func (h *traceHarness) parse(line string) (cmt.Message, error) {
	f := strings.Fields(line)
	kv := map[string]string{}
	for _, a := range f[1:] {
		k, v, ok := strings.Cut(a, "=")
		if !ok {
			return nil, fmt.Errorf("%q: want key=value", a)
		}
		kv[k] = v
	}
	var cs cmt.Checksum
	if w, ok := kv["cs"]; ok {
		cs = h.sum(w)
	}
	vc, _ := strconv.ParseInt(kv["vc"], 10, 64)
	switch f[0] {
	case "set-config":
		return setConfig(kv["coll"], vc), nil
	case "add":
		return &cmt.PPDUPAdd{Collection: kv["coll"], NodeID: kv["node"], URI: kv["uri"], Checksum: cs, PPDUPID: kv["ppdup"], DBName: kv["db"]}, nil
	case "remove":
		return &cmt.PPDUPRemove{Collection: kv["coll"], NodeID: kv["node"], URI: kv["uri"], Checksum: cs, PPDUPID: kv["ppdup"], DBName: kv["db"]}, nil
	case "add-ok":
		return &cmt.PPDUPAddOK{Collection: kv["coll"], NodeID: kv["node"], URI: kv["uri"], OwnerURI: kv["owner"], Checksum: cs, PPDUPID: kv["ppdup"], DBName: kv["db"]}, nil
	case "remove-ok":
		return &cmt.PPDUPRemoveOK{Collection: kv["coll"], NodeID: kv["node"], URI: kv["uri"], Checksum: cs, PPDUPID: kv["ppdup"], DBName: kv["db"]}, nil
	case "config-ack":
		return &cmt.PPDUPConfigAck{VClock: vc}, nil
	case "conf-remove":
		return &cmt.PPDUPConfRemove{Collection: kv["coll"], PPDUPID: kv["ppdup"]}, nil
	case "conf-remove2":
		return &cmt.PPDUPConfRemove2{Collection: kv["coll"]}, nil
	case "keepalive":
		ep, _ := strconv.ParseInt(kv["ep"], 10, 64)
		return &cmt.PPDUPKeepalive{Epoch: ep}, nil
	case "keepalive-ack":
		return &cmt.PPDUPKeepaliveAck{}, nil
	case "error":
		return &cmt.PPDUPError{Collection: kv["coll"], Why: strings.ReplaceAll(kv["why"], "_", " ")}, nil
	}
	return nil, fmt.Errorf("unknown message %s", f[0])
}

func (h *traceHarness) Format(b loop.Batch[cmt.Message]) string {
	out := looptest.FormatCommon(b, func(m cmt.Message) string {
		return looptest.CMT(m, h.name, func(name string, v any) (string, bool) {
			if c, ok := v.(cmt.CrawlConfig); ok && name == "Config" {
				names := make([]string, len(c.Collections))
				for i, c := range c.Collections {
					names[i] = c.Name
				}
				return "[" + strings.Join(names, " ") + "]", true
			}
			return "", false
		})
	})
	// Keys in log lines print their checksum in hex: name it.
	for cs, w := range h.words {
		out = strings.ReplaceAll(out, cs.String(), w)
	}
	return out
}

// Inspect answers "store" and "status".
func (h *traceHarness) Inspect(t *testing.T, d *datadriven.TestData, m loop.Machine[cmt.Message]) (string, bool) {
	switch d.Cmd {
	case "store":
		var sb strings.Builder
		h.st.Mappings("", func(k Key, o Owner) error {
			fmt.Fprintf(&sb, "mapping %s/%s -> %s %s\n", k.Collection, h.keyName(k), o.URI, o.NodeID)
			return nil
		})
		dirty, _ := h.st.DirtyKeys(Key{}, 1<<20)
		for _, k := range dirty {
			fmt.Fprintf(&sb, "dirty %s/%s\n", k.Collection, h.keyName(k))
		}
		recs, _ := h.st.Collections()
		for _, r := range recs {
			fmt.Fprintf(&sb, "collection %s removing=%t\n", r.Name, r.Removing)
		}
		tombs, _ := h.st.Tombstones()
		for _, n := range tombs {
			fmt.Fprintf(&sb, "tombstone %s\n", n)
		}
		if f, _ := h.st.Fence(); f != (Fence{}) {
			fmt.Fprintf(&sb, "fence epoch=%d promotable-peer=%t deposed=%t\n", f.Epoch, f.PromotablePeer, f.Deposed)
		}
		if sb.Len() == 0 {
			return "empty", true
		}
		return sb.String(), true
	case "status":
		var ds *DS
		switch m := m.(type) {
		case *DS:
			ds = m
		case *Failover:
			ds = m.ds
		}
		if ds == nil {
			return "not a duplicate server", true
		}
		s := ds.Status()
		sort.Strings(s.Collections)
		return fmt.Sprintf("collections=%v removing=%v node-schedulers=%d replica-connected=%t replica-normal=%t in-flight=%d held=%d backlog=%t tombstones=%d",
			s.Collections, s.Removing, s.NodeSchedulers, s.ReplicaConnected, s.ReplicaNormal, s.InFlight, s.Held, s.Backlog, s.Tombstones), true
	}
	return "", false
}

func (h *traceHarness) keyName(k Key) string {
	if w := h.words[k.Checksum]; w != "" {
		return w
	}
	return k.Checksum.String()
}
