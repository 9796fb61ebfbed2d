package webanalyzer

import (
	"fmt"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/table"
)

// The tables a run keeps (on worker 0, in the build directory): the
// compacted logs the next run starts from, and the results.
const (
	OutRank     = "rank.final"     // URLHASH RANK D, sorted by URLHASH
	OutSiteRank = "siterank.final" // URLHASH-or-"site://SITE" SITERANK
	OutAnchors  = "anchors.final"  // TO TO-RANK LAFREQ LARANK AFREQ ARANK ANCHORTEXT
	OutLinks    = "links.final"    // FROM TO ANCHORTEXT: the normalized links, sorted by FROM
	OutInter    = "inter.final"    // FROM TO ANCHORTEXT: those between sites, sorted by FROM
)

// Compacted returns the name of the compacted form of an input table, as a
// run keeps it and the next run reads it (renamed old.<table>).
func Compacted(t string) string { return "c." + t + ".0" }

// StateTables are the input tables whose compacted form a run keeps.
var StateTables = []string{TableLinks, TableNoLinks, TableURIEq, TableDelete, TableURIMap, TableSiteMap}

// BuildOptions shape the build file.
type BuildOptions struct {
	// Rounds of the static rank iteration (default 30).
	Rounds int
	// Damping is PageRank's damping factor (default DefaultDamping).
	Damping float64
	// Partitions splits the rank iteration's input tables (extract_links,
	// initial_rank) into this many parts, written in parallel (default 3);
	// the rounds read them all. The tables do not depend on it.
	Partitions int
	// Incremental: old.<table> (a previous run's compacted tables) are
	// present beside new.<table> and are compacted with them.
	Incremental bool
	// SortMB is the memory of each sort (jsort2's -S; default 200).
	SortMB int
	// Stage picks the part of the analysis the build file holds (StageAll
	// by default).
	Stage Stage
}

// Stage is a part of the analysis: Run builds the compaction and the
// normalization first, then the rest, which reuses the previous run's
// static rank when the graph it is computed from did not change.
type Stage int

const (
	// StageAll is the whole analysis in one build.
	StageAll Stage = iota
	// StageCompact is the log compaction and the link normalization: it
	// keeps the compacted tables and links.final on worker 0.
	StageCompact
	// StageRank is the rest, from links.final and the compacted tables on
	// worker 0: static rank, site rank, anchor text.
	StageRank
	// StageReuseRank is StageRank with rank.final already on worker 0
	// (the previous run's, over the same graph): no rank iteration.
	StageReuseRank
)

func (o *BuildOptions) defaults() {
	if o.Rounds <= 0 {
		o.Rounds = 30
	}
	if o.Damping == 0 {
		o.Damping = DefaultDamping
	}
	if o.Partitions <= 0 {
		o.Partitions = 3
	}
	if o.SortMB <= 0 {
		o.SortMB = 200
	}
}

// Kept lists the files a build keeps on worker 0.
func Kept() []string {
	out := []string{OutRank, OutSiteRank, OutAnchors, OutInter, OutLinks}
	for _, t := range StateTables {
		out = append(out, Compacted(t))
	}
	return out
}

type buildWriter struct {
	b    strings.Builder
	n    int
	sort string
}

func (w *buildWriter) target(name string, in, out []string, run string) {
	w.n++
	fmt.Fprintf(&w.b, "target %s\n    in %s\n    out %s\n    run trawl table %s\n", name, strings.Join(in, " "), strings.Join(out, " "), run)
}

// sortT adds a target sorting ins into out with the given keys.
func (w *buildWriter) sortT(name string, keys string, ins []string, out string) {
	w.target(name, ins, []string{out}, fmt.Sprintf("sort %s %s %s -o %s", w.sort, keys, strings.Join(ins, " "), out))
}

func parts(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s.%d", prefix, i)
	}
	return out
}

// BuildFile returns the dmake build file of the web analyzer (the format
// of internal/dmake's package comment) and its number of targets. The
// input tables are new.<table> on worker 0 (and old.<table> when
// incremental); the kept outputs (Kept) end on worker 0.
func BuildFile(o BuildOptions) (string, int, error) {
	o.defaults()
	if !(o.Damping > 0 && o.Damping < 1) {
		return "", 0, fmt.Errorf("webanalyzer: damping %v is not between 0 and 1", o.Damping)
	}
	fv, err := table.EncodeFuncvars(marshal.Dict{{Key: marshal.Str("damping"), Value: marshal.Float(o.Damping)}})
	if err != nil {
		return "", 0, err
	}
	w := &buildWriter{sort: fmt.Sprintf("-S %dM -T .", o.SortMB)}
	fmt.Fprintf(&w.b, "# trawl web analyzer: %d rounds, damping %g, %d partitions, incremental %v\ndir .\n", o.Rounds, o.Damping, o.Partitions, o.Incremental)
	compact, rest := o.Stage == StageAll || o.Stage == StageCompact, o.Stage != StageCompact
	if compact {
		for _, t := range InputTables {
			if t != TableEqRepr {
				fmt.Fprintf(&w.b, "file new.%s 0\n", t)
			}
			if o.Incremental && t != TableEqRepr {
				fmt.Fprintf(&w.b, "file old.%s 0\n", t)
			}
		}
		if o.Incremental {
			fmt.Fprintf(&w.b, "file old.%s 0\n", OutLinks)
		}
	} else {
		for _, f := range []string{OutLinks, Compacted(TableNoLinks), Compacted(TableSiteMap)} {
			fmt.Fprintf(&w.b, "file %s 0\n", f)
		}
		if o.Incremental {
			for _, f := range []string{OutLinks, TableSiteMap} {
				fmt.Fprintf(&w.b, "file old.%s 0\n", f)
			}
		}
		if o.Stage == StageReuseRank {
			fmt.Fprintf(&w.b, "file %s 0\n", OutRank)
		}
	}
	if o.Incremental && rest {
		fmt.Fprintf(&w.b, "file old.%s 0\n", OutInter)
	}
	for _, k := range Kept() {
		isState := k == OutLinks || strings.HasPrefix(k, "c.")
		if o.Stage == StageAll || isState == (o.Stage == StageCompact) {
			fmt.Fprintf(&w.b, "keep %s 0\n", k)
		}
	}
	if compact {
		w.compact(o)
	}
	if rest {
		w.rank(o, fv)
	}
	return w.b.String(), w.n, nil
}

// compact adds the log compaction and the normalization (up to
// links.final).
func (w *buildWriter) compact(o BuildOptions) {
	ins := func(t string) []string {
		if o.Incremental {
			return []string{"new." + t, "old." + t}
		}
		return []string{"new." + t}
	}
	// sortLog sorts a log table into out: a full run sorts new.<t>; an
	// incremental one sorts only new.<t> (what changed) and merges it with
	// old.<t>, the previous run's compacted table, which is sorted the same
	// way already. The table engine orders records totally (keys, then the
	// whole record; with -u the first input's record of a key wins), so
	// the merge gives the bytes a sort of both would.
	sortLog := func(name, keys, t, out string) {
		if !o.Incremental {
			w.sortT(name, keys, ins(t), out)
			return
		}
		w.sortT(name+"_new", keys, []string{"new." + t}, t+".n")
		w.target(name, []string{t + ".n", "old." + t}, []string{out},
			fmt.Sprintf("sort %s -m %s %s.n old.%s -o %s", w.sort, keys, t, t, out))
	}
	// Log compaction: deletes, then the "kill" table (deletes, the newest
	// fetch of every page with links, pages without links) every log is
	// compacted against.
	sortLog("sort_delete", "-k1,1 -k2,2r", TableDelete, "delete.s")
	w.target("compact_delete", []string{"delete.s"}, []string{Compacted(TableDelete)},
		"reduce -i delete.s:2:1 -o c.delete:1:1 -l wamakefileutils.make_unique")
	sortLog("sort_links", "-k1,1 -k4,4r", TableLinks, "links.s")
	w.target("link_stamps", []string{"links.s"}, []string{"lstamp.0"},
		"reduce -i links.s:5:1 -o lstamp:1:1 -l webanalyzer.link_stamps")
	w.sortT("sort_kill", "-k1,1", append([]string{Compacted(TableDelete), "lstamp.0"}, ins(TableNoLinks)...), "kill.s")
	w.target("compact_links", []string{"links.s", "kill.s"}, []string{Compacted(TableLinks)},
		"merge -i links.s:5:1 -i kill.s:2:1 -o c.links:1:1 -l wamakefileutils.logcompact_links -r")
	sortLog("sort_no_links", "-k1,1 -k2,2r", TableNoLinks, "no_links.s")
	w.target("compact_no_links", []string{"no_links.s", "kill.s"}, []string{Compacted(TableNoLinks)},
		"merge -i no_links.s:3:1 -i kill.s:2:1 -o c.no_links:1:1 -l wamakefileutils.logcompact_no_links -r")
	sortLog("sort_urieq", "-k2,2 -k3,3r", TableURIEq, "urieq.s")
	w.target("compact_urieq", []string{"urieq.s", "kill.s"}, []string{Compacted(TableURIEq)},
		"merge -i urieq.s:3:2 -i kill.s:2:1 -o c.urieq:1:1 -l wamakefileutils.logcompact_urieq -r")
	for _, t := range []string{TableURIMap, TableSiteMap} {
		if !o.Incremental {
			w.target("compact_"+t, ins(t), []string{Compacted(t)},
				fmt.Sprintf("sort %s -u -k1,1 new.%s -o %s", w.sort, t, Compacted(t)))
			continue
		}
		w.sortT("sort_"+t+"_new", "-u -k1,1", []string{"new." + t}, t+".n")
		w.target("compact_"+t, []string{t + ".n", "old." + t}, []string{Compacted(t)},
			fmt.Sprintf("sort %s -m -u -k1,1 %s.n old.%s -o %s", w.sort, t, t, Compacted(t)))
	}
	// Normalization through the equivalence classes: of every page in a
	// full run, of the pages whose part changed in an incremental one.
	links := Compacted(TableLinks)
	if o.Incremental {
		links = "lt.0"
		w.target("links_delta", []string{"old." + TableLinks, Compacted(TableLinks), "old." + TableURIEq, Compacted(TableURIEq), "old." + OutLinks},
			[]string{"lt.0", "lfk.0"}, fmt.Sprintf("pythontasks webanalyzer.links_delta old.%s %s old.%s %s old.%s lt.0 lfk.0",
				TableLinks, Compacted(TableLinks), TableURIEq, Compacted(TableURIEq), OutLinks))
	}
	w.target("links_by_to", []string{links}, []string{"lbt.0"},
		"reduce -i "+links+":5:1 -o lbt:0:1 -l wamakefileutils.compact_links")
	w.sortT("sort_links_by_to", "-k2,2", []string{"lbt.0"}, "lbt.s")
	w.target("urieq_by_class", []string{Compacted(TableURIEq)}, []string{"ubc.0"},
		"reduce -i c.urieq.0:3:2 -o ubc:0:1 -l wamakefileutils.urieq_by_class_prep")
	w.target("normalize_link", []string{"lbt.s", "ubc.0"}, []string{"lnorm.0"},
		"merge -i lbt.s:3:2 -i ubc.0:2:2 -o lnorm:0:1 -l wamakefileutils.normalize_link")
	if !o.Incremental {
		w.sortT("sort_links_norm", "-k1,1", []string{"lnorm.0"}, OutLinks)
		return
	}
	w.sortT("sort_links_norm", "-k1,1", []string{"lnorm.0"}, "lnorm.s")
	w.target("links_final", []string{"lfk.0", "lnorm.s"}, []string{OutLinks},
		fmt.Sprintf("sort %s -m -k1,1 lfk.0 lnorm.s -o %s", w.sort, OutLinks))
}

// rank adds the static rank (unless reused), the site rank and the anchor
// text.
func (w *buildWriter) rank(o BuildOptions, fv string) {
	if o.Stage != StageReuseRank {
		w.staticRank(o, fv)
	}
	w.siteAndAnchors(o)
}

// staticRank adds the static rank iteration (rank.final).
func (w *buildWriter) staticRank(o BuildOptions, fv string) {
	P := o.Partitions
	w.target("extract_links", []string{OutLinks}, parts("rls", P),
		fmt.Sprintf("reduce -i "+OutLinks+":3:1 -o rls:1:%d -l wamakefileutils.extract_links", P))
	w.target("initial_rank", []string{OutLinks}, parts("ir", P),
		fmt.Sprintf("reduce -i "+OutLinks+":3:1 -o ir:1:%d -l wamakefileutils.initial_rank --funcvars=%s", P, fv))
	w.target("rank_no_links", []string{Compacted(TableNoLinks)}, parts("nr", P),
		fmt.Sprintf("reduce -i c.no_links.0:3:1 -o nr:1:%d -l webanalyzer.rank_one --funcvars=%s", P, fv))
	// The rounds, in one process: each round's records go from one
	// function to the next in memory instead of through a table file, a
	// sort and a table program per partition (doc.go, step 3).
	var ins []string
	for _, pre := range []string{"rls", "ir", "nr"} {
		ins = append(ins, parts(pre, P)...)
	}
	w.target("static_rank", ins, []string{OutRank},
		fmt.Sprintf("pythontasks webanalyzer.static_rank %d %d rls ir nr %s", o.Rounds, P, OutRank))
}

// siteAndAnchors adds the site rank and the anchor text.
func (w *buildWriter) siteAndAnchors(o BuildOptions) {
	// Site rank.
	w.target("parse_site", []string{OutRank, Compacted(TableSiteMap)}, []string{"rbs.0"},
		fmt.Sprintf("merge -i %s:3:1 -i c.sitemap.0:2:1 -o rbs:1:1 -l wamakefileutils.parse_site", OutRank))
	w.sortT("sort_rank_by_site", "-k1,1", []string{"rbs.0"}, "rbs.s")
	w.target("do_siterank", []string{"rbs.s"}, []string{"sr.0"}, "reduce -i rbs.s:3:1 -o sr:0:1 -l wamakefileutils.do_siterank")
	w.sortT("siterank_final", "-k1,1", []string{"sr.0"}, OutSiteRank)
	// Anchor text: the links between sites (of every page in a full run,
	// of the pages whose part changed in an incremental one), with the
	// ranks of their ends.
	links := OutLinks
	if o.Incremental {
		links = "li.0"
		w.target("inter_delta", []string{"old." + OutLinks, OutLinks, "old." + TableSiteMap, Compacted(TableSiteMap), "old." + OutInter},
			[]string{"li.0", "ik.0"}, fmt.Sprintf("pythontasks webanalyzer.inter_delta old.%s %s old.%s %s old.%s li.0 ik.0",
				OutLinks, OutLinks, TableSiteMap, Compacted(TableSiteMap), OutInter))
	}
	w.target("merge_fromsite", []string{links, Compacted(TableSiteMap)}, []string{"lfs.0"},
		"merge -i "+links+":3:1 -i c.sitemap.0:2:1 -o lfs:0:1 -l wamakefileutils.compact_links_and_merge_fromsite -r")
	w.sortT("sort_fromsite", "-k3,3", []string{"lfs.0"}, "lfs.s")
	w.target("filter_intra", []string{"lfs.s", Compacted(TableSiteMap)}, []string{"inter.0"},
		"merge -i lfs.s:4:3 -i c.sitemap.0:2:1 -o inter:0:1 -l wamakefileutils.filter_intra_and_merge_tosite")
	if o.Incremental {
		w.sortT("sort_inter", "-k1,1", []string{"inter.0"}, "inter.s")
		w.target("inter_final", []string{"ik.0", "inter.s"}, []string{OutInter},
			fmt.Sprintf("sort %s -m -k1,1 ik.0 inter.s -o %s", w.sort, OutInter))
	} else {
		w.sortT("sort_inter", "-k1,1", []string{"inter.0"}, OutInter)
	}
	w.target("merge_in_rank", []string{OutInter, OutRank}, []string{"lwr.0"},
		fmt.Sprintf("merge -i %s:3:1 -i %s:3:1 -o lwr:0:1 -l wamakefileutils.merge_in_rank -r", OutInter, OutRank))
	w.sortT("sort_by_anchor", "-k4,4", []string{"lwr.0"}, "lwr.s")
	w.target("anchor_weight", []string{"lwr.s"}, []string{"af.0"}, "reduce -i lwr.s:4:4 -o af:0:1 -l wamakefileutils.anchor_weight")
	w.target("extend_with_freqs", []string{"lwr.s", "af.0"}, []string{"lwf.0"},
		"merge -i lwr.s:4:4 -i af.0:3:3 -o lwf:0:1 -l wamakefileutils.extend_link_with_freqs -r")
	w.sortT("sort_by_to_anchor", "-k4,4 -k5,5", []string{"lwf.0"}, "lwf.s")
	w.target("reduce_anchor", []string{"lwf.s", OutRank}, []string{"anchors.0"},
		fmt.Sprintf("merge -i lwf.s:5:4 -i %s:3:1 -o anchors:0:1 -l wamakefileutils.reduce_anchor_and_add_rank -r", OutRank))
	w.sortT("anchors_final", "-k1,1", []string{"anchors.0"}, OutAnchors)
}
