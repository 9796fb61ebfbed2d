package admin_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/admin/admintest"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/xmlrpc"
)

const clock = 1234195119.4230039

const webXML = `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="web">
    <attrib name="refresh" type="real">2000</attrib>
    <attrib name="start_uris" type="list-string"><member>http://www.contoso.com/</member></attrib>
    <SubDomain name="news">
      <attrib name="refresh" type="real">60</attrib>
      <section name="include_uris"><attrib name="prefix" type="list-string"><member>http://news.contoso.com/</member></attrib></section>
    </SubDomain>
  </DomainSpecification>
</CrawlerConfig>
`

type env struct {
	fake   *admintest.Fake
	client *admin.Client
	srv    *httptest.Server
}

func start(t *testing.T, role admin.Role) *env {
	t.Helper()
	now := clock
	fake := admintest.New(role, func() float64 { return now })
	srv := httptest.NewServer(admin.NewServer(fake, admin.ServerOptions{}))
	t.Cleanup(srv.Close)
	return &env{fake: fake, client: admin.NewClient(strings.TrimPrefix(srv.URL, "http://"), srv.Client()), srv: srv}
}

// must(f())(t) returns f's value and fails t on f's error.
func must[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// wantErr checks that err is an *admin.Error (fault or in-band) whose
// message contains sub.
func wantErr(t *testing.T, err error, fault bool, sub string) {
	t.Helper()
	var e *admin.Error
	if !errors.As(err, &e) {
		t.Fatalf("got %v, want an admin.Error", err)
	}
	if e.Fault != fault || !strings.Contains(e.Msg, sub) {
		t.Errorf("got %+v, want fault=%t containing %q", e, fault, sub)
	}
	if fault && e.Code != admin.FaultCode {
		t.Errorf("faultCode %d, want 1", e.Code)
	}
}

func TestEveryMethod(t *testing.T) {
	ctx := context.Background()
	e := start(t, admin.Standalone)
	c := e.client

	// Web crawler management (2.2.8).
	if lvl := must(c.GetLogLevel(ctx))(t); lvl != 0x74 {
		t.Errorf("GetLogLevel = %#x", lvl)
	}
	if err := c.SetLogLevel(ctx, admin.LogDebug|admin.LogError); err != nil {
		t.Fatal(err)
	}
	if lvl := must(c.GetLogLevel(ctx))(t); lvl != 0x28 {
		t.Errorf("GetLogLevel after set = %#x", lvl)
	}
	wantErr(t, c.SetLogLevel(ctx, 0x101), false, "not set")
	_, err := c.GetNodeSchedulerXmlRpcPorts(ctx)
	wantErr(t, err, true, "not a multinode scheduler")
	if n := must(c.GetSiteManagerNum(ctx))(t); n != 1 {
		t.Errorf("GetSiteManagerNum = %d", n)
	}
	if d := must(c.IsDistributed(ctx))(t); d {
		t.Error("standalone IsDistributed")
	}
	if m := must(c.IsMultiNodeScheduler(ctx))(t); m {
		t.Error("standalone IsMultiNodeScheduler")
	}

	// Collection management (2.2.9).
	if l := must(c.CollectionGetList(ctx))(t); len(l) != 0 {
		t.Errorf("initial collections %v", l)
	}
	if txt := must(c.CollectionAdd(ctx, webXML, false))(t); txt != "Collection added web" {
		t.Errorf("CollectionAdd = %q", txt)
	}
	if txt := must(c.CollectionAdd(ctx, webXML, false))(t); txt != "Collection updated web" {
		t.Errorf("CollectionAdd again = %q", txt)
	}
	if diff := cmp.Diff([]string{"web"}, must(c.CollectionGetList(ctx))(t)); diff != "" {
		t.Error(diff)
	}
	x := must(c.CollectionGetConfigurationXML(ctx, "web"))(t)
	if !strings.Contains(x, `<DomainSpecification name="web">`) || !strings.Contains(x, "http://www.contoso.com/") {
		t.Errorf("configuration XML:\n%s", x)
	}
	txt := must(c.AddURIs(ctx, "web", false, []string{"http://www.contoso.com/", "http://www.contoso.com/about/"}))(t)
	if txt != "Queued collection web with 2 URIs" {
		t.Errorf("AddURIs = %q", txt)
	}
	_, err = c.AddURIs(ctx, "web", true, []string{"relative/path"})
	wantErr(t, err, false, "not an absolute URI")
	_, err = c.AddURIs(ctx, "nosuch", false, nil)
	wantErr(t, err, true, `AddURIs: collection "nosuch": no such collection`)

	dir := t.TempDir()
	uriFile := filepath.Join(dir, "uris.txt")
	if err := os.WriteFile(uriFile, []byte("http://a.contoso.com/\nhttp://b.contoso.com/x\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	must(c.AddURIFile(ctx, "web", true, uriFile))(t)
	_, err = c.AddURIFile(ctx, "nosuch", true, uriFile)
	wantErr(t, err, true, "no such collection")
	if got := e.fake.Collection("web"); len(got.Queued) != 4 || len(got.Urgent) != 2 {
		t.Errorf("queued %v urgent %v", got.Queued, got.Urgent)
	}
	must(c.CollectionDeleteURIs(ctx, "web", []string{"http://www.contoso.com/about/"}))(t)
	must(c.CollectionDeleteURIFile(ctx, "web", uriFile))(t)
	if got := e.fake.Collection("web"); len(got.Deleted) != 3 {
		t.Errorf("deleted %v", got.Deleted)
	}
	must(c.CollectionDeleteSite(ctx, "web", "www.contoso.com:80"))(t)
	must(c.CollectionPreemptSite(ctx, "web", "www.contoso.com"))(t)
	must(c.CollectionQuarantineSite(ctx, "web", "[::1]:8080", 3600))(t)
	if got := e.fake.Collection("web"); got.Quarantined["[::1]:8080"] != 3600 || len(got.Preempted) != 1 || len(got.DeletedSites) != 1 {
		t.Errorf("site operations: %+v", got)
	}
	_, err = c.CollectionQuarantineSite(ctx, "web", "www.contoso.com", -5)
	wantErr(t, err, true, "must not be negative")
	_, err = c.CollectionPreemptSite(ctx, "web", "::1")
	wantErr(t, err, true, "IPv6 address must be in brackets")
	_, err = c.CollectionPreemptSite(ctx, "web", "host:99999")
	wantErr(t, err, true, "bad port")

	// The extensions (extensions.go).
	must(c.CollectionQuarantineSiteRequeue(ctx, "web", "www.contoso.com", 60))(t)
	if got := e.fake.Collection("web"); got.Quarantined["www.contoso.com"] != 60 || len(got.Requeued) != 1 {
		t.Errorf("quarantine with requeue: %+v", got)
	}
	_, err = c.CollectionQuarantineSiteRequeue(ctx, "web", "www.contoso.com", -1)
	wantErr(t, err, true, "must not be negative")
	must(c.CollectionSetState(ctx, "web", 7))(t)
	if st := must(c.CollectionGetStatus(ctx, "web"))(t); st != "compacting" || e.fake.Collection("web").State != 7 {
		t.Errorf("after CollectionSetState 7: status %q, state %d", st, e.fake.Collection("web").State)
	}
	must(c.CollectionSetState(ctx, "web", 1))(t)
	for _, bad := range []int{0, 3, 9} {
		_, err = c.CollectionSetState(ctx, "web", bad)
		wantErr(t, err, true, "want 1, 2 or 4-8")
	}
	_, err = c.RerouteNodeScheduler(ctx, "n2")
	wantErr(t, err, true, "not a multinode scheduler")

	e.fake.SetRoute("www.contoso.com", admin.HostPort{Host: "node1", Port: 13000})
	if hp := must(c.CollectionGetSiteRoutingAddress(ctx, "web", "www.contoso.com"))(t); hp != (admin.HostPort{Host: "node1", Port: 13000}) {
		t.Errorf("routing = %v", hp)
	}
	_, err = c.CollectionGetSiteRoutingAddress(ctx, "web", "other.contoso.com")
	wantErr(t, err, false, "not routed")

	must(c.CollectionRefetch(ctx, "web", ""))(t)
	must(c.CollectionRefetch(ctx, "web", "news"))(t)
	_, err = c.CollectionRefetch(ctx, "web", "sports")
	wantErr(t, err, false, `no subcollection "sports"`)
	must(c.CollectionRefetchURI(ctx, "web", "http://www.contoso.com/", true, false, true))(t)
	must(c.CollectionReprocessSite(ctx, "web", "", "www.contoso.com"))(t)
	must(c.CollectionReprocessSitePrefix(ctx, "web", "www.contoso.com", "http://www.contoso.com/a/", "default:web"))(t)
	must(c.CollectionReprocessURI(ctx, "web", "idx", []string{"http://www.contoso.com/"}))(t)
	if diff := cmp.Diff([]string{"default www.contoso.com", "default:web www.contoso.com http://www.contoso.com/a/", "idx http://www.contoso.com/"},
		e.fake.Collection("web").Reprocessed); diff != "" {
		t.Error(diff)
	}
	_, err = c.CollectionReprocessSite(ctx, "web", "default:", "www.contoso.com")
	wantErr(t, err, true, "names no content collection")

	// Suspend and resume (2.2.9.18-21).
	_, err = c.CollectionResume(ctx, "web")
	wantErr(t, err, true, "is not suspended")
	must(c.CollectionSuspend(ctx, "web"))(t)
	if st := must(c.CollectionGetStatus(ctx, "web"))(t); st != "suspended" {
		t.Errorf("status %q", st)
	}
	_, err = c.CollectionSuspend(ctx, "web")
	wantErr(t, err, true, "already suspended")
	must(c.CollectionResume(ctx, "web"))(t)
	if st := must(c.CollectionGetStatus(ctx, "web"))(t); st != "crawling" {
		t.Errorf("status %q", st)
	}
	must(c.CollectionSuspendFeeding(ctx, "web", ""))(t)
	_, err = c.CollectionSuspendFeeding(ctx, "web", "")
	wantErr(t, err, false, "already suspended")
	must(c.CollectionResumeFeeding(ctx, "web", ""))(t)

	// Status (2.2.10).
	must(c.CollectionEnableRefreshOnly(ctx, "web"))(t)
	rep := must(c.CollectionGetStatistics2(ctx, "web"))(t)
	if rep.Cur == nil || rep.Complete == nil || rep.Prev != nil {
		t.Fatalf("report %+v", rep)
	}
	if rep.Cur.CrawlMode != stats.CrawlModeUserRefresh || rep.Cur.Status != "Crawling" || rep.Cur.Feeding != 1 {
		t.Errorf("cur: mode %q status %q feeding %d", rep.Cur.CrawlMode, rep.Cur.Status, rep.Cur.Feeding)
	}
	must(c.CollectionDisableRefreshOnly(ctx, "web"))(t)

	// Feed some statistics and read them both ways.
	e.fake.Update(func(g *stats.Series, colls map[string]*admintest.Collection) {
		_ = g.Delta().Add("DNSRequests", 7)
		_ = g.Delta().Observe("DNSResponse", "0", 7)
		g.Fold(clock + 60)
		s := colls["web"].Stats
		for _, size := range []float64{1000, 3000} {
			_ = s.Delta().Add("Downloaded", 1)
			_ = s.Delta().Add("DocSize", size)
			_ = s.Delta().Observe("HTTPResponse", "200", 1)
		}
		s.NewCycle(clock + 100)
		_ = s.Delta().Add("Downloaded", 1)
		s.Fold(clock + 200)
		site := stats.NewSeries(stats.SiteSchema(), "www.contoso.com:80", 0, clock)
		_ = site.Delta().Add("Processed", 5)
		site.Fold(clock + 10)
		colls["web"].Sites["www.contoso.com:80"] = site
	})
	rep = must(c.CollectionGetStatistics2(ctx, "web"))(t)
	if rep.Prev == nil || rep.Prev.Downloaded != 2 || rep.Prev.DocSizeAvg != 2000 || rep.Prev.DocSizeMax != 3000 ||
		rep.Cur.Downloaded != 1 || rep.Complete.Downloaded != 3 || rep.Complete.HTTPResponse["200"] != 2 {
		t.Errorf("statistics2: prev %+v\ncur %+v", rep.Prev, rep.Cur)
	}
	st := must(c.CollectionGetStatistics(ctx, "web"))(t)
	if st.Global == nil || st.Global.Complete().Value("DNSRequests") != 7 || len(st.Series) != 1 {
		t.Fatalf("statistics: %+v", st)
	}
	if diff := cmp.Diff([]stats.DSpec{{Collection: "web", Refresh: 2000, RefreshMode: stats.RefreshScratch}}, st.DSpec); diff != "" {
		t.Error(diff)
	}
	if web := st.Get("web"); web.Complete().Value("Downloaded") != 3 || web.Previous().Value("DocSize") != 4000 {
		t.Errorf("web series: complete %v", web.Complete().Value("Downloaded"))
	}
	all := must(c.CollectionGetStatistics(ctx, ""))(t)
	if len(all.Series) != 1 || all.Global == nil {
		t.Errorf("all statistics: %d series", len(all.Series))
	}
	_, err = c.CollectionGetStatistics(ctx, "nosuch")
	wantErr(t, err, true, "no such collection")
	site := must(c.CollectionGetSiteStatistics(ctx, "web", "www.contoso.com:80"))(t)
	if site.Global != nil || len(site.Series) != 1 || site.Series[0].Complete().Value("Processed") != 5 {
		t.Errorf("site statistics: %+v", site)
	}
	g := must(c.GetGlobalStatistics(ctx))(t)
	if g.Complete == nil || g.Complete.DNSRequests != 7 || g.Complete.DNSResponse["0"] != 7 || g.Delta == nil {
		t.Errorf("global: %+v", g)
	}

	// MS-FSCX callbacks and introspection.
	if err := c.Ping(ctx); err != nil {
		t.Error(err)
	}
	if err := c.ConfigurationChanged(ctx); err != nil {
		t.Error(err)
	}
	if _, err := c.Call(ctx, "ReRegister", xmlrpc.String("anything"), xmlrpc.Int(3)); err != nil {
		t.Error(err)
	}
	if cc, rr := e.fake.Events(); cc != 1 || rr != 1 {
		t.Errorf("events %d %d", cc, rr)
	}
	methods := must(c.ListMethods(ctx))(t)
	if len(methods) != 34+3+3+3 { // MS-FSCADM, MS-FSCX, system.*, extensions
		t.Errorf("%d methods: %v", len(methods), methods)
	}
	help := must(c.MethodHelp(ctx, "AddURIs"))(t)
	if !strings.Contains(help, "AddURIs(string Collection, int Urgent, array URIs) -> array") || !strings.Contains(help, "2.2.9.1") {
		t.Errorf("help: %s", help)
	}

	// Delete last.
	must(c.CollectionDelete(ctx, "web", false))(t)
	if l := must(c.CollectionGetList(ctx))(t); len(l) != 0 {
		t.Errorf("after delete: %v", l)
	}
	_, err = c.CollectionDelete(ctx, "web", false)
	wantErr(t, err, true, "no such collection")
}

func TestRoles(t *testing.T) {
	ctx := context.Background()
	e := start(t, admin.MultinodeScheduler)
	_, err := e.client.GetNodeSchedulerXmlRpcPorts(ctx)
	wantErr(t, err, true, "no node scheduler is registered")
	e.fake.SetNodeSchedulers(admin.HostPort{Host: "n1", Port: 13000}, admin.HostPort{Host: "n2", Port: 14000})
	if diff := cmp.Diff([]admin.HostPort{{"n1", 13000}, {"n2", 14000}}, must(e.client.GetNodeSchedulerXmlRpcPorts(ctx))(t)); diff != "" {
		t.Error(diff)
	}
	// The text's spelling is an alias.
	if _, err := e.client.Call(ctx, "GetNodeSchedulerXmlRpcPort"); err != nil {
		t.Error(err)
	}
	if n := must(e.client.GetSiteManagerNum(ctx))(t); n != 0 {
		t.Errorf("multinode GetSiteManagerNum = %d", n)
	}
	must(e.client.RerouteNodeScheduler(ctx, "n3"))(t)
	if diff := cmp.Diff([]string{"n3"}, e.fake.Rerouted()); diff != "" {
		t.Errorf("RerouteNodeScheduler: %s", diff)
	}
	_, err = e.client.RerouteNodeScheduler(ctx, "")
	wantErr(t, err, true, "empty")
	if d, m := must(e.client.IsDistributed(ctx))(t), must(e.client.IsMultiNodeScheduler(ctx))(t); !d || !m {
		t.Errorf("multinode: distributed %t multinode %t", d, m)
	}
	must(e.client.CollectionAdd(ctx, webXML, false))(t) // Force ignored

	n := start(t, admin.NodeScheduler)
	_, err = n.client.CollectionAdd(ctx, webXML, false)
	wantErr(t, err, true, "set Force to 1")
	must(n.client.CollectionAdd(ctx, webXML, true))(t)
	_, err = n.client.CollectionDelete(ctx, "web", false)
	wantErr(t, err, true, "set Force to 1")
	must(n.client.CollectionDelete(ctx, "web", true))(t)
	if d, m := must(n.client.IsDistributed(ctx))(t), must(n.client.IsMultiNodeScheduler(ctx))(t); !d || m {
		t.Errorf("node: distributed %t multinode %t", d, m)
	}
}

func TestParameterChecks(t *testing.T) {
	ctx := context.Background()
	e := start(t, admin.Standalone)
	must(e.client.CollectionAdd(ctx, webXML, false))(t)
	tests := []struct {
		method string
		params []xmlrpc.Value
		want   string
	}{
		{"AddURIs", []xmlrpc.Value{xmlrpc.String("web"), xmlrpc.Int(0)}, "AddURIs: takes 3 parameters (Collection string, Urgent int (0 or 1), URIs array of strings), got 2"},
		{"AddURIs", []xmlrpc.Value{xmlrpc.String("web"), xmlrpc.String("0"), xmlrpc.Array{}}, "AddURIs: parameter 2 (Urgent): want int (0 or 1), got string"},
		{"AddURIs", []xmlrpc.Value{xmlrpc.String("web"), xmlrpc.Int(2), xmlrpc.Array{}}, "AddURIs: parameter 2 (Urgent): must be 0 or 1, got 2"},
		{"AddURIs", []xmlrpc.Value{xmlrpc.String("web"), xmlrpc.Int(0), xmlrpc.Array{xmlrpc.Int(1)}}, "AddURIs: parameter 3 (URIs): element 1 is int, want string"},
		{"AddURIs", []xmlrpc.Value{xmlrpc.Int(1), xmlrpc.Int(0), xmlrpc.Array{}}, "AddURIs: parameter 1 (Collection): want string, got int"},
		{"CollectionQuarantineSite", []xmlrpc.Value{xmlrpc.String("web"), xmlrpc.String("h"), xmlrpc.Int(1 << 40)}, "does not fit in a 32-bit int"},
		{"CollectionGetList", []xmlrpc.Value{xmlrpc.String("x")}, "CollectionGetList: takes 0 parameters (none), got 1"},
		{"collectiongetlist", nil, `unknown method "collectiongetlist" (did you mean "CollectionGetList"? method names are case-sensitive)`},
		{"NoSuchMethod", nil, `unknown method "NoSuchMethod"`},
		{"system.methodHelp", []xmlrpc.Value{xmlrpc.String("Nope")}, `unknown method "Nope"`},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			_, err := e.client.Call(ctx, tt.method, tt.params...)
			wantErr(t, err, true, tt.want)
		})
	}
	// A boolean is accepted for a flag.
	if _, err := e.client.Call(ctx, "AddURIs", xmlrpc.String("web"), xmlrpc.Bool(true), xmlrpc.Array{}); err != nil {
		t.Error(err)
	}
}

func TestCollectionAddConfigErrors(t *testing.T) {
	ctx := context.Background()
	e := start(t, admin.Standalone)
	bad := `<CrawlerConfig>
<DomainSpecification name="sp">
<attrib name="dealy" type="real">10</attrib>
<attrib name="use_cookies" type="boolean">true</attrib>
</DomainSpecification>
</CrawlerConfig>
`
	_, err := e.client.CollectionAdd(ctx, bad, false)
	var ae *admin.Error
	if !errors.As(err, &ae) || !ae.Fault {
		t.Fatalf("got %v", err)
	}
	want := `CollectionAdd: invalid configuration:
ConfigData:3: collection sp: parameter dealy: unknown parameter (did you mean "delay"?)
ConfigData:4: collection sp: parameter use_cookies: invalid boolean "true" (want yes or no)`
	if ae.Msg != want {
		t.Errorf("fault:\n%s\nwant:\n%s", ae.Msg, want)
	}
	_, err = e.client.CollectionAdd(ctx, "<CrawlerConfig></CrawlerConfig>", false)
	wantErr(t, err, true, "holds no collection")
	_, err = e.client.CollectionAdd(ctx, "not xml", false)
	wantErr(t, err, true, "CollectionAdd: invalid configuration")
}

func TestHTTP(t *testing.T) {
	e := start(t, admin.Standalone)
	resp, err := http.Get(e.srv.URL + "/RPC2")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMethodNotAllowed || resp.Header.Get("Allow") != "POST" {
		t.Errorf("GET: %s", resp.Status)
	}
	resp, err = http.Post(e.srv.URL+"/other", "text/xml", strings.NewReader(""))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("other path: %s", resp.Status)
	}
	resp, err = http.Post(e.srv.URL+"/RPC2", "text/xml", strings.NewReader("<methodCall>"))
	if err != nil {
		t.Fatal(err)
	}
	v, err := xmlrpc.DecodeResponse(resp.Body, xmlrpc.Limits{})
	resp.Body.Close()
	var f *xmlrpc.Fault
	if !errors.As(err, &f) || f.Code != 1 || !strings.Contains(f.String, "bad XML-RPC request") {
		t.Errorf("bad body: %v %v", v, err)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/xml" {
		t.Errorf("Content-Type %q", ct)
	}
	// A body over the cap is refused.
	small := httptest.NewServer(admin.NewServer(e.fake, admin.ServerOptions{MaxRequest: 64}))
	defer small.Close()
	_, err = admin.NewClient(small.URL+"/RPC2", small.Client()).AddURIs(context.Background(), strings.Repeat("x", 200), false, nil)
	wantErr(t, err, true, "limit exceeded")
}

// panicky is a backend whose CollectionGetList panics.
type panicky struct{ *admintest.Fake }

func (panicky) CollectionGetList(ctx context.Context) ([]string, error) { panic("boom") }

func TestBackendPanic(t *testing.T) {
	fake := admintest.New(admin.Standalone, func() float64 { return clock })
	srv := httptest.NewServer(admin.NewServer(panicky{fake}, admin.ServerOptions{}))
	defer srv.Close()
	c := admin.NewClient(srv.URL+"/RPC2", srv.Client())
	_, err := c.CollectionGetList(context.Background())
	wantErr(t, err, true, "internal error: boom")
	if _, err := c.GetLogLevel(context.Background()); err != nil {
		t.Errorf("server unusable after a panic: %v", err)
	}
}
