package index

import (
	"fmt"
	"io"
	"strings"
)

// WriteText writes the results for people (trawl search): for each hit,
// best first, its rank, URL, title and a snippet with the query's words
// between *stars*, then the range shown and the parsed query.
func (res *Results) WriteText(w io.Writer) error {
	if len(res.Hits) == 0 {
		fmt.Fprintf(w, "no results for %s (%d documents matched)\n", res.Parsed, res.Total)
		return nil
	}
	for i, h := range res.Hits {
		title := h.Title
		if title == "" {
			title = "(no title)"
		}
		fmt.Fprintf(w, "%d. %s\n   %s\n", res.From+i+1, h.URL, oneLine(title))
		if s := oneLine(PlainSnippet(h.Snippet, "*", "*")); s != "" {
			fmt.Fprintf(w, "   %s\n", s)
		}
	}
	fmt.Fprintf(w, "\nresults %d-%d of %d for %s\n", res.From+1, res.From+len(res.Hits), res.Total, res.Parsed)
	return nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
