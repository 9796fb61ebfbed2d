package main

import (
	"fmt"
	"log/slog"
	"strconv"

	"github.com/trawl/trawl/internal/feed"
	"github.com/trawl/trawl/internal/opensearch"
)

// indexFlag is trawl run's --index: true (the embedded index, the
// default), false (crawl only) or an OpenSearch address
// (opensearch://HOST:PORT/INDEX, internal/opensearch).
type indexFlag struct {
	on  *bool
	url *string
}

func (f indexFlag) String() string {
	switch {
	case f.url != nil && *f.url != "":
		return *f.url
	case f.on != nil:
		return strconv.FormatBool(*f.on)
	}
	return ""
}

func (f indexFlag) Set(s string) error {
	if opensearch.IsURL(s) {
		if _, err := opensearch.ParseURL(s); err != nil {
			return err
		}
		*f.on, *f.url = true, s
		return nil
	}
	b, err := strconv.ParseBool(s)
	if err != nil {
		return fmt.Errorf("want true, false or opensearch://HOST:PORT/INDEX, not %q", s)
	}
	*f.on, *f.url = b, ""
	return nil
}

// openSearchFeeding is the feeding chain of --index opensearch://...: the
// feeders' sessions feed the OpenSearch index with _bulk requests and the
// search page queries it.
func openSearchFeeding(rawURL string, log *slog.Logger) (*feed.Local, error) {
	s := feed.NewLocal(nil, log)
	c, err := opensearch.New(rawURL, opensearch.Options{Logger: log.With("role", "opensearch")})
	if err != nil {
		return s, err
	}
	s.Remote, s.RemoteName = c.Dial, rawURL
	s.Search, s.Searched = c, "OpenSearch index "+c.Index()+" at "+rawURL
	s.OnClose = append(s.OnClose, c.Close)
	return s, nil
}
