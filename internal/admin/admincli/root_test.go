package admincli

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/admin/admintest"
	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/stats"
)

const examples = "../../config/testdata/examples/"

func runTrawl(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return clitest.Run(context.Background(), []cli.Command{Root()}, stdin, args...)
}

func startAdmin(t *testing.T) (*admintest.Fake, string) {
	t.Helper()
	fake := admintest.New(admin.Standalone, func() float64 { return 1234195119 })
	srv := httptest.NewServer(admin.NewServer(fake, admin.ServerOptions{}))
	t.Cleanup(srv.Close)
	return fake, strings.TrimPrefix(srv.URL, "http://")
}

func TestAdminCommands(t *testing.T) {
	fake, addr := startAdmin(t)
	dir := t.TempDir()
	uris := filepath.Join(dir, "uris.txt")
	os.WriteFile(uris, []byte("http://www.contoso.com/a\n"), 0o644)
	run := func(args ...string) (int, string, string) {
		t.Helper()
		return runTrawl(t, "", append([]string{"admin", "-C", addr}, args...)...)
	}
	steps := []struct {
		args []string
		code int
		out  string // substring of stdout (or stderr when code != 0)
	}{
		{[]string{"list"}, 0, ""},
		{[]string{"add", examples + "3.1-simple.xml"}, 0, "Collection added default_example\n"},
		{[]string{"update", "--force", examples + "3.1-simple.xml"}, 0, "Collection updated default_example\n"},
		{[]string{"list"}, 0, "default_example\n"},
		{[]string{"config", "default_example"}, 0, `<DomainSpecification name="default_example">`},
		{[]string{"status", "default_example"}, 0, "crawling\n"},
		{[]string{"add-uris", "--urgent", "default_example", "http://www.contoso.com/", "http://www.contoso.com/b"}, 0, "Queued collection default_example with 2 URIs\n"},
		{[]string{"add-uri-file", "default_example", uris}, 0, "with 1 URIs"},
		{[]string{"delete-uris", "default_example", "http://www.contoso.com/b"}, 0, "Deleting 1 URIs"},
		{[]string{"delete-uri-file", "default_example", uris}, 0, "Deleting 1 URIs"},
		{[]string{"delete-site", "default_example", "www.contoso.com"}, 0, "Deleting site www.contoso.com"},
		{[]string{"preempt", "default_example", "www.contoso.com:80"}, 0, "Preempted"},
		{[]string{"quarantine", "default_example", "www.contoso.com", "600"}, 0, "for 600 seconds"},
		{[]string{"refetch", "default_example"}, 0, "Scheduled refetch of collection default_example"},
		{[]string{"refetch-uri", "--refeed", "--now", "default_example", "http://www.contoso.com/"}, 0, "Scheduled refetch of http://www.contoso.com/"},
		{[]string{"reprocess-site", "--dest", "default:web", "default_example", "www.contoso.com"}, 0, "Reprocessing site"},
		{[]string{"reprocess-prefix", "default_example", "www.contoso.com", "http://www.contoso.com/a/"}, 0, "under http://www.contoso.com/a/"},
		{[]string{"reprocess-uris", "default_example", "http://www.contoso.com/"}, 0, "Reprocessing 1 URIs"},
		{[]string{"suspend", "default_example"}, 0, "Suspended collection"},
		{[]string{"status", "default_example"}, 0, "suspended\n"},
		{[]string{"suspend", "default_example"}, 1, "trawl admin: CollectionSuspend: collection default_example is already suspended\n"},
		{[]string{"resume", "default_example"}, 0, "Resumed collection"},
		{[]string{"suspend-feeding", "default_example"}, 0, "Suspended feeding of default_example to default"},
		{[]string{"suspend-feeding", "default_example"}, 1, "trawl admin: CollectionSuspendFeeding failed: feeding of default_example to default is already suspended\n"},
		{[]string{"resume-feeding", "default_example"}, 0, "Resumed feeding"},
		{[]string{"refresh-only", "default_example", "on"}, 0, "only refreshes known content"},
		{[]string{"stats", "default_example"}, 0, "crawl mode Refreshing(limit=user)"},
		{[]string{"refresh-only", "default_example", "off"}, 0, "crawls new content"},
		{[]string{"stats", "--json", "default_example"}, 0, `"Status": "Crawling"`},
		{[]string{"stats", "--cycle", "prev", "default_example"}, 1, "has no prev cycle yet"},
		{[]string{"global-stats"}, 0, "DNS requests"},
		{[]string{"global-stats", "--json"}, 0, `"DNSRequests": 0`},
		{[]string{"log-level"}, 0, "0x74 (info,warning,error,critical)\n"},
		{[]string{"log-level", "debug,error"}, 0, "log level set to 0x28 (debug,error)\n"},
		{[]string{"log-level", "0x200"}, 1, "SetLogLevel failed"},
		{[]string{"log-level", "loud"}, 1, `unknown log level "loud"`},
		{[]string{"nodes"}, 1, "not a multinode scheduler"},
		{[]string{"routing", "default_example", "www.contoso.com"}, 1, "not routed"},
		{[]string{"methods"}, 0, "CollectionGetStatistics2\n"},
		{[]string{"status", "nosuch"}, 1, "trawl admin: CollectionGetStatus: collection \"nosuch\": no such collection\n"},
		{[]string{"delete", "default_example"}, 0, "Deleted collection default_example"},
		{[]string{"status"}, 2, "usage: trawl admin [-C host:port] status COLL"},
		{[]string{"frobnicate"}, 2, `unknown subcommand "frobnicate"`},
	}
	for _, s := range steps {
		code, out, errOut := run(s.args...)
		got := collapseSpaces(out)
		if s.code != 0 {
			got = errOut
		}
		if code != s.code || !strings.Contains(got, s.out) {
			t.Errorf("admin %v: exit %d, stdout:\n%s\nstderr:\n%s\nwant exit %d and %q", s.args, code, out, errOut, s.code, s.out)
		}
	}
	_ = fake
}

func TestAdminStatsTable(t *testing.T) {
	fake, addr := startAdmin(t)
	if code, _, errOut := runTrawl(t, "", "admin", "-C", addr, "add", examples+"3.1-simple.xml"); code != 0 {
		t.Fatal(errOut)
	}
	fake.Update(func(g *stats.Series, colls map[string]*admintest.Collection) {
		s := colls["default_example"].Stats
		for _, size := range []float64{100, 300} {
			_ = s.Delta().Add("Downloaded", 1)
			_ = s.Delta().Add("DocSize", size)
			_ = s.Delta().Observe("HTTPResponse", "200", 1)
			_ = s.Delta().Observe("MimeType", "text/html", 1)
		}
		s.Fold(1234195119 + 60)
	})
	code, out, errOut := runTrawl(t, "", "admin", "-C", addr, "stats", "--cycle", "complete", "default_example")
	if code != 0 {
		t.Fatal(errOut)
	}
	out = collapseSpaces(out)
	for _, want := range []string{"collection default_example (complete cycle)", "status Crawling",
		"downloaded 2\n", "document size avg 200\n", "document size max 300\n",
		"HTTP responses 200=2\n", "MIME types text/html=2\n", "progress 0% (1 days 0h 59m 0s until scratch refresh)"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in\n%s", want, out)
		}
	}
}

func TestAdminConfigErrors(t *testing.T) {
	_, addr := startAdmin(t)
	f := filepath.Join(t.TempDir(), "bad.xml")
	os.WriteFile(f, []byte(`<CrawlerConfig>
<DomainSpecification name="sp">
<attrib name="dealy" type="real">10</attrib>
</DomainSpecification>
</CrawlerConfig>
`), 0o644)
	code, _, errOut := runTrawl(t, "", "admin", "-C", addr, "add", f)
	want := "trawl admin: CollectionAdd: invalid configuration:\nConfigData:3: collection sp: parameter dealy: unknown parameter (did you mean \"delay\"?)\n"
	if code != 1 || errOut != want {
		t.Errorf("exit %d, stderr:\n%s\nwant:\n%s", code, errOut, want)
	}
	code, _, errOut = runTrawl(t, "", "admin", "-C", "127.0.0.1:1", "list")
	if code != 1 || !strings.Contains(errOut, "trawl admin: admin: CollectionGetList:") || strings.Count(errOut, "\n") != 1 {
		t.Errorf("unreachable server: exit %d: %q", code, errOut)
	}
}

// collapseSpaces turns runs of spaces (table padding) into one space.
func collapseSpaces(s string) string {
	for strings.Contains(s, "  ") {
		s = strings.ReplaceAll(s, "  ", " ")
	}
	return s
}
