package nodesched

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/nodesched/crawlpipe"
	"github.com/trawl/trawl/internal/store"
)

// TestFeedReportedURIs crawls the farm with feeding on under several pp
// sections and checks the duplicates and redirects each indexed document
// reports (pp/ds_meta_info, ds_max_ecl, ecl_override) against the crawl
// store: a duplicate's record names its owner, a redirect's its target.
// Owners fed before their duplicates or redirects were found must have
// been fed again (pp_relisted), and no more often than entries were
// recorded.
func TestFeedReportedURIs(t *testing.T) {
	tests := []struct {
		name     string
		pp       string
		maxECL   int
		override string // the ecl_override pattern, as a Go regexp too
		dups     bool
		redirs   bool
		metadata bool
	}{
		{name: "defaults", maxECL: 10, dups: true, redirs: true, metadata: true},
		{name: "capped with override", pp: `<attrib name="ds_max_ecl" type="integer"> 1 </attrib>
      <attrib name="ecl_override" type="string">/h[13]$|dup</attrib>`,
			maxECL: 1, override: `/h[13]$|dup`, dups: true, redirs: true, metadata: true},
		{name: "redirects only", pp: `<attrib name="ds_meta_info" type="list-string"><member> redirects </member></attrib>`,
			maxECL: 10, redirs: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			farm := startFarm(t, 4, 40)
			extra := ""
			if tt.pp != "" {
				extra = "<section name=\"pp\">\n      " + tt.pp + "\n    </section>"
			}
			r := runFeedCrawlXML(t, farm, t.TempDir(), extra)
			r.waitFed(t)
			want, _, _ := indexable(t, r.st, farm, 0)
			dupsOf, redirsOf := map[string][]string{}, map[string][]string{}
			err := r.st.URIs("farm", "", func(rec *store.URIRecord) error {
				switch {
				case rec.Status == store.StatusDuplicate && rec.Owner != "":
					dupsOf[rec.Owner] = append(dupsOf[rec.Owner], rec.URI)
				case rec.Status == store.StatusRedirect && rec.Location != "":
					redirsOf[rec.Location] = append(redirsOf[rec.Location], rec.URI)
				}
				return nil
			})
			if err != nil {
				t.Fatal(err)
			}
			var over *regexp.Regexp
			if tt.override != "" {
				over = regexp.MustCompile(tt.override)
			}
			check := func(uri, what string, got, all []string, on bool) {
				t.Helper()
				if !on {
					if len(got) != 0 {
						t.Errorf("%s reports %s %q; ds_meta_info does not ask for them", uri, what, got)
					}
					return
				}
				var plain, forced []string
				for _, u := range all {
					if over != nil && over.MatchString(u) {
						forced = append(forced, u)
					} else {
						plain = append(plain, u)
					}
				}
				var gotPlain, gotForced []string
				for _, u := range got {
					switch {
					case slices.Contains(forced, u):
						gotForced = append(gotForced, u)
					case slices.Contains(plain, u):
						gotPlain = append(gotPlain, u)
					default:
						t.Errorf("%s reports %s %s, which the store does not list", uri, what, u)
					}
				}
				slices.Sort(forced)
				slices.Sort(gotForced)
				if diff := cmp.Diff(forced, gotForced); diff != "" {
					t.Errorf("%s: %s matching ecl_override (-store +index):\n%s", uri, what, diff)
				}
				if len(gotPlain) != min(len(plain), tt.maxECL) {
					t.Errorf("%s reports %d %s %q, want %d of %q", uri, len(gotPlain), what, gotPlain, min(len(plain), tt.maxECL), plain)
				}
			}
			var withDups, withRedirs, capped, forced, modified int
			for _, u := range want {
				got, err := r.idx.Lookup(context.Background(), "farm", u)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Found {
					t.Errorf("%s is not in the index", u)
					continue
				}
				check(u, "duplicates", got.Duplicates, dupsOf[u], tt.dups)
				check(u, "redirects", got.Redirects, redirsOf[u], tt.redirs)
				if len(dupsOf[u]) > 0 {
					withDups++
				}
				if len(redirsOf[u]) > 0 {
					withRedirs++
				}
				for _, l := range [][]string{dupsOf[u], redirsOf[u]} {
					if len(l) > tt.maxECL {
						capped++
					}
					for _, x := range l {
						if over != nil && over.MatchString(x) {
							forced++
						}
					}
				}
				if !got.Modified.IsZero() {
					modified++
				}
			}
			if withDups == 0 || withRedirs == 0 {
				t.Fatalf("%d indexed documents have duplicates, %d redirects: not a useful test", withDups, withRedirs)
			}
			if over != nil && (capped == 0 || forced == 0) {
				t.Errorf("%d lists longer than ds_max_ecl, %d URIs matching ecl_override: not a useful test", capped, forced)
			}
			if tt.metadata != (modified > 0) {
				t.Errorf("%d documents indexed with a modification date; metadata reported: %v", modified, tt.metadata)
			}
			st := r.d.Stats()["farm"]
			listed := 0
			for _, m := range []map[string][]string{dupsOf, redirsOf} {
				for _, l := range m {
					listed += len(l)
				}
			}
			if relisted := st["pp_relisted"]; (tt.dups || tt.redirs) && (relisted == 0 || relisted > int64(listed)) {
				t.Errorf("%d documents fed again for %d listed URIs", relisted, listed)
			}
			t.Logf("%d documents, %d with duplicates, %d with redirects, %d lists capped, %d forced, %d fed again; %s",
				len(want), withDups, withRedirs, capped, forced, st["pp_relisted"], strings.TrimSpace(fmt.Sprint(st["duplicates"], " duplicates")))
		})
	}
}

// TestReportingLists checks the reported part of a list (ds_max_ecl,
// ecl_override) and the mirror URIs of a document (mirror_site_files).
func TestReportingLists(t *testing.T) {
	over := "keep"
	r, err := crawlpipe.CompileReporting(config.PPSection{DSMetaInfo: []string{"duplicates", " Mirrors "}, DSMaxECL: 2, MaxDupes: 5, ECLOverride: &over})
	if err != nil {
		t.Fatal(err)
	}
	if !r.Duplicates || r.Redirects || !r.Mirrors || r.Metadata {
		t.Errorf("compileReporting: %+v", r)
	}
	bad := "("
	if _, err := crawlpipe.CompileReporting(config.PPSection{ECLOverride: &bad}); err == nil {
		t.Error("compileReporting accepted a bad ecl_override")
	}
	reports := []struct {
		name       string
		list, want []string
	}{
		{"empty", nil, nil},
		{"under the cap", []string{"a"}, []string{"a"}},
		{"capped", []string{"a", "b", "c"}, []string{"a", "b"}},
		{"override past the cap", []string{"a", "b", "c", "keep1", "d", "keep2"}, []string{"a", "b", "keep1", "keep2"}},
	}
	for _, tt := range reports {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, r.Report(tt.list)); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
		})
	}
	s := &crawlpipe.Settings{Opt: &crawlpipe.CrawlOptions{Mirrors: map[string]string{
		"mirror1.example": "www.example", "mirror2.example": "www.example", "m.example:8080": "www.example:8080",
		"other.example": "elsewhere.example",
	}}}
	mirrors := []struct {
		uri  string
		want []string
	}{
		{"http://www.example/a?b", []string{"http://mirror1.example/a?b", "http://mirror2.example/a?b"}},
		{"http://www.example:8080/x", []string{"http://m.example:8080/x", "http://mirror1.example:8080/x", "http://mirror2.example:8080/x"}},
		{"http://plain.example/", nil},
		{"%zz", nil},
	}
	for _, tt := range mirrors {
		t.Run(tt.uri, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, s.MirrorURIs(tt.uri)); diff != "" {
				t.Errorf("mirrorURIs (-want +got):\n%s", diff)
			}
		})
	}
}
