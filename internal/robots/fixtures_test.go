package robots

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/testenv"
)

// fixtureDir holds crawler-commons' robots.txt fixtures (see SOURCE.md
// there). The expectations below are those of crawler-commons'
// SimpleRobotRulesParserTest for the same files (in its exact user-agent
// matching mode), and of RFC 9309 section 5 for the RFC examples.
const fixtureDir = "crawler-commons/robots"

func readFixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.SharedTestdata(t, fixtureDir), name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

type check struct {
	url   string
	allow bool
}

func TestFixtures(t *testing.T) {
	tests := []struct {
		file   string
		token  string
		checks []check
		delay  time.Duration // -1: no crawl delay
		nrules int           // -1: not checked
	}{
		{"robots-with-utf8-bom.txt", "foobot", []check{{"http://www.domain.com/profile", false}, {"http://www.domain.com/", true}}, -1, -1},
		{"robots-with-utf16le-bom.txt", "foobot", []check{{"http://www.domain.com/profile", false}, {"http://www.domain.com/x/output/print", false}, {"http://www.domain.com/", true}}, -1, -1},
		{"robots-with-utf16be-bom.txt", "foobot", []check{{"http://www.domain.com/profile", false}, {"http://www.domain.com/", true}}, -1, -1},
		{"www.flot.com-robots.txt", "foobot", []check{{"http://www.flot.com/img/", false}, {"http://www.flot.com/", true}}, -1, -1},
		{"directive-typos-robots.txt", "bot1", []check{{"http://domain.com/desallow/", false}, {"http://domain.com/dissalow/", false}}, -1, -1},
		{"directive-typos-robots.txt", "bot2", []check{{"http://domain.com/useragent/", false}}, -1, -1},
		{"directive-typos-robots.txt", "bot3", []check{{"http://domain.com/useg-agent/", false}}, -1, -1},
		{"directive-typos-robots.txt", "bot4", []check{{"http://domain.com/useragent-no-colon/", false}}, -1, -1},
		{"format-errors-robots.txt", "bot1", []check{{"http://domain.com/whitespace-before-colon/", false}, {"http://domain.com/no-colon/", false}}, -1, -1},
		{"format-errors-robots.txt", "bot2", []check{{"http://domain.com/no-colon-useragent/", false}}, -1, -1},
		{"format-errors-robots.txt", "bot3", []check{{"http://domain.com/whitespace-before-colon/", true}, {"http://domain.com/other", false}}, -1, -1},
		{"many-user-agents.txt", "wget", []check{{"http://domain.com/", false}}, -1, -1},
		{"many-user-agents.txt", "mysuperlongbotnamethatmatchesnothing", []check{{"http://domain.com/", true}, {"http://domain.com/bot-trap/", false}}, -1, -1},
		{"merge-rules.txt", "wget", []check{{"http://domain.com/foo/bar/bar.txt", true}, {"http://domain.com/tmp/bar/bar.txt", false}, {"http://domain.com/chk/bar/bar.txt", true}}, -1, -1},
		{"precedence-of-rules.txt", "wget", []check{{"http://domain.com/", true}, {"http://domain.com/foo/bar", true}, {"http://domain.com/bar/foo", false}}, -1, -1},
		{"precedence-of-rules.txt", "testy", []check{{"http://domain.com/", true}, {"http://domain.com/foo/bar", true}, {"http://domain.com/foo/blue", false}, {"http://domain.com/foo/", false}, {"http://domain.com/foo/tar", false}}, -1, -1},
		{"malformed-path.txt", "bot1", []check{{"http://en.wikipedia.org/wiki/Wikipedia_talk:Mediation_Committee/", false}, {"http://en.wikipedia.org/wiki/", true}}, -1, -1},
		{"dos-line-endings.txt", "bot1", []check{{"http://ford.com/", true}}, time.Second, -1},
		{"astore.amazon.com-robots.txt", "anybot", []check{{"http://astore.amazon.com/", true}}, 5 * time.Second, -1},
		{"wildcards.txt", "anybot", []check{{"http://www.fict.com/wishlist/bogus", false}, {"http://www.fict.com/wishlist/universal/page", true}, {"http://www.fict.com/anydirectoryhere/gcrnsts", false}}, -1, -1},
		// twitter.com: derived from RFC 9309 (not in crawler-commons' tests).
		{"twitter.com-robots.txt", "slurp", []check{{"http://twitter.com/search?q=x", false}, {"http://twitter.com/bob/with_friends", false}, {"http://twitter.com/bob", true}}, time.Second, -1},
		{"twitter.com-robots.txt", "anybot", []check{{"http://twitter.com/?", false}, {"http://twitter.com/bob", true}}, -1, -1},
		// RFC 9309 section 5.1.
		{"rfc9309-example-simple-robots.txt", "foobot", []check{{"https://example.org/example/page.html", true}, {"https://example.org/example/allowed.gif", true}, {"https://example.org/", false}, {"https://example.org/path/index.html", false}}, -1, 3},
		{"rfc9309-example-simple-robots.txt", "barbot", []check{{"https://example.org/", true}, {"https://example.org/example/page.html", false}}, -1, 1},
		{"rfc9309-example-simple-robots.txt", "bazbot", []check{{"https://example.org/", true}, {"https://example.org/example/page.html", false}}, -1, 1},
		{"rfc9309-example-simple-robots.txt", "quxbot", []check{{"https://example.org/", true}, {"https://example.org/example/page.html", true}}, -1, 0},
		{"rfc9309-example-simple-robots.txt", "anyotherbot", []check{{"https://example.org/publications/doc1.html", true}, {"https://example.org/example/page.html", false}, {"https://example.org/example.gif", false}, {"https://example.org/", true}}, -1, 3},
		// RFC 9309 section 5.2.
		{"rfc9309-example-longest-match-robots.txt", "foobot", []check{{"https://example.org/example/page/", true}, {"https://example.org/example/page/index.html", true}, {"https://example.org/example/page/disallowed.gif", false}, {"https://example.org/", true}}, -1, -1},
		// RFC 9309 section 2.2.1.
		{"rfc9309-example-rule-group-merging.txt", "examplebot", []check{{"https://example.org/foo", false}, {"https://example.org/bar", false}, {"https://example.org/baz", false}, {"https://example.org/", true}}, -1, 3},
		{"rfc9309-example-rule-group-merging.txt", "anyotherbot", []check{{"https://example.org/foo", false}, {"https://example.org/bar", false}, {"https://example.org/baz", true}, {"https://example.org/", true}}, -1, 2},
		{"rfc9309-example-rule-group-merging.txt", "bazbot", []check{{"https://example.org/foo", true}, {"https://example.org/bar", true}, {"https://example.org/baz", false}, {"https://example.org/", true}}, -1, 1},
		{"crawl-delay-group-merging.txt", "mybot", []check{{"https://example.com/private/", false}, {"https://example.com/login/", true}, {"https://example.com/", true}}, 10 * time.Second, -1},
		{"crawl-delay-group-merging.txt", "yourbot", []check{{"https://example.com/private/", false}, {"https://example.com/login/", false}, {"https://example.com/", true}}, -1, -1},
		{"crawl-delay-group-merging.txt", "anyotherbot", []check{{"https://example.com/private/", true}, {"https://example.com/login/", true}, {"https://example.com/", true}}, 30 * time.Second, -1},
		{"extensions-group-merging.txt", "mybot", []check{{"https://example.com/private/", false}, {"https://example.com/login/", false}, {"https://example.com/", true}}, -1, -1},
		{"extensions-group-merging.txt", "yourbot", []check{{"https://example.com/private/", false}, {"https://example.com/login/", false}, {"https://example.com/", true}}, -1, -1},
		{"extensions-group-merging.txt", "anyotherbot", []check{{"https://example.com/private/", false}, {"https://example.com/login/", false}, {"https://example.com/", false}, {"https://example.com/llms.txt", true}}, -1, -1},
		{"extension-robots.txt", "mybot", []check{{"https://example.com/private/x", false}, {"https://example.com/secret/", true}}, -1, -1},
		{"extension-robots.txt", "otherbot", []check{{"https://example.com/admin/", false}, {"https://example.com/private/", true}}, -1, -1},
	}
	for _, tt := range tests {
		t.Run(tt.file+"/"+tt.token, func(t *testing.T) {
			r := Parse(readFixture(t, tt.file)).For(tt.token, "http://domain.com/robots.txt")
			for _, c := range tt.checks {
				if got := r.Allowed(c.url); got != c.allow {
					t.Errorf("Allowed(%q) = %v, want %v", c.url, got, c.allow)
				}
			}
			d, ok := r.CrawlDelay()
			if tt.delay < 0 && ok {
				t.Errorf("crawl delay = %v, want none", d)
			}
			if tt.delay >= 0 && (!ok || d != tt.delay) {
				t.Errorf("crawl delay = %v (%v), want %v", d, ok, tt.delay)
			}
			if tt.nrules >= 0 && r.NumRules() != tt.nrules {
				t.Errorf("%d rules, want %d", r.NumRules(), tt.nrules)
			}
		})
	}
}

func TestFixtureSitemaps(t *testing.T) {
	tests := []struct {
		file string
		want []string
	}{
		{"sitemap-robots.txt", []string{"http://domain.com/sitemap.xml", "http://domain.com/dir/my-sitemap.xml", "http://domain.com/dir/MixedCased-sitemap.xml"}},
		{"relative-sitemap-robots.txt", []string{"http://domain.com/sitemap.xml"}},
		{"sitemap-robots-dedup.txt", []string{"http://example.org/sitemap.xml"}},
		{"robots-with-utf16le-bom.txt", []string{"http://www.newsweek.com/sitemap_index.xml"}},
		{"www.flot.com-robots.txt", []string{"http://flot.com/sitemap_index.xml"}},
		{"extension-robots.txt", []string{"http://domain.com/sitemap.xml"}},
		{"format-errors-robots.txt", []string{"http://domain.com/sitemap.xml"}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			got := Parse(readFixture(t, tt.file)).For("bot1", "http://domain.com/robots.txt").Sitemaps
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("sitemaps (-want +got):\n%s", diff)
			}
		})
	}
}

// TestExtendedStandardNoWarnings: crawler-commons expects no warnings for the
// "extended standard" records (Request-rate, Visit-time, ...).
func TestExtendedStandardNoWarnings(t *testing.T) {
	f := Parse(readFixture(t, "extended-standard-robots.txt"))
	if f.Warnings != 0 {
		t.Errorf("Warnings = %d, want 0", f.Warnings)
	}
	if r := f.For("bot1", ""); !r.Allowed("http://x.com/anything") {
		t.Error("bot1 has an empty Disallow: everything allowed")
	}
}
