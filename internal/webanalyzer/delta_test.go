package webanalyzer

import (
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The delta tasks against the definitions they shortcut: on random old and
// new tables, the last run's output less the touched pages, merged with
// the touched pages' records computed afresh, is the output computed from
// the new tables alone (a reference normalization and site filter here,
// written from the functions' comments).

func deltaKey(rng *rand.Rand, n int) string { return fmt.Sprintf("%04x", rng.Intn(n)) }

// randomLinks returns compacted link records (FROM TO INTRA TIMESTAMP
// ANCHORTEXT), sorted as c.links is, one TIMESTAMP per page.
func randomLinks(rng *rand.Rand, keys int, prev []string) []string {
	byFrom := map[string][]string{}
	for _, r := range prev {
		fr := strings.Fields(r)[0]
		byFrom[fr] = append(byFrom[fr], r)
	}
	for i := 0; i < keys/3; i++ { // some pages change, appear or go
		fr := deltaKey(rng, keys)
		byFrom[fr] = nil
		for j := rng.Intn(4); j > 0; j-- {
			byFrom[fr] = append(byFrom[fr], fmt.Sprintf("%s %s 0 %d a%d", fr, deltaKey(rng, keys), 100+rng.Intn(3), rng.Intn(3)))
		}
		if len(byFrom[fr]) > 0 { // one timestamp per page, as compaction leaves it
			ts := strings.Fields(byFrom[fr][0])[3]
			for k, r := range byFrom[fr] {
				f := strings.Fields(r)
				f[3] = ts
				byFrom[fr][k] = strings.Join(f, " ")
			}
		}
	}
	var out []string
	for _, rs := range byFrom {
		out = append(out, rs...)
	}
	slices.Sort(out) // FROM is fixed-length and one TIMESTAMP per page: whole-line order
	return out
}

// randomEq returns equivalence records (CLASS MEMBER TIMESTAMP) sorted by
// MEMBER, newest first, then the whole record.
func randomEq(rng *rand.Rand, keys int, prev []string) []string {
	out := slices.Clone(prev)
	for i := 0; i < keys/10; i++ {
		switch rng.Intn(3) {
		case 0:
			if len(out) > 0 {
				k := rng.Intn(len(out))
				out = slices.Delete(out, k, k+1)
			}
		default:
			out = append(out, fmt.Sprintf("%s %s %d", deltaKey(rng, keys), deltaKey(rng, keys), 100+rng.Intn(2)))
		}
	}
	slices.SortFunc(out, func(a, b string) int {
		fa, fb := strings.Fields(a), strings.Fields(b)
		if c := strings.Compare(fa[1], fb[1]); c != 0 {
			return c
		}
		if c := strings.Compare(fb[2], fa[2]); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	return out
}

// refNormalize is links.final: each link's target replaced by the CLASS of
// the target's first equivalence record, projected to FROM TO ANCHORTEXT.
func refNormalize(links, eq []string) []string {
	class := map[string]string{}
	for _, r := range eq {
		f := strings.Fields(r)
		if _, ok := class[f[1]]; !ok {
			class[f[1]] = f[0]
		}
	}
	var out []string
	for _, r := range links {
		f := strings.Fields(r)
		to := f[1]
		if c, ok := class[to]; ok {
			to = c
		}
		out = append(out, f[0]+" "+to+" "+f[4])
	}
	slices.Sort(out)
	return out
}

// refInter is inter.final: the links whose ends lie on different sites (a
// page without a site is its own; a target without one is another's).
func refInter(final, sitemap []string) []string {
	site := map[string]string{}
	for _, r := range sitemap {
		f := strings.Fields(r)
		site[f[0]] = f[1]
	}
	var out []string
	for _, r := range final {
		f := strings.Fields(r)
		from, ok := site[f[0]]
		if !ok {
			from = f[0]
		}
		if to, ok := site[f[1]]; ok && to == from {
			continue
		}
		out = append(out, r)
	}
	slices.Sort(out)
	return out
}

func randomSitemap(rng *rand.Rand, keys int, prev map[string]string) map[string]string {
	out := map[string]string{}
	for k, v := range prev {
		out[k] = v
	}
	for i := 0; i < keys/8; i++ {
		out[deltaKey(rng, keys)] = fmt.Sprintf("s%d", rng.Intn(3))
	}
	return out
}

func sitemapLines(m map[string]string) []string {
	var out []string
	for k, v := range m {
		out = append(out, k+" "+v)
	}
	slices.Sort(out)
	return out
}

func writeLinesFile(t *testing.T, dir, name string, lines []string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	text := strings.Join(lines, "\n")
	if len(lines) > 0 {
		text += "\n"
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func readLinesFile(t *testing.T, p string) []string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(strings.Split(string(b), "\n"), func(l string) bool { return l == "" })
}

func TestDeltaTasksEqualFullComputation(t *testing.T) {
	for seed := int64(1); seed <= 200; seed++ {
		checkDelta(t, seed)
	}
}

// FuzzDeltaTasks is TestDeltaTasksEqualFullComputation on the tables of
// any seed.
func FuzzDeltaTasks(f *testing.F) {
	for _, seed := range []int64{1, 20, 77} {
		f.Add(seed)
	}
	f.Fuzz(checkDelta)
}

// checkDelta draws old and new tables from seed and checks both delta
// tasks against the reference computations.
func checkDelta(t *testing.T, seed int64) {
	rng := rand.New(rand.NewSource(seed))
	keys := 8 + rng.Intn(60)
	dir := t.TempDir()
	links0 := randomLinks(rng, keys, nil)
	eq0 := randomEq(rng, keys, nil)
	links1 := randomLinks(rng, keys, links0)
	eq1 := randomEq(rng, keys, eq0)
	final0, final1 := refNormalize(links0, eq0), refNormalize(links1, eq1)
	w := func(name string, l []string) string { return writeLinesFile(t, dir, name, l) }
	err := linksDeltaTask([]string{w("old.links", links0), w("c.links.0", links1), w("old.urieq", eq0),
		w("c.urieq.0", eq1), w("old.links.final", final0), filepath.Join(dir, "lt.0"), filepath.Join(dir, "lfk.0")})
	if err != nil {
		t.Fatal(err)
	}
	touched := readLinesFile(t, filepath.Join(dir, "lt.0"))
	got := append(readLinesFile(t, filepath.Join(dir, "lfk.0")), refNormalize(touched, eq1)...)
	slices.Sort(got)
	if !slices.Equal(got, final1) {
		t.Fatalf("seed %d: links.final by delta\n%q\nwant\n%q", seed, got, final1)
	}

	sm0 := randomSitemap(rng, keys, nil)
	sm1 := randomSitemap(rng, keys, sm0)
	inter0, inter1 := refInter(final0, sitemapLines(sm0)), refInter(final1, sitemapLines(sm1))
	err = interDeltaTask([]string{w("old.links.final", final0), w("links.final", final1), w("old.sitemap", sitemapLines(sm0)),
		w("c.sitemap.0", sitemapLines(sm1)), w("old.inter.final", inter0), filepath.Join(dir, "li.0"), filepath.Join(dir, "ik.0")})
	if err != nil {
		t.Fatal(err)
	}
	touchedI := readLinesFile(t, filepath.Join(dir, "li.0"))
	gotI := append(readLinesFile(t, filepath.Join(dir, "ik.0")), refInter(touchedI, sitemapLines(sm1))...)
	slices.Sort(gotI)
	if !slices.Equal(gotI, inter1) {
		t.Fatalf("seed %d: inter.final by delta\n%q\nwant\n%q", seed, gotI, inter1)
	}
}

// TestDeltaTouchesOnlyWhatChanged: a page whose links and targets did not
// change is not touched; a page linking to a member whose class changed
// is, and so is a page whose links changed or went.
func TestDeltaTouchesOnlyWhatChanged(t *testing.T) {
	dir := t.TempDir()
	w := func(name string, l ...string) string { return writeLinesFile(t, dir, name, l) }
	old := []string{"a001 b001 0 5 x", "a002 b002 0 5 y", "a003 b003 0 5 z", "a004 b004 0 5 w"}
	cur := []string{"a001 b001 0 5 x", "a002 b002 0 5 y", "a003 b009 0 7 z"} // a003 changed, a004 gone
	eq0 := []string{"c002 b002 5"}
	eq1 := []string{"c009 b002 6"} // b002 now in another class
	final0 := refNormalize(old, eq0)
	err := linksDeltaTask([]string{w("ol", old...), w("nl", cur...), w("oe", eq0...), w("ne", eq1...), w("of", final0...),
		filepath.Join(dir, "t"), filepath.Join(dir, "k")})
	if err != nil {
		t.Fatal(err)
	}
	touched := readLinesFile(t, filepath.Join(dir, "t"))
	kept := readLinesFile(t, filepath.Join(dir, "k"))
	if want := []string{"a002 b002 0 5 y", "a003 b009 0 7 z"}; !slices.Equal(touched, want) {
		t.Errorf("touched %q, want %q", touched, want)
	}
	if want := []string{"a001 b001 x"}; !slices.Equal(kept, want) {
		t.Errorf("kept %q, want %q", kept, want)
	}
	if err := linksDeltaTask([]string{"x"}); err == nil {
		t.Error("links_delta took one parameter")
	}
	if err := interDeltaTask([]string{"x"}); err == nil {
		t.Error("inter_delta took one parameter")
	}
}
