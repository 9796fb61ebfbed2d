package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/index"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/store"
	"github.com/trawl/trawl/internal/webfarm"
)

// writeXMLExtra writes the farm's default crawl as collection name with
// extra MS-FSCCFG XML in its DomainSpecification.
func (f *farmFixture) writeXMLExtra(t *testing.T, name, extra string) string {
	t.Helper()
	var x bytes.Buffer
	if err := webfarm.WriteCrawlXML(&x, f.farm.DefaultCrawl(), webfarm.XMLOptions{Collection: name, FetchTimeout: 10, Extra: extra}); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(f.dir, name+".xml")
	if err := os.WriteFile(p, x.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// indexTotal asks the search API of a running `trawl run` how many
// documents content collection coll holds.
func indexTotal(t *testing.T, addr, coll string) uint64 {
	t.Helper()
	q := url.Values{"q": {"-site:nothing.invalid"}, "collection": {coll}, "size": {"1"}}
	resp, err := http.Get("http://" + addr + "/api/search?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r index.Results
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.Total
}

// storedIndexable returns the fetched, non-duplicate documents of crawl
// collection coll in the crawl store under data that the farm did not mark
// noindex.
func storedIndexable(t *testing.T, data, coll string, farm *webfarm.Farm) []string {
	t.Helper()
	st, err := store.Open(filepath.Join(data, "node"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var want []string
	err = st.URIs(coll, "", func(r *store.URIRecord) error {
		if r.Status != store.StatusFetched && r.Status != store.StatusNotModified {
			return nil
		}
		if res, err := farm.Describe(r.URI, 0); err != nil || res.NoIndex {
			return err
		}
		want = append(want, r.URI)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(want)
	return want
}

// TestRunFeedingDestinations crawls the farm with `trawl run` and a
// feeding section of two content destinations (MS-FSCCFG 2.2.4.9): "live"
// submits to index collection idx_live; "archive" submits to idx_archive,
// is paused and is the primary one. While archive is paused, idx_live gets
// every document and idx_archive none, and the callbacks of live (not
// primary) are not acted on: the crawl's PP counters stay 0. Resumed over
// the admin API (CollectionResumeFeeding with its name), archive gets every
// document and its callbacks make the PP counters. Nothing reaches the
// crawl collection's own name in the index.
func TestRunFeedingDestinations(t *testing.T) {
	fx := newFarmFixture(t, 5, 3, 40)
	cfg := fx.writeXMLExtra(t, "c1", `<section name="feeding">
  <section name="live"><attrib name="collection" type="string"> idx_live </attrib></section>
  <section name="archive">
    <attrib name="collection" type="string"> idx_archive </attrib>
    <attrib name="paused" type="boolean"> yes </attrib>
    <attrib name="primary" type="boolean"> yes </attrib>
  </section>
</section>`)
	c := startRun(t, fx.farm, cfg, fx.hostsFile, filepath.Join(fx.dir, "data"), "--workers", "4")
	ctx := context.Background()
	cl := admin.NewClient(c.addr, nil)
	flat := func() *stats.CollectionFlat {
		t.Helper()
		rep, err := cl.CollectionGetStatistics2(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		return rep.Complete
	}
	status := func() admin.CollectionStatus { return collectionStatus(t, c.addr, "c1") }

	// The crawl ends and live has fed everything it got, while archive
	// keeps its operations waiting: as many as live fed.
	var live uint64
	waitFor(t, "the crawl idle and idx_live fed", 120*time.Second, func() bool {
		live = indexTotal(t, c.addr, "idx_live")
		cs := status()
		return cs.Idle && cs.Stored > 0 && live > 0 && uint64(feedBacklog(t, "http://"+c.addr+"/metrics")) == live
	})
	if n := indexTotal(t, c.addr, "idx_archive"); n != 0 {
		t.Errorf("idx_archive holds %d documents while archive is paused", n)
	}
	if n := indexTotal(t, c.addr, "c1"); n != 0 {
		t.Errorf("index collection c1 holds %d documents; every destination names another", n)
	}
	if f := flat(); f.PPSucceeded != 0 || f.PPFed != 0 || f.PPAdded == 0 {
		t.Errorf("before archive (the primary) is resumed: PPAdded %v, PPFed %v, PPSucceeded %v; want the secondary's callbacks ignored",
			f.PPAdded, f.PPFed, f.PPSucceeded)
	}
	// Resuming every destination is not refused; resuming live by name
	// is (it is not suspended).
	if _, err := cl.CollectionResumeFeeding(ctx, "c1", "live"); err == nil {
		t.Error("CollectionResumeFeeding(live) succeeded; live was not suspended")
	}

	// Resume archive by name.
	if _, err := cl.CollectionResumeFeeding(ctx, "c1", "archive"); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "idx_archive fed", 60*time.Second, func() bool {
		return indexTotal(t, c.addr, "idx_archive") == live && feedBacklog(t, "http://"+c.addr+"/metrics") == 0
	})
	if f := flat(); f.PPSucceeded != float64(live) || f.PPFed != float64(live) || f.PPFailed != 0 {
		t.Errorf("after archive is resumed: PPFed %v, PPSucceeded %v, PPFailed %v; want %d, %d, 0 (archive's callbacks)",
			f.PPFed, f.PPSucceeded, f.PPFailed, live, live)
	}
	if _, err := cl.CollectionSuspendFeeding(ctx, "c1", "archive"); err != nil {
		t.Errorf("suspending archive again: %v", err)
	}
	c.stop()

	// Both index collections hold exactly the indexable documents.
	want := storedIndexable(t, c.data, "c1", fx.farm)
	if uint64(len(want)) != live {
		t.Errorf("idx_live held %d documents; the crawl store has %d indexable ones", live, len(want))
	}
	idx, err := index.Open(filepath.Join(c.data, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if n, err := idx.Count(); err != nil || n != uint64(2*len(want)) {
		t.Errorf("index holds %d documents (%v), want %d", n, err, 2*len(want))
	}
	missing := 0
	for _, u := range want {
		for _, coll := range []string{"idx_live", "idx_archive"} {
			got, err := idx.Lookup(ctx, coll, u)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Found || got.Collection != coll {
				if missing++; missing <= 10 {
					t.Errorf("%s not in %s (%+v)", u, coll, got.Collection)
				}
			}
		}
	}
}

// TestRunPostProcessing crawls the farm with `trawl run` under a pp
// section (MS-FSCCFG 2.2.4.7) with ds_paused and ds_send_links: nothing
// reaches the index until CollectionResumeFeeding; then every indexable
// document is there with the hyperlinks the farm put in it (the kinds
// link_extraction extracts, normalized, each once, in document order).
func TestRunPostProcessing(t *testing.T) {
	fx := newFarmFixture(t, 9, 3, 40)
	cfg := fx.writeXMLExtra(t, "c1", `<section name="pp">
  <attrib name="ds_paused" type="boolean"> yes </attrib>
  <attrib name="ds_send_links" type="boolean"> yes </attrib>
</section>`)
	c := startRun(t, fx.farm, cfg, fx.hostsFile, filepath.Join(fx.dir, "data"), "--workers", "4")
	ctx := context.Background()
	cl := admin.NewClient(c.addr, nil)
	metrics := "http://" + c.addr + "/metrics"
	idle := func() bool {
		resp, err := http.Get("http://" + c.addr + "/status.json")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var rep admin.StatusReport
		if err := json.NewDecoder(resp.Body).Decode(&rep); err != nil {
			t.Fatal(err)
		}
		return len(rep.Collections) == 1 && rep.Collections[0].Idle && rep.Collections[0].Stored > 0
	}
	waitFor(t, "the crawl idle", 120*time.Second, idle)
	if n := indexTotal(t, c.addr, "c1"); n != 0 || feedBacklog(t, metrics) == 0 {
		t.Fatalf("ds_paused: the index holds %d documents, %v operations wait; want 0 and some", n, feedBacklog(t, metrics))
	}
	if _, err := cl.CollectionSuspendFeeding(ctx, "c1", "default:c1"); err == nil {
		t.Error("CollectionSuspendFeeding(default:c1) accepted; ds_paused has it suspended already")
	}
	if _, err := cl.CollectionResumeFeeding(ctx, "c1", ""); err != nil {
		t.Fatal(err)
	}
	waitFor(t, "the backlog fed", 60*time.Second, func() bool { return feedBacklog(t, metrics) == 0 })
	c.stop()

	want := storedIndexable(t, c.data, "c1", fx.farm)
	idx, err := index.Open(filepath.Join(c.data, "index"), index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	kinds := fx.farm.DefaultCrawl().LinkKinds
	bad, withLinks := 0, 0
	for _, u := range want {
		got, err := idx.Lookup(ctx, "c1", u)
		if err != nil {
			t.Fatal(err)
		}
		res, err := fx.farm.Describe(u, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !got.Found {
			t.Errorf("%s not in the index", u)
			bad++
			continue
		}
		if int64(len(res.Body)) != res.Size {
			continue // Describe keeps only the start of the large page
		}
		var links []string
		seen := map[string]bool{}
		for _, l := range res.Links {
			if kinds.Has(l.Kind) && !seen[l.URL] {
				seen[l.URL] = true
				links = append(links, l.URL)
			}
		}
		if len(links) > 0 {
			withLinks++
		}
		if diff := cmp.Diff(links, got.Links, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("%s (%s): links (-farm +index):\n%s", u, res.ContentType, diff)
			bad++
		}
		if bad > 5 {
			t.Fatal("too many differences")
		}
	}
	if withLinks < len(want)/2 {
		t.Errorf("only %d of %d documents have links: not a useful test", withLinks, len(want))
	}
	t.Logf("%d documents indexed, %d with links, all as the farm serves them", len(want), withLinks)
}
