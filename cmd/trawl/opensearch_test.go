package main

import (
	"flag"
	"io"
	"strings"
	"testing"
)

// TestIndexFlag checks trawl run's --index values: true and false, an
// OpenSearch address (also after a space), and the errors.
func TestIndexFlag(t *testing.T) {
	for _, tc := range []struct {
		args   []string
		on     bool
		url    string
		errSub string
	}{
		{args: nil, on: true},
		{args: []string{"--index=false"}, on: false},
		{args: []string{"--index=true"}, on: true},
		{args: []string{"--index", "opensearch://127.0.0.1:9200/crawl"}, on: true, url: "opensearch://127.0.0.1:9200/crawl"},
		{args: []string{"--index=opensearch://a:1,b:2/x"}, on: true, url: "opensearch://a:1,b:2/x"},
		{args: []string{"--index=opensearch://a/x"}, errSub: "bad node address"},
		{args: []string{"--index=maybe"}, errSub: "want true, false or opensearch://"},
	} {
		on, url := true, ""
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		fs.Var(indexFlag{on: &on, url: &url}, "index", "")
		err := fs.Parse(tc.args)
		if tc.errSub != "" {
			if err == nil || !strings.Contains(err.Error(), tc.errSub) {
				t.Errorf("%v: error %v, want %q", tc.args, err, tc.errSub)
			}
			continue
		}
		if err != nil || on != tc.on || url != tc.url {
			t.Errorf("%v: on %v url %q err %v; want %v %q", tc.args, on, url, err, tc.on, tc.url)
		}
	}
}
