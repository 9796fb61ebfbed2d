package nodesched

import (
	"fmt"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestCrawlFocusedExcludeDomains crawls two multilingual sites with a
// focused crawl on English at depth 0 whose exclude_domains section names
// the second site: the first is crawled focused (other-language pages
// fetched, not kept, their links not followed), the second as if there
// were no focused section (every page fetched and kept).
func TestCrawlFocusedExcludeDomains(t *testing.T) {
	focusedSite, freeSite := &webfarm.LangSite{Pages: 60}, &webfarm.LangSite{Pages: 60}
	fBase := fmt.Sprintf("http://lang.test:%d", serveHandler(t, focusedSite))
	// The second site's pages differ from the first's by a trailing
	// word, so that they are not duplicates of them.
	xBase := fmt.Sprintf("http://free.lang.test:%d", serveHandler(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		freeSite.ServeHTTP(w, r)
		if strings.HasSuffix(r.URL.Path, ".html") || r.URL.Path == "/" {
			fmt.Fprint(w, "<p>free</p>")
		}
	})))
	extra := `<attrib name="start_uris" type="list-string"><member> ` + fBase + `/ </member><member> ` + xBase + `/ </member></attrib>
    <section name="focused">
      <attrib name="languages" type="list-string"><member> en </member></attrib>
      <attrib name="depth" type="integer"> 0 </attrib>
      <section name="exclude_domains"><attrib name="prefix" type="list-string"><member> free. </member></attrib></section>
    </section>`
	c := startOptCrawl(t, optXML(optCollection("foc", "", "lang.test", extra)), nil, nil)
	waitIdle(t, c.d, 60*time.Second)

	fetched, kept := focusedSite.ExpectFocused([]string{"en"}, 0)
	if d := cmp.Diff(fetched, withoutRobots(focusedSite.Paths())); d != "" {
		t.Errorf("focused site: fetched (-want +got):\n%s", d)
	}
	allFetched, allKept := freeSite.ExpectFocused(nil, 0)
	if d := cmp.Diff(allFetched, withoutRobots(freeSite.Paths())); d != "" {
		t.Errorf("excluded site: fetched (-want +got):\n%s", d)
	}
	if len(allKept) <= len(kept) {
		t.Errorf("excluded site keeps %d pages, focused site %d: the exclusion changed nothing", len(allKept), len(kept))
	}
	// storedBy lists paths of both sites; split by host.
	var gotKeptF, gotKeptX []string
	err := c.st.URIs("foc", "", func(r *store.URIRecord) error {
		if r.Status != store.StatusFetched {
			return nil
		}
		u, err := urlParse(r.URI)
		if err != nil {
			return err
		}
		if u.Hostname() == "free.lang.test" {
			gotKeptX = append(gotKeptX, u.Path)
		} else {
			gotKeptF = append(gotKeptF, u.Path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(kept, sortedCopy(gotKeptF)); d != "" {
		t.Errorf("focused site: kept (-want +got):\n%s", d)
	}
	if d := cmp.Diff(allKept, sortedCopy(gotKeptX)); d != "" {
		t.Errorf("excluded site: kept (-want +got):\n%s", d)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	sort.Strings(out)
	return out
}
