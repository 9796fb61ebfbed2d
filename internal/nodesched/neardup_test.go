package nodesched

import (
	"testing"
	"time"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// storedDocs lists the fetched documents of a collection for
// webfarm.CheckDuplicates.
func storedDocs(t testing.TB, st *store.Store, coll string) []webfarm.Stored {
	t.Helper()
	var docs []webfarm.Stored
	err := st.URIs(coll, "", func(r *store.URIRecord) error {
		switch r.Status {
		case store.StatusDuplicate:
			docs = append(docs, webfarm.Stored{URI: r.URI, Owner: r.Owner})
		case store.StatusFetched, store.StatusNotModified:
			docs = append(docs, webfarm.Stored{URI: r.URI})
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return docs
}

// TestNearDuplicateDetection crawls the farm with near_duplicate_detection
// off and on (no duplicate server: the node's checksum database decides)
// and checks the store against the farm's contract
// (webfarm.CheckDuplicates). Off, the near duplicates are distinct
// documents; on, each near group keeps one original and the others are
// duplicates of a document of the group; exact duplicates are found either
// way and no ordinary page is taken for a duplicate.
func TestNearDuplicateDetection(t *testing.T) {
	farm := startFarm(t, 4, 80)
	for _, near := range []bool{false, true} {
		t.Run(map[bool]string{false: "off", true: "on"}[near], func(t *testing.T) {
			yn := map[bool]string{false: "no", true: "yes"}[near]
			r := runCrawlWith(t, farm, t.TempDir(), farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "farm", FetchTimeout: 8,
				Extra: `        <attrib name="near_duplicate_detection" type="boolean"> ` + yn + " </attrib>\n"})
			waitIdle(t, r.d, 90*time.Second)
			problems, groups, nearDups := farm.CheckDuplicates(storedDocs(t, r.st, "farm"), near)
			for _, p := range problems {
				t.Error(p)
			}
			t.Logf("%d duplicate groups, %d near duplicates recorded", groups, nearDups)
			if near && nearDups == 0 || !near && nearDups != 0 {
				t.Errorf("near duplicates recorded as duplicates: %d", nearDups)
			}
		})
	}
}
