package cmtconfig

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
	"github.com/trawl/trawl/internal/marshal"
)

// TestCrawlConfigRoundTrip sends every example through the MS-FSCMT crawl
// configuration structure and its marshal bytes, and rebuilds it: the
// canonical XML of the rebuilt collection equals the original's.
func TestCrawlConfigRoundTrip(t *testing.T) {
	files, err := filepath.Glob("../../config/testdata/examples/*.xml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no examples: %v", err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, ".orig.xml") {
			continue
		}
		t.Run(filepath.Base(f), func(t *testing.T) {
			cfg, err := config.ParseFile(f, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, col := range cfg.Collections {
				cc := cmt.CrawlConfig{Collections: []cmt.Collection{CrawlConfig(col)}}
				v, err := cc.Value()
				if err != nil {
					t.Fatalf("Value: %v", err)
				}
				raw, err := marshal.Encode(v)
				if err != nil {
					t.Fatalf("Encode: %v", err)
				}
				back, err := marshal.Decode(raw)
				if err != nil {
					t.Fatalf("Decode: %v", err)
				}
				cc2, err := cmt.CrawlConfigFromValue(back)
				if err != nil {
					t.Fatalf("CrawlConfigFromValue: %v", err)
				}
				got, ok := cc2.Collection(col.Name)
				if !ok {
					t.Fatalf("collection %q lost", col.Name)
				}
				rebuilt, err := FromCrawlConfig("CMD_ADM_CONF_ADD", *got, nil)
				if err != nil {
					t.Fatalf("FromCrawlConfig: %v", err)
				}
				var want, have bytes.Buffer
				if err := config.WriteCollections(&want, []*config.Collection{col}); err != nil {
					t.Fatal(err)
				}
				if err := config.WriteCollections(&have, []*config.Collection{rebuilt}); err != nil {
					t.Fatal(err)
				}
				if want.String() != have.String() {
					t.Errorf("rebuilt collection differs:\n--- original\n%s\n--- rebuilt\n%s", want.String(), have.String())
				}
			}
		})
	}
}

func TestPPDUPConfig(t *testing.T) {
	xml := `<CrawlerConfig><DomainSpecification name="example">
<section name="ppdup"><attrib name="format" type="string">gigabase</attrib><attrib name="compact" type="boolean">no</attrib></section>
</DomainSpecification></CrawlerConfig>`
	cfg, err := config.Parse("t.xml", []byte(xml), nil)
	if err != nil {
		t.Fatal(err)
	}
	pp := PPDUPConfig(cfg.Collections[0])
	cc := cmt.CrawlConfig{Collections: []cmt.Collection{pp}}
	v, err := cc.Value()
	if err != nil {
		t.Fatal(err)
	}
	got := marshal.FormatPython(v)
	// MS-FSCMT example 4.5 carries {'example': {'compact': 0, 'format': 'gigabase'}}.
	if got != "{b'example': {b'format': b'gigabase', b'compact': 0}}" {
		t.Errorf("PPDUP config = %s", got)
	}
}

// TestRefusesTextXMLCannotCarry: a received configuration whose names or
// values hold bytes that are not UTF-8 or characters outside XML's Char
// production is refused with an error naming the field, never applied
// changed (encoding/xml would turn them into U+FFFD: the fuzz crasher
// c4f144f0aaf0e468, a NUL in the collection name), nor is a name with white
// space around it, which a file trims (crasher e66a9f30720516d4). Tab, line
// feed and markup characters inside a value are carried unchanged.
func TestRefusesTextXMLCannotCarry(t *testing.T) {
	withStart := func(c cmt.Collection) cmt.Collection {
		c.Attribs = append(c.Attribs, cmt.ListAttrib("start_uris", "http://example.com/"))
		return c
	}
	for _, tc := range []struct {
		name string
		col  cmt.Collection
		want string
	}{
		{"NUL in the collection name", cmt.Collection{Name: "a\x00b"}, `collection name "a\x00b" holds U+0000`},
		{"control character", cmt.Collection{Name: "a\x01"}, "collection name"},
		{"not UTF-8", cmt.Collection{Name: "a\xffb"}, `collection name "a\xffb" is not UTF-8`},
		{"U+FFFE", cmt.Collection{Name: "a\uFFFE"}, "holds U+FFFE"},
		{"string value", withStart(cmt.Collection{Name: "c", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.StrAttrib("info", "x\x00")}}}), `value of info "x\x00"`},
		{"list member", cmt.Collection{Name: "c", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.ListAttrib("start_uris", "http://a/\x02")}}}, "member of start_uris"},
		{"SubDomain name", withStart(cmt.Collection{Name: "c", SubDomains: []cmt.Named{{Name: "s\x00"}}}), "SubDomain name"},
		{"white space around the collection name", cmt.Collection{Name: "c "}, `collection name "c " has white space around it`},
		{"white space around a Login name", withStart(cmt.Collection{Name: "c", Logins: []cmt.Named{{Name: "\tl"}}}), "Login name"},
		{"section name", withStart(cmt.Collection{Name: "c", Params: cmt.Params{Sections: []cmt.Section{{Name: "x\x1f"}}}}), "section name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := FromCrawlConfig("CMD_ADM_CONF_ADD", tc.col, &config.Options{SkipFileChecks: true})
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "config: CMD_ADM_CONF_ADD: ") {
				t.Fatalf("error %v, want one naming %q", err, tc.want)
			}
		})
	}
	col := withStart(cmt.Collection{Name: "c", Params: cmt.Params{Attribs: []cmt.Attrib{cmt.StrAttrib("info", "a\tb\nc <&\"'>")}}})
	got, err := FromCrawlConfig("CMD_ADM_CONF_ADD", col, &config.Options{SkipFileChecks: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := got.Root.Get("info"); d == nil || d.Value.Text != "a\tb\nc <&\"'>" {
		t.Fatalf("info %+v, want it unchanged", d)
	}
}
