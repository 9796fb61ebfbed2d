package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// TestRunNearDuplicates runs `trawl run --once` with the duplicate server
// (pp/use_dupservers) and near_duplicate_detection: the band keys go over
// MS-FSCMT PPDUP_ADD to the duplicate server role, every near duplicate is
// recorded as a duplicate of a document of its group and is not in the
// index, and no other page is a duplicate (webfarm.CheckDuplicates).
func TestRunNearDuplicates(t *testing.T) {
	f := newFarmFixture(t, 3, 4, 60)
	var x bytes.Buffer
	extra := `        <attrib name="near_duplicate_detection" type="boolean"> yes </attrib>
        <section name="pp"><attrib name="use_dupservers" type="boolean"> yes </attrib></section>
`
	if err := webfarm.WriteCrawlXML(&x, f.farm.DefaultCrawl(), webfarm.XMLOptions{Collection: "demo", FetchTimeout: 10, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(f.dir, "near.xml")
	if err := os.WriteFile(cfg, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(f.dir, "data")
	code, out, errOut := runTrawl(t, "", "run", "--config", cfg, "--hosts-file", f.hostsFile, "--data", data,
		"--once", "--progress", "off", "--listen", "off")
	if code != 0 {
		t.Fatalf("trawl run exit %d\n%s\n%s", code, out, errOut)
	}
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var docs []webfarm.Stored
	err = st.URIs("demo", "", func(r *store.URIRecord) error {
		switch r.Status {
		case store.StatusDuplicate:
			docs = append(docs, webfarm.Stored{URI: r.URI, Owner: r.Owner})
		case store.StatusFetched, store.StatusNotModified:
			docs = append(docs, webfarm.Stored{URI: r.URI})
		}
		return nil
	})
	st.Close()
	if err != nil {
		t.Fatal(err)
	}
	problems, groups, nearDups := f.farm.CheckDuplicates(docs, true)
	for _, p := range problems {
		t.Error(p)
	}
	if nearDups == 0 {
		t.Error("no near duplicate recorded")
	}
	want, _, dups := indexableDocs(t, data, f.farm)
	checkRunIndex(t, data, want)
	t.Logf("%d documents, %d duplicate groups, %d duplicates (%d near); index holds the %d others", len(docs), groups, dups, nearDups, len(want))
}
