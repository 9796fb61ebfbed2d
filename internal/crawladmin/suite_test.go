package crawladmin_test

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/crawladmin"
)

// suite calls every MS-FSCADM method of internal/admin's method table on
// one role's backend and checks its effect, or its documented fault or
// refusal.
type suite struct {
	c    *cluster
	cl   *admin.Client
	role admin.Role
	b    *crawladmin.Backend
}

// fault fails unless err is an XML-RPC fault whose text holds want.
func fault(t *testing.T, err error, want string) {
	t.Helper()
	var e *admin.Error
	if !errors.As(err, &e) || !e.Fault || !strings.Contains(e.Msg, want) {
		t.Errorf("got %v, want a fault holding %q", err, want)
	}
}

// refused fails unless err is an in-band failure whose text holds want.
func refused(t *testing.T, err error, want string) {
	t.Helper()
	var e *admin.Error
	if !errors.As(err, &e) || e.Fault || !strings.Contains(e.Msg, want) {
		t.Errorf("got %v, want an in-band failure holding %q", err, want)
	}
}

// ok fails unless err is nil and text holds want.
func ok(t *testing.T, text string, err error, want string) {
	t.Helper()
	if err != nil || !strings.Contains(text, want) {
		t.Errorf("got (%q, %v), want a success holding %q", text, err, want)
	}
}

// suiteMethods are the methods runSuite calls.
var suiteMethods = []string{"ping", "GetLogLevel", "SetLogLevel", "IsDistributed", "IsMultiNodeScheduler",
	"GetSiteManagerNum", "GetNodeSchedulerXmlRpcPorts", "CollectionGetList", "CollectionGetConfigurationXML",
	"CollectionGetStatus", "AddURIs", "AddURIFile", "CollectionRefetch", "CollectionRefetchURI",
	"CollectionGetSiteRoutingAddress", "CollectionPreemptSite", "CollectionQuarantineSite",
	"CollectionReprocessSite", "CollectionReprocessSitePrefix", "CollectionReprocessURI", "CollectionSuspend",
	"CollectionResume", "CollectionSuspendFeeding", "CollectionResumeFeeding", "CollectionEnableRefreshOnly",
	"CollectionDisableRefreshOnly", "CollectionGetStatistics", "CollectionGetStatistics2",
	"CollectionGetSiteStatistics", "GetGlobalStatistics", "CollectionDeleteURIs", "CollectionDeleteURIFile",
	"CollectionDeleteSite", "CollectionAdd", "CollectionDelete", "ConfigurationChanged", "ReRegister",
	"CollectionQuarantineSiteRequeue", "CollectionSetState", "RerouteNodeScheduler"}

func runSuite(t *testing.T, s suite) {
	ctx := context.Background()
	cl, c := s.cl, s.c
	mns := s.role == admin.MultinodeScheduler
	const coll, none = "web", "nosuch"

	t.Run("system.listMethods", func(t *testing.T) {
		ms, err := cl.ListMethods(ctx)
		if err != nil || len(ms) < 37 {
			t.Fatalf("ListMethods = %d methods, %v; want the 37 of MS-FSCADM and more", len(ms), err)
		}
		// Every method the server offers is called below.
		for _, m := range ms {
			if !strings.HasPrefix(m, "system.") && !slices.Contains(suiteMethods, m) {
				t.Errorf("method %s is not exercised by the suite", m)
			}
		}
		if err := cl.Ping(ctx); err != nil {
			t.Errorf("ping: %v", err)
		}
	})
	t.Run("LogLevel", func(t *testing.T) {
		want := admin.LogInfo | admin.LogError | admin.LogCritical
		if err := cl.SetLogLevel(ctx, want); err != nil {
			t.Fatal(err)
		}
		if got, err := cl.GetLogLevel(ctx); err != nil || got != want {
			t.Errorf("GetLogLevel = %#x, %v; want %#x", got, err, want)
		}
		if mns { // forwarded to the node scheduler
			if got, _ := c.node.GetLogLevel(ctx); got != want {
				t.Errorf("node scheduler's level %#x, want the forwarded %#x", got, want)
			}
		}
	})
	t.Run("roles", func(t *testing.T) {
		dist, err1 := cl.IsDistributed(ctx)
		multi, err2 := cl.IsMultiNodeScheduler(ctx)
		if err1 != nil || err2 != nil || !dist || multi != mns {
			t.Errorf("IsDistributed %v (%v), IsMultiNodeScheduler %v (%v); want true, %v", dist, err1, multi, err2, mns)
		}
		n, err := cl.GetSiteManagerNum(ctx)
		if want := map[bool]int{true: 0, false: 1}[mns]; err != nil || n != want {
			t.Errorf("GetSiteManagerNum = %d, %v; want %d", n, err, want)
		}
		ports, err := cl.GetNodeSchedulerXmlRpcPorts(ctx)
		if !mns {
			fault(t, err, "not a multinode scheduler")
			return
		}
		if err != nil || len(ports) != 1 || "http://"+ports[0].String() != c.nodeURL {
			t.Errorf("GetNodeSchedulerXmlRpcPorts = %v, %v; want the node scheduler's %s", ports, err, c.nodeURL)
		}
	})
	t.Run("CollectionGetList", func(t *testing.T) {
		l, err := cl.CollectionGetList(ctx)
		if err != nil || !slices.Contains(l, coll) {
			t.Errorf("CollectionGetList = %v, %v; want %q in it", l, err, coll)
		}
	})
	t.Run("CollectionGetConfigurationXML", func(t *testing.T) {
		x, err := cl.CollectionGetConfigurationXML(ctx, coll)
		ok(t, x, err, `name="web"`)
		_, err = cl.CollectionGetConfigurationXML(ctx, none)
		fault(t, err, "no such collection")
	})
	t.Run("CollectionGetStatus", func(t *testing.T) {
		st, err := cl.CollectionGetStatus(ctx, coll)
		if err != nil || st != "crawling" {
			t.Errorf("CollectionGetStatus = %q, %v; want crawling", st, err)
		}
		_, err = cl.CollectionGetStatus(ctx, none)
		fault(t, err, "no such collection")
	})
	t.Run("AddURIs", func(t *testing.T) {
		text, err := cl.AddURIs(ctx, coll, true, []string{c.uri + "added"})
		ok(t, text, err, "Queued collection web with 1 URIs")
		_, err = cl.AddURIs(ctx, coll, false, []string{"relative/path"})
		refused(t, err, "not an absolute URI")
		_, err = cl.AddURIs(ctx, none, false, []string{c.uri})
		fault(t, err, "no such collection")
	})
	t.Run("AddURIFile", func(t *testing.T) {
		text, err := cl.AddURIFile(ctx, coll, false, filepath.Join(c.files, "uris.txt"))
		ok(t, text, err, "Queued collection web with 1 URIs")
		_, err = cl.AddURIFile(ctx, none, false, filepath.Join(c.files, "uris.txt"))
		fault(t, err, "no such collection")
	})
	t.Run("CollectionRefetch", func(t *testing.T) {
		text, err := cl.CollectionRefetch(ctx, coll, "")
		ok(t, text, err, "Scheduled refetch of collection web")
		_, err = cl.CollectionRefetch(ctx, coll, "nosub")
		if mns {
			refused(t, err, `has no subcollection "nosub"`)
		} else if err != nil {
			// A node scheduler was not given the configuration: it
			// passes the refetch on to its machine.
			t.Errorf("CollectionRefetch of a subcollection: %v", err)
		}
	})
	t.Run("CollectionRefetchURI", func(t *testing.T) {
		text, err := cl.CollectionRefetchURI(ctx, coll, c.uri, false, false, true)
		ok(t, text, err, "Scheduled refetch of "+c.uri)
		// Site and refeed reach the node scheduler that crawls the site
		// (forwarded by a multinode scheduler).
		text, err = cl.CollectionRefetchURI(ctx, coll, c.uri, true, true, false)
		ok(t, text, err, "Scheduled refetch of the site of "+c.uri)
		_, err = cl.CollectionRefetchURI(ctx, coll, "/relative", false, false, false)
		refused(t, err, "not an absolute URI")
	})
	t.Run("CollectionGetSiteRoutingAddress", func(t *testing.T) {
		hp, err := cl.CollectionGetSiteRoutingAddress(ctx, coll, c.site)
		if !mns {
			refused(t, err, "does not route sites")
			return
		}
		if err != nil || "http://"+hp.String() != c.nodeURL {
			t.Errorf("CollectionGetSiteRoutingAddress = %v, %v; want the node scheduler's %s", hp, err, c.nodeURL)
		}
		_, err = cl.CollectionGetSiteRoutingAddress(ctx, coll, "never.example")
		refused(t, err, "not routed")
	})
	t.Run("sites", func(t *testing.T) {
		site := c.site
		text, err := cl.CollectionPreemptSite(ctx, coll, c.site)
		ok(t, text, err, "Preempted site "+site)
		text, err = cl.CollectionQuarantineSite(ctx, coll, c.site, 1)
		ok(t, text, err, "Quarantined site "+site+" of collection web for 1 seconds")
		text, err = cl.CollectionReprocessSite(ctx, coll, "", c.site)
		ok(t, text, err, "Reprocessing site "+site+" of collection web to the default destination")
		text, err = cl.CollectionReprocessSitePrefix(ctx, coll, c.site, "/a", "")
		ok(t, text, err, "under /a")
		text, err = cl.CollectionReprocessURI(ctx, coll, "", []string{c.uri, "::bad"})
		ok(t, text, err, "Reprocessing 1 URIs of collection web")
		_, err = cl.CollectionReprocessURI(ctx, coll, "", []string{"::bad"})
		refused(t, err, "none of the 1 URIs")
		_, err = cl.CollectionPreemptSite(ctx, none, c.site)
		fault(t, err, "no such collection")
	})
	t.Run("extensions", func(t *testing.T) {
		text, err := cl.CollectionQuarantineSiteRequeue(ctx, coll, c.site, 1)
		ok(t, text, err, "Quarantined site "+c.site+" of collection web for 1 seconds, then requeued at the front")
		_, err = cl.CollectionQuarantineSiteRequeue(ctx, none, c.site, 1)
		fault(t, err, "no such collection")
		// CMD_UM_CONF_STATE reaches the node scheduler: it reports the state.
		text, err = cl.CollectionSetState(ctx, coll, 7)
		ok(t, text, err, "Collection web set to state 7 (compacting)")
		deadline := time.Now().Add(5 * time.Second)
		for st, _ := c.node.CollectionGetStatus(ctx, coll); st.Code() != "compacting" && time.Now().Before(deadline); st, _ = c.node.CollectionGetStatus(ctx, coll) {
			time.Sleep(10 * time.Millisecond)
		}
		if st, err := c.node.CollectionGetStatus(ctx, coll); err != nil || st.Code() != "compacting" {
			t.Errorf("the node scheduler's status after CollectionSetState 7: %v, %v", st.Code(), err)
		}
		if st, err := cl.CollectionGetStatus(ctx, coll); err != nil || st != "compacting" {
			t.Errorf("status after CollectionSetState 7: %q, %v", st, err)
		}
		text, err = cl.CollectionSetState(ctx, coll, 1)
		ok(t, text, err, "set to state 1 (active)")
		if st, err := cl.CollectionGetStatus(ctx, coll); err != nil || st != "crawling" {
			t.Errorf("status after CollectionSetState 1: %q, %v", st, err)
		}
		text, err = cl.RerouteNodeScheduler(ctx, "gone")
		if !mns {
			fault(t, err, "not a multinode scheduler")
			return
		}
		ok(t, text, err, "Rerouted 0 routing attributes of node scheduler gone")
	})
	t.Run("Suspend", func(t *testing.T) {
		text, err := cl.CollectionSuspend(ctx, coll)
		ok(t, text, err, "Suspended collection web")
		if st, err := cl.CollectionGetStatus(ctx, coll); err != nil || st != "suspended" {
			t.Errorf("status after suspend %q, %v", st, err)
		}
		_, err = cl.CollectionSuspend(ctx, coll)
		fault(t, err, "already suspended")
		text, err = cl.CollectionResume(ctx, coll)
		ok(t, text, err, "Resumed collection web")
		if st, err := cl.CollectionGetStatus(ctx, coll); err != nil || st != "crawling" {
			t.Errorf("status after resume %q, %v", st, err)
		}
		_, err = cl.CollectionResume(ctx, coll)
		fault(t, err, "not suspended")
	})
	t.Run("Feeding", func(t *testing.T) {
		text, err := cl.CollectionSuspendFeeding(ctx, coll, "")
		ok(t, text, err, "Suspended feeding of web to the default destination")
		if r, err := cl.CollectionGetStatistics2(ctx, coll); err != nil || r.Cur == nil || r.Cur.Feeding != 0 {
			t.Errorf("statistics after suspending feeding: %+v, %v; want Feeding 0", r, err)
		}
		_, err = cl.CollectionSuspendFeeding(ctx, coll, "")
		refused(t, err, "already suspended")
		text, err = cl.CollectionResumeFeeding(ctx, coll, "")
		ok(t, text, err, "Resumed feeding of web")
		_, err = cl.CollectionResumeFeeding(ctx, coll, "")
		refused(t, err, "not suspended")
	})
	t.Run("RefreshOnly", func(t *testing.T) {
		text, err := cl.CollectionEnableRefreshOnly(ctx, coll)
		ok(t, text, err, "only refreshes known content")
		if !c.refreshOnly(t, coll) {
			t.Errorf("the node scheduler is not in refresh-only mode")
		}
		if r, err := cl.CollectionGetStatistics2(ctx, coll); err != nil || r.Cur == nil || r.Cur.CrawlMode == "" || r.Cur.CrawlMode == "Normal" {
			t.Errorf("statistics in refresh-only mode: %+v, %v", r, err)
		}
		text, err = cl.CollectionDisableRefreshOnly(ctx, coll)
		ok(t, text, err, "crawls new content")
		if c.refreshOnly(t, coll) {
			t.Errorf("the node scheduler is still in refresh-only mode")
		}
	})
	t.Run("statistics", func(t *testing.T) {
		st, err := cl.CollectionGetStatistics(ctx, coll)
		if err != nil || st.Get(coll) == nil || st.Global == nil {
			t.Errorf("CollectionGetStatistics = %+v, %v; want the collection's and the global series", st, err)
		}
		st, err = cl.CollectionGetStatistics(ctx, "")
		if err != nil || st.Get(coll) == nil {
			t.Errorf("CollectionGetStatistics(all) = %+v, %v", st, err)
		}
		_, err = cl.CollectionGetStatistics(ctx, none)
		fault(t, err, "no such collection")
		r, err := cl.CollectionGetStatistics2(ctx, coll)
		if err != nil || r.Cur == nil || r.Complete == nil || r.Cur.Status != "Crawling" {
			t.Errorf("CollectionGetStatistics2 = %+v, %v", r, err)
		}
		if !mns {
			// The node scheduler's own counters: the start page is in.
			if r.Complete.Downloaded == 0 && r.Cur.Downloaded == 0 {
				t.Errorf("no document downloaded in the statistics: %+v", r.Cur)
			}
			ss, err := cl.CollectionGetSiteStatistics(ctx, coll, c.site)
			if err != nil || len(ss.Series) != 1 {
				t.Errorf("CollectionGetSiteStatistics = %+v, %v", ss, err)
			}
		}
		// A multinode scheduler has a site's statistics once a node
		// scheduler reports them (CMD_UM_STAT, every minute).
		_, err = cl.CollectionGetSiteStatistics(ctx, coll, "never.example")
		fault(t, err, "has not crawled site")
		g, err := cl.GetGlobalStatistics(ctx)
		if err != nil || g.Delta == nil || g.Complete == nil {
			t.Errorf("GetGlobalStatistics = %+v, %v", g, err)
		}
	})
	t.Run("Delete URIs and sites", func(t *testing.T) {
		text, err := cl.CollectionDeleteURIs(ctx, coll, []string{c.uri + "added"})
		ok(t, text, err, "Deleting 1 URIs from collection web")
		_, err = cl.CollectionDeleteURIs(ctx, coll, []string{"relative"})
		refused(t, err, "not an absolute URI")
		text, err = cl.CollectionDeleteURIFile(ctx, coll, filepath.Join(c.files, "uris.txt"))
		ok(t, text, err, "Deleting 1 URIs")
		_, err = cl.CollectionDeleteURIFile(ctx, coll, "/etc/passwd")
		if err == nil {
			t.Errorf("CollectionDeleteURIFile read a file outside --admin-files")
		}
		text, err = cl.CollectionDeleteSite(ctx, coll, "gone.example")
		ok(t, text, err, "Deleting site gone.example from collection web")
	})
	t.Run("CollectionAdd and Delete", func(t *testing.T) {
		text, err := cl.CollectionAdd(ctx, c.xml("extra"), false)
		if s.role == admin.NodeScheduler {
			fault(t, err, "set Force to 1")
			text, err = cl.CollectionAdd(ctx, c.xml("extra"), true)
		}
		ok(t, text, err, "Collection added extra")
		text, err = cl.CollectionAdd(ctx, c.xml("extra"), true)
		ok(t, text, err, "Collection updated extra")
		x, err := cl.CollectionGetConfigurationXML(ctx, "extra")
		ok(t, x, err, `name="extra"`)
		// MS-FSCADM 2.2.9.3: a partial configuration changes what it
		// names and nothing else.
		part := `<CrawlerConfig><DomainSpecification name="extra">` +
			`<attrib name="max_pending" type="integer">7</attrib></DomainSpecification></CrawlerConfig>`
		text, err = cl.CollectionAdd(ctx, part, true)
		ok(t, text, err, "Collection updated extra")
		y, err := cl.CollectionGetConfigurationXML(ctx, "extra")
		ok(t, y, err, `<attrib name="max_pending" type="integer">7</attrib>`)
		if gone, added := lineChanges(x, y); len(gone) > 1 || len(added) != 1 {
			t.Errorf("a partial CollectionAdd of max_pending changed lines %q -> %q", gone, added)
		}
		// A partial configuration is not checked alone, but the merged
		// result is: a subcollection without a scope is refused.
		_, err = cl.CollectionAdd(ctx, `<CrawlerConfig><DomainSpecification name="extra"><SubDomain name="s">`+
			`<attrib name="delay" type="real">1.0</attrib></SubDomain></DomainSpecification></CrawlerConfig>`, true)
		refused(t, err, "SubDomain[s]")
		_, err = cl.CollectionAdd(ctx, "<CrawlerConfig", true)
		fault(t, err, "")
		text, err = cl.CollectionDelete(ctx, "extra", true)
		ok(t, text, err, "Deleting collection extra")
		_, err = cl.CollectionDelete(ctx, "extra", true)
		fault(t, err, "extra")
		_, err = cl.CollectionDelete(ctx, none, true)
		fault(t, err, "no such collection")
	})
	t.Run("callbacks", func(t *testing.T) {
		// A node scheduler has no configuration file: its collections
		// come from its multinode scheduler (TestConfigurationChanged).
		if err := cl.ConfigurationChanged(ctx); mns && err != nil {
			t.Errorf("ConfigurationChanged: %v", err)
		} else if !mns && (err == nil || !strings.Contains(err.Error(), "multinode scheduler")) {
			t.Errorf("ConfigurationChanged on a node scheduler: %v, want a fault naming its multinode scheduler", err)
		}
		if err := cl.ReRegister(ctx); err != nil {
			t.Errorf("ReRegister: %v", err)
		}
	})
}

// lineChanges returns the lines of a missing from b and those of b missing
// from a.
func lineChanges(a, b string) (gone, added []string) {
	la, lb := strings.Split(a, "\n"), strings.Split(b, "\n")
	for _, l := range la {
		if !slices.Contains(lb, l) {
			gone = append(gone, strings.TrimSpace(l))
		}
	}
	for _, l := range lb {
		if !slices.Contains(la, l) {
			added = append(added, strings.TrimSpace(l))
		}
	}
	return gone, added
}
