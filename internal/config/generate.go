package config

import (
	"bytes"
	"fmt"
	"go/format"
	"strings"
)

// RegenerateCommand regenerates docs/configuration.md and
// internal/config/accessors_gen.go from the definition table.
const RegenerateCommand = "go run ./internal/config/gen"

// Reference returns docs/configuration.md: every parameter and section of
// the definition table with its type, default, meaning and whether the
// crawl honours it yet.
func Reference() []byte {
	var b bytes.Buffer
	s := Spec()
	fmt.Fprintf(&b, "# Crawl configuration reference\n\n")
	fmt.Fprintf(&b, "<!-- Generated from internal/config's definition table by `%s`; do not edit. -->\n\n", RegenerateCommand)
	b.WriteString(`trawl reads crawl configurations in the XML format of [MS-FSCCFG]: a ` + "`CrawlerConfig`" + ` element
holding one ` + "`DomainSpecification`" + ` per crawl collection, whose ` + "`attrib`" + ` elements set parameters and whose
` + "`section`" + ` elements group them. Every ` + "`attrib`" + ` has a ` + "`type`" + `: ` + "`boolean`" + ` (` + "`yes`" + ` or ` + "`no`" + `), ` + "`integer`" + ` (INT32),
` + "`real`" + ` (a double), ` + "`string`" + `, or ` + "`list-string`" + ` (one ` + "`member`" + ` element per value). Values are trimmed of
surrounding white space. A default of "N/A" means the parameter has no value unless set.

"Honoured" tells whether the crawl uses the parameter yet; ` + "`trawl config check`" + ` warns when a file sets a
parameter that is not. ` + "`trawl config show FILE`" + ` prints a collection's effective configuration with every
default filled in.

Subcollections (` + "`SubDomain`" + ` elements or sections of ` + "`subdomains`" + `) and ` + "`Node`" + ` elements override collection
parameters; the precedence is Node, then subcollection, then collection, then default (see docs/decisions.md).

`)
	type loc struct {
		def   *SectionDef
		where []string
	}
	var order []*loc
	byDef := map[*SectionDef]*loc{}
	var walk func(d *SectionDef, where string)
	walk = func(d *SectionDef, where string) {
		for _, c := range d.Sections {
			l := byDef[c]
			if l == nil {
				l = &loc{def: c}
				byDef[c] = l
				order = append(order, l)
			}
			if !contains(l.where, where) {
				l.where = append(l.where, where)
			}
			walk(c, where+" > "+c.Name)
		}
		if a := d.AnySection; a != nil {
			l := byDef[a]
			if l == nil {
				l = &loc{def: a}
				byDef[a] = l
				order = append(order, l)
			}
			if !contains(l.where, where) {
				l.where = append(l.where, where)
			}
			walk(a, where+" > (each section)")
		}
	}
	walk(s.Collection, "DomainSpecification")
	walk(s.SubCollection, "SubDomain")
	walk(s.Login, "Login")
	walk(s.Node, "Node")

	fmt.Fprintf(&b, "## Collection parameters (MS-FSCCFG 2.2.3)\n\nAttribs directly inside `DomainSpecification` (and inside `Node`).\n\n")
	paramTable(&b, s.Collection)
	fmt.Fprintf(&b, "## Elements\n\n")
	for _, el := range []struct {
		name string
		d    *SectionDef
	}{{"SubDomain", s.SubCollection}, {"Login", s.Login}, {"Node", s.Node}} {
		fmt.Fprintf(&b, "### %s (MS-FSCCFG %s)\n\n%s\n\n", el.name, el.d.Spec, el.d.Meaning)
		if el.d == s.Node {
			b.WriteString("Any collection parameter, and any section except `subdomains` and `logins`.\n\n")
			continue
		}
		fmt.Fprintf(&b, "Sections: %s.\n\n", sectionList(el.d))
		paramTable(&b, el.d)
	}
	fmt.Fprintf(&b, "## Sections\n\n")
	for _, l := range order {
		d := l.def
		title := d.Name
		if title == "" {
			title = "(named section) in " + lastName(l.where[0])
		}
		fmt.Fprintf(&b, "### %s (%s)\n\n%s\n\n", title, specRef(d.Spec), d.Meaning)
		fmt.Fprintf(&b, "Where: %s.\n\n", strings.Join(quoteAll(l.where), ", "))
		if len(d.Aliases) > 0 {
			fmt.Fprintf(&b, "Also accepted as: %s.\n\n", strings.Join(quoteAll(d.Aliases), ", "))
		}
		if len(d.Sections) > 0 {
			fmt.Fprintf(&b, "Sections: %s.\n\n", sectionList(d))
		}
		if d.AnySection != nil {
			fmt.Fprintf(&b, "Holds named sections (at least %d).\n\n", d.MinSections)
		}
		if len(d.Params) > 0 || d.AnyParam != nil {
			paramTable(&b, d)
		}
	}
	return b.Bytes()
}

func lastName(where string) string {
	parts := strings.Split(where, " > ")
	return parts[len(parts)-1]
}

func quoteAll(l []string) []string {
	out := make([]string, len(l))
	for i, s := range l {
		out[i] = "`" + s + "`"
	}
	return out
}

func sectionList(d *SectionDef) string {
	var names []string
	for _, c := range d.Sections {
		names = append(names, "`"+c.Name+"`")
	}
	return strings.Join(names, ", ")
}

func paramTable(b *bytes.Buffer, d *SectionDef) {
	b.WriteString("| Parameter | Type | Default | Range / values | Honoured | Meaning |\n|---|---|---|---|---|---|\n")
	rows := append([]*ParamDef(nil), d.Params...)
	if d.AnyParam != nil {
		rows = append(rows, d.AnyParam)
	}
	for _, p := range rows {
		name := "`" + p.Name + "`"
		if p.isTemplate() {
			name = p.Name
		}
		if len(p.Aliases) > 0 {
			name += " (alias " + strings.Join(quoteAll(p.Aliases), ", ") + ")"
		}
		def := "N/A"
		if p.HasDefault {
			def = "`" + p.Default + "`"
			if p.Default == "" {
				def = "(empty)"
			}
		}
		if p.SpecDefault != def && p.SpecDefault != p.Default && p.SpecDefault != "N/A" {
			def += " (spec: " + p.SpecDefault + ")"
		}
		var vals string
		switch {
		case len(p.Enum) > 0:
			vals = strings.Join(quoteAll(p.Enum), ", ")
		case p.HasMin && p.HasMax:
			vals = rangeText(p)
		}
		hon := "no"
		if p.Honoured {
			hon = "yes"
		}
		meaning := p.Meaning
		if p.Note != "" {
			meaning += " *trawl:* " + p.Note
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", cell(name), p.Type, cell(def), cell(vals), hon, cell(meaning))
	}
	b.WriteString("\n")
}

func cell(s string) string {
	s = strings.ReplaceAll(s, "|", "\\|")
	s = strings.ReplaceAll(s, "<", "&lt;")
	return strings.ReplaceAll(s, "\n", " ")
}

// goName turns a parameter or section name into a Go identifier.
func goName(s string) string {
	special := map[string]string{"http": "HTTP", "uri": "URI", "uris": "URIs", "url": "URL", "ip": "IP", "ftp": "FTP",
		"html": "HTML", "id": "ID", "pp": "PP", "ppdup": "PPDup", "rss": "RSS", "mime": "MIME", "ttl": "TTL", "ds": "DS",
		"ecl": "ECL", "csum": "Csum", "db": "DB", "pct": "Pct", "wq": "WQ"}
	var b strings.Builder
	for _, part := range strings.Split(s, "_") {
		if part == "" {
			continue
		}
		if v, ok := special[part]; ok {
			b.WriteString(v)
			continue
		}
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String()
}

func goType(t Type) string {
	switch t {
	case Integer:
		return "int"
	case Real:
		return "float64"
	case Boolean:
		return "bool"
	case ListString:
		return "[]string"
	}
	return "string"
}

func getter(t Type) string {
	switch t {
	case Integer:
		return "Int"
	case Real:
		return "Real"
	case Boolean:
		return "Bool"
	case ListString:
		return "List"
	}
	return "Str"
}

func firstSentence(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i+1]
	}
	return strings.ReplaceAll(s, "\n", " ")
}

// GenerateAccessors returns the source of accessors_gen.go: a typed method
// on Effective for every collection parameter, and a struct with a method
// for every section with fixed parameters.
func GenerateAccessors() ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "// Code generated by %s; DO NOT EDIT.\n\npackage config\n\n", RegenerateCommand)
	s := Spec()
	for _, p := range s.Collection.Params {
		n := goName(p.Name)
		fmt.Fprintf(&b, "// %s returns %s: %s\n", n, p.Name, firstSentence(p.Meaning))
		if p.HasDefault || p.Type == ListString {
			if !p.HasDefault {
				fmt.Fprintf(&b, "// It is nil when unset.\n")
			}
			fmt.Fprintf(&b, "func (e *Effective) %s() %s { return e.%s(%q) }\n\n", n, goType(p.Type), getter(p.Type), p.Name)
			continue
		}
		fmt.Fprintf(&b, "// ok is false when the parameter is unset (it has no default).\n")
		fmt.Fprintf(&b, "func (e *Effective) %s() (v %s, ok bool) { return e.%s(%q), e.Has(%q) }\n\n", n, goType(p.Type), getter(p.Type), p.Name, p.Name)
	}
	type secGen struct {
		path string
		def  *SectionDef
	}
	var secs []secGen
	for _, d := range s.Collection.Sections {
		if d.Rules != NotRules || d.AnyParam != nil || len(d.Params) == 0 {
			continue
		}
		secs = append(secs, secGen{d.Name, d})
		for _, c := range d.Sections {
			if c.Rules == NotRules && c.AnyParam == nil && len(c.Params) > 0 {
				secs = append(secs, secGen{d.Name + "/" + c.Name, c})
			}
		}
	}
	for _, sg := range secs {
		tn := goName(sg.def.Name) + "Section"
		fmt.Fprintf(&b, "// %s is the effective %s section (%s): %s\n", tn, sg.path, specRef(sg.def.Spec), firstSentence(sg.def.Meaning))
		fmt.Fprintf(&b, "// A field whose parameter has no default is nil (or an empty list) when unset.\ntype %s struct {\n", tn)
		for _, p := range sg.def.Params {
			t := goType(p.Type)
			if !p.HasDefault && p.Type != ListString {
				t = "*" + t
			}
			fmt.Fprintf(&b, "\t// %s is %s: %s\n\t%s %s\n", goName(p.Name), p.Name, firstSentence(p.Meaning), goName(p.Name), t)
		}
		fmt.Fprintf(&b, "}\n\n")
		fmt.Fprintf(&b, "// %s returns the effective %s section.\nfunc (e *Effective) %s() %s {\n\tvar s %s\n", goName(sg.def.Name), sg.path, goName(sg.def.Name), tn, tn)
		for _, p := range sg.def.Params {
			path := sg.path + "/" + p.Name
			if !p.HasDefault && p.Type != ListString {
				fmt.Fprintf(&b, "\tif e.Has(%q) {\n\t\tv := e.%s(%q)\n\t\ts.%s = &v\n\t}\n", path, getter(p.Type), path, goName(p.Name))
				continue
			}
			fmt.Fprintf(&b, "\ts.%s = e.%s(%q)\n", goName(p.Name), getter(p.Type), path)
		}
		fmt.Fprintf(&b, "\treturn s\n}\n\n")
	}
	return format.Source(b.Bytes())
}

// specRef names where a section is defined: an MS-FSCCFG section, or
// trawl for its own extensions.
func specRef(spec string) string {
	if spec == TrawlExtension {
		return "trawl extension"
	}
	return "MS-FSCCFG " + spec
}
