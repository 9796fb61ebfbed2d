package webanalyzer

import (
	"bytes"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/table"
)

// rankFiles writes a static_rank task's inputs into dir: the links (FROM
// -> TOs) as extract_links writes them, split over parts, and the
// initial ranks of every end of a link and of the pages without links.
func rankFiles(t testing.TB, dir string, links map[string][]string, noLinks []string, d float64, parts int) {
	t.Helper()
	files := map[string]*strings.Builder{}
	add := func(name, rec string) {
		if files[name] == nil {
			files[name] = &strings.Builder{}
		}
		files[name].WriteString(rec + "\n")
	}
	for p := 0; p < parts; p++ {
		for _, pre := range []string{"rls", "ir", "nr"} {
			files[fmt.Sprintf("%s.%d", pre, p)] = &strings.Builder{}
		}
	}
	froms := make([]string, 0, len(links))
	for from := range links {
		froms = append(froms, from)
	}
	slices.Sort(froms)
	ds := string(fnum(d))
	for i, from := range froms {
		p := i % parts
		for _, to := range links[from] {
			add(fmt.Sprintf("rls.%d", p), fmt.Sprintf("%s %s %d", from, to, len(links[from])))
			add(fmt.Sprintf("ir.%d", (i+1)%parts), to+" 1 "+ds)
		}
		add(fmt.Sprintf("ir.%d", p), from+" 1 "+ds)
	}
	for i, n := range noLinks {
		add(fmt.Sprintf("nr.%d", i%parts), n+" 1 "+ds)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// wantRanks is the static rank computed directly: rounds of x' = (1-d) +
// the sum, in (TO, FROM) order, of d*x[FROM]/out(FROM), from x = 1.
func wantRanks(links map[string][]string, noLinks []string, d float64, rounds int) string {
	x := map[string]float64{}
	type edge struct{ from, to string }
	var edges []edge
	for from, tos := range links {
		x[from] = 1
		for _, to := range tos {
			x[to] = 1
			edges = append(edges, edge{from, to})
		}
	}
	for _, n := range noLinks {
		x[n] = 1
	}
	slices.SortFunc(edges, func(a, b edge) int {
		return strings.Compare(a.to+" "+a.from, b.to+" "+b.from)
	})
	for r := 0; r < rounds; r++ {
		next := map[string]float64{}
		for _, e := range edges {
			next[e.to] += d * x[e.from] / float64(len(links[e.from]))
		}
		for k := range x {
			next[k] = (1 - d) + next[k]
		}
		x = next
	}
	keys := make([]string, 0, len(x))
	for k := range x {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s %s %s\n", k, fnum(x[k]), fnum(d))
	}
	return b.String()
}

// TestStaticRankTask: webanalyzer.static_rank, run through the registry
// as a worker's pythontasks call runs it, writes the ranks of the rounds
// computed directly (the same sums in the same order, so the same bytes),
// and so do the rounds run on the records through the functions,
// for a random graph with duplicate links, pages without links and pages
// only linked to, split over 1 and 3 parts; and a graph that reaches its
// fixed point stops early with the same bytes as every later round.
func TestStaticRankTask(t *testing.T) {
	reg := table.NewRegistry()
	Register(reg)
	task, err := reg.Task("webanalyzer.static_rank")
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(3))
	links := map[string][]string{}
	for i := 0; i < 300; i++ {
		from := fmt.Sprintf("%016x", rng.Uint64())
		for k := rng.Intn(6); k > 0; k-- {
			links[from] = append(links[from], fmt.Sprintf("%016x", uint64(rng.Intn(400))*0x9e3779b97f4a7c15))
		}
		if k := len(links[from]); k > 1 && i%10 == 0 {
			links[from] = append(links[from], links[from][0]) // a duplicate link
		}
	}
	var noLinks []string
	for i := 0; i < 20; i++ {
		noLinks = append(noLinks, fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15))
	}
	cases := []struct {
		links   map[string][]string
		noLinks []string
		rounds  int
	}{
		{links, noLinks, 0},
		{links, noLinks, 17},
		// a -> b: the ranks stop changing after two rounds.
		{map[string][]string{"a": {"b"}}, []string{"c"}, 100000},
	}
	for _, tc := range cases {
		want := wantRanks(tc.links, tc.noLinks, 0.85, min(tc.rounds, 50))
		for _, parts := range []int{1, 3} {
			dir := t.TempDir()
			rankFiles(t, dir, tc.links, tc.noLinks, 0.85, parts)
			out := filepath.Join(dir, "rank.final")
			p := func(s string) string { return filepath.Join(dir, s) }
			if err := task([]string{fmt.Sprint(tc.rounds), fmt.Sprint(parts), p("rls"), p("ir"), p("nr"), out}); err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(out)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != want {
				t.Errorf("%d rounds, %d parts: got\n%.400s\nwant\n%.400s", tc.rounds, parts, got, want)
			}
			// The same rounds on the records, function by function.
			var links, ranks [][]byte
			for i := 0; i < parts; i++ {
				if links, err = readRecords(fmt.Sprintf("%s.%d", p("rls"), i), links); err != nil {
					t.Fatal(err)
				}
				for _, pre := range []string{"ir", "nr"} {
					if ranks, err = readRecords(fmt.Sprintf("%s.%d", p(pre), i), ranks); err != nil {
						t.Fatal(err)
					}
				}
			}
			recs, err := iterateRanks(links, ranks, min(tc.rounds, 50), false)
			if err != nil {
				t.Fatal(err)
			}
			if text := string(bytes.Join(recs, []byte("\n"))) + "\n"; text != want {
				t.Errorf("%d rounds, %d parts, on the records: got\n%.400s\nwant\n%.400s", tc.rounds, parts, text, want)
			}
		}
	}
	for _, bad := range [][]string{nil, {"x", "1", "a", "b", "c", "d"}, {"1", "0", "a", "b", "c", "d"}} {
		if err := task(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzStaticRank feeds the static_rank task arbitrary tables: it may
// fail, never panic; and the rounds on numbers write what the rounds on
// the records do.
func FuzzStaticRank(f *testing.F) {
	f.Add("a b 2\na c 2\nb c 1", "a 1 0.85\nb 1 0.85\nc 1 0.85", "d 1 0.85", 3)
	f.Add("a b 1\na b 1", "b 1 0.5", "", 2)
	f.Add("", "", "", 1)
	f.Add("x\n\n y z", "a", "1 2 3 4", 5)
	f.Fuzz(func(t *testing.T, rls, ir, nr string, rounds int) {
		dir := t.TempDir()
		for name, s := range map[string]string{"rls.0": rls, "ir.0": ir, "nr.0": nr} {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		p := func(s string) string { return filepath.Join(dir, s) }
		taskErr := staticRankTask([]string{fmt.Sprint(rounds % 20), "1", p("rls"), p("ir"), p("nr"), p("out")})
		// Where the rounds run on numbers, they give the records' bytes.
		rounds = max(rounds%20, 0)
		links, _ := readRecords(p("rls.0"), nil)
		ranks, _ := readRecords(p("ir.0"), nil)
		ranks, _ = readRecords(p("nr.0"), ranks)
		a, errA := iterateRanks(slices.Clone(links), slices.Clone(ranks), rounds, true)
		b, errB := iterateRanks(links, ranks, rounds, false)
		if errA != nil || errB != nil || !slices.EqualFunc(a, b, bytes.Equal) {
			t.Errorf("on numbers %q %v, on the records %q %v", a, errA, b, errB)
		}
		if taskErr == nil {
			var want []byte
			for _, r := range b {
				want = append(append(want, r...), '\n')
			}
			if got, err := os.ReadFile(p("out")); err != nil || !bytes.Equal(got, want) {
				t.Errorf("the task wrote %q %v, the rounds on the records %q", got, err, want)
			}
		}
	})
}
