package multinode

import (
	"fmt"
	"strconv"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/urls"
)

// StartEntry returns the crawl queue entry of a start URI: the normalized
// URI as a parsed URI structure, the empty referrer, the flags
// URIF_STARTURI and URIF_UNSCREENED (the node scheduler applies the crawl
// rules), no queue flag and the refresh cycle -1, as in example 4.4.
func StartEntry(raw string) (cmt.Entry, error) {
	u, err := urls.Normalize(raw, nil)
	if err != nil {
		return cmt.Entry{}, err
	}
	if u.Hostname() == "" {
		return cmt.Entry{}, fmt.Errorf("multinode: start URI %q has no host", raw)
	}
	port := u.Port()
	if port == "" {
		port = urls.DefaultPort(u.Scheme)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		p = cmt.NoPort
	}
	cred := ""
	if u.User != nil {
		cred = u.User.String()
	}
	us := cmt.URIStructure{
		URI:           u.String(),
		Scheme:        u.Scheme,
		Netloc:        u.Host,
		Host:          u.Hostname(),
		Port:          int32(p),
		Path:          u.EscapedPath(),
		Query:         u.RawQuery,
		Credentials:   cred,
		SkipFragments: true,
		Parsed:        true,
		HostIDNA:      u.Hostname(),
	}
	return cmt.Entry{
		URI:      us,
		Referrer: cmt.EmptyURIStructure(),
		Flags:    cmt.URIFStartURI | cmt.URIFUnscreened,
		Cycle:    -1,
	}, nil
}
