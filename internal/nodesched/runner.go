package nodesched

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/loop"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// runner puts the node scheduler's Machine on the shared driver: it is the
// loop.Machine the Driver runs (package comment, "On the shared driver").
// It keeps what the old event loop kept beside the machine (per peer: the
// backlog while the link is down, the URIs to send again, the checksum
// operations not answered; the fetches in flight; the fetchers waiting for
// a host's address) and turns the machine's drained outputs into batches.
type runner struct {
	loop.Base[cmt.Message]
	d *Driver
	m *Machine
	// st is the crawl store the fetch workers read (the machine's writes
	// are committed to it before the jobs of the same batch start).
	st    *store.Store
	peers map[Peer]*peerConn
	links map[Peer]*loop.Redial[cmt.Message]
	byID  map[loop.Peer]Peer

	// now is the time of the last event or operation: Ready drains the
	// machine at it.
	now      time.Time
	inFlight int
	nextJob  uint64
	waiters  map[string][]chan string
	lastSync time.Time
	// dirty: an event or operation changed the machine; Ready drains it.
	dirty bool
	fatal error
}

// Records of the runner's batches, applied by the Driver's storage (apply).
type (
	// syncWAL makes the crawl store's writes so far durable (the group
	// commit, every second).
	syncWAL struct{}
	// fatalErr stops the driver with err (a crawl step the store could
	// not commit).
	fatalErr struct{ err error }
)

// peerTag names a peer's dial (loop.Event.Tag) and its address for the
// dialer.
func peerTag(p Peer) string { return p.String() }

func newRunner(d *Driver, m *Machine, now time.Time) *runner {
	r := &runner{d: d, m: m, now: now, peers: map[Peer]*peerConn{MNS: {}}, links: map[Peer]*loop.Redial[cmt.Message]{},
		byID: map[loop.Peer]Peer{}, waiters: map[string][]chan string{}, dirty: true}
	add := func(p Peer) {
		if r.peers[p] == nil {
			r.peers[p] = &peerConn{}
		}
		l := &loop.Redial[cmt.Message]{Tag: peerTag(p), Addr: peerTag(p), Name: "nodesched: peer " + p.String()}
		r.links[p] = l
		l.Start(&r.Pending)
	}
	if d.cfg.MNS != nil {
		add(MNS)
	}
	for i := range d.cfg.DS {
		add(DS(i))
	}
	return r
}

// Step applies one event of the driver.
func (r *runner) Step(ev loop.Event[cmt.Message]) {
	r.dirty = true
	now := ev.Now
	r.now = now
	switch ev.Kind {
	case loop.Connected:
		for p, l := range r.links {
			if ev.Tag == l.Tag {
				if f := l.Failures(); f > 0 {
					r.Pending.Log(slog.LevelInfo, "nodesched: peer reachable again", "peer", p, "failures", f)
				}
				l.Step(ev, &r.Pending)
				r.up(p, ev.Peer, now)
				return
			}
		}
		r.Pending.CloseConn(ev.Peer, "not a peer of this node scheduler")
	case loop.DialFailed, loop.Tick:
		for _, l := range r.links {
			l.Step(ev, &r.Pending)
		}
	case loop.Closed:
		p, ok := r.byID[ev.Peer]
		if !ok {
			return
		}
		delete(r.byID, ev.Peer)
		r.links[p].Step(ev, &r.Pending)
		if pc := r.peers[p]; pc.id == ev.Peer {
			r.Pending.Log(slog.LevelWarn, "nodesched: link lost", "peer", p, "err", ev.Err)
			pc.id = 0
			pc.lost()
			r.m.Connected(p, false, now)
		}
	case loop.Received:
		p, ok := r.byID[ev.Peer]
		if !ok {
			return
		}
		if p.DS {
			r.peers[p].answered(ev.Msg)
		}
		// URIs to screen go off the loop and come back with their verdict
		// (screener.go).
		if coll, s, raw, ok := r.m.ToScreen(ev.Msg); ok && r.d.screen != nil &&
			r.d.screen.offer(coll, screenReq{peer: p, msg: ev.Msg, s: s, raw: raw}) {
			return
		}
		if err := r.m.Handle(p, ev.Msg, now); err != nil {
			r.Pending.Log(slog.LevelWarn, "nodesched: message failed", "peer", p, "cmd", ev.Msg.Code(), "err", err)
		}
	case loop.Result:
		r.inFlight--
		o, _ := ev.Result.(*crawlpipe.Outcome)
		if o == nil || r.fatal != nil {
			return
		}
		if r.d.cfg.Observe != nil {
			r.d.cfg.Observe(o.Job.S.Name, o)
		}
		if err := r.m.Complete(o, now); err != nil {
			r.fail(fmt.Errorf("nodesched: committing %s: %w", o.Job.Fetch.URI, err))
		}
	}
}

func (r *runner) fail(err error) {
	if r.fatal == nil {
		r.fatal = err
		r.Pending.Persist = append(r.Pending.Persist, fatalErr{err})
	}
}

// send queues o on pc's link and tracks it (reliable.go).
func (r *runner) send(pc *peerConn, o Output, now time.Time) {
	r.Pending.Send(pc.id, o.Msg, int(o.Priority))
	r.d.track(pc, o, now)
}

// up is a link of p coming up on connection id: CMD_UM_INIT (and the
// configurations of a duplicate server) go first, then what was kept while
// the link was down, then the URIs sent on the previous links within the
// resend window (the old link may have lost them).
func (r *runner) up(p Peer, id loop.Peer, now time.Time) {
	pc := r.peers[p]
	pc.id = id
	r.byID[id] = p
	r.m.Connected(p, true, now)
	var others []Output
	for _, o := range r.m.Outputs() {
		if o.To == p {
			r.send(pc, o, now)
		} else {
			others = append(others, o)
		}
	}
	recent, backlog := pc.recent, pc.backlog
	pc.recent, pc.backlog = nil, nil
	for _, o := range backlog {
		if _, isInit := o.Msg.(*cmt.UMInit); isInit {
			continue
		}
		if !p.DS && reasked(o.Msg) {
			continue
		}
		r.send(pc, o, now)
	}
	n := 0
	for _, x := range recent {
		if now.Sub(x.at) > r.d.resendWindow() {
			continue
		}
		r.Pending.Send(pc.id, x.o.Msg, int(x.o.Priority))
		n++
		r.d.track(pc, x.o, x.at) // kept for the next link too
	}
	if n > 0 {
		r.Pending.Log(slog.LevelInfo, "nodesched: URIs sent again on the new link", "peer", p, "uris", n)
	}
	r.route(others, now)
}

// route sends outputs on their links, or keeps them (bounded) while a
// link is down.
func (r *runner) route(outs []Output, now time.Time) {
	for _, o := range outs {
		pc := r.peers[o.To]
		if pc == nil {
			continue
		}
		if pc.id == 0 {
			if len(pc.backlog) < r.d.cfg.Backlog {
				pc.backlog = append(pc.backlog, o)
			} else {
				r.Pending.Log(slog.LevelWarn, "nodesched: backlog full, message dropped", "peer", o.To, "cmd", o.Msg.Code())
			}
			continue
		}
		r.send(pc, o, now)
	}
}

// Ready drains the machine into the batch once per batch: its timers, the
// fetches it has ready (as Work jobs, up to Config.Workers in flight), its
// messages, crawl log lines, dead peers and resolved names, and the
// group commit.
func (r *runner) Ready() loop.Batch[cmt.Message] {
	if r.dirty && r.fatal == nil {
		r.dirty = false
		r.drain(r.now)
	}
	// The machine's records go first: its store writes commit before
	// anything else of the batch is applied (records.go).
	if recs := r.m.Records(); len(recs) > 0 {
		r.Pending.Persist = append(recs, r.Pending.Persist...)
	}
	return r.Pending
}

func (r *runner) drain(now time.Time) {
	giveFeedResults(r.m, r.d.feeding.Load()) // records.go
	if err := r.m.Tick(now); err != nil {
		r.fail(err)
		return
	}
	wake := r.m.NextTimer()
	paused := r.diskPaused(now, &wake) // diskpause.go
	for !paused && r.inFlight < r.d.cfg.Workers {
		j, ok, w := r.m.Next(now)
		if !ok {
			if !w.IsZero() && w.Before(wake) {
				wake = w
			}
			break
		}
		r.inFlight++
		r.nextJob++
		j.Store = r.st // committed before the job starts (apply order)
		r.Pending.Work = append(r.Pending.Work, loop.Job{ID: r.nextJob, Spec: j})
	}
	r.route(r.m.Outputs(), now)
	r.crawlLog(r.m.CrawlLog())
	for _, p := range r.m.DeadPeers() {
		if pc := r.peers[p]; pc != nil && pc.id != 0 {
			r.Pending.CloseConn(pc.id, "keep-alives unanswered")
		}
	}
	for _, res := range r.m.Resolved() {
		r.d.ipMu.Lock()
		old := r.d.ips[res.Host]
		r.d.ips[res.Host] = dialIP{ip: res.IP, expires: res.Expires}
		r.d.ipMu.Unlock()
		if old.ip != "" && old.ip != res.IP {
			// The host moved: kept-alive connections to the old address
			// must not carry its next requests.
			if tr := r.d.tr.Load(); tr != nil {
				tr.CloseIdleConnections()
			}
		}
		for _, ch := range r.waiters[res.Host] {
			ch <- res.IP
		}
		delete(r.waiters, res.Host)
	}
	if now.Sub(r.lastSync) >= time.Second {
		r.lastSync = now
		r.Pending.Persist = append(r.Pending.Persist, syncWAL{})
	}
	if next := r.lastSync.Add(time.Second); next.Before(wake) {
		wake = next
	}
	if soon := now.Add(time.Millisecond); wake.Before(soon) {
		wake = soon
	}
	r.Pending.WakeAt(wake)
}

// crawlLog hands the machine's crawl log lines on: those of umlogs to the
// multinode scheduler in CMD_UM_LOG when it is connected (droppable: a full
// link drops them, never waits), the rest to the log files (a record for
// the storage, which queues it for the log writer).
func (r *runner) crawlLog(entries []LogEntry) {
	for _, e := range entries {
		if e.Remote && r.d.cfg.MNS != nil {
			pc := r.peers[MNS]
			if pc.id == 0 {
				if n := r.d.logsDropped.Add(1); n&(n-1) == 0 {
					r.Pending.Log(slog.LevelWarn, "nodesched: crawl log lines for the multinode scheduler dropped", "collection", e.Collection, "log", e.Kind.String(), "dropped", n)
				}
				continue
			}
			f, _ := e.Kind.LogFile()
			r.Pending.Out = append(r.Pending.Out, loop.Envelope[cmt.Message]{To: pc.id,
				Msg: &cmt.UMLog{Collection: e.Collection, File: f, Text: e.Line}, Priority: int(cmt.PriorityNormal), Droppable: true})
			continue
		}
		r.Pending.Persist = append(r.Pending.Persist, e.Entry)
	}
}

// Advance forgets the applied batch and publishes the counters the
// administration reads (Driver.Idle, Stats, SiteStats).
func (r *runner) Advance() {
	r.Base.Advance()
	d := r.d
	now := d.now()
	d.idleMu.Lock()
	defer d.idleMu.Unlock()
	// Screening starts and ends on the loop (screener.go): a verdict
	// handled since the last iteration shows here with its URIs queued.
	d.idle = r.inFlight == 0 && r.m.Idle() && d.screening.Load() == 0
	d.stats = map[string]Counters{}
	giveFeedResults(r.m, d.feeding.Load())
	for _, c := range r.m.Collections() {
		d.stats[c] = r.m.Stats(c)
		if d.restored[c] == nil {
			if rs := r.m.Restored(c); rs != nil {
				if d.restored == nil {
					d.restored = map[string]Counters{}
				}
				d.restored[c] = rs
			}
		}
	}
	if now.Sub(d.siteStatsAt) >= siteStatsEvery || now.Before(d.siteStatsAt) {
		d.siteStatsAt = now
		d.siteStats = map[string]map[string]Counters{}
		for _, c := range r.m.Collections() {
			d.siteStats[c] = r.m.SiteStats(c)
		}
	}
}

// apply is the driver's Storage: the machine's store writes (with their
// content operations for the feeding outboxes, fd) and uri_dir file work,
// the group commit, crawl log lines for the files, and a fatal error.
func (r *runner) apply(st *store.Store, fd *Feeding, recs []any) error {
	for _, rec := range recs {
		switch x := rec.(type) {
		case storeWrites:
			if err := commitWrites(st, fd, x); err != nil {
				return fmt.Errorf("nodesched: committing the crawl store: %w", err)
			}
		case uriDirWork:
			r.d.offload(x.f)
		case feedConf, feedState:
			if err := applyFeedConf(fd, x); err != nil {
				r.d.log.Error("nodesched: setting up the feeding; the collection does not feed", "err", err)
			}
		case syncWAL:
			if err := st.SyncWAL(); err != nil {
				return err
			}
		case crawllog.Entry:
			r.d.logs.Log(x)
		case fatalErr:
			return x.err
		}
	}
	return nil
}

// peerDialer dials the peers with the configured DialFuncs; the address
// is the peer's tag.
type peerDialer struct{ d *Driver }

func (pd peerDialer) Dial(ctx context.Context, addr string) (loop.Conn[cmt.Message], error) {
	var f DialFunc
	if addr == peerTag(MNS) {
		f = pd.d.cfg.MNS
	}
	for i, df := range pd.d.cfg.DS {
		if addr == peerTag(DS(i)) {
			f = df
		}
	}
	if f == nil {
		return nil, errors.New("nodesched: no such peer: " + addr)
	}
	c, err := f(ctx)
	if err != nil {
		return nil, err
	}
	return loop.CMT(c, addr), nil
}

// handleScreened handles a message screened off the loop with verdict v.
func (r *runner) handleScreened(q screenReq, v *screenVerdict, now time.Time) {
	if err := r.m.HandleScreened(q.peer, q.msg, v, now); err != nil {
		r.Pending.Log(slog.LevelWarn, "nodesched: message failed", "peer", q.peer, "cmd", q.msg.Code(), "err", err)
	}
}
