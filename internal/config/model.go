package config

import (
	"strconv"
	"strings"
)

// Config is a parsed configuration file: one or more crawl collections.
type Config struct {
	// File is the name the file was read under (used in messages).
	File string
	// Dir is the directory relative paths in the file (rule files, start
	// URI files) are resolved against.
	Dir         string
	Collections []*Collection
	// Warnings are problems that do not stop the file from being used:
	// parameters the crawl does not honour yet, settings that have no
	// effect.
	Warnings ErrorList
}

// Collection returns the collection named name, or nil.
func (c *Config) Collection(name string) *Collection {
	for _, col := range c.Collections {
		if col.Name == name {
			return col
		}
	}
	return nil
}

// Collection is one DomainSpecification. A subdomains section and SubDomain
// elements both become SubCollections; a logins section and Login elements
// both become Logins; a top-level weights or sitemap_weights section is
// stored inside adaptive. The writer always writes the element forms.
type Collection struct {
	Name string
	Line int
	// Dir is the directory of the configuration file (relative file rules
	// resolve against it).
	Dir string
	// Root holds the collection's own attribs and sections.
	Root *Section
	// SubCollections in document order; Name is the subcollection name.
	SubCollections []*Section
	// Logins in document order; Name is the login name.
	Logins []*Section
	// Nodes in document order; Name is the node scheduler identifier.
	Nodes []*Section
}

// SubCollection returns the subcollection named name, or nil.
func (c *Collection) SubCollection(name string) *Section { return findNamed(c.SubCollections, name) }

// Node returns the overrides for node scheduler name, or nil.
func (c *Collection) Node(name string) *Section { return findNamed(c.Nodes, name) }

// Login returns the login named name, or nil.
func (c *Collection) Login(name string) *Section { return findNamed(c.Logins, name) }

func findNamed(l []*Section, name string) *Section {
	for _, s := range l {
		if s.Name == name {
			return s
		}
	}
	return nil
}

// Section is one scope of the configuration: the collection root, a
// section, a subcollection, a login or a node. It holds what the file set;
// Lookup supplies defaults for the rest.
type Section struct {
	Def  *SectionDef
	Name string
	Line int
	// Params are the attribs set in this scope, in document order.
	Params []*Param
	// Sections are the child sections, in document order.
	Sections []*Section
}

// Param is one parameter value, set in the file or defaulted.
type Param struct {
	Def *ParamDef
	// Name is the canonical name (for user-named attribs, the name as
	// written, trimmed; error codes lower-cased).
	Name  string
	Value Value
	// Set is true when the file set the parameter, false for a default.
	Set bool
	// Line is where the file set it (0 for a default).
	Line int
	// MemberLines are the lines of the members of a list-string.
	MemberLines []int
}

// HasValue reports whether the parameter has a value: it was set, or it has
// a default.
func (p *Param) HasValue() bool { return p != nil && (p.Set || p.Def.HasDefault) }

// Value is a typed parameter value. Text is the canonical text of a scalar
// (integers in decimal, reals with a decimal point, booleans yes/no); List
// holds the members of a list-string.
type Value struct {
	Type Type
	Text string
	List []string
	Int  int64
	Real float64
	Bool bool
}

// Child returns the direct child section named name, or nil.
func (s *Section) Child(name string) *Section {
	if s == nil {
		return nil
	}
	for _, c := range s.Sections {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// Get returns the parameter set in this section under name, or nil.
func (s *Section) Get(name string) *Param {
	if s == nil {
		return nil
	}
	if s.Def != nil && s.Def.foldNames {
		name = strings.ToLower(name)
	}
	for _, p := range s.Params {
		if p.Name == name {
			return p
		}
	}
	return nil
}

// Lookup returns the parameter name of this section: the value set, or the
// default (Set false), or nil when the section's definition has no such
// parameter.
func (s *Section) Lookup(name string) *Param {
	if p := s.Get(name); p != nil {
		return p
	}
	if s == nil || s.Def == nil {
		return nil
	}
	if d := s.Def.Param(name); d != nil {
		return defaultParam(d)
	}
	if a := s.Def.AnyParam; a != nil {
		if canon, err := s.Def.anyParamName(name); err == nil {
			p := defaultParam(a)
			p.Name = canon
			return p
		}
	}
	return nil
}

// All returns every parameter of the section: each fixed parameter of its
// definition (set or defaulted, in definition order), then the user-named
// ones set in the file.
func (s *Section) All() []*Param {
	var out []*Param
	for _, d := range s.Def.Params {
		out = append(out, s.Lookup(d.Name))
	}
	for _, p := range s.Params {
		if s.Def.Param(p.Name) == nil {
			out = append(out, p)
		}
	}
	return out
}

// defaultParam materializes the default of d (an unset Param).
func defaultParam(d *ParamDef) *Param {
	p := &Param{Def: d, Name: d.Name}
	if d.HasDefault {
		p.Value = defaultValue(d)
	} else {
		p.Value = Value{Type: d.Type}
	}
	return p
}

// defaultValue parses the textual default of d.
func defaultValue(d *ParamDef) Value {
	v := Value{Type: d.Type}
	switch d.Type {
	case ListString:
		for _, m := range strings.Split(d.Default, ",") {
			if m = strings.TrimSpace(m); m != "" {
				v.List = append(v.List, m)
			}
		}
	default:
		pv, err := parseScalar(d, d.Default)
		if err != nil {
			panic("config: definition table: bad default for " + d.Name + ": " + err.Error())
		}
		v = pv
	}
	return v
}

// formatReal writes a real with at least one decimal (60 -> "60.0").
func formatReal(f float64) string {
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".eE") {
		s += ".0"
	}
	return s
}
