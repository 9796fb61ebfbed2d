package index

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// rankOp is a partial update of url in collection web.
func rankOp(url string, ver uint64, rank float64, anchor string) Op {
	return Op{Fields: true, Version: ver, Doc: Doc{URL: url, Collection: "web", Rank: rank, Anchor: anchor}}
}

func applyOps(t *testing.T, ix *Index, ops ...Op) ApplyResult {
	t.Helper()
	res, err := ix.Apply(context.Background(), ops)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func lookup(t *testing.T, ix *Index, url string) Stored {
	t.Helper()
	st, err := ix.Lookup(context.Background(), "web", url)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func find(t *testing.T, ix *Index, q string) []string {
	t.Helper()
	res, err := ix.Search(context.Background(), q, SearchOptions{Collection: "web"})
	if err != nil {
		t.Fatal(err)
	}
	return urls(res)
}

const pageURL = "http://www.example.com/page"

var page = Doc{URL: pageURL, Collection: "web", Title: "Page", Body: "plain words only",
	Description: "a description shown as the summary", MIME: "text/html", Language: "en",
	Modified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Links: []string{"http://www.example.com/x"}}

// TestPartialUpdateKeepsContent: a partial update changes the rank and the
// anchor text, keeps every stored field (the summary from the
// description too), and makes the page findable by its anchor text.
func TestPartialUpdateKeepsContent(t *testing.T) {
	for _, parts := range []int{1, 3} {
		ix := openTest(t, Options{Partitions: parts})
		applyOps(t, ix, Op{Version: 5, Doc: page})
		before := lookup(t, ix, pageURL)
		if got := find(t, ix, "zeppelin"); len(got) != 0 {
			t.Fatalf("found by a word it lacks: %v", got)
		}
		res := applyOps(t, ix, rankOp(pageURL, 1, 2.5, "zeppelin airship"))
		if res.Applied != 1 || res.NoDocument != 0 {
			t.Errorf("partitions %d: apply %+v", parts, res)
		}
		after := lookup(t, ix, pageURL)
		want := before
		want.Rank, want.Anchor, want.FieldsVersion = 2.5, "zeppelin airship", 1
		if d := cmp.Diff(want, after); d != "" {
			t.Errorf("partitions %d: stored document (-want +got):\n%s", parts, d)
		}
		if got := find(t, ix, "zeppelin"); !cmp.Equal(got, []string{pageURL}) {
			t.Errorf("partitions %d: anchor word finds %v", parts, got)
		}
		r, err := ix.Search(context.Background(), "plain", SearchOptions{Collection: "web"})
		if err != nil || len(r.Hits) != 1 || r.Hits[0].Rank != 2.5 || r.Hits[0].Snippet == "" {
			t.Errorf("partitions %d: search %+v %v", parts, r, err)
		}
		if !strings.Contains(r.Hits[0].Snippet, "description") && !strings.Contains(r.Hits[0].Snippet, "plain") {
			t.Errorf("partitions %d: snippet %q", parts, r.Hits[0].Snippet)
		}
	}
}

// TestPartialUpdateOrder: the order cases of partial updates and content
// operations on one document, each in separate batches and in one batch.
func TestPartialUpdateOrder(t *testing.T) {
	type want struct {
		found        bool
		rank         float64
		anchor       string
		ver, fieldsV uint64
	}
	tests := []struct {
		name string
		ops  []Op
		want want
	}{
		{"rank for an unknown URL", []Op{rankOp(pageURL, 3, 1.5, "airship")},
			want{false, 0, "airship", 0, 3}},
		{"rank before content", []Op{rankOp(pageURL, 3, 1.5, "airship"), {Version: 10, Doc: page}},
			want{true, 1.5, "airship", 10, 3}},
		{"content after rank keeps the rank", []Op{{Version: 10, Doc: page}, rankOp(pageURL, 1, 1.5, "airship"),
			{Version: 11, Doc: page}}, want{true, 1.5, "airship", 11, 1}},
		{"rank with a lower sequence than the content is applied", []Op{{Version: 100, Doc: page},
			rankOp(pageURL, 1, 1.5, "airship")}, want{true, 1.5, "airship", 100, 1}},
		{"content with a lower version than the rank is applied", []Op{rankOp(pageURL, 50, 1.5, "airship"),
			{Version: 2, Doc: page}}, want{true, 1.5, "airship", 2, 50}},
		{"stale rank skipped", []Op{{Version: 10, Doc: page}, rankOp(pageURL, 4, 1.5, "airship"),
			rankOp(pageURL, 3, 9, "old")}, want{true, 1.5, "airship", 10, 4}},
		{"stale content still skipped", []Op{{Version: 10, Doc: page}, rankOp(pageURL, 20, 1.5, "airship"),
			{Version: 9, Doc: Doc{URL: pageURL, Collection: "web", Title: "Old"}}}, want{true, 1.5, "airship", 10, 20}},
		{"delete after rank", []Op{{Version: 10, Doc: page}, rankOp(pageURL, 1, 1.5, "airship"),
			{Version: 11, Remove: true, Doc: Doc{URL: pageURL, Collection: "web"}}}, want{false, 0, "airship", 11, 1}},
		{"rank after delete", []Op{{Version: 10, Doc: page}, {Version: 11, Remove: true, Doc: Doc{URL: pageURL, Collection: "web"}},
			rankOp(pageURL, 1, 1.5, "airship")}, want{false, 0, "airship", 11, 1}},
		{"re-added after delete takes the last rank", []Op{{Version: 10, Doc: page}, rankOp(pageURL, 1, 1.5, "airship"),
			{Version: 11, Remove: true, Doc: Doc{URL: pageURL, Collection: "web"}}, {Version: 12, Doc: page}},
			want{true, 1.5, "airship", 12, 1}},
	}
	check := func(t *testing.T, ix *Index, w want) {
		t.Helper()
		st := lookup(t, ix, pageURL)
		got := want{st.Found, st.Rank, st.Anchor, st.Version, st.FieldsVersion}
		if got != w {
			t.Errorf("got %+v, want %+v", got, w)
		}
		hits := find(t, ix, "airship")
		if w.found != (len(hits) == 1) {
			t.Errorf("anchor search %v, document found %v", hits, w.found)
		}
		if w.found && st.Title != "Page" {
			t.Errorf("title %q", st.Title)
		}
	}
	for _, tc := range tests {
		t.Run(tc.name+"/separate", func(t *testing.T) {
			ix := openTest(t, Options{})
			for _, op := range tc.ops {
				applyOps(t, ix, op)
			}
			check(t, ix, tc.want)
		})
		t.Run(tc.name+"/one batch", func(t *testing.T) {
			ix := openTest(t, Options{})
			applyOps(t, ix, tc.ops...)
			check(t, ix, tc.want)
		})
	}
}

// TestPartialUpdateResend: a resent partial update is skipped, and the
// records survive a reopen.
func TestPartialUpdateResend(t *testing.T) {
	dir := t.TempDir()
	ix, err := Open(dir, Options{Create: true})
	if err != nil {
		t.Fatal(err)
	}
	applyOps(t, ix, Op{Version: 1, Doc: page})
	if res := applyOps(t, ix, rankOp(pageURL, 7, 1, "airship"), rankOp("http://nowhere.example/", 8, 1, "x")); res.Applied != 1 || res.NoDocument != 1 {
		t.Errorf("first: %+v", res)
	}
	if res := applyOps(t, ix, rankOp(pageURL, 7, 1, "airship"), rankOp("http://nowhere.example/", 8, 1, "x")); res.Skipped != 2 {
		t.Errorf("resend: %+v", res)
	}
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	ix, err = Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer ix.Close()
	if res := applyOps(t, ix, rankOp(pageURL, 7, 1, "airship")); res.Skipped != 1 {
		t.Errorf("resend after reopen: %+v", res)
	}
	if st := lookup(t, ix, pageURL); st.FieldsVersion != 7 || st.Rank != 1 {
		t.Errorf("after reopen: %+v", st)
	}
	applyOps(t, ix, Op{Version: 2, Doc: Doc{URL: "http://nowhere.example/", Collection: "web", Body: "late"}})
	if st := lookup(t, ix, "http://nowhere.example/"); !st.Found || st.Rank != 1 || st.Anchor != "x" {
		t.Errorf("added after its rank: %+v", st)
	}
}
