package config

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// location is where a section definition is tested: the XML around its
// content, the error path prefix and how to find the Section in the model.
type location struct {
	def          *SectionDef
	open, close  string
	depth        int
	prefix       string
	extra        func(param string) string
	find         func(c *Collection) *Section
	displayTitle string
}

// locations walks the schema, one location per section definition (its
// first occurrence).
func locations() []location {
	s := Spec()
	seen := map[*SectionDef]bool{}
	var out []location
	var walk func(l location)
	walk = func(l location) {
		if seen[l.def] {
			return
		}
		seen[l.def] = true
		out = append(out, l)
		for _, cd := range l.def.Sections {
			cd := cd
			parent := l
			child := location{def: cd, open: parent.open + `<section name="` + cd.Name + `">` + "\n", close: "</section>\n" + parent.close,
				depth: parent.depth + 1, prefix: parent.prefix + cd.Name + "/", extra: parent.extra, displayTitle: parent.prefix + cd.Name,
				find: func(c *Collection) *Section { return parent.find(c).Child(cd.Name) }}
			switch cd.Name {
			case "subdomains":
				sub := location{def: s.SubCollection, open: parent.open + `<section name="subdomains"><section name="s1">` + "\n",
					close: "</section></section>\n" + parent.close, depth: 1, prefix: "subdomains/s1/", displayTitle: "subdomains/s1",
					extra: func(string) string {
						return `<section name="include_domains"><attrib name="exact" type="list-string"><member>a.example</member></attrib></section>`
					},
					find: func(c *Collection) *Section { return c.SubCollections[0] }}
				walk(sub)
				continue
			case "logins":
				lg := location{def: s.Login, open: parent.open + `<section name="logins"><section name="l1">` + "\n",
					close: "</section></section>\n" + parent.close, depth: 1, prefix: "logins/l1/", displayTitle: "logins/l1",
					find: func(c *Collection) *Section { return c.Logins[0] }}
				walk(lg)
				continue
			}
			walk(child)
		}
		if a := l.def.AnySection; a != nil {
			name := "d1"
			if l.def.Name == "workqueue_priority" {
				name = "1"
			}
			parent := l
			child := location{def: a, open: parent.open + `<section name="` + name + `">` + "\n", close: "</section>\n" + parent.close,
				depth: parent.depth + 1, prefix: parent.prefix + name + "/", displayTitle: parent.prefix + "(" + name + ")",
				find: func(c *Collection) *Section { return parent.find(c).Child(name) }}
			if l.def.Name == "feeding" {
				child.extra = func(p string) string {
					if p == "collection" {
						return ""
					}
					return `<attrib name="collection" type="string">x</attrib>`
				}
			}
			walk(child)
		}
	}
	walk(location{def: s.Collection, displayTitle: "DomainSpecification", find: func(c *Collection) *Section { return c.Root }})
	return out
}

// sampleName is the attrib name used for a user-named parameter.
var sampleName = map[string]string{
	"<status code>": "404", "<URI or realm>": "http://a.example/private/", "<site>": "ftp.example.com",
	"<header name>": "Content-Type", "<time slot>": "Mon:21.00-Mon:22.30", "<cluster name>": "c1",
	"<URI or prefix:URI>": "prefix:http://a.example/", "<form variable>": "user",
}

// validSample overrides the type-based valid value.
var validSample = map[string]string{
	"start_uris": "http://www.example.com/", "start_uri_files": "uris.txt", "mirror_site_files": "uris.txt",
	"proxy": "user:pw@proxy.example.com:3128", "headers": "X-Test: 1", "allowed_types": "text/*",
	"uri_search_mime": "text/html", "compress_exclude_mime": "image/png", "rewrite_rules": "/a(b)/c$1/",
	"regexp": `^www\.`, "ipmask": "207.46.197.0-100", "ip6mask": "2002:CF2E:C500-C564:0:0:0:0:0", "file": "rules.txt",
	"languages": "en", "mode": "DEPTH:3", "<URI or realm>": "u:p:realm:digest", "<site>": "u:p",
	"<header name>": "^bad", "<time slot>": "30", "<cluster name>": "a.example.com", "preload": "http://login.example.com/",
	"html_form": "http://login.example.com/form", "ecl_override": "^http://", "javascript_keep_html": "no", "autofill": "no",
}

// invalidSample is a value that a syntax check rejects, with the message.
var invalidSample = map[string][2]string{
	"dir":                   {" ", "empty value"},
	"file_prefix":           {"a/b", `invalid file name prefix "a/b" (want letters, digits, '.', '_' or '-')`},
	"allowed_types":         {"text", `invalid MIME type "text" (want type/subtype; * only as a whole field)`},
	"uri_search_mime":       {"text", `invalid MIME type "text" (want type/subtype; * only as a whole field)`},
	"compress_exclude_mime": {"text", `invalid MIME type "text" (want type/subtype; * only as a whole field)`},
	"rewrite_rules":         {"/a(/b/", "rewrite rule \"/a(/b/\": invalid regular expression \"a(\": error parsing regexp: missing closing ) in `a(`"},
	"start_uris":            {"www.example.com", `invalid URI "www.example.com" (want an absolute URI such as http://host/)`},
	"start_uri_files":       {"missing.txt", `file "missing.txt": no such file or directory`},
	"mirror_site_files":     {"missing.txt", `file "missing.txt": no such file or directory`},
	"proxy":                 {"http://proxy:99999", `invalid proxy "http://proxy:99999": bad port "99999"`},
	"headers":               {"NoColon", `invalid header "NoColon" (want "Name: value")`},
	"regexp":                {"(", "invalid regular expression \"(\": error parsing regexp: missing closing ) in `(`"},
	"ecl_override":          {"(", "invalid regular expression \"(\": error parsing regexp: missing closing ) in `(`"},
	"<header name>":         {"(", "invalid regular expression \"(\": error parsing regexp: missing closing ) in `(`"},
	"ipmask":                {"10.0.0.300/8", `invalid ipmask "10.0.0.300/8": bad IPv4 address "10.0.0.300"`},
	"ip6mask":               {"2002:CF2E:C500:0:0:0:0/60", `invalid ip6mask "2002:CF2E:C500:0:0:0:0/60": bad IPv6 address "2002:CF2E:C500:0:0:0:0" (an IPv6 address has 8 groups, or uses ::)`},
	"file":                  {"missing.txt", `rule file "missing.txt": no such file or directory`},
	"languages":             {"english", `invalid language "english" (want a two-letter ISO 639-1 code)`},
	"mode":                  {"DEEP", `invalid crawl mode "DEEP" (want FULL or DEPTH:n)`},
	"<URI or realm>":        {"useronly", `invalid credentials (want username:password or username:password:realm:scheme)`},
	"<site>":                {"nopass", `invalid account (want username:password)`},
	"<time slot>":           {"soon", `invalid delay "soon" (want seconds, or suspend)`},
	"<cluster name>":        {"a b", `invalid host name "a b"`},
	"preload":               {"/relative", `invalid URI "/relative" (want an absolute URI such as http://host/)`},
	"html_form":             {"/relative", `invalid URI "/relative" (want an absolute URI such as http://host/)`},
}

const errorActionMsg = `invalid error action "REMOVE" (want KEEP or DELETE[:X], optionally followed by ", RETRY[:X]")`

func validValue(l location, d *ParamDef) string {
	if l.def.foldNames { // http_errors, ftp_errors
		return "DELETE:1, RETRY:2"
	}
	if v, ok := validSample[d.Name]; ok {
		return v
	}
	switch d.Type {
	case Integer:
		return strconv.Itoa(int(math.Min(math.Max(1, d.Min), d.Max)))
	case Real:
		if d.HasMax && d.Max < 0.5 {
			return formatReal(d.Max)
		}
		return "0.5"
	case Boolean:
		return "yes"
	}
	if len(d.Enum) > 0 {
		return d.Enum[len(d.Enum)-1]
	}
	return "value"
}

// attribXML renders one attrib with value v (one member for a list).
func attribXML(name string, t Type, v string) string {
	if t == ListString {
		return `<attrib name="` + escapeAttr(name) + `" type="list-string"><member>` + escapeText(v) + `</member></attrib>` + "\n"
	}
	return `<attrib name="` + escapeAttr(name) + `" type="` + t.String() + `">` + escapeText(v) + `</attrib>` + "\n"
}

// TestParameters is the table-driven test of every parameter of every
// section: its default, a valid value, and invalid values with the errors
// they give.
func TestParameters(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "uris.txt"), []byte("http://www.example.com/\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "rules.txt"), []byte("# rules\nprefix:www.\nsuffix:.example.com\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(dir, "t.xml")
	parse := func(t *testing.T, l location, body, param string) (*Config, error) {
		extra := ""
		if l.extra != nil {
			extra = l.extra(param)
		}
		src := "<CrawlerConfig>\n<DomainSpecification name=\"c\">\n" + l.open + body + extra + l.close + "</DomainSpecification>\n</CrawlerConfig>\n"
		return Parse(file, []byte(src), nil)
	}
	// The attrib is on line 3 + the number of lines opening its location.
	attribLine := func(l location) int { return 3 + strings.Count(l.open, "\n") }
	count := 0
	for _, l := range locations() {
		defs := append([]*ParamDef(nil), l.def.Params...)
		if l.def.AnyParam != nil {
			defs = append(defs, l.def.AnyParam)
		}
		for _, d := range defs {
			d := d
			name := d.Name
			if d.isTemplate() {
				name = sampleName[d.Name]
			}
			t.Run(l.displayTitle+"/"+name, func(t *testing.T) {
				count++
				// Default.
				cfg, err := parse(t, l, "", d.Name)
				if err != nil && l.def.Spec == "2.2.4.9" && d.Name == "collection" {
					// Required: its absence is the error.
					if !strings.HasSuffix(err.Error(), "section feeding/d1: a content destination needs a collection parameter (MS-FSCCFG 2.2.4.9)") {
						t.Errorf("missing collection: %v", err)
					}
					cfg, err = parse(t, l, `<attrib name="primary" type="boolean">no</attrib>`, "collection")
					if err == nil {
						t.Fatalf("no error without collection")
					}
				} else if err != nil {
					t.Fatalf("empty section: %v", err)
				}
				sec := l.find(cfg.Collections[0])
				if sec == nil && l.def != Spec().Collection {
					t.Fatalf("section not in model")
				}
				p := sec.Lookup(name)
				if p == nil {
					t.Fatalf("Lookup(%q) = nil", name)
				}
				if p.Set {
					t.Errorf("default: Set = true")
				}
				switch {
				case !d.HasDefault:
					if p.HasValue() {
						t.Errorf("N/A parameter has a value: %+v", p.Value)
					}
				case d.Type == ListString:
					want := strings.Split(d.Default, ",")
					for i := range want {
						want[i] = strings.TrimSpace(want[i])
					}
					if d.Default == "" {
						want = nil
					}
					if diff := cmp.Diff(want, p.Value.List); diff != "" {
						t.Errorf("default list (-want +got):\n%s", diff)
					}
				case d.Type == Real:
					f, _ := strconv.ParseFloat(d.Default, 64)
					if p.Value.Real != f {
						t.Errorf("default %v, want %v", p.Value.Real, f)
					}
				default:
					if p.Value.Text != d.Default {
						t.Errorf("default %q, want %q", p.Value.Text, d.Default)
					}
				}
				// Valid value.
				v := validValue(l, d)
				cfg, err = parse(t, l, attribXML(name, d.Type, v), d.Name)
				if err != nil {
					t.Fatalf("valid value %q: %v", v, err)
				}
				p = l.find(cfg.Collections[0]).Lookup(name)
				if !p.Set || p.Line != attribLine(l) {
					t.Errorf("valid value: Set=%v Line=%d, want set at %d", p.Set, p.Line, attribLine(l))
				}
				got := p.Value.Text
				if d.Type == ListString {
					got = strings.Join(p.Value.List, ",")
				}
				wantText := v
				if d.Type == Real {
					f, _ := strconv.ParseFloat(v, 64)
					wantText = formatReal(f)
				}
				if got != wantText {
					t.Errorf("valid value: got %q, want %q", got, wantText)
				}
				// Invalid values.
				type bad struct{ xml, msg string }
				var bads []bad
				add := func(v, msg string) { bads = append(bads, bad{attribXML(name, d.Type, v), msg}) }
				switch d.Type {
				case Integer:
					add("12x", `invalid integer "12x"`)
					add("99999999999", `integer 99999999999 out of range (INT32)`)
					if d.HasMin && d.Min > math.MinInt32 {
						add(strconv.Itoa(int(d.Min)-1), fmt.Sprintf("value %d out of range %s", int(d.Min)-1, rangeText(d)))
					}
					if d.HasMax && d.Max < math.MaxInt32 {
						add(strconv.Itoa(int(d.Max)+1), fmt.Sprintf("value %d out of range %s", int(d.Max)+1, rangeText(d)))
					}
				case Real:
					add("fast", `invalid real number "fast"`)
					add("NaN", `invalid real number "NaN"`)
					if d.HasMin {
						add("-1.5", fmt.Sprintf("value -1.5 out of range %s", rangeText(d)))
					}
					if d.HasMax && d.Max < maxReal {
						add("1.5", fmt.Sprintf("value 1.5 out of range %s", rangeText(d)))
					}
				case Boolean:
					add("true", `invalid boolean "true" (want yes or no)`)
				default:
					if len(d.Enum) > 0 {
						add("bogus", fmt.Sprintf(`invalid value "bogus" (want one of %s)`, strings.Join(d.Enum, ", ")))
					}
					if s, ok := invalidSample[d.Name]; ok {
						add(s[0], s[1])
					} else if d.check != nil && strings.Contains(d.Meaning, "KEEP") || d.Name == "<status code>" {
						add("REMOVE", errorActionMsg)
					}
				}
				// A wrong declared type is an error for every parameter.
				other := Integer
				if d.Type == Integer {
					other = String
				}
				bads = append(bads, bad{attribXML(name, other, "1"), fmt.Sprintf("declared type %s, but the parameter is %s", other, d.Type)})
				if len(bads) < 2 && d.check != nil {
					t.Errorf("parameter with a syntax check has no invalid sample")
				}
				for _, b := range bads {
					_, err := parse(t, l, b.xml, d.Name)
					want := fmt.Sprintf("%s:%d: collection c: parameter %s%s: %s", file, attribLine(l), l.prefix, strings.ToLower(name), b.msg)
					if !l.def.foldNames {
						want = fmt.Sprintf("%s:%d: collection c: parameter %s%s: %s", file, attribLine(l), l.prefix, name, b.msg)
					}
					var list ErrorList
					if !errors.As(err, &list) {
						t.Errorf("%s: want an error, got %v", strings.TrimSpace(b.xml), err)
						continue
					}
					got := err.Error()
					if l.def.Spec == "2.2.4.9" && d.Name == "collection" {
						// The rejected collection is also missing.
						got = list[len(list)-1].Error()
					}
					if got != want {
						t.Errorf("%s:\n got %s\nwant %s", strings.TrimSpace(b.xml), got, want)
					}
				}
			})
		}
	}
	if count < 190 {
		t.Errorf("tested %d parameters, want at least 190", count)
	}
}
