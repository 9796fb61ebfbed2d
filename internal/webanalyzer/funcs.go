package webanalyzer

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/table"
)

// DefaultDamping is the PageRank damping factor when funcvars name none.
const DefaultDamping = 0.85

// Register adds the web analyzer's merge and reduce functions to reg under
// their spec names (MS-FSFDMW 2.2.2.3, 2.2.2.5) and the package's own
// helpers under webanalyzer.* names.
func Register(reg *table.Registry) {
	m := func(name string, f table.MergeFunc) {
		reg.RegisterMerge(name, func(table.Vars) (table.MergeFunc, error) { return f, nil })
	}
	r := func(name string, f table.ReduceFunc) {
		reg.RegisterReduce(name, func(table.Vars) (table.ReduceFunc, error) { return f, nil })
	}
	reg.RegisterTask("wamakefileutils.compare_links_and_nolinks", compareLinksAndNoLinks)
	reg.RegisterTask("webanalyzer.static_rank", staticRankTask)
	reg.RegisterTask("webanalyzer.links_delta", linksDeltaTask)
	reg.RegisterTask("webanalyzer.inter_delta", interDeltaTask)
	m("wamakefileutils.logcompact_links", logcompact(4))
	m("wamakefileutils.logcompact_no_links", logcompact(2))
	m("wamakefileutils.logcompact_eqrepr", logcompact(2))
	m("wamakefileutils.logcompact_urieq", logcompactURIEq)
	r("wamakefileutils.make_unique", makeUnique)
	r("webanalyzer.link_stamps", linkStamps)
	r("wamakefileutils.compact_links", project(4, 1, 2, 5))
	r("wamakefileutils.urieq_by_class_prep", project(0, 1, 2))
	r("wamakefileutils.compact_eqrepr", project(2, 3, 4))
	m("wamakefileutils.normalize_link", normalizeLink)
	m("wamakefileutils.compact_links_and_merge_fromsite", mergeFromSite)
	m("wamakefileutils.filter_intra_and_merge_tosite", filterIntra)
	r("wamakefileutils.extract_links", extractLinks)
	reg.RegisterReduce("wamakefileutils.initial_rank", initialRank)
	reg.RegisterReduce("webanalyzer.rank_one", rankOne)
	m("wamakefileutils.compute_linkscore_divide_by_linkcount", linkscore)
	m("wamakefileutils.sum_linkscore_and_new_static_rank", sumLinkscore)
	m("wamakefileutils.merge_in_rank", mergeInRank)
	r("wamakefileutils.anchor_weight", anchorWeight)
	m("wamakefileutils.extend_link_with_freqs", extendWithFreqs)
	m("wamakefileutils.reduce_anchor_and_add_rank", reduceAnchor)
	m("wamakefileutils.parse_site", parseSite)
	r("wamakefileutils.do_siterank", doSiteRank)
}

// rec joins fields with SP.
func rec(fields ...[]byte) []byte { return bytes.Join(fields, []byte{' '}) }

func f(r []byte, i int) []byte { return table.Field(r, i) }

func num(b []byte) float64 {
	v, _ := strconv.ParseFloat(string(b), 64)
	return v
}

func fnum(v float64) []byte { return strconv.AppendFloat(nil, v, 'g', -1, 64) }

// logcompact keeps, of a key's records (newest first), the leading run that
// carries the first record's TIMESTAMP (column tsCol), unless a record of
// the delete table (main's second input, TIMESTAMP in column 2) for the
// key is newer (3.6.5.1.10, .12, .13).
func logcompact(tsCol int) table.MergeFunc {
	return func(_ []byte, g [][][]byte, emit table.Emit) error {
		if len(g[0]) == 0 {
			return nil
		}
		first := f(g[0][0], tsCol)
		for _, d := range g[1] {
			if bytes.Compare(f(d, 2), first) > 0 {
				return nil
			}
		}
		for _, r := range g[0] {
			if !bytes.Equal(f(r, tsCol), first) {
				return nil
			}
			if tsCol == 2 && bytes.Equal(f(r, 4), []byte{0}) {
				return nil // logcompact_eqrepr: an empty EQREPR
			}
			if err := emit(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// logcompactURIEq (3.6.5.1.14) is keyed by MEMBER (column 2): a member's
// newest equivalence wins, a newer delete of the member ends it, and a
// record whose CLASS equals its MEMBER is dropped.
func logcompactURIEq(key []byte, g [][][]byte, emit table.Emit) error {
	if len(g[0]) == 0 {
		return nil
	}
	first := f(g[0][0], 3)
	for _, d := range g[1] {
		if bytes.Compare(f(d, 2), first) > 0 {
			return nil
		}
	}
	for _, r := range g[0] {
		if !bytes.Equal(f(r, 3), first) || bytes.Equal(f(r, 1), f(r, 2)) {
			return nil
		}
		if err := emit(r); err != nil {
			return err
		}
	}
	return nil
}

// makeUnique (3.6.5.3.23) keeps the first (newest, as sorted) delete of
// each URLHASH.
func makeUnique(_ []byte, recs [][]byte, emit table.Emit) error { return emit(recs[0]) }

// linkStamps (webanalyzer.link_stamps): links keyed by FROM, newest
// first -> "FROM TIMESTAMP" of the page's newest fetch, for the kill table.
func linkStamps(key []byte, recs [][]byte, emit table.Emit) error {
	return emit(rec(key, f(recs[0], 4)))
}

// project returns a reduce function emitting the given columns of each
// record of the leading run of records carrying the first record's
// TIMESTAMP (column tsCol; 0: every record): compact_links,
// urieq_by_class_prep, compact_eqrepr.
func project(tsCol int, cols ...int) table.ReduceFunc {
	return func(_ []byte, recs [][]byte, emit table.Emit) error {
		var first []byte
		if tsCol > 0 {
			first = f(recs[0], tsCol)
		}
		out := make([][]byte, len(cols))
		for _, r := range recs {
			if tsCol > 0 && !bytes.Equal(f(r, tsCol), first) {
				return nil
			}
			for i, c := range cols {
				out[i] = f(r, c)
			}
			if err := emit(rec(out...)); err != nil {
				return err
			}
		}
		return nil
	}
}

// normalizeLink (3.6.5.1.19): main links_by_to (FROM TO ANCHORTEXT) keyed
// by TO, input urieq_by_class (CLASS MEMBER) keyed by MEMBER: a link to a
// member of an equivalence class points at the class's representative.
func normalizeLink(_ []byte, g [][][]byte, emit table.Emit) error {
	for _, r := range g[0] {
		to := f(r, 2)
		if len(g[1]) > 0 {
			to = f(g[1][0], 1)
		}
		if err := emit(rec(f(r, 1), to, f(r, 3))); err != nil {
			return err
		}
	}
	return nil
}

// mergeFromSite (3.6.5.1.6): main links (FROM TO ANCHORTEXT) keyed by
// FROM, input sitemap (URLHASH SITE): FROM SITE TO ANCHORTEXT, SITE the
// FROM page's site or, without one, FROM itself.
func mergeFromSite(_ []byte, g [][][]byte, emit table.Emit) error {
	for _, r := range g[0] {
		site := f(r, 1)
		if len(g[1]) > 0 {
			site = f(g[1][0], 2)
		}
		if err := emit(rec(f(r, 1), site, f(r, 2), f(r, 3))); err != nil {
			return err
		}
	}
	return nil
}

// filterIntra (3.6.5.1.9): main links_by_to_raw (FROM FROMSITE TO
// ANCHORTEXT) keyed by TO, input sitemap keyed by URLHASH: the links whose
// ends lie on different sites, as FROM TO ANCHORTEXT. A target without a
// site is taken for another site.
func filterIntra(_ []byte, g [][][]byte, emit table.Emit) error {
	for _, r := range g[0] {
		if len(g[1]) > 0 && bytes.Equal(f(r, 2), f(g[1][0], 2)) {
			continue
		}
		if err := emit(rec(f(r, 1), f(r, 3), f(r, 4))); err != nil {
			return err
		}
	}
	return nil
}

// extractLinks (3.6.5.3.20): links keyed by FROM -> FROM TO COUNT, COUNT
// the FROM page's number of links.
func extractLinks(_ []byte, recs [][]byte, emit table.Emit) error {
	n := []byte(strconv.Itoa(len(recs)))
	for _, r := range recs {
		if err := emit(rec(f(r, 1), f(r, 2), n)); err != nil {
			return err
		}
	}
	return nil
}

// damping reads funcvars' "damping" (a float, default DefaultDamping).
func damping(vars table.Vars) ([]byte, error) {
	d := DefaultDamping
	if v, ok := vars.Get("damping"); ok {
		switch v := v.(type) {
		case marshal.Float:
			d = float64(v)
		case marshal.Int:
			d = float64(v)
		case marshal.Bytes:
			var err error
			if d, err = strconv.ParseFloat(string(v), 64); err != nil {
				return nil, fmt.Errorf("webanalyzer: funcvars damping %q: %w", v, err)
			}
		default:
			return nil, fmt.Errorf("webanalyzer: funcvars damping is %T", v)
		}
	}
	if !(d > 0 && d < 1) {
		return nil, fmt.Errorf("webanalyzer: damping %v is not between 0 and 1", d)
	}
	return fnum(d), nil
}

// initialRank (3.6.5.3.21): rank_links_by_src keyed by FROM -> "TO 1 D"
// per record and "FROM 1 D" per key; D is the damping factor, which
// rank_by_uri carries to the merge functions (merge.pyc has no funcvars).
func initialRank(vars table.Vars) (table.ReduceFunc, error) {
	d, err := damping(vars)
	if err != nil {
		return nil, err
	}
	one := []byte("1")
	return func(key []byte, recs [][]byte, emit table.Emit) error {
		for _, r := range recs {
			if err := emit(rec(f(r, 2), one, d)); err != nil {
				return err
			}
		}
		return emit(rec(key, one, d))
	}, nil
}

// rankOne (webanalyzer.rank_one): "KEY 1 D" once per key, for the pages
// without links.
func rankOne(vars table.Vars) (table.ReduceFunc, error) {
	d, err := damping(vars)
	if err != nil {
		return nil, err
	}
	return func(key []byte, _ [][]byte, emit table.Emit) error {
		return emit(rec(key, []byte("1"), d))
	}, nil
}

// linkscore (3.6.5.1.5, reduce mode): main rank_links_by_src (FROM TO
// COUNT) keyed by FROM, input rank_by_uri (URLHASH RANK D): FROM TO
// D*RANK/COUNT, the share of FROM's rank each of its links carries.
func linkscore(_ []byte, g [][][]byte, emit table.Emit) error {
	if len(g[1]) == 0 {
		return nil
	}
	rk, d := num(f(g[1][0], 2)), num(f(g[1][0], 3))
	for _, r := range g[0] {
		c := num(f(r, 3))
		if c <= 0 {
			continue
		}
		if err := emit(rec(f(r, 1), f(r, 2), fnum(d*rk/c))); err != nil {
			return err
		}
	}
	return nil
}

// sumLinkscore (3.6.5.1.23, reduce mode): main rank_by_uri (URLHASH RANK
// D), input linkscore_by_dst keyed by TO: URLHASH (1-D)+sum D, the new rank
// (the scores are summed in the order the table holds them).
func sumLinkscore(_ []byte, g [][][]byte, emit table.Emit) error {
	for _, r := range g[0] {
		d := num(f(r, 3))
		s := 0.0
		for _, l := range g[1] {
			s += num(f(l, 3))
		}
		if err := emit(rec(f(r, 1), fnum((1-d)+s), f(r, 3))); err != nil {
			return err
		}
	}
	return nil
}

// mergeInRank (3.6.5.1.16, reduce mode): main links (FROM TO ANCHORTEXT)
// keyed by FROM, input rank_by_uri: RANK FROM TO ANCHORTEXT, RANK the FROM
// page's (0 without one).
func mergeInRank(_ []byte, g [][][]byte, emit table.Emit) error {
	rk := []byte("0")
	if len(g[1]) > 0 {
		rk = f(g[1][0], 2)
	}
	for _, r := range g[0] {
		if err := emit(rec(rk, f(r, 1), f(r, 2), f(r, 3))); err != nil {
			return err
		}
	}
	return nil
}

// anchorWeight (3.6.5.3.12): links_norm_with_fromrank_by_anchor keyed by
// ANCHORTEXT (column 4) -> AFREQ ARANK ANCHORTEXT: the number of links
// carrying the text and the sum of their source pages' ranks.
func anchorWeight(key []byte, recs [][]byte, emit table.Emit) error {
	s := 0.0
	for _, r := range recs {
		s += num(f(r, 1))
	}
	return emit(rec([]byte(strconv.Itoa(len(recs))), fnum(s), key))
}

// extendWithFreqs (3.6.5.1.8, reduce mode): main RANK FROM TO ANCHORTEXT
// keyed by ANCHORTEXT, input AFREQ ARANK ANCHORTEXT: RANK AFREQ ARANK TO
// ANCHORTEXT.
func extendWithFreqs(_ []byte, g [][][]byte, emit table.Emit) error {
	if len(g[1]) == 0 {
		return nil
	}
	in := g[1][0]
	for _, r := range g[0] {
		if err := emit(rec(f(r, 1), f(in, 1), f(in, 2), f(r, 3), f(r, 4))); err != nil {
			return err
		}
	}
	return nil
}

// reduceAnchor (3.6.5.1.21, reduce mode): main links_with_freqs (RANK AFREQ
// ARANK TO ANCHORTEXT) keyed by TO and sorted by TO and ANCHORTEXT, input
// rank_by_uri: one record per (TO, ANCHORTEXT): TO TO-RANK LAFREQ LARANK
// AFREQ ARANK ANCHORTEXT, LAFREQ the links to TO with the text, LARANK the
// sum of their sources' ranks, TO-RANK TO's rank (0 without one).
func reduceAnchor(key []byte, g [][][]byte, emit table.Emit) error {
	toRank := []byte("0")
	if len(g[1]) > 0 {
		toRank = f(g[1][0], 2)
	}
	recs := g[0]
	for i := 0; i < len(recs); {
		a := f(recs[i], 5)
		j, s := i, 0.0
		for ; j < len(recs) && bytes.Equal(f(recs[j], 5), a); j++ {
			s += num(f(recs[j], 1))
		}
		last := recs[j-1]
		if err := emit(rec(key, toRank, []byte(strconv.Itoa(j-i)), fnum(s), f(last, 2), f(last, 3), a)); err != nil {
			return err
		}
		i = j
	}
	return nil
}

// parseSite (3.6.5.1.20): main rank_by_uri (URLHASH RANK D), input sitemap
// (URLHASH SITE): rank_by_site "site://SITE" URLHASH RANK.
func parseSite(_ []byte, g [][][]byte, emit table.Emit) error {
	if len(g[1]) == 0 {
		return nil
	}
	site := append([]byte("site://"), f(g[1][0], 2)...)
	for _, r := range g[0] {
		if err := emit(rec(site, f(r, 1), f(r, 2))); err != nil {
			return err
		}
	}
	return nil
}

// doSiteRank (3.6.5.3.18): rank_by_site keyed by SITE -> "URLHASH S" per
// record and "site://SITE S" per key, S the sum of the site's pages'
// static ranks (its share of the link graph's rank).
func doSiteRank(key []byte, recs [][]byte, emit table.Emit) error {
	s := 0.0
	for _, r := range recs {
		s += num(f(r, 3))
	}
	sr := fnum(s)
	for _, r := range recs {
		if err := emit(rec(f(r, 2), sr)); err != nil {
			return err
		}
	}
	return emit(rec(key, sr))
}
