package config

import (
	"sort"
	"strings"
)

// Type is the data type of a configuration parameter (MS-FSCCFG 2.3.2,
// ST_type).
type Type int

// The five ST_type values.
const (
	String Type = iota + 1
	Integer
	Real
	Boolean
	ListString
)

// String returns the ST_type spelling of t ("list-string" and so on).
func (t Type) String() string {
	switch t {
	case String:
		return "string"
	case Integer:
		return "integer"
	case Real:
		return "real"
	case Boolean:
		return "boolean"
	case ListString:
		return "list-string"
	}
	return "invalid"
}

// parseType maps an ST_type spelling to a Type.
func parseType(s string) (Type, bool) {
	for _, t := range []Type{String, Integer, Real, Boolean, ListString} {
		if s == t.String() {
			return t, true
		}
	}
	return 0, false
}

// ParamDef defines one configuration parameter (one attrib name) in one
// scope. The same name may have different definitions in different sections
// (top-level max_doc and limits/max_doc, for instance).
type ParamDef struct {
	// Name is the canonical name, written by the writer.
	Name string
	// Aliases are other spellings accepted on input (the spec's own
	// misspellings, for instance).
	Aliases []string
	Type    Type
	// Default is the default as text (list-string defaults are members
	// separated by commas, as the spec writes them). It is meaningful only
	// when HasDefault is set; the spec's "N/A" means no default.
	Default    string
	HasDefault bool
	// SpecDefault is the default exactly as the specification's table
	// prints it, for the reference documentation.
	SpecDefault string
	// Min and Max bound integer and real values when HasMin/HasMax are set.
	Min, Max       float64
	HasMin, HasMax bool
	// Enum lists the valid values of a string (or of each member of a
	// list-string); matching is case-insensitive and the value is stored
	// in the spelling given here.
	Enum []string
	// Meaning is the specification's description.
	Meaning string
	// Note is trawl's own remark (how a typo or an unclear default is
	// handled), shown in the reference.
	Note string
	// Honoured tells whether the crawl uses this parameter yet; trawl
	// config check warns when a file sets a parameter that is not.
	Honoured bool
	// Ignored, when set, says why trawl accepts the parameter and will
	// not use it (it has no equivalent in trawl); the warning says so.
	Ignored string
	// Spec is the section of MS-FSCCFG defining the parameter.
	Spec string
	// check validates a scalar value or each member of a list (after the
	// type and range checks).
	check func(cx *checkContext, s string) error
}

// SectionDef defines a section: its fixed parameters, its fixed child
// sections, and for sections whose attrib or child-section names are chosen
// by the user (passwd, feeding, ...) a template for those.
type SectionDef struct {
	// Name is the canonical section name; empty for a template of
	// user-named sections.
	Name    string
	Aliases []string
	Meaning string
	Spec    string
	Params  []*ParamDef
	// Sections are the child sections with fixed names.
	Sections []*SectionDef
	// AnyParam, when set, accepts attribs with any name that passes
	// anyParamName; its Name is a placeholder such as "<status code>".
	AnyParam     *ParamDef
	anyParamName func(string) (string, error)
	// AnySection, when set, accepts child sections with any name that
	// passes anySectionName.
	AnySection     *SectionDef
	anySectionName func(string) error
	// MinSections is the minimum number of user-named child sections.
	MinSections int
	// Rules marks a filter rule section (include_domains and so on).
	Rules RuleScope
	// foldNames lower-cases attrib names before lookup (http_errors 4XX).
	foldNames bool
	// Merge tells how Effective combines this section across layers.
	replaceWhole bool
}

// RuleScope says what a filter rule section matches.
type RuleScope int

// Rule scopes.
const (
	NotRules RuleScope = iota
	DomainRules
	URIRules
)

// Param returns the definition of the fixed parameter named name (or one of
// its aliases), or nil.
func (d *SectionDef) Param(name string) *ParamDef {
	if d.foldNames {
		name = strings.ToLower(name)
	}
	for _, p := range d.Params {
		if p.Name == name {
			return p
		}
	}
	for _, p := range d.Params {
		for _, a := range p.Aliases {
			if a == name {
				return p
			}
		}
	}
	return nil
}

// Section returns the definition of the fixed child section named name (or
// one of its aliases), or nil.
func (d *SectionDef) Section(name string) *SectionDef {
	for _, s := range d.Sections {
		if s.Name == name {
			return s
		}
	}
	for _, s := range d.Sections {
		for _, a := range s.Aliases {
			if a == name {
				return s
			}
		}
	}
	return nil
}

// names returns every name accepted in the section (parameters, sections,
// aliases), for "did you mean" suggestions.
func (d *SectionDef) names() []string {
	var out []string
	for _, p := range d.Params {
		out = append(out, p.Name)
		out = append(out, p.Aliases...)
	}
	for _, s := range d.Sections {
		out = append(out, s.Name)
	}
	sort.Strings(out)
	return out
}

// Schema is the whole definition table of MS-FSCCFG: the scopes in which
// attribs and sections may appear. It is built once and never modified.
type Schema struct {
	// Collection is the DomainSpecification scope (2.2.3, 2.2.4).
	Collection *SectionDef
	// SubCollection is a SubDomain element or a section of subdomains
	// (2.2.4.33, 2.2.5).
	SubCollection *SectionDef
	// Login is a Login element or a section of logins (2.2.4.31, 2.2.6).
	Login *SectionDef
	// Node is a Node element (2.2.7).
	Node *SectionDef
}

// Spec returns the definition table. Callers must not modify it.
func Spec() *Schema { return theSchema }

var theSchema = buildSchema()

// sectionPaths maps a fixed section name to the paths where it is defined,
// for hints ("fwdlinks belongs in section crawlmode").
func (s *Schema) paramHomes(name string) []string {
	var homes []string
	seen := map[*SectionDef]bool{}
	var walk func(d *SectionDef, path string)
	walk = func(d *SectionDef, path string) {
		if seen[d] {
			return
		}
		seen[d] = true
		if path != "" && d.Param(name) != nil {
			homes = append(homes, path)
		}
		for _, c := range d.Sections {
			p := c.Name
			if path != "" {
				p = path + "/" + c.Name
			}
			walk(c, p)
		}
	}
	walk(s.Collection, "")
	return homes
}
