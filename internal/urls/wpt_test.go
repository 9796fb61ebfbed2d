package urls

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/testenv"
)

// testdataDir returns the shared crawler-commons test data directory sub
// (sharedTestdata: a failure under CI=true when it is missing).
func testdataDir(t *testing.T, sub string) string {
	t.Helper()
	return testenv.SharedTestdata(t, filepath.Join("crawler-commons", sub))
}

type wptCase struct {
	Input   string  `json:"input"`
	Base    *string `json:"base"`
	Href    string  `json:"href"`
	Failure bool    `json:"failure"`
}

// wptDivergences lists the WPT cases (input + "\x00" + base) where Resolve
// deliberately differs from the WHATWG URL Standard, by category. The
// test fails if a listed case starts passing (so the list stays exact) or
// if the count of a category changes.
var wptDivergences = map[string]string{
	// golang.org/x/net/idna validates the Unicode form of a punycode label
	// against the older UTS #46 rules (no mapped or NFKC-unstable code
	// points, no empty "xn--" label); the WHATWG tests follow UTS #46
	// revision 31, which no longer checks this. Such hosts are rejected.
	"http://a.b.c.xn--pokxncvks\x00":  idnaDivergence,
	"http://10.0.0.xn--pokxncvks\x00": idnaDivergence,
	"http://a.b.c.XN--pokxncvks\x00":  idnaDivergence,
	"http://a.b.c.Xn--pokxncvks\x00":  idnaDivergence,
	"http://10.0.0.XN--pokxncvks\x00": idnaDivergence,
	"http://10.0.0.xN--pokxncvks\x00": idnaDivergence,
	"https://xn--/\x00":               idnaDivergence,
}

const idnaDivergence = "x/net/idna checks decoded punycode labels"

// inScope reports whether a WPT case concerns a scheme this package
// handles: the input's own scheme, or the base's when the input has none.
func inScope(c wptCase) bool {
	s := trimInput(c.Input)
	if scheme, _, ok := splitScheme(s); ok {
		_, special := defaultPorts[scheme]
		return special
	}
	if c.Base == nil {
		return true // relative without base: a failure whatever the scheme
	}
	scheme, _, ok := splitScheme(*c.Base)
	if !ok {
		return false
	}
	_, special := defaultPorts[scheme]
	return special
}

func TestWPTURLTestData(t *testing.T) {
	dir := testdataDir(t, "url-utils")
	data, err := os.ReadFile(filepath.Join(dir, "wpt-urltestdata.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw []json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	var total, scoped, passed, diverged int
	for _, r := range raw {
		var c wptCase
		if json.Unmarshal(r, &c) != nil || (c.Href == "" && !c.Failure) {
			continue // comment strings
		}
		total++
		if !inScope(c) {
			b := ""
			if c.Base != nil {
				b = *c.Base
			}
			if got, err := Resolve(c.Input, b); err == nil {
				t.Errorf("Resolve(%q, %q) = %q; want an error for an unsupported scheme", c.Input, b, got)
			}
			continue
		}
		scoped++
		base := ""
		if c.Base != nil {
			base = *c.Base
		}
		got, err := Resolve(c.Input, base)
		ok := (c.Failure && err != nil) || (!c.Failure && err == nil && got == c.Href)
		key := c.Input + "\x00" + base
		if why, listed := wptDivergences[key]; listed {
			diverged++
			if ok {
				t.Errorf("listed divergence (%s) now passes: input %q base %q", why, c.Input, base)
			}
			continue
		}
		if ok {
			passed++
			continue
		}
		if c.Failure {
			t.Errorf("Resolve(%q, %q) = %q, want failure", c.Input, base, got)
		} else {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", c.Input, base, got, err, c.Href)
		}
	}
	if diverged != len(wptDivergences) {
		t.Errorf("%d divergences matched, %d listed", diverged, len(wptDivergences))
	}
	t.Logf("WPT urltestdata: %d cases, %d in scope (special non-file schemes), %d pass, %d listed divergences",
		total, scoped, passed, diverged)
	if scoped < 300 {
		t.Errorf("only %d in-scope cases; test data changed?", scoped)
	}
}

func TestURLResolveCSV(t *testing.T) {
	dir := testdataDir(t, "url-utils")
	rows := readCSV(t, filepath.Join(dir, "url-resolve.csv"))
	var scoped, passed int
	for _, row := range rows {
		if len(row) != 3 {
			t.Fatalf("bad row %q", row)
		}
		input, base, want := row[0], row[1], row[2]
		if strings.HasPrefix(base, "file:") {
			continue // file: is out of scope (ErrUnsupportedScheme)
		}
		scoped++
		got, err := Resolve(input, base)
		if err != nil || got != want {
			t.Errorf("Resolve(%q, %q) = %q, %v; want %q", input, base, got, err, want)
			continue
		}
		passed++
	}
	t.Logf("url-resolve.csv: %d rows, %d in scope, %d pass", len(rows), scoped, passed)
}
