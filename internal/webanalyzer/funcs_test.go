package webanalyzer

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/trawl/trawl/internal/dmake"
	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/table"
)

func recs(s ...string) [][]byte {
	var out [][]byte
	for _, r := range s {
		out = append(out, []byte(r))
	}
	return out
}

func TestFunctions(t *testing.T) {
	reg := table.NewRegistry()
	Register(reg)
	fv, err := table.DecodeFuncvars(mustFuncvars(t))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		merge  bool
		key    string
		groups [][][]byte
		want   []string
	}{
		{"wamakefileutils.logcompact_links", true, "a",
			[][][]byte{recs("a b 1 0002 x", "a c 0 0002 y", "a d 0 0001 z"), recs("a 0001")},
			[]string{"a b 1 0002 x", "a c 0 0002 y"}},
		{"wamakefileutils.logcompact_links", true, "a",
			[][][]byte{recs("a b 1 0002 x"), recs("a 0003")}, nil},
		{"wamakefileutils.logcompact_urieq", true, "m",
			[][][]byte{recs("c m 0005", "d m 0004"), nil}, []string{"c m 0005"}},
		{"wamakefileutils.logcompact_urieq", true, "m",
			[][][]byte{recs("c m 0005"), recs("m 0006")}, nil},
		{"wamakefileutils.normalize_link", true, "m",
			[][][]byte{recs("a m x"), recs("c m")}, []string{"a c x"}},
		{"wamakefileutils.normalize_link", true, "t",
			[][][]byte{recs("a t x"), nil}, []string{"a t x"}},
		{"wamakefileutils.extract_links", false, "a", [][][]byte{recs("a b x", "a c y")}, []string{"a b 2", "a c 2"}},
		{"wamakefileutils.initial_rank", false, "a", [][][]byte{recs("a b 2", "a c 2")}, []string{"b 1 0.5", "c 1 0.5", "a 1 0.5"}},
		{"wamakefileutils.compute_linkscore_divide_by_linkcount", true, "a",
			[][][]byte{recs("a b 2", "a c 2"), recs("a 3 0.5")}, []string{"a b 0.75", "a c 0.75"}},
		{"wamakefileutils.sum_linkscore_and_new_static_rank", true, "b",
			[][][]byte{recs("b 7 0.5"), recs("a b 0.75", "c b 0.25")}, []string{"b 1.5 0.5"}},
		{"wamakefileutils.sum_linkscore_and_new_static_rank", true, "z",
			[][][]byte{recs("z 7 0.5"), nil}, []string{"z 0.5 0.5"}},
		{"wamakefileutils.filter_intra_and_merge_tosite", true, "t",
			[][][]byte{recs("a s1 t x"), recs("t s1")}, nil},
		{"wamakefileutils.filter_intra_and_merge_tosite", true, "t",
			[][][]byte{recs("a s1 t x"), recs("t s2")}, []string{"a t x"}},
		{"wamakefileutils.anchor_weight", false, "x", [][][]byte{recs("1 a t x", "2 b u x")}, []string{"2 3 x"}},
		{"wamakefileutils.reduce_anchor_and_add_rank", true, "t",
			[][][]byte{recs("1 3 5 t x", "2 3 5 t x", "4 1 4 t y"), recs("t 9 0.85")},
			[]string{"t 9 2 3 3 5 x", "t 9 1 4 1 4 y"}},
		{"wamakefileutils.do_siterank", false, "site://s", [][][]byte{recs("site://s a 1", "site://s b 2")},
			[]string{"a 3", "b 3", "site://s 3"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			emit := func(r []byte) error { got = append(got, string(r)); return nil }
			if tc.merge {
				f, err := reg.Merge(tc.name, nil)
				if err != nil {
					t.Fatal(err)
				}
				err = f([]byte(tc.key), tc.groups, emit)
				if err != nil {
					t.Fatal(err)
				}
			} else {
				f, err := reg.Reduce(tc.name, fv)
				if err != nil {
					t.Fatal(err)
				}
				if err := f([]byte(tc.key), tc.groups[0], emit); err != nil {
					t.Fatal(err)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func mustFuncvars(t *testing.T) string {
	s, err := table.EncodeFuncvars(table.Vars{{Key: marshalStr("damping"), Value: marshalFloat(0.5)}})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestBuildFileParses(t *testing.T) {
	for _, inc := range []bool{false, true} {
		text, n, err := BuildFile(BuildOptions{Rounds: 3, Partitions: 2, Incremental: inc})
		if err != nil {
			t.Fatal(err)
		}
		if c := strings.Count(text, "\ntarget "); c != n {
			t.Errorf("incremental %v: %d targets, BuildFile says %d", inc, c, n)
		}
		// An incremental build sorts only what changed: the previous
		// run's tables (old.*) are merged (-m), never sorted again.
		for _, l := range strings.Split(text, "\n") {
			if strings.Contains(l, "run trawl table sort") && strings.Contains(l, " old.") && !strings.Contains(l, " -m ") {
				if !strings.Contains(l, "kill.s") {
					t.Errorf("incremental %v sorts a previous table again: %s", inc, l)
				}
			}
		}
	}
	// Each stage is a build of its own that dmake accepts.
	for _, st := range []Stage{StageAll, StageCompact, StageRank, StageReuseRank} {
		text, n, err := BuildFile(BuildOptions{Rounds: 3, Partitions: 2, Incremental: true, Stage: st})
		if err != nil {
			t.Fatal(err)
		}
		b, err := dmake.ParseBuild(strings.NewReader(text), 1)
		if err != nil {
			t.Errorf("stage %d: %v\n%s", st, err, text)
			continue
		}
		if len(b.Targets) != n {
			t.Errorf("stage %d: %d targets parsed, BuildFile says %d", st, len(b.Targets), n)
		}
		if iterates := strings.Contains(text, "webanalyzer.static_rank"); iterates != (st == StageAll || st == StageRank) {
			t.Errorf("stage %d: iterates the rank %v", st, iterates)
		}
	}
	if _, _, err := BuildFile(BuildOptions{Damping: 1.5}); err == nil {
		t.Error("damping 1.5 accepted")
	}
}

func marshalStr(s string) marshal.Value    { return marshal.Str(s) }
func marshalFloat(f float64) marshal.Value { return marshal.Float(f) }

// FuzzFunctions feeds every registered function arbitrary records: none
// may panic, whatever the columns hold.
func FuzzFunctions(f *testing.F) {
	f.Add("a b 1 0002 x\na c 0 0002 y", "a 0001", "c m 0005")
	f.Add("", "", "")
	f.Add("t 9 0.85", "1 3 5 t x\n2", "site://s a 1")
	reg := table.NewRegistry()
	Register(reg)
	var merges, reduces []string
	for _, n := range []string{"logcompact_links", "logcompact_no_links", "logcompact_eqrepr", "logcompact_urieq",
		"normalize_link", "compact_links_and_merge_fromsite", "filter_intra_and_merge_tosite",
		"compute_linkscore_divide_by_linkcount", "sum_linkscore_and_new_static_rank", "merge_in_rank",
		"extend_link_with_freqs", "reduce_anchor_and_add_rank", "parse_site"} {
		merges = append(merges, "wamakefileutils."+n)
	}
	for _, n := range []string{"make_unique", "compact_links", "urieq_by_class_prep", "compact_eqrepr",
		"extract_links", "initial_rank", "anchor_weight", "do_siterank"} {
		reduces = append(reduces, "wamakefileutils."+n)
	}
	reduces = append(reduces, "webanalyzer.link_stamps", "webanalyzer.rank_one")
	split := func(s string) [][]byte {
		if s == "" {
			return nil
		}
		return recs(strings.Split(s, "\n")...)
	}
	f.Fuzz(func(t *testing.T, a, b, c string) {
		emit := func([]byte) error { return nil }
		for _, n := range merges {
			fn, err := reg.Merge(n, nil)
			if err != nil {
				t.Fatal(err)
			}
			_ = fn([]byte("k"), [][][]byte{split(a), split(b), split(c)}, emit)
		}
		if ra := split(a); len(ra) > 0 {
			for _, n := range reduces {
				fn, err := reg.Reduce(n, nil)
				if err != nil {
					t.Fatal(err)
				}
				_ = fn([]byte("k"), ra, emit)
			}
		}
	})
}
