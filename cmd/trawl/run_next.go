package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode"

	"github.com/trawl/trawl/internal/index"
)

// printNextSteps ends trawl run's summary with what to do next: the search
// and status pages, and trawl search and trawl store lines that work as
// printed once trawl run has stopped. serving says the HTTP interface stays
// up (--serve) at addr.
func printNextSteps(ctx context.Context, w io.Writer, o *runOptions, e *engine, addr string, serving bool) {
	data := shellQuote(o.data)
	fmt.Fprintf(w, "\nnext steps\n")
	word, uri := sampleDocument(ctx, e)
	switch {
	case addr != "" && serving:
		fmt.Fprintf(w, "  the HTTP interface stays up until Ctrl-C:\n")
		if e.search.Index != nil || e.search.Search != nil {
			fmt.Fprintf(w, "    search page  http://%s/search\n", addr)
		}
		fmt.Fprintf(w, "    status page  http://%s/status\n", addr)
		fmt.Fprintf(w, "  once it is stopped, on the command line:\n")
	case addr != "":
		fmt.Fprintf(w, "  the HTTP interface stopped with the crawl (trawl run --serve keeps it up: search and status pages)\n")
		switch {
		case e.search.Index != nil:
			fmt.Fprintf(w, "  serve the search page of this crawl at http://%s/search:\n", addr)
			fmt.Fprintf(w, "    trawl search --data %s --serve %s\n", data, addr)
		case e.search.Search != nil:
			fmt.Fprintf(w, "  serve the search page of the chain's indexers at http://%s/search:\n", addr)
			fmt.Fprintf(w, "    trawl search --nameserver %s --serve %s\n", o.nameServer, addr)
		}
		fmt.Fprintf(w, "  on the command line:\n")
	default:
		fmt.Fprintf(w, "  on the command line:\n")
	}
	if word != "" {
		fmt.Fprintf(w, "    trawl search --data %s %s\n", data, word)
	}
	fmt.Fprintf(w, "    trawl store list --data %s\n", data)
	if uri != "" {
		fmt.Fprintf(w, "    trawl store get --data %s %s\n", data, shellQuote(uri))
	}
}

// sampleDocument picks a document of the index for the example lines: a
// word of its title (that a search finds) and its URI.
func sampleDocument(ctx context.Context, e *engine) (word, uri string) {
	if e.search.Index == nil {
		return "", ""
	}
	res, err := e.search.Index.Search(ctx, "type:html", index.SearchOptions{Size: 1})
	if err != nil || len(res.Hits) == 0 {
		return "", ""
	}
	h := res.Hits[0]
	for _, f := range strings.FieldsFunc(h.Title, func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len(f) > len(word) && strings.IndexFunc(f, func(r rune) bool { return r > unicode.MaxASCII }) < 0 {
			word = strings.ToLower(f)
		}
	}
	return word, h.URL
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r < unicode.MaxASCII && (unicode.IsLetter(r) || unicode.IsDigit(r) || strings.ContainsRune("-_./:=@%+,", r)))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
