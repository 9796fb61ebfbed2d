package nodesched

import (
	"testing"
	"time"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// checkDuplicateGroups checks the duplicates of the crawl store against the
// farm's contract (webfarm.DuplicateGroup): in each group of documents
// that share their text exactly one fetched document is the original and
// every other one is a duplicate of a document of its group; no document
// outside a group is a duplicate. With near false, near duplicates are
// distinct documents (exact detection). It returns the duplicates found
// among near duplicates.
func checkDuplicateGroups(t testing.TB, farm *webfarm.Farm, st *store.Store, coll string, near bool) (nearDups, groups int) {
	t.Helper()
	originals := map[string][]string{}
	groupOf := func(uri string) (string, bool) {
		g, isNear, ok := farm.DuplicateGroup(uri)
		if !ok || (isNear && !near) {
			return "", false
		}
		return g, true
	}
	err := st.URIs(coll, "", func(r *store.URIRecord) error {
		g, inGroup := groupOf(r.URI)
		switch r.Status {
		case store.StatusDuplicate:
			og, ok := groupOf(r.Owner)
			switch {
			case !inGroup:
				t.Errorf("%s recorded as a duplicate of %s: the farm has no duplicate of it", r.URI, r.Owner)
			case !ok || og != g:
				t.Errorf("%s recorded as a duplicate of %s, outside its group %s", r.URI, r.Owner, g)
			}
			if _, isNear, _ := farm.DuplicateGroup(r.URI); isNear {
				nearDups++
			}
		case store.StatusFetched, store.StatusNotModified:
			if inGroup {
				originals[g] = append(originals[g], r.URI)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for g, o := range originals {
		if len(o) != 1 {
			t.Errorf("group %s: %d originals %v, want 1", g, len(o), o)
		}
	}
	return nearDups, len(originals)
}

// TestNearDuplicateDetection crawls the farm with near_duplicate_detection
// off and on (no duplicate server: the node's checksum database decides).
// Off, the near duplicates are distinct documents; on, each near group
// keeps one original and the others are its duplicates; exact duplicates
// are found either way and no ordinary page is taken for a duplicate.
func TestNearDuplicateDetection(t *testing.T) {
	farm := startFarm(t, 4, 80)
	for _, near := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[near], func(t *testing.T) {
			yn := map[bool]string{false: "no", true: "yes"}[near]
			r := runCrawlWith(t, farm, t.TempDir(), farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", FetchTimeout: 8,
				Extra: `        <attrib name="near_duplicate_detection" type="boolean"> ` + yn + " </attrib>\n"})
			waitIdle(t, r.d, 90*time.Second)
			nearDups, groups := checkDuplicateGroups(t, farm, r.st, "farm", near)
			t.Logf("%d duplicate groups, %d near duplicates recorded", groups, nearDups)
			if near && nearDups == 0 || !near && nearDups != 0 {
				t.Errorf("near duplicates recorded as duplicates: %d", nearDups)
			}
		})
	}
}
