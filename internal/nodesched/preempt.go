package nodesched

import (
	"time"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/crawllog"
)

// PreemptPause is how long a preempted site stays out of the crawl before
// it is queued again (one period of the quarantine timer).
const PreemptPause = QuarantineInterval

// preempt carries out CMD_ADM_PREEMPT_SITE (MS-FSCMT §3.1.5.13): a site
// being crawled (holding a crawl slot, waiting for its delay or with
// fetches in flight) stops at once and is queued again, at the front with
// Requeue, after PreemptPause; a site not being crawled is left alone.
func (m *Machine) preempt(x *cmt.AdmPreemptSite, now time.Time) error {
	c := m.colls[x.Collection]
	if c == nil {
		return nil
	}
	until := now.Add(PreemptPause)
	ok, err := c.front.Preempt(x.Site, until, x.Requeue, now)
	if ok {
		m.now = now
		m.logSite(c, x.Site, "preempted", "until="+until.UTC().Format(crawllog.TimeLayout))
	}
	m.pump(c)
	return err
}
