package config

import (
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzParse: no input panics; garbage gives located errors; whatever
// parses survives write and parse unchanged.
func FuzzParse(f *testing.F) {
	files, _ := filepath.Glob("testdata/examples/*.xml")
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("<CrawlerConfig><DomainSpecification name=\"x\"><attrib name=\"delay\" type=\"real\">1e308</attrib></DomainSpecification></CrawlerConfig>"))
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := Parse("fuzz.xml", data, &Options{SkipFileChecks: true})
		if err != nil {
			var list ErrorList
			if !errors.As(err, &list) || len(list) == 0 {
				t.Fatalf("error is not a non-empty ErrorList: %v", err)
			}
			for _, e := range list {
				if e.File != "fuzz.xml" || e.Msg == "" {
					t.Fatalf("unlocated error: %#v", e)
				}
			}
			return
		}
		out := Marshal(cfg)
		again, err := Parse("fuzz.xml", out, &Options{SkipFileChecks: true})
		if err != nil {
			t.Fatalf("canonical output does not parse: %v\n%s", err, out)
		}
		if d := cmp.Diff(cfg, again, modelOpts); d != "" {
			t.Fatalf("round trip changed the model:\n%s\n%s", d, out)
		}
		for _, c := range cfg.Collections {
			for _, e := range []*Effective{c.Top(), c.For("http://a/", "n", func(Scope, string) bool { return true })} {
				_ = Marshal(&Config{Collections: []*Collection{e.Materialize()}})
				_ = e.HTTPErrors()
				_ = e.VariableDelays()
				_ = e.Passwd()
				_ = e.PriorityLevels()
				_ = e.Feeding()
			}
		}
	})
}

// genConfig writes a random valid configuration from the definition table:
// random parameters and sections in random order and spacing.
func genConfig(r *rand.Rand) string {
	var b strings.Builder
	ws := func() string { return []string{"", " ", "\n", "\n    ", "\t"}[r.Intn(5)] }
	value := func(l location, d *ParamDef) string {
		v := validValue(l, d)
		switch {
		case d.Name == "javascript_keep_html" || d.Name == "autofill" || d.Name == "refresh_when_idle":
			return "no"
		case d.Type == Boolean:
			return []string{"yes", "no", "Yes", "NO"}[r.Intn(4)]
		case d.Type == Integer && d.HasMin && d.Name != "levels" && d.Name != "default" && d.Name != "start_uri_pri":
			hi := d.Max
			if hi > d.Min+1000 {
				hi = d.Min + 1000
			}
			return strconv.Itoa(int(d.Min) + r.Intn(int(hi-d.Min)+1))
		case d.Type == Real && d.HasMin && d.Name != "refresh":
			hi := d.Max
			if hi > 1e6 {
				hi = 1e6
			}
			return strconv.FormatFloat(d.Min+r.Float64()*(hi-d.Min), 'g', -1, 64)
		case len(d.Enum) > 0 && d.Name != "destination":
			return d.Enum[r.Intn(len(d.Enum))]
		}
		return v
	}
	var attribs func(l location, n int, skip map[string]bool) []string
	attribs = func(l location, n int, skip map[string]bool) []string {
		var out []string
		perm := r.Perm(len(l.def.Params))
		for _, i := range perm[:min(n, len(perm))] {
			d := l.def.Params[i]
			if skip[d.Name] {
				continue
			}
			v := value(l, d)
			if d.Type == ListString {
				out = append(out, `<attrib name="`+d.Name+`" type="list-string">`+ws()+`<member>`+ws()+escapeText(v)+ws()+`</member>`+ws()+`</attrib>`)
			} else {
				out = append(out, `<attrib type="`+d.Type.String()+`" name="`+d.Name+`">`+ws()+escapeText(v)+ws()+`</attrib>`)
			}
		}
		if l.def.AnyParam != nil && r.Intn(2) == 0 {
			d := l.def.AnyParam
			name := sampleName[d.Name]
			v := validValue(l, d)
			out = append(out, attribXML(name, d.Type, v))
		}
		return out
	}
	locs := locations()
	byDef := map[*SectionDef]location{}
	for _, l := range locs {
		byDef[l.def] = l
	}
	var section func(l location, depth int) string
	section = func(l location, depth int) string {
		parts := attribs(l, r.Intn(6), map[string]bool{"refresh": l.def == Spec().SubCollection})
		if l.def.Spec == "2.2.4.9" && l.def.Name == "" {
			parts = append(parts, `<attrib name="collection" type="string">x</attrib>`)
			parts = attribs(l, 0, nil)
			parts = append(parts, `<attrib name="collection" type="string">x</attrib>`)
		}
		for _, cd := range l.def.Sections {
			if depth > 3 || r.Intn(3) != 0 || cd.Name == "subdomains" || cd.Name == "logins" {
				continue
			}
			parts = append(parts, `<section name="`+cd.Name+`">`+section(byDef[cd], depth+1)+`</section>`)
		}
		if a := l.def.AnySection; a != nil && (l.def.MinSections > 0 || r.Intn(2) == 0) {
			name := "d1"
			if l.def.Name == "workqueue_priority" {
				name = "1"
			}
			parts = append(parts, `<section name="`+name+`">`+section(byDef[a], depth+1)+`</section>`)
		}
		r.Shuffle(len(parts), func(i, j int) { parts[i], parts[j] = parts[j], parts[i] })
		return ws() + strings.Join(parts, ws()) + ws()
	}
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<CrawlerConfig>")
	for c := 0; c < 1+r.Intn(2); c++ {
		fmt.Fprintf(&b, "<DomainSpecification name=\"c%d\">", c)
		body := section(byDef[Spec().Collection], 0)
		b.WriteString(body)
		if r.Intn(2) == 0 {
			b.WriteString(`<SubDomain name="s"><section name="include_uris"><attrib name="prefix" type="list-string"><member>http://a/</member></attrib></section>` +
				strings.Join(attribs(byDef[Spec().SubCollection], 4, map[string]bool{"refresh": true}), "") + `</SubDomain>`)
		}
		if r.Intn(2) == 0 {
			b.WriteString(`<Login name="l">` + strings.Join(attribs(byDef[Spec().Login], 5, nil), "") + `</Login>`)
		}
		if r.Intn(2) == 0 {
			b.WriteString(`<Node name="n1">` + strings.Join(attribs(byDef[Spec().Collection], 3, map[string]bool{"refresh_when_idle": true}), "") + `</Node>`)
		}
		b.WriteString("</DomainSpecification>\n")
	}
	b.WriteString("</CrawlerConfig>\n")
	return b.String()
}

// TestRandomConfigsRoundTrip: random valid configurations generated from
// the definition table parse, and parse-write-parse is the identity.
func TestRandomConfigsRoundTrip(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "uris.txt"), []byte("http://www.example.com/\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "rules.txt"), []byte("prefix:www.\n"), 0o644)
	file := filepath.Join(dir, "r.xml")
	r := rand.New(rand.NewSource(1))
	for i := 0; i < 300; i++ {
		src := genConfig(r)
		a, err := Parse(file, []byte(src), nil)
		if err != nil {
			t.Fatalf("config %d does not parse: %v\n%s", i, err, src)
		}
		out := Marshal(a)
		b, err := Parse(file, out, nil)
		if err != nil {
			t.Fatalf("config %d: canonical output does not parse: %v\n%s", i, err, out)
		}
		if d := cmp.Diff(a, b, modelOpts); d != "" {
			t.Fatalf("config %d: model changed:\n%s\n%s", i, d, src)
		}
	}
}
