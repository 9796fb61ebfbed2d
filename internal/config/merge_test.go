package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const mergeBase = `<?xml version="1.0" encoding="utf-8"?>
<CrawlerConfig>
  <DomainSpecification name="c">
    <attrib name="start_uris" type="list-string">
      <member>http://a.example/</member>
      <member>http://b.example/</member>
    </attrib>
    <attrib name="delay" type="real">5.0</attrib>
    <attrib name="max_pending" type="integer">2</attrib>
    <section name="crawlmode">
      <attrib name="mode" type="string">DEPTH:3</attrib>
      <attrib name="fwdlinks" type="boolean">yes</attrib>
    </section>
    <section name="include_domains">
      <attrib name="suffix" type="list-string"><member>.example</member></attrib>
    </section>
    <SubDomain name="s1">
      <attrib name="delay" type="real">10.0</attrib>
      <attrib name="start_uris" type="list-string"><member>http://s1.example/</member></attrib>
      <section name="include_uris">
        <attrib name="prefix" type="list-string"><member>http://s1.example/</member></attrib>
      </section>
    </SubDomain>
    <Node name="n1">
      <attrib name="delay" type="real">90.0</attrib>
    </Node>
  </DomainSpecification>
</CrawlerConfig>`

func partial(body string) string {
	return `<?xml version="1.0" encoding="utf-8"?><CrawlerConfig><DomainSpecification name="c">` +
		body + `</DomainSpecification></CrawlerConfig>`
}

func mustCollection(t *testing.T, name, xml string) *Collection {
	t.Helper()
	cfg, err := Parse(name, []byte(xml), &Options{Partial: name == "part.xml"})
	if err != nil {
		t.Fatalf("parse %s: %v", name, err)
	}
	return cfg.Collections[0]
}

func written(c *Collection) []string {
	return strings.Split(string(Marshal(&Config{Collections: []*Collection{c}})), "\n")
}

// TestMergePartial sends one setting at a time and checks that exactly the
// lines of that setting change in the written configuration.
func TestMergePartial(t *testing.T) {
	tests := []struct {
		name, part string
		// The written lines that must disappear and appear.
		gone, added []string
	}{
		{"plain parameter", `<attrib name="max_pending" type="integer">8</attrib>`,
			[]string{`max_pending" type="integer">2<`}, []string{`max_pending" type="integer">8<`}},
		{"list replaced whole", `<attrib name="start_uris" type="list-string"><member>http://z.example/</member></attrib>`,
			[]string{"http://a.example/", "http://b.example/"}, []string{"http://z.example/"}},
		{"section parameter", `<section name="crawlmode"><attrib name="mode" type="string">FULL</attrib></section>`,
			[]string{"DEPTH:3"}, []string{">FULL<"}},
		{"subcollection parameter", `<SubDomain name="s1"><attrib name="delay" type="real">20.0</attrib></SubDomain>`,
			[]string{">10.0<"}, []string{">20.0<"}},
		{"new subcollection", `<SubDomain name="s2"><attrib name="delay" type="real">30.0</attrib><attrib name="start_uris" type="list-string"><member>http://s2.example/</member></attrib><section name="include_uris"><attrib name="prefix" type="list-string"><member>http://s2.example/</member></attrib></section></SubDomain>`,
			nil, []string{`SubDomain name="s2"`, ">30.0<", "http://s2.example/", "</SubDomain>", "include_uris", "</section>", "prefix", "</attrib>", "start_uris"}},
		{"node element", `<Node name="n1"><attrib name="delay" type="real">120.0</attrib></Node>`,
			[]string{">90.0<"}, []string{">120.0<"}},
		{"new node element", `<Node name="n2"><attrib name="max_pending" type="integer">1</attrib></Node>`,
			nil, []string{`Node name="n2"`, `max_pending" type="integer">1<`, "</Node>"}},
	}
	old := mustCollection(t, "base.xml", mergeBase)
	before := written(old)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			part := mustCollection(t, "part.xml", partial(tc.part))
			merged, err := MergeXML(old, part, nil)
			if err != nil {
				t.Fatal(err)
			}
			after := written(merged)
			gone, added := lineDiff(before, after)
			if !matchAll(gone, tc.gone) || !matchAll(added, tc.added) {
				t.Errorf("lines gone %q, added %q; want gone %q, added %q", gone, added, tc.gone, tc.added)
			}
			if d := cmp.Diff(before, written(old)); d != "" {
				t.Errorf("Merge changed its input:\n%s", d)
			}
		})
	}
}

// lineDiff returns the lines of a not in b and of b not in a (as multisets).
func lineDiff(a, b []string) (gone, added []string) {
	count := map[string]int{}
	for _, l := range a {
		count[l]++
	}
	for _, l := range b {
		count[l]--
	}
	for _, l := range a {
		if count[l] > 0 {
			gone = append(gone, strings.TrimSpace(l))
			count[l]--
		}
	}
	for _, l := range b {
		if count[l] < 0 {
			added = append(added, strings.TrimSpace(l))
			count[l]++
		}
	}
	return gone, added
}

// matchAll reports whether every line holds one of the wanted fragments and
// every fragment is in some line.
func matchAll(lines, want []string) bool {
	used := make([]bool, len(want))
	for _, l := range lines {
		ok := false
		for i, w := range want {
			if strings.Contains(l, w) {
				used[i], ok = true, true
			}
		}
		if !ok {
			return false
		}
	}
	for _, u := range used {
		if !u {
			return false
		}
	}
	return true
}

func TestMergeInvalidResultNamesParameter(t *testing.T) {
	old := mustCollection(t, "base.xml", mergeBase)
	// A subcollection without a scope is accepted in a partial
	// configuration, but the merged collection is checked as a whole.
	part := mustCollection(t, "part.xml", partial(`<SubDomain name="s3"><attrib name="delay" type="real">1.0</attrib></SubDomain>`))
	_, err := MergeXML(old, part, nil)
	if err == nil || !strings.Contains(err.Error(), "SubDomain[s3]") || !strings.Contains(err.Error(), "merged configuration") {
		t.Fatalf("merge of an unscoped subcollection: %v", err)
	}
}
