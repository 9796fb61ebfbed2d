package nodesched

import (
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/trawl/trawl/internal/crawllog"
	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/frontier"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// The crawl logs of the log section (MS-FSCCFG 2.2.4.5; package crawllog
// writes them). The Machine makes the lines of the events it sees and hands
// them out with CrawlLog; the Driver writes them under its log directory or,
// for a collection with umlogs, sends those with a CMD_UM_LOG code (fetch,
// screened, scheduler, site) to the multinode scheduler. The dsfeed log is
// written by Feeding, which sees the destinations' answers; the scheduler
// log holds the frontier's adaptive rescheduling decisions (logAdaptive).

// LogEntry is a crawl log line the Machine made. Remote is set when the
// collection's umlogs sends it to the multinode scheduler.
type LogEntry struct {
	crawllog.Entry
	Remote bool
}

// maxPendingLog bounds the lines waiting for CrawlLog; more are dropped and
// counted (LogDropped).
const maxPendingLog = 1 << 16

// CrawlLog returns and clears the crawl log lines made since the last call.
func (m *Machine) CrawlLog() []LogEntry {
	out := m.clog
	m.clog = nil
	return out
}

// LogDropped is how many crawl log lines found the pending list full.
func (m *Machine) LogDropped() uint64 { return m.clogDropped }

func (m *Machine) logOn(c *collection, k crawllog.Kind) bool { return c.s.Logs.On(k) }

func (m *Machine) clogLine(c *collection, k crawllog.Kind, line string) {
	if len(m.clog) >= maxPendingLog {
		m.clogDropped++
		return
	}
	_, coded := k.LogFile()
	m.clog = append(m.clog, LogEntry{Entry: crawllog.Entry{Collection: c.s.Name, Kind: k, Line: line}, Remote: coded && c.s.UMLogs})
}

// logStep makes the fetch, header, screened, postprocess and site lines of
// a committed crawl step.
func (m *Machine) logStep(c *collection, o *crawlpipe.Outcome, rec *store.URIRecord, change string) {
	now, j := m.now, o.Job
	if o.RobotsFresh && m.logOn(c, crawllog.Site) {
		if o.RobotsFailed != nil {
			m.clogLine(c, crawllog.Site, crawllog.Line(now, j.Fetch.Site, "robots.txt", "failed", o.RobotsFailed.Err.Error()))
		} else {
			m.clogLine(c, crawllog.Site, crawllog.Line(now, j.Fetch.Site, "robots.txt", "fetched", "sitemaps="+strconv.Itoa(len(o.Sitemaps)), "crawl-delay="+o.CrawlDelay.String()))
		}
	}
	if m.logOn(c, crawllog.Screened) {
		switch o.Skipped {
		case "robots":
			m.clogLine(c, crawllog.Screened, crawllog.Line(now, j.Fetch.URI, j.Fetch.Referrer, "robots.txt"))
		case "excluded", "scheme":
			m.clogLine(c, crawllog.Screened, crawllog.Line(now, j.Fetch.URI, j.Fetch.Referrer, o.SkipReason))
		}
		for _, s := range o.Screened {
			m.clogLine(c, crawllog.Screened, crawllog.Line(now, s.URI, j.Fetch.URI, s.Reason))
		}
	}
	if o.Skipped != "" || o.Reextracted || rec == nil {
		return
	}
	if m.logOn(c, crawllog.Fetch) {
		size := len(o.Body)
		if o.NotModified {
			size = 0
		}
		status := strconv.Itoa(o.Status)
		errText := ""
		if o.Err != nil {
			errText = o.Kind.String() + ": " + o.Err.Error()
		}
		fields := []string{status, strconv.Itoa(size), strconv.FormatInt(o.Duration.Milliseconds(), 10) + "ms", j.Fetch.URI}
		if errText != "" {
			fields = append(fields, errText)
		}
		m.clogLine(c, crawllog.Fetch, crawllog.Line(now, fields...))
	}
	if o.Header != nil && m.logOn(c, crawllog.Header) {
		m.clogLine(c, crawllog.Header, headerLines(now, j.Fetch.URI, o.Proto, o.Status, o.Header))
	}
	if m.logOn(c, crawllog.PostProcess) {
		action, detail := postAction(rec, change, o)
		m.logPost(c, rec.URI, action, detail)
	}
	if rec.Status == store.StatusError && o.Kind.ConnectionFailure() && m.logOn(c, crawllog.Site) {
		m.clogLine(c, crawllog.Site, crawllog.Line(now, j.Fetch.Site, "backoff", o.Kind.String(), j.Fetch.URI))
	}
}

// postAction names what post processing did with a document: stored (new),
// modified, unchanged, duplicate (of detail), redirect (to detail),
// deleted, error, excluded.
func postAction(rec *store.URIRecord, change string, o *crawlpipe.Outcome) (action, detail string) {
	switch rec.Status {
	case store.StatusFetched:
		return change, ""
	case store.StatusNotModified:
		return "unchanged", "not-modified"
	case store.StatusDuplicate:
		return "duplicate", rec.Owner
	case store.StatusRedirect:
		return "redirect", rec.Location
	case store.StatusDeleted:
		return "deleted", errDetail(o)
	case store.StatusError:
		return "error", errDetail(o)
	case store.StatusExcluded:
		if o.Unwanted != "" {
			return "excluded", o.Unwanted
		}
		return "excluded", errDetail(o)
	}
	return "unknown", ""
}

func errDetail(o *crawlpipe.Outcome) string {
	if o.Err != nil {
		return o.Kind.String()
	}
	if o.Status > 0 {
		return strconv.Itoa(o.Status)
	}
	return ""
}

// logPost writes one postprocess line, as text or as an XML element.
func (m *Machine) logPost(c *collection, uri, action, detail string) {
	if c.s.Logs.Of(crawllog.PostProcess) == crawllog.XML {
		m.clogLine(c, crawllog.PostProcess, crawllog.Element("document", m.now, "action", action, "uri", uri, "detail", detail))
		return
	}
	m.clogLine(c, crawllog.PostProcess, crawllog.Line(m.now, action, uri, detail))
}

// logSite writes a site log line.
func (m *Machine) logSite(c *collection, site string, fields ...string) {
	if m.logOn(c, crawllog.Site) {
		m.clogLine(c, crawllog.Site, crawllog.Line(m.now, append([]string{site}, fields...)...))
	}
}

// adaptiveHook is the frontier's Config.OnAdaptive of collection name
// when its scheduler log is on: each site's adaptive rescheduling decision
// becomes scheduler log lines.
func (m *Machine) adaptiveHook(name string, s *crawlpipe.Settings) func(frontier.AdaptiveSite) {
	if !s.Logs.On(crawllog.Scheduler) {
		return nil
	}
	return func(d frontier.AdaptiveSite) {
		if c := m.colls[name]; c != nil && m.logOn(c, crawllog.Scheduler) {
			m.logAdaptive(c, d)
		}
	}
}

// logAdaptive writes the scheduler log lines of one site's adaptive
// rescheduling: a site line (how many known URIs were ranked, the
// coverage limit, how many were taken), then a uri line per URI taken,
// best ranked first (pos 1), with its rank and score; "still-queued" marks
// a URI a minor cycle took that was still queued (not queued twice).
//
//	time site SITE CAUSE cycle=C minor=M known=K limit=L taken=N [sub=S]
//	time uri SITE URI CAUSE cycle=C minor=M pos=P rank=R score=S [sub=S] [still-queued]
func (m *Machine) logAdaptive(c *collection, d frontier.AdaptiveSite) {
	cause, cycle, minor := d.Cause.String(), "cycle="+strconv.FormatInt(d.Cycle, 10), "minor="+strconv.Itoa(d.Minor)
	var sub []string
	if d.Sub != "" {
		sub = []string{"sub=" + strings.ReplaceAll(d.Sub, " ", "_")}
	}
	m.clogLine(c, crawllog.Scheduler, crawllog.Line(m.now, append([]string{"site", d.Site, cause, cycle, minor,
		"known=" + strconv.Itoa(d.Known), "limit=" + strconv.Itoa(d.Limit), "taken=" + strconv.Itoa(len(d.Taken))}, sub...)...))
	for i, k := range d.Taken {
		fields := append([]string{"uri", d.Site, k.URI, cause, cycle, minor, "pos=" + strconv.Itoa(i+1),
			"rank=" + strconv.FormatFloat(k.Rank, 'g', 6, 64), "score=" + strconv.FormatFloat(k.Score, 'g', 6, 64)}, sub...)
		if k.StillQueued {
			fields = append(fields, "still-queued")
		}
		m.clogLine(c, crawllog.Scheduler, crawllog.Line(m.now, fields...))
	}
}

// headerLines is a header log entry: the time, URI, protocol and status,
// then each header line indented, names sorted.
func headerLines(now time.Time, uri, proto string, status int, h http.Header) string {
	var b strings.Builder
	b.WriteString(crawllog.Line(now, uri, proto, strconv.Itoa(status)))
	names := make([]string, 0, len(h))
	for k := range h {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		for _, v := range h[k] {
			b.WriteString("\n  ")
			b.WriteString(crawllog.OneLine(k))
			b.WriteString(": ")
			b.WriteString(crawllog.OneLine(v))
		}
	}
	return b.String()
}

// logResult writes the dsfeed line of a destination's answer.
func (f *Feeding) logResult(coll string, r feed.Result) {
	now := time.Now
	if f.cfg.Now != nil {
		now = f.cfg.Now
	}
	result := "ok"
	if r.Err != nil {
		result = "error: " + r.Err.Error()
	}
	f.cfg.Logs.Log(crawllog.Entry{Collection: coll, Kind: crawllog.DSFeed, Line: crawllog.Line(now(), r.Kind.String(), r.URI, r.Target, result)})
}
