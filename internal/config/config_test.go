package config

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// modelOpts compares models ignoring positions.
var modelOpts = cmp.Options{
	cmp.Comparer(func(a, b *ParamDef) bool { return a == b }),
	cmp.Comparer(func(a, b *SectionDef) bool { return a == b }),
	cmpopts.IgnoreFields(Param{}, "Line", "MemberLines"),
	cmpopts.IgnoreFields(Section{}, "Line"),
	cmpopts.IgnoreFields(Collection{}, "Line"),
	cmpopts.IgnoreFields(Config{}, "Warnings"),
	cmpopts.EquateEmpty(),
}

func exampleFiles(t *testing.T) (valid, orig []string) {
	t.Helper()
	all, err := filepath.Glob("testdata/examples/*.xml")
	if err != nil || len(all) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range all {
		if strings.HasSuffix(f, ".orig.xml") {
			orig = append(orig, f)
		} else {
			valid = append(valid, f)
		}
	}
	return valid, orig
}

// TestExamples: every example of MS-FSCCFG section 3 passes (in its
// repaired form where the spec prints it malformed).
func TestExamples(t *testing.T) {
	valid, _ := exampleFiles(t)
	if len(valid) != 13 {
		t.Fatalf("want the 12 examples (3.3 in two forms) = 13 files, got %d", len(valid))
	}
	for _, f := range valid {
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := ParseFile(f, nil)
			if err != nil {
				t.Fatalf("ParseFile: %v", err)
			}
			if len(cfg.Collections) != 1 {
				t.Fatalf("want 1 collection, got %d", len(cfg.Collections))
			}
		})
	}
}

// TestExamplesAsPrinted: the examples the spec prints malformed fail with
// a message that says what is wrong and where.
func TestExamplesAsPrinted(t *testing.T) {
	want := map[string]string{
		"3.2-typical.orig.xml":             "testdata/examples/3.2-typical.orig.xml:30: XML error: element <attrib> after the end of CrawlerConfig (a file holds exactly one CrawlerConfig element)",
		"3.3b-subdomains-section.orig.xml": "testdata/examples/3.3b-subdomains-section.orig.xml:21: XML syntax error: unexpected end element </section> after the end of CrawlerConfig (stray closing tags)",
		"3.11-post-payload.orig.xml":       "testdata/examples/3.11-post-payload.orig.xml:6: XML syntax error: invalid character entity &variableB (no semicolon) (write a literal & as &amp;)",
	}
	_, orig := exampleFiles(t)
	if len(orig) != len(want) {
		t.Fatalf("orig files %v, want %d", orig, len(want))
	}
	for _, f := range orig {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, err := ParseFile(f, nil)
			var list ErrorList
			if !errors.As(err, &list) {
				t.Fatalf("want an ErrorList, got %v", err)
			}
			if got := err.Error(); got != want[filepath.Base(f)] {
				t.Errorf("error:\n got %s\nwant %s", got, want[filepath.Base(f)])
			}
		})
	}
}

// TestRoundTrip: parse, write, parse gives an equal model, and writing is
// idempotent.
func TestRoundTrip(t *testing.T) {
	valid, _ := exampleFiles(t)
	for _, f := range valid {
		t.Run(filepath.Base(f), func(t *testing.T) {
			a, err := ParseFile(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			out := Marshal(a)
			b, err := Parse(f, out, nil)
			if err != nil {
				t.Fatalf("reparse: %v\n%s", err, out)
			}
			if d := cmp.Diff(a, b, modelOpts); d != "" {
				t.Errorf("model changed (-first +second):\n%s", d)
			}
			if out2 := Marshal(b); !bytes.Equal(out, out2) {
				t.Errorf("writer not idempotent:\n%s\n---\n%s", out, out2)
			}
		})
	}
}

// TestSubDomainForms: the SubDomain element and the subdomains section of
// example 3.3 give the same model.
func TestSubDomainForms(t *testing.T) {
	a, err := ParseFile("testdata/examples/3.3a-subdomain.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := ParseFile("testdata/examples/3.3b-subdomains-section.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(a.Collections, b.Collections, modelOpts); d != "" {
		t.Errorf("forms differ:\n%s", d)
	}
}

// TestNewUser: a typo'd parameter, a wrong boolean, a bad regexp and an
// unknown section give exactly four errors, each with its line.
func TestNewUser(t *testing.T) {
	src := `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
    <DomainSpecification name="sp">
        <attrib name="start_uris" type="list-string">
            <member>http://www.example.com/</member>
        </attrib>
        <attrib name="dealy" type="real">10.0</attrib>
        <attrib name="use_cookies" type="boolean">true</attrib>
        <section name="include_domains">
            <attrib name="regexp" type="list-string">
                <member>^www\.(example|test\.com$</member>
            </attrib>
        </section>
        <section name="crawlmodes">
            <attrib name="mode" type="string">FULL</attrib>
        </section>
    </DomainSpecification>
</CrawlerConfig>
`
	_, err := Parse("crawl.xml", []byte(src), nil)
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("want ErrorList, got %v", err)
	}
	want := []string{
		`crawl.xml:7: collection sp: parameter dealy: unknown parameter (did you mean "delay"?)`,
		`crawl.xml:8: collection sp: parameter use_cookies: invalid boolean "true" (want yes or no)`,
		"crawl.xml:11: collection sp: parameter include_domains/regexp: invalid regular expression \"^www\\.(example|test\\.com$\": error parsing regexp: missing closing ) in `^www\\.(example|test\\.com$`",
		`crawl.xml:14: collection sp: section crawlmodes: unknown section (did you mean "crawlmode"?)`,
	}
	var got []string
	for _, e := range list {
		got = append(got, e.Error())
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("errors (-want +got):\n%s", d)
	}
}

func TestErrors(t *testing.T) {
	wrap := func(body string) string {
		return "<CrawlerConfig>\n<DomainSpecification name=\"c\">\n" + body + "\n</DomainSpecification>\n</CrawlerConfig>\n"
	}
	tests := []struct {
		name, src string
		want      []string
	}{
		{"keep html without javascript", wrap(`<attrib name="javascript_keep_html" type="boolean">yes</attrib>`),
			[]string{"f.xml:3: collection c: parameter javascript_keep_html: javascript_keep_html=yes requires use_javascript=yes (MS-FSCCFG 2.2.3)"}},
		{"keep html with javascript in node only", wrap(`<attrib name="javascript_keep_html" type="boolean">yes</attrib>
<attrib name="use_javascript" type="boolean">yes</attrib>
<Node name="n1"><attrib name="use_javascript" type="boolean">no</attrib></Node>`),
			[]string{"f.xml:3: collection c: parameter javascript_keep_html: javascript_keep_html=yes requires use_javascript=yes (MS-FSCCFG 2.2.3)"}},
		{"refresh_when_idle multinode", wrap(`<attrib name="refresh_when_idle" type="boolean">yes</attrib>
<Node name="n1"></Node>`),
			[]string{"f.xml:3: collection c: parameter refresh_when_idle: refresh_when_idle must not be used in a multinode installation, and this collection has Node elements (MS-FSCCFG 2.2.3)"}},
		{"subcollection refresh", wrap(`<attrib name="refresh" type="real">60</attrib>
<SubDomain name="s"><attrib name="refresh" type="real">90</attrib>
<section name="include_uris"><attrib name="prefix" type="list-string"><member>http://a/</member></attrib></section></SubDomain>`),
			[]string{"f.xml:4: collection c: parameter SubDomain[s]/refresh: a subcollection's refresh (90.0) must be lower than the collection's (60.0) (MS-FSCCFG 2.2.4.33)"}},
		{"subcollection without rules", wrap(`<SubDomain name="s"><attrib name="delay" type="real">1</attrib></SubDomain>`),
			[]string{"f.xml:3: collection c: section SubDomain[s]: a subcollection needs include or exclude rules to limit its scope (MS-FSCCFG 2.2.4.33)"}},
		{"feeding", wrap(`<section name="feeding">
<section name="a"><attrib name="primary" type="boolean">yes</attrib><attrib name="collection" type="string">x</attrib></section>
<section name="b"><attrib name="primary" type="boolean">yes</attrib><attrib name="destination" type="string">other</attrib></section>
</section>`),
			[]string{
				`f.xml:5: collection c: parameter feeding/b/destination: invalid value "other" (want one of default)`,
				"f.xml:5: collection c: section feeding/b: a content destination needs a collection parameter (MS-FSCCFG 2.2.4.9)",
				"f.xml:5: collection c: parameter feeding/b/primary: more than one primary content destination (a is primary too)",
			}},
		{"feeding two primaries and no collection", wrap(`<section name="feeding">
<section name="a"><attrib name="primary" type="boolean">yes</attrib><attrib name="collection" type="string">x</attrib></section>
<section name="b"><attrib name="primary" type="boolean">yes</attrib></section>
</section>`),
			[]string{
				"f.xml:5: collection c: section feeding/b: a content destination needs a collection parameter (MS-FSCCFG 2.2.4.9)",
				"f.xml:5: collection c: parameter feeding/b/primary: more than one primary content destination (a is primary too)",
			}},
		{"empty feeding", wrap(`<section name="feeding"></section>`),
			[]string{"f.xml:3: collection c: section feeding: needs at least 1 section (MS-FSCCFG 2.2.4.9)"}},
		{"autofill without form", wrap(`<Login name="l"><attrib name="autocomplete" type="boolean">yes</attrib></Login>`),
			[]string{"f.xml:3: collection c: parameter Login[l]/autofill: autofill=yes requires html_form (MS-FSCCFG 2.2.4.31)"}},
		{"levels", wrap(`<section name="workqueue_priority"><attrib name="levels" type="integer">2</attrib>
<attrib name="default" type="integer">3</attrib><section name="4"></section></section>`),
			[]string{
				"f.xml:4: collection c: parameter workqueue_priority/default: level 3 is above workqueue_priority/levels (2)",
				"f.xml:4: collection c: section workqueue_priority/4: priority level 4 is above workqueue_priority/levels (2)",
			}},
		{"level name", wrap(`<section name="workqueue_priority"><section name="high"></section></section>`),
			[]string{`f.xml:3: collection c: section workqueue_priority/high: priority level section name "high" must be a level number from 1`}},
		{"duplicate", wrap(`<attrib name="delay" type="real">1</attrib>
<attrib name="delay" type="real">2</attrib>`),
			[]string{"f.xml:4: collection c: parameter delay: set twice in the same scope (first at line 3)"}},
		{"alias duplicate", wrap(`<attrib name="html_redir_thresh" type="integer">1</attrib>
<attrib name="hmtl_redir_threshold" type="integer">2</attrib>`),
			[]string{"f.xml:4: collection c: parameter html_redir_thresh: set twice in the same scope (first at line 3)"}},
		{"wrong type", wrap(`<attrib name="delay" type="integer">1</attrib>`),
			[]string{"f.xml:3: collection c: parameter delay: declared type integer, but the parameter is real"}},
		{"bad type", wrap(`<attrib name="delay" type="double">1</attrib>`),
			[]string{`f.xml:3: collection c: parameter delay: invalid type "double" (want boolean, string, integer, list-string or real)`}},
		{"no type", wrap(`<attrib name="delay">1</attrib>`),
			[]string{`f.xml:3: collection c: parameter delay: attrib has no type attribute (want type="real")`}},
		{"member in scalar", wrap(`<attrib name="delay" type="real"><member>1</member></attrib>`),
			[]string{"f.xml:3: collection c: parameter delay: <member> is only allowed in a list-string attrib (this one is real)"}},
		{"text in list", wrap(`<attrib name="start_uris" type="list-string">http://a/</attrib>`),
			[]string{`f.xml:3: collection c: parameter start_uris: text "http://a/" outside <member> in a list-string attrib`}},
		{"out of range", wrap(`<attrib name="max_sites" type="integer">0</attrib>`),
			[]string{"f.xml:3: collection c: parameter max_sites: value 0 out of range [1, 2147483647]"}},
		{"int32", wrap(`<attrib name="max_doc" type="integer">2147483648</attrib>`),
			[]string{"f.xml:3: collection c: parameter max_doc: integer 2147483648 out of range (INT32)"}},
		{"section param at top", wrap(`<attrib name="fwdlinks" type="boolean">no</attrib>`),
			[]string{"f.xml:3: collection c: parameter fwdlinks: unknown parameter in DomainSpecification (it is a parameter of section crawlmode)"}},
		{"section not allowed in subcollection", wrap(`<SubDomain name="s"><section name="feeding"></section>
<section name="include_uris"><attrib name="prefix" type="list-string"><member>http://a/</member></attrib></section></SubDomain>`),
			[]string{"f.xml:3: collection c: section SubDomain[s]/feeding: section feeding is not allowed in SubDomain"}},
		{"subdomains in node", wrap(`<Node name="n"><section name="subdomains"></section></Node>`),
			[]string{"f.xml:3: collection c: section Node[n]/subdomains: section subdomains is not allowed in Node"}},
		{"bad element", wrap(`<attr name="delay" type="real">1</attr>`),
			[]string{`f.xml:3: unknown element <attr> inside <DomainSpecification> (did you mean "attrib"?)`}},
		{"enum", wrap(`<attrib name="refresh_mode" type="string">scrach</attrib>`),
			[]string{`f.xml:3: collection c: parameter refresh_mode: invalid value "scrach" (want one of append, prepend, scratch, soft, adaptive) (did you mean "scratch"?)`}},
		{"error code", wrap(`<section name="http_errors"><attrib name="4x" type="string">KEEP</attrib></section>`),
			[]string{`f.xml:3: collection c: parameter http_errors/4x: invalid error code "4x" (want a status code such as 404 or 4xx, or net, int, ttl)`}},
		{"duplicate collection", "<CrawlerConfig><DomainSpecification name=\"c\"/>\n<DomainSpecification name=\"c\"/></CrawlerConfig>",
			[]string{"f.xml:2: collection c: collection defined twice (first at line 1)"}},
		{"encoding", `<?xml version="1.0" encoding="ISO-8859-1"?><CrawlerConfig/>`,
			[]string{`f.xml:1: XML error: encoding "ISO-8859-1" is not supported: the file must be UTF-8 (MS-FSCCFG section 2)`}},
		{"doctype", "<!DOCTYPE x [<!ENTITY a \"b\">]>\n<CrawlerConfig/>",
			[]string{"f.xml:1: XML error: <!DOCTYPE> is not allowed"}},
		{"root", "<Config/>",
			[]string{`f.xml:1: unknown element <Config> as the root element (want <CrawlerConfig>)`}},
		{"empty", "",
			[]string{"f.xml:1: no CrawlerConfig element"}},
		{"ipmask", wrap(`<section name="exclude_domains"><attrib name="ipmask" type="list-string"><member>207.46.197.0:0xffffffff00</member></attrib></section>`),
			[]string{`f.xml:3: collection c: parameter exclude_domains/ipmask: invalid ipmask "207.46.197.0:0xffffffff00": a hexadecimal mask has 1 to 8 digits (32 bits)`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse("f.xml", []byte(tt.src), &Options{SkipFileChecks: true})
			var got []string
			var list ErrorList
			if errors.As(err, &list) {
				for _, e := range list {
					got = append(got, e.Error())
				}
			} else if err != nil {
				t.Fatalf("not an ErrorList: %v", err)
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("errors (-want +got):\n%s", d)
			}
		})
	}
}

// TestTypicalValues checks typed accessors against example 3.2.
func TestTypicalValues(t *testing.T) {
	cfg, err := ParseFile("testdata/examples/3.2-typical.xml", nil)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Collections[0].Top()
	type row struct {
		name string
		got  any
		want any
	}
	cut, cutOK := e.CutOff()
	rows := []row{
		{"delay", e.Delay(), 60.0},
		{"refresh", e.Refresh(), 1440.0},
		{"max_doc", e.MaxDoc(), 1000000},
		{"limits/max_doc", e.Limits().MaxDoc, 0},
		{"cut_off", [2]any{cut, cutOK}, [2]any{5000000, true}},
		{"allowed_schemes", e.AllowedSchemes(), []string{"http", "https"}},
		{"html_redir_thresh (alias)", e.HTMLRedirThresh(), 3},
		{"extract_links_from_dupes", e.ExtractLinksFromDupes(), false},
		{"crawlmode", e.Crawlmode().Fwdredirects, true},
		{"mode", e.Mode(), CrawlMode{Full: true, Depth: -1}},
		{"link_extraction/img", e.LinkExtraction().Img, false},
		{"link_extraction/script (default)", e.LinkExtraction().Script, true},
		{"ppdup format unset", e.PPDup().Format == nil, true},
		{"proxy_max_pending", e.ProxyMaxPending(), 2147483647},
		{"sitemap default", e.SitemapWeights().Hourly, 0.64},
		{"login_failed_ignore", e.LoginFailedIgnore(), false},
	}
	for _, r := range rows {
		if d := cmp.Diff(r.want, r.got); d != "" {
			t.Errorf("%s: (-want +got)\n%s", r.name, d)
		}
	}
	p := e.Param("delay")
	if !p.Set || p.Line != 31 {
		t.Errorf("delay: Set=%v Line=%d, want set at line 31", p.Set, p.Line)
	}
	if p := e.Param("fetch_timeout"); p.Set != true {
		t.Errorf("fetch_timeout should be set in 3.2")
	}
	if p := e.Param("ftp_passive"); p.Set || !p.Value.Bool {
		t.Errorf("ftp_passive: want defaulted yes, got %+v", p)
	}
	act, ok := e.FTPErrors().Lookup("550")
	if !ok || act != (ErrorAction{Delete: true}) {
		t.Errorf("ftp 550: %+v %v", act, ok)
	}
}

// TestEffective checks the precedence Node > subcollection > collection >
// default.
func TestEffective(t *testing.T) {
	src := `<CrawlerConfig><DomainSpecification name="c">
<attrib name="delay" type="real">60</attrib>
<attrib name="refresh" type="real">600</attrib>
<section name="include_domains"><attrib name="suffix" type="list-string"><member>example.com</member></attrib></section>
<section name="crawlmode"><attrib name="fwdlinks" type="boolean">no</attrib></section>
<section name="http_errors"><attrib name="408" type="string">KEEP</attrib></section>
<SubDomain name="news">
  <attrib name="delay" type="real">10</attrib>
  <attrib name="refresh" type="real">60</attrib>
  <section name="crawlmode"><attrib name="mode" type="string">DEPTH:2</attrib></section>
  <section name="include_uris"><attrib name="prefix" type="list-string"><member>http://news.example.com/</member></attrib></section>
</SubDomain>
<Node name="n1">
  <attrib name="delay" type="real">90</attrib>
  <section name="http_errors"><attrib name="5XX" type="string">KEEP</attrib></section>
  <section name="include_domains"><attrib name="exact" type="list-string"><member>n1.example.com</member></attrib></section>
</Node>
</DomainSpecification></CrawlerConfig>`
	cfg, err := Parse("e.xml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	c := cfg.Collections[0]
	// A toy membership test: URI prefix rules only (the real matcher is
	// the filter package's).
	in := func(s Scope, uri string) bool {
		for _, r := range s.IncludeURIs.Rules {
			if r.Kind == Prefix && strings.HasPrefix(uri, r.Pattern) {
				return true
			}
		}
		return false
	}
	tests := []struct {
		uri, node string
		delay     float64
		refresh   float64
		mode      CrawlMode
		fwdlinks  bool
		sub       string
		include   []Rule
		act5xx    ErrorAction
	}{
		{"http://www.example.com/", "", 60, 600, CrawlMode{Full: true, Depth: -1}, false, "", []Rule{{Kind: Suffix, Pattern: "example.com"}}, ErrorAction{Delete: true, After: 10}},
		{"http://news.example.com/a", "", 10, 60, CrawlMode{Depth: 2}, false, "news", []Rule{{Kind: Suffix, Pattern: "example.com"}}, ErrorAction{Delete: true, After: 10}},
		{"http://news.example.com/a", "n1", 90, 60, CrawlMode{Depth: 2}, false, "news", []Rule{{Kind: Exact, Pattern: "n1.example.com"}}, ErrorAction{}},
		{"http://www.example.com/", "n1", 90, 600, CrawlMode{Full: true, Depth: -1}, false, "", []Rule{{Kind: Exact, Pattern: "n1.example.com"}}, ErrorAction{}},
		{"http://www.example.com/", "n2", 60, 600, CrawlMode{Full: true, Depth: -1}, false, "", []Rule{{Kind: Suffix, Pattern: "example.com"}}, ErrorAction{Delete: true, After: 10}},
	}
	for _, tt := range tests {
		t.Run(tt.uri+"@"+tt.node, func(t *testing.T) {
			e := c.For(tt.uri, tt.node, in)
			sub := ""
			if e.SubCollection != nil {
				sub = e.SubCollection.Name
			}
			a5, _ := e.HTTPErrors().Lookup("503")
			a408, _ := e.HTTPErrors().Lookup("408")
			got := []any{e.Delay(), e.Refresh(), e.Mode(), e.Crawlmode().Fwdlinks, sub, e.Scope().IncludeDomains.Rules, a5, a408}
			want := []any{tt.delay, tt.refresh, tt.mode, tt.fwdlinks, tt.sub, tt.include, tt.act5xx, ErrorAction{}}
			if d := cmp.Diff(want, got); d != "" {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	// Origin of a value.
	if p := c.Effective("news", "n1").Param("refresh"); !p.Set || p.Value.Real != 60 {
		t.Errorf("refresh from subcollection: %+v", p)
	}
	if p := c.Effective("", "").Param("max_sites"); p.Set || p.Value.Int != 128 {
		t.Errorf("max_sites default: %+v", p)
	}
	sc := c.SubScope(c.SubCollection("news"))
	if !sc.IncludeURIs.Present || sc.IncludeDomains.Present {
		t.Errorf("sub scope: %+v", sc)
	}
}

// TestReferenceUpToDate fails when docs/configuration.md or
// accessors_gen.go no longer match the definition table.
func TestReferenceUpToDate(t *testing.T) {
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatalf("docs/configuration.md: %v (regenerate with %q from the repository root)", err, RegenerateCommand)
	}
	if !bytes.Equal(doc, Reference()) {
		t.Errorf("docs/configuration.md is stale: regenerate it with %q from the repository root", RegenerateCommand)
	}
	src, err := GenerateAccessors()
	if err != nil {
		t.Fatal(err)
	}
	gen, err := os.ReadFile("accessors_gen.go")
	if err != nil || !bytes.Equal(gen, src) {
		t.Errorf("accessors_gen.go is stale: regenerate it with %q from the repository root", RegenerateCommand)
	}
}

// TestReferenceComplete checks the reference names every parameter of the
// top level.
func TestReferenceComplete(t *testing.T) {
	ref := string(Reference())
	n := 0
	for _, p := range Spec().Collection.Params {
		if !strings.Contains(ref, "| `"+p.Name+"`") {
			t.Errorf("reference lacks %s", p.Name)
		}
		n++
	}
	if n != 67 { // the 66 of section 2.2.3 and login_failed_ignore of example 3.2
		t.Errorf("top-level parameters: %d, want 67", n)
	}
	for _, s := range []string{"include_domains", "exclude_uris", "log", "storage", "pp", "ppdup", "feeding", "cachesize", "http_errors", "ftp_errors",
		"workqueue_priority", "link_extraction", "limits", "focused", "passwd", "ftp_acct", "exclude_headers", "variable_delay", "adaptive",
		"weights", "sitemap_weights", "site_clusters", "crawlmode", "post_payload", "rss", "logins", "parameters", "subdomains"} {
		if !strings.Contains(ref, "### "+s+" (") {
			t.Errorf("reference lacks section %s", s)
		}
	}
}

func TestWarnings(t *testing.T) {
	src := `<CrawlerConfig><DomainSpecification name="c">
<attrib name="info" type="string">x</attrib>
<attrib name="delay" type="real">1</attrib>
<attrib name="html_redir_is_redir" type="boolean">no</attrib>
<attrib name="hmtl_redir_threshold" type="integer">5</attrib>
<section name="ppdup"><attrib name="compact" type="boolean">yes</attrib></section>
<section name="storage"><attrib name="clusters" type="integer">4</attrib></section>
</DomainSpecification></CrawlerConfig>`
	cfg, err := Parse("w.xml", []byte(src), nil)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, w := range cfg.Warnings {
		got = append(got, w.Error())
	}
	want := []string{
		"w.xml:5: collection c: parameter html_redir_thresh: has no effect: html_redir_is_redir is no",
		"w.xml:6: collection c: parameter ppdup/compact: not honoured by the crawl yet",
		"w.xml:7: collection c: parameter storage/clusters: accepted and ignored: the Pebble crawl store is one database, not split into storage clusters (docs/decisions.md)",
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("(-want +got)\n%s", d)
	}
}

func TestMaterializeReparses(t *testing.T) {
	valid, _ := exampleFiles(t)
	for _, f := range valid {
		cfg, err := ParseFile(f, nil)
		if err != nil {
			t.Fatal(err)
		}
		c := cfg.Collections[0]
		var views []*Effective
		views = append(views, c.Top())
		for _, n := range c.Nodes {
			views = append(views, c.Effective("", n.Name))
		}
		for _, s := range c.SubCollections {
			views = append(views, c.Effective(s.Name, ""))
		}
		for _, e := range views {
			var b bytes.Buffer
			if err := WriteCollections(&b, []*Collection{e.Materialize()}); err != nil {
				t.Fatal(err)
			}
			again, err := Parse(f, b.Bytes(), nil)
			if err != nil {
				t.Fatalf("%s: materialized config does not parse: %v\n%s", f, err, b.Bytes())
			}
			// Every parameter now set equals the effective value.
			e2 := again.Collections[0].Top()
			for _, p := range Spec().Collection.Params {
				if d := cmp.Diff(e.Param(p.Name).Value, e2.Param(p.Name).Value, cmpopts.EquateEmpty()); d != "" {
					t.Errorf("%s: %s differs: %s", f, p.Name, d)
				}
			}
		}
	}
}
