package urls

import (
	"net/url"
	"slices"
	"strings"
)

// SortQueryParams sorts the parameters of a query (without the '?') by key,
// as sort_query_params asks (MS-FSCCFG 2.2.3: "query components are
// key-value pairs that are separated by semicolons or ampersands ... the
// query is sorted alphabetical by the key name").
//
//   - The separator is '&' when the query contains one; otherwise ';' when
//     every ';'-separated part is a key=value pair (so "q=tl;dr" stays one
//     parameter); otherwise the query is a single parameter.
//   - Keys compare byte-wise as written (escapes are not decoded); the sort
//     is stable, so repeated keys keep their relative order and their
//     meaning for servers that read them as a list.
//   - Empty parameters ("a=1&&b=2") and parameters with an empty key
//     ("=1") carry nothing and are dropped; values are never changed.
func SortQueryParams(q string) string {
	sep := "&"
	if !strings.Contains(q, "&") {
		sep = ";"
		for part := range strings.SplitSeq(q, ";") {
			if part != "" && !strings.Contains(part, "=") {
				sep = ""
				break
			}
		}
	}
	if sep == "" || !strings.Contains(q, sep) {
		if q == "" || q[0] == '=' {
			return ""
		}
		return q
	}
	parts := strings.Split(q, sep)
	kept := parts[:0]
	for _, p := range parts {
		if p != "" && p[0] != '=' {
			kept = append(kept, p)
		}
	}
	if sep == "&" && len(kept) == 1 {
		// One '&' parameter left: read it as a query without '&', so the
		// result sorts to itself.
		return SortQueryParams(kept[0])
	}
	slices.SortStableFunc(kept, func(a, b string) int { return strings.Compare(queryKey(a), queryKey(b)) })
	return strings.Join(kept, sep)
}

func queryKey(p string) string {
	k, _, _ := strings.Cut(p, "=")
	return k
}

// SortQuery returns a copy of u with its query parameters sorted by
// SortQueryParams.
func SortQuery(u *url.URL) *url.URL {
	c := *u
	c.RawQuery = SortQueryParams(u.RawQuery)
	c.ForceQuery = false
	return &c
}
