package config

import (
	"bufio"
	"bytes"
	"encoding/xml"
	"io"
	"sort"
	"strings"
)

// Canonical form. The parser stores every scope in canonical order (fixed
// parameters and sections in definition order, user-named ones in document
// order) and the writer writes that order, with subcollections as SubDomain
// elements, logins as Login elements, then Node elements. So parse, write,
// parse gives an equal model.

// canonicalize orders a filled section and its children.
func canonicalize(s *Section) {
	idx := func(name string) int {
		for i, d := range s.Def.Params {
			if d.Name == name {
				return i
			}
		}
		return len(s.Def.Params)
	}
	sort.SliceStable(s.Params, func(i, j int) bool { return idx(s.Params[i].Name) < idx(s.Params[j].Name) })
	sidx := func(name string) int {
		for i, d := range s.Def.Sections {
			if d.Name == name {
				return i
			}
		}
		return len(s.Def.Sections)
	}
	sort.SliceStable(s.Sections, func(i, j int) bool { return sidx(s.Sections[i].Name) < sidx(s.Sections[j].Name) })
	for _, c := range s.Sections {
		canonicalize(c)
	}
}

// Marshal returns the canonical XML of cfg.
func Marshal(cfg *Config) []byte {
	var b bytes.Buffer
	_ = Write(&b, cfg)
	return b.Bytes()
}

// Write writes cfg as canonical XML (UTF-8, four-space indentation).
func Write(w io.Writer, cfg *Config) error {
	return WriteCollections(w, cfg.Collections)
}

// WriteCollections writes a CrawlerConfig holding the collections.
func WriteCollections(w io.Writer, cols []*Collection) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<CrawlerConfig>\n")
	for _, c := range cols {
		writeElement(bw, 1, "DomainSpecification", c.Name, c.Root)
		for _, s := range c.SubCollections {
			writeElement(bw, 2, "SubDomain", s.Name, s)
		}
		for _, s := range c.Logins {
			writeElement(bw, 2, "Login", s.Name, s)
		}
		for _, s := range c.Nodes {
			writeElement(bw, 2, "Node", s.Name, s)
		}
		bw.WriteString("    </DomainSpecification>\n")
	}
	bw.WriteString("</CrawlerConfig>\n")
	return bw.Flush()
}

// writeElement writes <tag name="..."> with the section's content; the
// DomainSpecification element is left open for the caller to close.
func writeElement(w *bufio.Writer, depth int, tag, name string, s *Section) {
	ind := strings.Repeat("    ", depth)
	w.WriteString(ind + "<" + tag + " name=\"" + escapeAttr(name) + "\">\n")
	writeBody(w, depth+1, s)
	if tag != "DomainSpecification" {
		w.WriteString(ind + "</" + tag + ">\n")
	}
}

func writeBody(w *bufio.Writer, depth int, s *Section) {
	ind := strings.Repeat("    ", depth)
	for _, p := range s.Params {
		w.WriteString(ind + "<attrib name=\"" + escapeAttr(p.Name) + "\" type=\"" + p.Def.Type.String() + "\">")
		if p.Def.Type == ListString {
			w.WriteString("\n")
			for _, m := range p.Value.List {
				w.WriteString(ind + "    <member>" + escapeText(m) + "</member>\n")
			}
			w.WriteString(ind)
		} else {
			w.WriteString(escapeText(p.Value.Text))
		}
		w.WriteString("</attrib>\n")
	}
	for _, c := range s.Sections {
		w.WriteString(ind + "<section name=\"" + escapeAttr(c.Name) + "\">\n")
		writeBody(w, depth+1, c)
		w.WriteString(ind + "</section>\n")
	}
}

func escapeText(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

func escapeAttr(s string) string {
	var b bytes.Buffer
	_ = xml.EscapeText(&b, []byte(s))
	return b.String()
}

// Materialize returns a collection holding the effective configuration:
// every parameter with a value (set or default) of every scope the
// collection defines, merged as Effective describes. Subcollections, logins
// and nodes that were not merged are kept as written.
func (e *Effective) Materialize() *Collection {
	c := e.Collection
	out := &Collection{Name: c.Name, Line: c.Line, Dir: c.Dir}
	out.Root = e.materialize(Spec().Collection, nil, "")
	if e.SubCollection == nil {
		out.SubCollections = c.SubCollections
	}
	for _, l := range c.Logins {
		out.Logins = append(out.Logins, withDefaults(l))
	}
	if e.Node == nil {
		out.Nodes = c.Nodes
	}
	return out
}

func (e *Effective) materialize(def *SectionDef, names []string, name string) *Section {
	s := &Section{Def: def, Name: name}
	path := strings.Join(names, "/")
	join := func(n string) string {
		if path == "" {
			return n
		}
		return path + "/" + n
	}
	for _, pd := range def.Params {
		if p := e.Param(join(pd.Name)); p.HasValue() {
			s.Params = append(s.Params, p)
		}
	}
	if def.AnyParam != nil {
		for _, p := range e.Params(path) {
			if def.Param(p.Name) == nil {
				s.Params = append(s.Params, p)
			}
		}
	}
	for _, cd := range def.Sections {
		child := append(append([]string(nil), names...), cd.Name)
		switch {
		case cd.Name == "subdomains" || cd.Name == "logins":
			continue
		case cd.Rules != NotRules:
			var src *Section
			if path == "" {
				// The collection's rules, not the subcollection's.
				if e.Node != nil {
					src = e.Node.Child(cd.Name)
				}
				if src == nil {
					src = e.Collection.Root.Child(cd.Name)
				}
			} else {
				src = e.Section(join(cd.Name))
			}
			if src != nil {
				s.Sections = append(s.Sections, src)
			}
		default:
			m := e.materialize(cd, child, cd.Name)
			if len(m.Params) > 0 || len(m.Sections) > 0 || e.Section(join(cd.Name)) != nil && cd.AnySection == nil {
				s.Sections = append(s.Sections, m)
			}
		}
	}
	if def.AnySection != nil {
		if whole := e.Section(path); whole != nil {
			for _, c := range whole.Sections {
				if def.Section(c.Name) == nil {
					s.Sections = append(s.Sections, withDefaults(c))
				}
			}
		}
	}
	return s
}

// withDefaults copies a section adding its defaulted fixed parameters.
func withDefaults(s *Section) *Section {
	out := &Section{Def: s.Def, Name: s.Name, Line: s.Line}
	for _, p := range s.All() {
		if p.HasValue() {
			out.Params = append(out.Params, p)
		}
	}
	for _, c := range s.Sections {
		if c.Def.Rules != NotRules {
			out.Sections = append(out.Sections, c)
		} else {
			out.Sections = append(out.Sections, withDefaults(c))
		}
	}
	return out
}
