package main

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/admin"
	"github.com/trawl/trawl/internal/stats"
)

// TestAdminStatisticsAddUp crawls a webfarm with `trawl run`, then checks
// that the collection's statistics equal what `trawl store list` shows and
// that the sites' statistics sum to the collection's.
func TestAdminStatisticsAddUp(t *testing.T) {
	c := startCrawler(t, 5, 30)
	cl := admin.NewClient(c.addr, nil)
	ctx := context.Background()

	// Wait until the crawl is over: the farm has seen no request and the
	// statistics have not moved for longer than the fetch timeout (10 s),
	// so that the farm's stalled page, which holds its fetch until the
	// timeout, is counted too.
	var rep *admin.CollectionReport
	last, lastN, since := -1.0, -1, time.Now()
	deadline := time.Now().Add(90 * time.Second)
	for {
		var err error
		rep, err = cl.CollectionGetStatistics2(ctx, "c1")
		if err != nil {
			t.Fatal(err)
		}
		n := len(c.farm.Requests())
		if rep.Complete.Downloaded != last || n != lastN {
			last, lastN, since = rep.Complete.Downloaded, n, time.Now()
		} else if time.Since(since) > 12*time.Second {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the crawl did not settle")
		}
		time.Sleep(100 * time.Millisecond)
	}
	coll := rep.Complete
	if coll.Downloaded < 100 {
		t.Fatalf("crawl too small: %v documents", coll.Downloaded)
	}

	// The sites' statistics.
	sum := map[string]float64{}
	uriSkip, docSkip := map[string]float64{}, map[string]float64{}
	sites := map[string]bool{}
	for _, h := range c.farm.Hosts() {
		site := h.Name + ":" + strconv.Itoa(c.farm.Port())
		st, err := cl.CollectionGetSiteStatistics(ctx, "c1", site)
		if err != nil {
			t.Logf("site %s: %v", site, err)
			continue
		}
		sites[site] = true
		s := st.Get(site)
		if s == nil {
			t.Fatalf("site statistics of %s hold no series named after it", site)
		}
		r := s.Complete()
		for _, a := range []string{"Downloaded", "Stored", "Modified", "Deleted", "Unchanged", "Processed", "ReadNet"} {
			sum[a] += r.Value(a)
		}
		for k, v := range r.Hist("URISkip") {
			uriSkip[k] += v
		}
		for k, v := range r.Hist("DocSkip") {
			docSkip[k] += v
		}
	}
	want := map[string]float64{"Downloaded": coll.Downloaded, "Stored": coll.Stored, "Modified": coll.Modified,
		"Deleted": coll.Deleted, "Unchanged": coll.Unchanged, "Processed": coll.Processed, "ReadNet": coll.ReadNet}
	if diff := cmp.Diff(want, sum); diff != "" {
		t.Errorf("site statistics do not sum to the collection's (-collection +sum of %d sites):\n%s", len(sites), diff)
	}
	if diff := cmp.Diff(coll.URISkip, uriSkip); diff != "" {
		t.Errorf("URI skip codes of the sites do not sum to the collection's:\n%s", diff)
	}
	if diff := cmp.Diff(coll.DocSkip, docSkip); diff != "" {
		t.Errorf("document skip codes of the sites do not sum to the collection's:\n%s", diff)
	}
	c.stop()

	// What the store holds.
	code, list, errOut := runTrawl(t, "", "store", "list", "--data", filepath.Join(c.data, "node"), "--collection", "c1")
	if code != 0 {
		t.Fatalf("store list: exit %d: %s", code, errOut)
	}
	byStatus := map[string]float64{}
	answered := 0.0
	for _, line := range strings.Split(strings.TrimSpace(list), "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		byStatus[f[0]]++
		if n, _ := strconv.Atoi(f[1]); n > 0 {
			answered++
		}
	}
	got := map[string]float64{"Downloaded": coll.Downloaded, "Stored": coll.Stored, "Deleted": coll.Deleted,
		"Modified": coll.Modified, "cs": coll.DocSkip[stats.DocDuplicate]}
	// Duplicates' bodies are not stored (storage/store_dupes defaults to
	// no): they count under DocSkip cs, "downloaded but not stored".
	fromStore := map[string]float64{"Downloaded": answered, "Stored": byStatus["fetched"],
		"Deleted": byStatus["deleted"], "Modified": 0, "cs": byStatus["duplicate"]}
	if diff := cmp.Diff(fromStore, got); diff != "" {
		t.Errorf("statistics differ from the store (-store list +statistics):\n%s\nstatuses: %v", diff, byStatus)
	}
	t.Logf("collection: downloaded %v stored %v deleted %v duplicates %v; store: %v; %d sites", coll.Downloaded, coll.Stored, coll.Deleted, coll.DocSkip["cs"], byStatus, len(sites))
}
