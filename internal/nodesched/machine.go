package nodesched

import (
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/netip"
	"sort"
	"strconv"
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/keyfilter"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/urls"
)

// Timers of MS-FSCMT 3.1.2.
const (
	KeepaliveInterval  = 120 * time.Second
	QuarantineInterval = 5 * time.Second
	StatsInterval      = 60 * time.Second
)

// Peer names the other end of a message: the multinode scheduler, or
// duplicate server number Index (in --dupserver order).
type Peer struct {
	DS    bool
	Index int
}

// MNS is the multinode scheduler peer.
var MNS = Peer{}

// DS returns duplicate server i.
func DS(i int) Peer { return Peer{DS: true, Index: i} }

func (p Peer) String() string {
	if p.DS {
		return "dupserver " + strconv.Itoa(p.Index)
	}
	return "multinode"
}

// Output is a message the driver must send.
type Output struct {
	To       Peer
	Msg      cmt.Message
	Priority cmt.Priority
}

// MachineConfig configures a Machine.
type MachineConfig struct {
	NodeID     string // this node scheduler's identifier (--id)
	AdminHost  string // PKT_XMLRPCRT of CMD_UM_INIT
	AdminPort  int32
	DupServers int           // number of duplicate servers configured
	Store      View          // the crawl store (its staged view: view.go)
	Env        crawlpipe.Env // dialer and clock for the compiled settings
	Logger     *slog.Logger
	// KeepAlive is the keep-alive period of the links (KeepaliveInterval
	// if 0); MaxMissedKeepAlives periods in a row without an answer drop a
	// link (DefaultMaxMissedKeepAlives if 0).
	KeepAlive           time.Duration
	MaxMissedKeepAlives int
	// Feeds says the driver runs a feeding chain (feeding.go): the
	// machine then leaves content operations, the collections' feeding
	// configurations and suspension states in its records (records.go).
	Feeds bool
	// DiskSpace reads the free space of the data directory's file system
	// for limits/disk_free (limits.go; nil: the operating system's);
	// LimitCheckInterval is how often (LimitCheckInterval if 0).
	DiskSpace          DiskSpaceFunc
	LimitCheckInterval time.Duration
	// StatsInterval is how often the collections' statistics go to the
	// multinode scheduler in CMD_UM_STAT (StatsInterval if 0).
	StatsInterval time.Duration
}

// Machine is the node scheduler of MS-FSCMT 3.1 as a state machine: messages,
// timer ticks and finished crawl steps go in (Handle, Tick, Complete), and
// messages to send (Outputs), fetches to start (Next) and resolved host names
// (Resolved) come out, and what to persist (Records). It reads no clock,
// starts no goroutine, owns no socket and writes nothing: it reads the
// crawl store through a View whose batches it stages, and its writes, the
// content operations for the feeding chain and the storage/uri_dir file
// work leave it as records its driver applies (view.go, records.go). It
// is not safe for concurrent use.
type Machine struct {
	// verdict is the off-loop screening of the entry being handled
	// (HandleScreened), nil otherwise.
	verdict *screenVerdict
	cfg     MachineConfig
	st      View
	// dsOpsResent marks the duplicate servers whose unanswered checksum
	// operations were sent again after the process started (dsops.go).
	dsOpsResent map[dsColl]bool
	log         *slog.Logger
	colls       map[string]*collection
	order       []string // collection names, for round-robin serving
	rr          int

	out []Output
	// ready are deferred re-extraction jobs released by Complete, served
	// first by Next.
	ready []*crawlpipe.Job
	// stepFeed holds the content operations of the step being committed;
	// stepAnchors the anchor pairs it records (feeding_anchors.go).
	stepFeed    feedOps
	stepAnchors []uint64
	// feedPuts and work are the records for the driver (records.go): the
	// content operations of the staged commits, the uri_dir file work.
	feedPuts []feedPut
	work     []any
	// feedConfs are the feeding configuration records (records.go);
	// feedResults the destinations' answers the driver counted.
	feedConfs   []any
	feedResults map[string]FeedResults
	// lists holds the reported URI lists the batch being built changes
	// (reported.go).
	lists *listState

	mnsUp     bool
	mnsKAPend bool
	ds        []dsStatus

	dnsPending map[string][]dnsWaiter // host -> collections/sites waiting
	dnsStats   dnsStats               // dnsstats.go
	resolved   []Resolution

	nextKA, nextQuarantine, nextStats time.Time

	lk linkState // links.go

	sendLinks []pendingLinks // send_links_to links of the step being committed (options.go)

	now time.Time // time of the event being processed

	nodeIDs  map[string]int64
	nodeName map[int64]string

	lim limitMachine // limits.go

	// clog are the crawl log lines for CrawlLog (crawllog.go); stepRec
	// and stepChange are the record of the step being committed and
	// whether its document is new, modified or unchanged.
	clog        []LogEntry
	clogDropped uint64
	stepRec     *uriRecord
	stepChange  string
	// stepOwner is the URI the step's own duplicate check (without
	// duplicate servers) left owning its document's checksum: isDuplicate
	// knows the answer without reading the store.
	stepOwner string
}

type dnsWaiter struct{ coll, site string }

// Resolution is a host name the multinode scheduler resolved (IP empty when
// the lookup failed).
type Resolution struct {
	Host, IP string
	// Expires is when the answer runs out (the record's TTL); zero when
	// the answer came from a lookup that found nothing.
	Expires time.Time
}

type dsStatus struct {
	up      bool
	kaPend  bool
	clock   cmt.VectorClock
	updated bool
}

// FeedingState is the CMD_ADM_CONF_FEEDING_SUSPEND state of a collection:
// All suspends every destination; Destinations lists the suspended ones
// (as the commands named them: a destination name or "default:<content
// collection>"); Resumed lists the destinations paused in the
// configuration (feeding paused="yes") that an administrator resumed, by
// destination name. A destination is suspended when All is set, when
// Destinations names it, or when the configuration pauses it and Resumed
// does not list it.
type FeedingState struct {
	All          bool
	Destinations map[string]bool
	Resumed      map[string]bool
}

// clone returns a copy of st that shares no map with it.
func (st FeedingState) clone() FeedingState {
	out := FeedingState{All: st.All}
	if len(st.Destinations) > 0 {
		out.Destinations = maps.Clone(st.Destinations)
	}
	if len(st.Resumed) > 0 {
		out.Resumed = maps.Clone(st.Resumed)
	}
	return out
}

// Reprocess is a CMD_UM_REPROCESS_SITE request waiting for the feeding chain.
type Reprocess struct {
	Site, Prefix, Destination string
	Exact                     bool
	URIs                      int // stored documents matching now
}

type collection struct {
	s *crawlpipe.Settings
	// lastURI and siteLast are the most recent URIs requested (of the
	// collection, of each site) since the last CMD_UM_STAT, which carries
	// them as last_uri (MS-FSCADM LastUri on the multinode scheduler).
	lastURI  string
	siteLast map[string]string
	gen      uint64
	front    *frontier.Frontier
	state    cmt.CollectionState
	feeding  FeedingState
	reproc   []Reprocess
	quar     map[string]time.Time
	inflight map[string]int // site -> fetches out
	// flying counts the jobs out per URI; deferred holds a QFReextract
	// job whose URI was out when it was served, until that job completes
	// (then it reads the stored result instead of fetching again).
	flying   map[string]int
	deferred map[string]*crawlpipe.Job
	stats    Counters
	// sites are the counters by crawl site (the same names as stats; every
	// increment goes to the collection and to one site); cur is the site
	// the event being processed is about (nil: none); ps persists and
	// reports them (stats_persist.go).
	sites   map[string]Counters
	cur     Counters
	curSite string
	ps      statsPersist
	// refreshOnly is CollectionEnableRefreshOnly: only URIs already in the
	// store are fetched.
	refreshOnly bool
	// files are the collection's storage/uri_dir files (nil without
	// uri_dir, uridir.go); limits its limits section (limits.go).
	files  *uriFiles
	limits limitSettings
	// refeed is the refresh cycle whose fetches resubmit every document
	// (an administrator's refetch, see feeding.go); refeedLoaded says
	// whether it was read from the store.
	refeed       int64
	refeedLoaded bool
	// lim is the limits mode (limits.go).
	lim limitState
	// anchorsSeen are the (target, anchor text) pairs recorded since the
	// process started; oldAnchors says whether anchor lists of the layout
	// before pairs exist (oldAnchorsKnown: looked up). feeding_anchors.go.
	anchorsSeen                 anchorSet
	oldAnchors, oldAnchorsKnown bool
	// keys filters the reads of absent feeding records (keyfilter.go);
	// nil until first asked.
	keys *keyfilter.Filter
}

// NewMachine returns a node scheduler over cfg.Store.
func NewMachine(cfg MachineConfig, now time.Time) (*Machine, error) {
	if cfg.Store == nil {
		return nil, errors.New("nodesched: no store")
	}
	if cfg.NodeID == "" {
		return nil, errors.New("nodesched: empty node id")
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	m := &Machine{cfg: cfg, st: stagedView(cfg.Store), log: log, colls: map[string]*collection{},
		ds: make([]dsStatus, cfg.DupServers), dnsPending: map[string][]dnsWaiter{},
		nodeIDs: map[string]int64{}, nodeName: map[int64]string{},
		nextKA: now.Add(cfg.keepAlive()), nextQuarantine: now.Add(QuarantineInterval), nextStats: now.Add(cfg.statsInterval())}
	if err := m.loadNodeIDs(); err != nil { // view.go
		return nil, err
	}
	return m, nil
}

const nodeIDPrefix = "nodesched/nodeid/"

// nodeNum maps a node identifier to the integer the store's routing database
// keeps, allocating one the first time (in batch b).
func (m *Machine) nodeNum(b *batch, name string) (int64, error) {
	if id, ok := m.nodeIDs[name]; ok {
		return id, nil
	}
	id := int64(len(m.nodeIDs) + 1)
	if err := b.PutMeta(nodeIDPrefix+name, []byte(strconv.FormatInt(id, 10))); err != nil {
		return 0, err
	}
	m.nodeIDs[name], m.nodeName[id] = id, name
	return id, nil
}

// Outputs returns and clears the messages to send.
func (m *Machine) Outputs() []Output {
	o := m.out
	m.out = nil
	return o
}

// Resolved returns and clears the host names resolved since the last call.
func (m *Machine) Resolved() []Resolution {
	r := m.resolved
	m.resolved = nil
	return r
}

func (m *Machine) send(to Peer, msg cmt.Message) {
	m.countDNSOut(msg) // dnsstats.go
	m.out = append(m.out, Output{To: to, Msg: msg, Priority: cmt.DefaultPriority(msg.Code())})
}

func (m *Machine) sendPrio(to Peer, msg cmt.Message, p cmt.Priority) {
	m.out = append(m.out, Output{To: to, Msg: msg, Priority: p})
}

// Connected tells the machine a link came up (or went down). On the link to
// the multinode scheduler CMD_UM_INIT is the first message (3.2.5.1); a
// duplicate server gets the configuration of every collection that uses
// duplicate servers again.
func (m *Machine) Connected(p Peer, up bool, now time.Time) {
	m.now = now
	if !p.DS {
		m.mnsUp, m.mnsKAPend = up, false
		m.keepAliveAnswered(p)
		if up {
			m.send(MNS, &cmt.UMInit{NodeID: m.cfg.NodeID, AdminHost: m.cfg.AdminHost, AdminPort: m.cfg.AdminPort})
			m.askAgain()
			m.statsResend() // stats_persist.go
		}
		return
	}
	if p.Index < 0 || p.Index >= len(m.ds) {
		return
	}
	d := &m.ds[p.Index]
	d.up, d.kaPend, d.updated = up, false, false
	m.keepAliveAnswered(p)
	if up {
		for _, name := range m.order {
			if c := m.colls[name]; c.s.UseDupServers {
				m.setConfig(p.Index, c)
			}
		}
	}
}

// Collection state accessors.

// State returns a collection's state (0 when unknown).
func (m *Machine) State(coll string) cmt.CollectionState {
	if c := m.colls[coll]; c != nil {
		return c.state
	}
	return 0
}

// Feeding returns a collection's feeding suspension state, as an
// administrator sees it: Destinations also lists the destinations the
// configuration pauses and no administrator resumed.
func (m *Machine) Feeding(coll string) FeedingState {
	c := m.colls[coll]
	if c == nil {
		return FeedingState{}
	}
	st := c.feeding.clone()
	for _, t := range c.targets() {
		if t.Paused && !st.Resumed[t.Name] {
			if st.Destinations == nil {
				st.Destinations = map[string]bool{}
			}
			st.Destinations[t.Name] = true
		}
	}
	return st
}

// Reprocessing returns the CMD_UM_REPROCESS_SITE requests recorded for coll.
func (m *Machine) Reprocessing(coll string) []Reprocess {
	if c := m.colls[coll]; c != nil {
		return append([]Reprocess(nil), c.reproc...)
	}
	return nil
}

// Collections lists the collections, sorted.
func (m *Machine) Collections() []string {
	out := append([]string(nil), m.order...)
	sort.Strings(out)
	return out
}

// Settings returns the compiled settings of coll.
func (m *Machine) Settings(coll string) *crawlpipe.Settings {
	if c := m.colls[coll]; c != nil {
		return c.s
	}
	return nil
}

// Stats returns the running counters of coll.
func (m *Machine) Stats(coll string) Counters {
	if c := m.colls[coll]; c != nil {
		m.syncFeedCounters(c)
		out := c.stats.clone()
		fs := c.front.Stats()
		out["queued"] = int64(fs.Queued)
		out["in_flight"] = int64(fs.InFlight)
		out["active_sites"] = int64(fs.ActiveSites)
		out["pp_checksums"], _ = m.st.ChecksumCount(coll) // PPChecksums
		return out
	}
	return nil
}

// DSUpdated reports whether duplicate server i acknowledged the latest
// PPDUP_SET_CONFIG.
func (m *Machine) DSUpdated(i int) bool { return i >= 0 && i < len(m.ds) && m.ds[i].updated }

// Idle reports whether every active collection has nothing queued or in
// flight.
func (m *Machine) Idle() bool {
	for _, c := range m.colls {
		if !c.front.Idle() {
			return false
		}
	}
	return true
}

// AddCollection sets up (or, if it exists, updates) a collection from a
// parsed configuration: the in-process form of CMD_ADM_CONF_ADD.
func (m *Machine) AddCollection(cc *config.Collection, now time.Time) error {
	m.now = now
	if c := m.colls[cc.Name]; c != nil {
		return m.updateCollection(c, cc, now)
	}
	s, err := crawlpipe.Compile(cc, m.cfg.Env)
	if err != nil {
		return err
	}
	lim, err := collectionLimits(s) // storage.go
	if err != nil {
		return err
	}
	files, err := m.openURIDir(cc.Name, s) // uridir.go
	if err != nil {
		return err
	}
	feeding, refreshOnly, err := m.loadAdminModes(cc.Name) // admin.go
	if err != nil {
		return err
	}
	crawlState, err := m.loadCrawlState(cc.Name)
	if err != nil {
		return err
	}
	if err := m.feedSetup(cc.Name, s, feeding); err != nil {
		return err
	}
	fc := s.Frontier
	fc.OnAdaptive = m.adaptiveHook(cc.Name, s)
	f, err := frontier.Open(m.st, fc, m.log, now)
	if err != nil {
		return fmt.Errorf("nodesched: collection %s: %w", cc.Name, err)
	}
	c := &collection{s: s, gen: 1, front: f, state: crawlState, quar: map[string]time.Time{},
		inflight: map[string]int{}, flying: map[string]int{}, deferred: map[string]*crawlpipe.Job{}, stats: Counters{},
		sites: map[string]Counters{}, feeding: feeding, refreshOnly: refreshOnly, files: files, limits: lim}
	if err := m.loadStats(c); err != nil { // stats_persist.go
		return err
	}
	m.colls[cc.Name] = c
	m.order = append(m.order, cc.Name)
	if s.UseDupServers {
		for i := range m.ds {
			m.setConfig(i, c)
		}
	}
	m.pump(c)
	return m.queueStartURIs(c, now)
}

func (m *Machine) updateCollection(c *collection, cc *config.Collection, now time.Time) error {
	s, err := crawlpipe.Compile(cc, m.cfg.Env)
	if err != nil {
		return err
	}
	lim, err := collectionLimits(s) // storage.go
	if err != nil {
		return err
	}
	files, err := m.openURIDir(cc.Name, s) // uridir.go
	if err != nil {
		return err
	}
	// A resumption of a destination the configuration paused holds while
	// the configuration keeps pausing it: a destination the new
	// configuration no longer pauses (or no longer has) forgets it, so
	// that pausing it again in a later configuration pauses it.
	if len(c.feeding.Resumed) > 0 {
		ts, _ := collTargets(cc.Name, s.Eff.Feeding(), s.DSPaused)
		keep := map[string]bool{}
		for _, t := range ts {
			if t.Paused && c.feeding.Resumed[t.Name] {
				keep[t.Name] = true
			}
		}
		if len(keep) != len(c.feeding.Resumed) {
			c.feeding.Resumed = keep
			if len(keep) == 0 {
				c.feeding.Resumed = nil
			}
			if err := m.saveAdminModes(c); err != nil {
				m.log.Error("nodesched: saving the feeding state; it will not survive a restart", "collection", c.s.Name, "err", err)
			}
		}
	}
	if err := m.feedSetup(c.s.Name, s, c.feeding); err != nil {
		return err
	}
	if err := c.front.Close(); err != nil {
		m.log.Warn("nodesched: closing frontier", "collection", cc.Name, "err", err)
	}
	fc := s.Frontier
	fc.OnAdaptive = m.adaptiveHook(cc.Name, s)
	f, err := frontier.Open(m.st, fc, m.log, now)
	if err != nil {
		return fmt.Errorf("nodesched: collection %s: %w", cc.Name, err)
	}
	c.s, c.front, c.files, c.limits = s, f, files, lim
	c.gen++
	c.inflight = map[string]int{}
	c.flying, c.deferred = map[string]int{}, map[string]*crawlpipe.Job{}
	if s.UseDupServers {
		for i := range m.ds {
			m.setConfig(i, c)
		}
	}
	m.pump(c)
	return m.queueStartURIs(c, now)
}

func (m *Machine) setConfig(i int, c *collection) {
	d := &m.ds[i]
	vc := d.clock.Next()
	d.updated = false
	m.send(DS(i), &cmt.PPDUPSetConfig{Collection: c.s.Name, Config: cmt.CrawlConfig{Collections: []cmt.Collection{c.s.PPDup}}, VClock: vc})
	m.resendDSOps(i, c) // dsops.go
}

// queueStartURIs requeues every start URI (3.1.5.11 step 3).
func (m *Machine) queueStartURIs(c *collection, now time.Time) error {
	links := m.startLinks(c)
	return m.addLinks(c, now, links, nil, "")
}

func (m *Machine) startLinks(c *collection) []crawlpipe.Link {
	var links []crawlpipe.Link
	for _, raw := range c.s.StartURIs {
		nu, ok := crawlpipe.Screen(c.s, raw)
		if !ok {
			m.log.Info("nodesched: start URI rejected by the rules", "collection", c.s.Name, "uri", raw)
			continue
		}
		links = append(links, crawlpipe.Link{URI: nu.String(), Site: urls.Site(nu), Flags: uint32(cmt.URIFStartURI)})
	}
	return links
}

// route says which node crawls site: this one (own), another, or unknown.
//
// Routes are kept per host name, as the multinode scheduler routes them: the
// crawl sites of one host on several ports go to the same node.
func (m *Machine) route(coll, site string) (own, known bool) {
	id, ok, err := m.st.Route(coll, hostOf(site))
	if err != nil || !ok {
		return false, false
	}
	return m.nodeName[id] == m.cfg.NodeID, true
}

// Handle processes one message from a peer (MS-FSCMT 3.1.5).
func (m *Machine) Handle(from Peer, msg cmt.Message, now time.Time) error {
	m.now = now
	switch x := msg.(type) {
	case *cmt.UMKeepalive: // 3.1.5.1
		m.send(from, &cmt.UMKeepaliveAck{})
	case *cmt.UMKeepaliveAck:
		m.mnsKAPend = false
		m.keepAliveAnswered(MNS)
	case *cmt.PPDUPKeepalive: // 3.1.5.27
		m.send(from, &cmt.PPDUPKeepaliveAck{})
	case *cmt.PPDUPKeepaliveAck:
		if from.DS && from.Index < len(m.ds) {
			m.ds[from.Index].kaPend = false
			m.keepAliveAnswered(from)
		}
	case *cmt.UMURI: // 3.1.5.2
		return m.receiveURI(x.Collection, &x.Entry, false, now)
	case *cmt.UMURIUrg: // 3.1.5.3
		return m.receiveURI(x.Collection, &x.Entry, true, now)
	case *cmt.AdmConfSuspend: // 3.1.5.4
		if c := m.colls[x.Collection]; c != nil {
			st := x.State
			if st != cmt.StateSuspendedUser && st != cmt.StateSuspendedDisk && st != cmt.StateSuspendedDelay {
				st = cmt.StateSuspendedUser
			}
			c.state = st
			if err := m.saveCrawlState(c); err != nil { // admin.go
				m.log.Error("nodesched: saving the crawl suspension; it will not survive a restart", "collection", c.s.Name, "err", err)
			}
		}
	case *cmt.AdmConfResume: // 3.1.5.5
		if c := m.colls[x.Collection]; c != nil {
			c.state = cmt.StateActive
			if err := m.saveCrawlState(c); err != nil {
				m.log.Error("nodesched: saving the crawl resumption; it will not survive a restart", "collection", c.s.Name, "err", err)
			}
		}
	case *cmt.AdmConfFeedingSuspend: // 3.1.5.6
		if c := m.colls[x.Collection]; c != nil {
			m.feedingSuspend(c, x)
			m.feedSuspended(c)
			if err := m.saveAdminModes(c); err != nil { // admin.go
				m.log.Error("nodesched: saving the feeding state; it will not survive a restart", "collection", c.s.Name, "err", err)
			}
		}
	case *cmt.UMAddRoute: // 3.1.5.7
		return m.addRoute(x, now)
	case *cmt.UMAskRoute: // 3.1.5.8
		return m.askRoute(x.Collection)
	case *cmt.AdmConfRefresh: // 3.1.5.9
		if c := m.colls[x.Collection]; c != nil {
			if k := c.front.SubIndex(x.SubCollection); k >= 0 && x.SubCollection != "" && x.Flags&cmt.RefreshSubCollection != 0 {
				// A subcollection's refetch: a round of its URIs only.
				if err := m.subRefresh(c, k, now, true); err != nil {
					return err
				}
			} else if err := m.refresh(c, x.Flags, now); err != nil {
				return err
			}
			return m.refeedRefresh(c, x.Flags)
		}
	case *cmt.AdmConfAdd: // 3.1.5.10
		return m.confFromWire(x.Collection, &x.Config, true, now)
	case *cmt.AdmConfUpdate: // 3.1.5.11
		return m.confFromWire(x.Collection, &x.Config, false, now)
	case *cmt.AdmConfRemove: // 3.1.5.12
		return m.remove(x.Collection)
	case *cmt.AdmPreemptSite: // 3.1.5.13
		return m.preempt(x, now) // preempt.go
	case *cmt.UMReprocessSite: // 3.1.5.14
		if c := m.colls[x.Collection]; c != nil {
			return m.reprocess(c, x)
		}
	case *cmt.UMDeleteSite: // 3.1.5.15
		if c := m.colls[x.Collection]; c != nil {
			return m.deleteSite(c, x.Site)
		}
	case *cmt.UMDeleteURIs: // 3.1.5.16
		if c := m.colls[x.Collection]; c != nil {
			return m.deleteURIs(c, x)
		}
	case *cmt.UMQuarantineSite: // 3.1.5.17
		return m.quarantine(x.Collection, x.Site, x.Seconds, false, now)
	case *cmt.UMQuarantineSiteRequeue: // 3.1.5.18
		return m.quarantine(x.Collection, x.Site, x.Seconds, true, now)
	case *cmt.UMDNSReply: // 3.1.5.19
		return m.dnsReply(x, now)
	case *cmt.UMConfState: // 3.1.5.20
		if c := m.colls[x.Collection]; c != nil && x.State.Valid() {
			c.state = x.State
		}
	case *cmt.UMStartCrawlIPReply: // 3.1.5.21
		m.grantAnswered(x.Collection, x.Site)
		if c := m.colls[x.Collection]; c != nil {
			c.front.Grant(x.Site, x.IP, x.Allowed, now)
			if !x.Allowed {
				c.setCur(x.Site)
				c.count("crawl_ip_denied", 1)
				c.clearCur()
			}
			m.pump(c)
		}
	case *cmt.PPDUPConfigAck: // 3.1.5.22
		if from.DS && from.Index < len(m.ds) {
			d := &m.ds[from.Index]
			if d.clock.Acked(x.VClock) {
				d.updated = true
			} else {
				m.log.Debug("nodesched: stale PPDUP_CONFIG_ACK ignored", "peer", from, "vc", x.VClock)
			}
		}
	case *cmt.PPDUPAddOK: // 3.1.5.23
		if c := m.colls[x.Collection]; c != nil {
			return m.addOK(c, x, now)
		}
	case *cmt.PPDUPRemoveOK: // 3.1.5.24
		if c := m.colls[x.Collection]; c != nil {
			return m.removeOK(c, x)
		}
	case *cmt.PPDUPPromoteReq: // 3.1.5.25
		if c := m.colls[x.Collection]; c != nil {
			return m.promote(c, x, now)
		}
	case *cmt.PPDUPError: // 3.1.5.26
		m.log.Warn("nodesched: duplicate server error", "peer", from, "collection", x.Collection, "why", x.Why)
		if c := m.colls[x.Collection]; c != nil {
			c.count("dupserver_errors", 1)
		}
	default:
		m.log.Debug("nodesched: message not for a node scheduler ignored", "peer", from, "cmd", msg.Code())
	}
	return nil
}

func (m *Machine) receiveURI(coll string, e *cmt.Entry, urgent bool, now time.Time) error {
	c := m.colls[coll]
	if c == nil {
		m.log.Debug("nodesched: URI for an unknown collection dropped", "collection", coll)
		return nil
	}
	if c.state == cmt.StateRemoving || c.state == cmt.StateBlocked {
		return nil
	}
	c.setCur(entrySiteOf(e))
	defer c.clearCur()
	fe, ok := m.entryFromWire(c, e, urgent)
	if !ok {
		return nil
	}
	if fe.Site != c.curSite {
		c.setCur(fe.Site)
	}
	res, err := c.front.Add(now, fe)
	c.count("uris_queued", int64(res.Queued))
	c.count("uris_seen_before", int64(res.Duplicate))
	m.pump(c)
	return err
}

func (m *Machine) confFromWire(name string, cc *cmt.CrawlConfig, add bool, now time.Time) error {
	col, ok := cc.Collection(name)
	if !ok && len(cc.Collections) == 1 {
		col, ok = &cc.Collections[0], true
	}
	if !ok {
		return fmt.Errorf("nodesched: configuration for %q does not hold that collection", name)
	}
	if !add && m.colls[name] == nil {
		return nil // 3.1.5.11: an update of an unknown collection is ignored
	}
	parsed, err := CollectionFromWire(col)
	if err != nil {
		return err
	}
	parsed.Name = name
	return m.AddCollection(parsed, now)
}

// feedingSuspend applies CMD_ADM_CONF_FEEDING_SUSPEND to c's state. A
// resumption of every destination ("None") resumes the destinations the
// configuration pauses too; a resumption by name resumes a paused one by
// name; a suspension by name takes such a resumption back.
func (m *Machine) feedingSuspend(c *collection, x *cmt.AdmConfFeedingSuspend) {
	if x.Destinations == nil {
		c.feeding = FeedingState{All: x.Suspend}
		if !x.Suspend {
			for _, t := range c.targets() {
				if t.Paused {
					if c.feeding.Resumed == nil {
						c.feeding.Resumed = map[string]bool{}
					}
					c.feeding.Resumed[t.Name] = true
				}
			}
		}
		return
	}
	if c.feeding.Destinations == nil {
		c.feeding.Destinations = map[string]bool{}
	}
	for _, d := range x.Destinations {
		if x.Suspend {
			c.feeding.Destinations[d] = true
		} else {
			delete(c.feeding.Destinations, d)
		}
		for _, t := range c.targets() {
			if !t.Paused || !targetNamed(t, d) {
				continue
			}
			if x.Suspend {
				delete(c.feeding.Resumed, t.Name)
			} else {
				if c.feeding.Resumed == nil {
					c.feeding.Resumed = map[string]bool{}
				}
				c.feeding.Resumed[t.Name] = true
			}
		}
	}
	if len(c.feeding.Destinations) == 0 {
		c.feeding.Destinations = nil
	}
	if len(c.feeding.Resumed) == 0 {
		c.feeding.Resumed = nil
	}
}

// targets returns c's content destinations (nil when its feeding section
// does not compile: setting the collection up has reported that).
func (c *collection) targets() []feed.Target {
	ts, err := collTargets(c.s.Name, c.s.Eff.Feeding(), c.s.DSPaused)
	if err != nil {
		return nil
	}
	return ts
}

// pump carries out the frontier's requests: resolve a site's IP (the DNS
// database, else CMD_UM_DNS_REQUEST), ask for a crawl-IP grant, give one back.
func (m *Machine) pump(c *collection) {
	now := m.now
	for round := 0; round < 8; round++ {
		acts := c.front.Actions()
		if len(acts) == 0 {
			return
		}
		for _, a := range acts {
			switch a.Kind {
			case frontier.ActResolve:
				host := hostOf(a.Site)
				if ip, err := netip.ParseAddr(host); err == nil {
					c.front.SetIP(a.Site, ip.String(), now)
					continue
				}
				if rec, ok, err := m.st.DNS(host, now); err == nil && ok {
					ip := ""
					if len(rec.Addrs) > 0 {
						ip = rec.Addrs[0].String()
					}
					c.front.SetIP(a.Site, ip, now)
					continue
				}
				if _, pending := m.dnsPending[host]; !pending {
					m.send(MNS, &cmt.UMDNSRequest{Collection: c.s.Name, Site: host})
				}
				m.dnsPending[host] = append(m.dnsPending[host], dnsWaiter{coll: c.s.Name, site: a.Site})
			case frontier.ActRequestGrant:
				m.logSite(c, a.Site, "started", a.IP)
				m.grantAsked(c.s.Name, a.Site, a.IP)
				m.send(MNS, &cmt.UMStartCrawlIP{Collection: c.s.Name, IP: a.IP, Site: a.Site})
			case frontier.ActStopCrawlIP:
				m.logSite(c, a.Site, "finished", a.IP)
				m.send(MNS, &cmt.UMStopCrawlIP{Collection: c.s.Name, IP: a.IP, Site: a.Site})
			}
		}
	}
}

// Close saves the frontiers' in-memory state. It does not close the store.
func (m *Machine) Close() error {
	var first error
	for _, c := range m.colls {
		if err := c.front.Close(); err != nil && first == nil {
			first = err
		}
	}
	return first
}
