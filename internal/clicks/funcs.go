package clicks

import (
	"bytes"
	"crypto/md5"
	"encoding/base64"
	"fmt"
	"math/big"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/trawl/trawl/internal/marshal"
	"github.com/trawl/trawl/internal/table"
)

// Register adds the click relevance's functions to reg under their spec
// names (MS-FSFDMW 2.2.2.3, 2.2.2.5, 3.6.5.3.3).
func Register(reg *table.Registry) {
	m := func(name string, f table.MergeFunc) {
		reg.RegisterMerge(name, func(table.Vars) (table.MergeFunc, error) { return f, nil })
	}
	r := func(name string, f table.ReduceFunc) {
		reg.RegisterReduce(name, func(table.Vars) (table.ReduceFunc, error) { return f, nil })
	}
	reg.RegisterReduce("spmakefileutils.filter_old_urls", filterOldURLs)
	reg.RegisterReduce("spmakefileutils.filter_old_queries", filterOldQueries)
	r("spmakefileutils.local_count_queries", localCountQueries)
	m("spmakefileutils.merge_with_query", mergeWithQuery)
	r("spmakefileutils.tokenize_query", tokenizeQuery)
	r("spmakefileutils.full_local_count_queries", sumPerQuery(2, 3))
	m("spmakefileutils.merge_with_url", mergeWithURL)
	m("spmakefileutils.normalize_url", normalizeURL)
	r("spmakefileutils.reduce_localcount", sumPerQuery(2, 3))
	r("spmakefileutils.full_global_count_queries", fullGlobalCount)
	m("spmakefileutils.merge_with_global_count", mergeWithGlobalCount)
	r("spmakefileutils.reduce_urls", reduceURLs)
}

func rec(fields ...[]byte) []byte { return bytes.Join(fields, []byte{' '}) }

func f(r []byte, i int) []byte { return table.Field(r, i) }

func count(b []byte) int64 {
	n, _ := strconv.ParseInt(string(b), 10, 64)
	return n
}

func itoa(n int64) []byte { return strconv.AppendInt(nil, n, 10) }

// fromDate reads funcvars' "fromdate" ("YYYY-MM-DD"; none: keep all).
func fromDate(vars table.Vars) ([]byte, error) {
	v, ok := vars.Get("fromdate")
	if !ok {
		return nil, nil
	}
	var s string
	switch x := v.(type) {
	case marshal.Bytes:
		s = string(x)
	case marshal.Unicode:
		s = string(x)
	default:
		return nil, fmt.Errorf("clicks: funcvars fromdate is a %v, not a string", v.Kind())
	}
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return nil, fmt.Errorf("clicks: funcvars fromdate %q is not YYYY-MM-DD", s)
	}
	return []byte(s), nil
}

// filterOldURLs (3.6.5.3.4): urls_by_urlid (URLID DATE URL), per URLID the
// record of the most recent DATE (the first of equal ones), none when that
// DATE is before fromdate.
func filterOldURLs(vars table.Vars) (table.ReduceFunc, error) {
	from, err := fromDate(vars)
	if err != nil {
		return nil, err
	}
	return func(_ []byte, recs [][]byte, emit table.Emit) error {
		best := recs[0]
		for _, r := range recs[1:] {
			if bytes.Compare(f(r, 2), f(best, 2)) > 0 {
				best = r
			}
		}
		if bytes.Compare(f(best, 2), from) < 0 {
			return nil
		}
		return emit(best)
	}, nil
}

// filterOldQueries (3.6.5.3.3): queries_by_queryid_all (QUERYID DATE
// QUERY) to queries_by_queryid, each record with its scope cut, except
// those before fromdate and those using the query language's operators.
func filterOldQueries(vars table.Vars) (table.ReduceFunc, error) {
	from, err := fromDate(vars)
	if err != nil {
		return nil, err
	}
	return func(_ []byte, recs [][]byte, emit table.Emit) error {
		for _, r := range recs {
			if bytes.Compare(f(r, 2), from) < 0 {
				continue
			}
			q := StripScope(unescape(string(f(r, 3))))
			if Filtered(q) {
				continue
			}
			if err := emit(rec(f(r, 1), f(r, 2), []byte(escape(q)))); err != nil {
				return err
			}
		}
		return nil
	}, nil
}

// localCountQueries (3.6.5.3.2): clicks_by_urlid_and_queryid (URLID
// QUERYID LCID DATE POS) keyed by URLID to local_querycnt_by_queryid
// (URLID QUERYID+LCID LCID LCOUNT): the clicks of each (QUERYID, LCID).
func localCountQueries(key []byte, recs [][]byte, emit table.Emit) error {
	n := map[string]int64{}
	var ids []string
	for _, r := range recs {
		id := string(f(r, 2)) + " " + string(f(r, 3))
		if n[id] == 0 {
			ids = append(ids, id)
		}
		n[id]++
	}
	sort.Strings(ids)
	for _, id := range ids {
		q, lcid, _ := strings.Cut(id, " ")
		if err := emit(rec(key, []byte(q+lcid), []byte(lcid), itoa(n[id]))); err != nil {
			return err
		}
	}
	return nil
}

// mergeWithQuery (3.6.5.1.2): main local_querycnt_by_queryid (URLID
// QUERYID LCID LCOUNT) keyed by QUERYID, input queries_by_queryid
// (QUERYID DATE QUERY): semi_local_querycnt_pre_token (URLID LCOUNT LCID
// QUERY) when the query is there.
func mergeWithQuery(_ []byte, g [][][]byte, emit table.Emit) error {
	if len(g[0]) == 0 || len(g[1]) == 0 {
		return nil
	}
	m, in := g[0][0], g[1][0]
	return emit(rec(f(m, 1), f(m, 4), f(m, 3), f(in, 3)))
}

// tokenizeQuery (3.6.5.3.11): semi_local_querycnt_pre_token (URLID LCOUNT
// LCID QUERY) to semi_local_querycnt_by_urlid (URLID LCOUNT QUERY), the
// query Tokenize'd.
func tokenizeQuery(_ []byte, recs [][]byte, emit table.Emit) error {
	for _, r := range recs {
		q := escape(Tokenize(unescape(string(f(r, 4)))))
		if err := emit(rec(f(r, 1), f(r, 2), []byte(q))); err != nil {
			return err
		}
	}
	return nil
}

// sumPerQuery is full_local_count_queries (3.6.5.3.6) and
// reduce_localcount (3.6.5.3.9): KEY LCOUNT QUERY records of one key, one
// record per QUERY with the sum of LCOUNT, in QUERY order.
func sumPerQuery(countCol, queryCol int) table.ReduceFunc {
	return func(key []byte, recs [][]byte, emit table.Emit) error {
		n := map[string]int64{}
		var qs []string
		for _, r := range recs {
			q := string(f(r, queryCol))
			if _, ok := n[q]; !ok {
				qs = append(qs, q)
			}
			n[q] += count(f(r, countCol))
		}
		sort.Strings(qs)
		for _, q := range qs {
			if err := emit(rec(key, itoa(n[q]), []byte(q))); err != nil {
				return err
			}
		}
		return nil
	}
}

// mergeWithURL (3.6.5.1.3): main local_querycnt_by_urlid (URLID LCOUNT
// QUERY), input urls_by_urlid (URLID DATE URL): local_querycnt_by_url
// (URL LCOUNT QUERY), the URL normalized (RFC 3986 section 6).
func mergeWithURL(_ []byte, g [][][]byte, emit table.Emit) error {
	if len(g[0]) == 0 || len(g[1]) == 0 {
		return nil
	}
	m, in := g[0][0], g[1][0]
	return emit(rec([]byte(NormalizeURL(string(f(in, 3)))), f(m, 2), f(m, 3)))
}

// NormalizeURL is RFC 3986's syntax-based normalization (6.2.2): scheme
// and host in lower case, the default port dropped, an empty path made
// "/", dot segments removed. A URL that does not parse stays as it is.
func NormalizeURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return s
	}
	u.Scheme = strings.ToLower(u.Scheme)
	host := strings.ToLower(u.Host)
	if (u.Scheme == "http" && strings.HasSuffix(host, ":80")) || (u.Scheme == "https" && strings.HasSuffix(host, ":443")) {
		host = host[:strings.LastIndexByte(host, ':')]
	}
	u.Host = host
	if u.Path == "" && u.Opaque == "" {
		u.Path = "/"
	}
	u = u.ResolveReference(&url.URL{Path: u.Path, RawPath: u.RawPath, RawQuery: u.RawQuery, Fragment: u.Fragment})
	return u.String()
}

// normalizeURL (3.6.5.1.4): main local_querycnt_by_url (URL LCOUNT QUERY)
// keyed by URL, input uris_by_member (CID MEMBER) keyed by MEMBER:
// local_querycnt_by_cid (CID LCOUNT QUERY), CID the content ID of the URL
// when the input has one, else the URL.
func normalizeURL(_ []byte, g [][][]byte, emit table.Emit) error {
	if len(g[0]) == 0 {
		return nil
	}
	m := g[0][0]
	cid := f(m, 1)
	if len(g[1]) > 0 {
		cid = f(g[1][0], 1)
	}
	return emit(rec(cid, f(m, 2), f(m, 3)))
}

// fullGlobalCount (3.6.5.3.5): local_querycnt_by_query (CID LCOUNT QUERY)
// keyed by QUERY to global_querycnt_by_query (GCOUNT QUERY).
func fullGlobalCount(key []byte, recs [][]byte, emit table.Emit) error {
	var n int64
	for _, r := range recs {
		n += count(f(r, 2))
	}
	return emit(rec(itoa(n), key))
}

// mergeWithGlobalCount (3.6.5.1.1), in reduce mode: main
// local_querycnt_by_query (CID LCOUNT QUERY) keyed by QUERY, input
// global_querycnt_by_query (GCOUNT QUERY): cid_by_cid_with_counts_and_query
// (CID LCOUNT GCOUNT PLACE NUMURLS QUERY), a query's URLs by LCOUNT
// descending (then CID), PLACE their competition rank (1, 2, 2, 4) and
// NUMURLS the number of the query's URLs with the same LCOUNT.
func mergeWithGlobalCount(key []byte, g [][][]byte, emit table.Emit) error {
	if len(g[0]) == 0 || len(g[1]) == 0 {
		return nil
	}
	gcount := f(g[1][0], 1)
	recs := append([][]byte(nil), g[0]...)
	sort.SliceStable(recs, func(i, j int) bool {
		a, b := count(f(recs[i], 2)), count(f(recs[j], 2))
		if a != b {
			return a > b
		}
		return bytes.Compare(f(recs[i], 1), f(recs[j], 1)) < 0
	})
	same := map[int64]int64{}
	for _, r := range recs {
		same[count(f(r, 2))]++
	}
	place := int64(1)
	for i, r := range recs {
		lc := count(f(r, 2))
		if i > 0 && count(f(recs[i-1], 2)) != lc {
			place = int64(i + 1)
		}
		if err := emit(rec(f(r, 1), f(r, 2), gcount, itoa(place), itoa(same[lc]), key)); err != nil {
			return err
		}
	}
	return nil
}

// reduceURLs (3.6.5.3.10): cid_by_cid_with_counts_and_query keyed by CID
// to urls_on_urlhash_with_queries (HASH QUERIES): HASH the MD5 of the CID
// as a big-endian unsigned integer in decimal, QUERIES the base64 (RFC
// 3548 section 3) of the MS-FSWCU dictionary {"queries": [(LCOUNT,
// GCOUNT, PLACE, NUMURLS, QUERY), ...], "contentid": CID}, QUERY as the
// table holds it.
func reduceURLs(key []byte, recs [][]byte, emit table.Emit) error {
	var qs marshal.List
	for _, r := range recs {
		qs = append(qs, marshal.Tuple{marshal.Int(count(f(r, 2))), marshal.Int(count(f(r, 3))),
			marshal.Int(count(f(r, 4))), marshal.Int(count(f(r, 5))), marshal.Bytes(append([]byte(nil), f(r, 6)...))})
	}
	d := marshal.Dict{
		{Key: marshal.Str("queries"), Value: qs},
		{Key: marshal.Str("contentid"), Value: marshal.Bytes(append([]byte(nil), key...))},
	}
	b, err := marshal.Encode(d)
	if err != nil {
		return fmt.Errorf("clicks: reduce_urls: %w", err)
	}
	sum := md5.Sum(key)
	hash := new(big.Int).SetBytes(sum[:]).String()
	return emit(rec([]byte(hash), []byte(base64.StdEncoding.EncodeToString(b))))
}
