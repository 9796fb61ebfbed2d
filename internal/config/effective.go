package config

import (
	"sort"
	"strconv"
	"strings"
)

// Effective is the configuration that applies to one URI on one node
// scheduler: the layers of the collection resolved in precedence order
// (docs/decisions/subcollections.md):
//
//  1. the Node element of the node scheduler, if any;
//  2. the subcollection the URI belongs to, if any;
//  3. the collection itself;
//  4. the specification's defaults.
//
// Each parameter, including each parameter inside a section, is taken from
// the highest layer that sets it. Filter rule sections (include_domains,
// exclude_domains, include_uris, exclude_uris) are never merged: Scope takes
// each from the Node or the collection, and the subcollection's own rules
// only decide membership (SubScope).
type Effective struct {
	Collection *Collection
	// SubCollection is the subcollection in effect, or nil.
	SubCollection *Section
	// Node is the node's override section, or nil.
	Node   *Section
	layers []*Section
}

// MembershipFunc reports whether uri matches a subcollection's scope. The
// filter package supplies the real matcher; config only carries the rules.
type MembershipFunc func(s Scope, uri string) bool

// Top returns the collection's configuration without subcollection or node
// overrides.
func (c *Collection) Top() *Effective { return c.Effective("", "") }

// Effective returns the configuration of subcollection sub (or none when
// sub is "" or unknown) on node (none when "" or without a Node element).
func (c *Collection) Effective(sub, node string) *Effective {
	e := &Effective{Collection: c, SubCollection: c.SubCollection(sub), Node: c.Node(node)}
	if e.Node != nil {
		e.layers = append(e.layers, e.Node)
	}
	if e.SubCollection != nil {
		e.layers = append(e.layers, e.SubCollection)
	}
	e.layers = append(e.layers, c.Root)
	return e
}

// For returns the configuration for uri on node: the first subcollection
// (in document order) whose own scope contains uri, as decided by in,
// applies. A nil in means no subcollection applies.
func (c *Collection) For(uri, node string, in MembershipFunc) *Effective {
	if in != nil {
		for _, s := range c.SubCollections {
			if in(scopeOf(s, c.Dir), uri) {
				return c.Effective(s.Name, node)
			}
		}
	}
	return c.Effective("", node)
}

// SubScope returns the rules deciding membership of a subcollection.
func (c *Collection) SubScope(sub *Section) Scope { return scopeOf(sub, c.Dir) }

// defIn returns the definition of parameter name in the section at the
// path names, or nil.
func defIn(root *SectionDef, names []string, name string) *ParamDef {
	d := root
	for _, s := range names {
		nd := d.Section(s)
		if nd == nil {
			nd = d.AnySection
		}
		if nd == nil {
			return nil
		}
		d = nd
	}
	if pd := d.Param(name); pd != nil {
		return pd
	}
	if d.AnyParam != nil {
		if _, err := d.anyParamName(name); err == nil {
			return d.AnyParam
		}
	}
	return nil
}

// sectionAt walks from s down the section names.
func sectionAt(s *Section, names []string) *Section {
	for _, n := range names {
		s = s.Child(n)
		if s == nil {
			return nil
		}
	}
	return s
}

// Param returns the parameter at path ("delay", "crawlmode/mode",
// "http_errors/404"): from the highest layer that sets it, else the
// default (Set false), or nil when no definition exists for path.
func (e *Effective) Param(path string) *Param {
	parts := strings.Split(path, "/")
	return e.paramIn(parts[:len(parts)-1], parts[len(parts)-1])
}

// paramIn looks up parameter name in the section at the path names (name
// may contain "/", as a passwd URI does).
func (e *Effective) paramIn(names []string, name string) *Param {
	for _, l := range e.layers {
		if s := sectionAt(l, names); s != nil {
			if p := s.Get(name); p != nil {
				return p
			}
		}
	}
	d := defIn(Spec().Collection, names, name)
	if d == nil {
		return nil
	}
	p := defaultParam(d)
	if d.isTemplate() {
		p.Name = name
	}
	return p
}

// isTemplate reports whether d is the template of user-named attribs.
func (d *ParamDef) isTemplate() bool { return strings.HasPrefix(d.Name, "<") }

// Int returns an integer parameter (0 when unset without default).
func (e *Effective) Int(path string) int {
	if p := e.Param(path); p != nil {
		return int(p.Value.Int)
	}
	return 0
}

// Real returns a real parameter (0 when unset without default).
func (e *Effective) Real(path string) float64 {
	if p := e.Param(path); p != nil {
		return p.Value.Real
	}
	return 0
}

// Bool returns a boolean parameter.
func (e *Effective) Bool(path string) bool {
	if p := e.Param(path); p != nil {
		return p.Value.Bool
	}
	return false
}

// Str returns a string parameter ("" when unset without default).
func (e *Effective) Str(path string) string {
	if p := e.Param(path); p != nil {
		return p.Value.Text
	}
	return ""
}

// List returns a copy of a list-string parameter.
func (e *Effective) List(path string) []string {
	if p := e.Param(path); p != nil && len(p.Value.List) > 0 {
		return append([]string(nil), p.Value.List...)
	}
	return nil
}

// Has reports whether the parameter at path has a value (set or default).
func (e *Effective) Has(path string) bool { return e.Param(path).HasValue() }

// Section returns the section at path from the highest layer that has it
// (whole, not merged), or nil.
func (e *Effective) Section(path string) *Section {
	for _, l := range e.layers {
		if s := sectionAt(l, strings.Split(path, "/")); s != nil {
			return s
		}
	}
	return nil
}

// Params returns every parameter of the section at path, merged across
// layers by name: the fixed parameters in definition order (set or
// defaulted), then user-named ones sorted by name.
func (e *Effective) Params(path string) []*Param {
	d := Spec().Collection
	names := strings.Split(path, "/")
	for _, n := range names {
		nd := d.Section(n)
		if nd == nil {
			nd = d.AnySection
		}
		if nd == nil {
			return nil
		}
		d = nd
	}
	var out []*Param
	for _, pd := range d.Params {
		out = append(out, e.paramIn(names, pd.Name))
	}
	seen := map[string]bool{}
	var extra []string
	for _, l := range e.layers {
		s := sectionAt(l, names)
		if s == nil {
			continue
		}
		for _, p := range s.Params {
			if d.Param(p.Name) == nil && !seen[p.Name] {
				seen[p.Name] = true
				extra = append(extra, p.Name)
			}
		}
	}
	sort.Strings(extra)
	for _, n := range extra {
		out = append(out, e.paramIn(names, n))
	}
	return out
}

// Scope returns the collection's filter rules, each rule section taken
// whole from the Node layer or else the collection.
func (e *Effective) Scope() Scope {
	pick := func(name string) RuleSet {
		if e.Node != nil {
			if s := e.Node.Child(name); s != nil {
				return ruleSet(s, e.Collection.Dir)
			}
		}
		return ruleSet(e.Collection.Root.Child(name), e.Collection.Dir)
	}
	return Scope{
		IncludeDomains: pick("include_domains"),
		ExcludeDomains: pick("exclude_domains"),
		IncludeURIs:    pick("include_uris"),
		ExcludeURIs:    pick("exclude_uris"),
	}
}

// ErrorRule is one entry of http_errors or ftp_errors.
type ErrorRule struct {
	// Code is "404", "4xx", "net", "int" or "ttl".
	Code   string
	Action ErrorAction
}

// ErrorPolicy is the merged http_errors or ftp_errors section.
type ErrorPolicy []ErrorRule

// Lookup returns the action for a status code or condition ("404", "net"):
// an exact code beats a wildcard, and fewer wildcard digits beat more.
func (p ErrorPolicy) Lookup(code string) (ErrorAction, bool) {
	code = strings.ToLower(code)
	best, bestX := -1, 4
	for i, r := range p {
		if len(r.Code) != len(code) {
			continue
		}
		x, ok := 0, true
		for j := 0; j < len(code); j++ {
			switch {
			case r.Code[j] == code[j]:
			case r.Code[j] == 'x' && code[j] >= '0' && code[j] <= '9':
				x++
			default:
				ok = false
			}
		}
		if ok && x < bestX {
			best, bestX = i, x
		}
	}
	if best < 0 {
		return ErrorAction{}, false
	}
	return p[best].Action, true
}

func (e *Effective) errorPolicy(sec string) ErrorPolicy {
	var out ErrorPolicy
	for _, p := range e.Params(sec) {
		if !p.HasValue() {
			continue
		}
		a, err := ParseErrorAction(p.Value.Text)
		if err != nil {
			continue // rejected at parse time
		}
		out = append(out, ErrorRule{Code: p.Name, Action: a})
	}
	return out
}

// HTTPErrors returns the merged http_errors policy (defaults included).
func (e *Effective) HTTPErrors() ErrorPolicy { return e.errorPolicy("http_errors") }

// FTPErrors returns the merged ftp_errors policy (defaults included).
func (e *Effective) FTPErrors() ErrorPolicy { return e.errorPolicy("ftp_errors") }

// Mode returns crawlmode/mode parsed.
func (e *Effective) Mode() CrawlMode {
	m, err := ParseCrawlMode(e.Str("crawlmode/mode"))
	if err != nil {
		return CrawlMode{Full: true, Depth: -1}
	}
	return m
}

// Destination is a feeding content destination.
type Destination struct {
	Name, Collection, Destination string
	Primary, PrimarySet           bool
	Paused                        bool
}

// Feeding returns the content destinations (the feeding section taken
// whole from the highest layer that has it).
func (e *Effective) Feeding() []Destination {
	f := e.Section("feeding")
	if f == nil {
		return nil
	}
	var out []Destination
	for _, s := range f.Sections {
		pr := s.Lookup("primary")
		out = append(out, Destination{
			Name: s.Name, Collection: s.Lookup("collection").Value.Text,
			Destination: s.Lookup("destination").Value.Text,
			Primary:     pr.Value.Bool, PrimarySet: pr.Set,
			Paused: s.Lookup("paused").Value.Bool,
		})
	}
	return out
}

// PriorityLevel is a section of workqueue_priority.
type PriorityLevel struct {
	Level    int
	Share    int
	ShareSet bool
	Scope    Scope
}

// PriorityLevels returns the priority level sections, by level number.
func (e *Effective) PriorityLevels() []PriorityLevel {
	w := e.Section("workqueue_priority")
	if w == nil {
		return nil
	}
	var out []PriorityLevel
	for _, s := range w.Sections {
		n, _ := strconv.Atoi(s.Name)
		sh := s.Lookup("share")
		out = append(out, PriorityLevel{Level: n, Share: int(sh.Value.Int), ShareSet: sh.Set, Scope: scopeOf(s, e.Collection.Dir)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Level < out[j].Level })
	return out
}

// SlotDelay is one variable_delay entry.
type SlotDelay struct {
	Slot    TimeSlot
	Suspend bool
	Delay   float64
}

// VariableDelays returns the variable_delay slots, merged by slot name.
func (e *Effective) VariableDelays() []SlotDelay {
	var out []SlotDelay
	for _, p := range e.Params("variable_delay") {
		ts, err := ParseTimeSlot(p.Name)
		if err != nil || !p.Set {
			continue
		}
		sd := SlotDelay{Slot: ts}
		if strings.EqualFold(p.Value.Text, "suspend") {
			sd.Suspend = true
		} else {
			sd.Delay, _ = strconv.ParseFloat(p.Value.Text, 64)
		}
		out = append(out, sd)
	}
	return out
}

// Credential is one passwd entry.
type Credential struct {
	// Name is the URI prefix or realm.
	Name string
	Credentials
}

// Passwd returns the passwd entries (passwords possibly still encrypted:
// use Key.Password).
func (e *Effective) Passwd() []Credential {
	var out []Credential
	for _, p := range e.Params("passwd") {
		if c, err := ParseCredentials(p.Value.Text); err == nil && p.Set {
			out = append(out, Credential{Name: p.Name, Credentials: c})
		}
	}
	return out
}
