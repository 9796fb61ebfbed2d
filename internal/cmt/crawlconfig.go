package cmt

import (
	"fmt"

	"github.com/trawl/trawl/internal/marshal"
)

// CrawlConfig is the crawl configuration structure of 2.2.2.3: every crawl
// collection's configuration, keyed on the wire by the collection name (the
// DomainSpecification name of MS-FSCCFG). It is the PKT_DSPEC of
// CMD_ADM_CONF_ADD/UPDATE and the PKT_DATA of PPDUP_SET_CONFIG (where each
// collection carries only its ppdup section, example 4.5).
//
// On the wire:
//
//	{ collection: { attrib: value, ..., section: {...}, ...,
//	                "subdomains": {name: {...}}, "logins": {name: {...}}, "nodes": {name: {...}} } }
//
// The encoder writes attribs, then sections, then subdomains, logins and
// nodes, each in slice order; the decoder accepts any order.
type CrawlConfig struct {
	Collections []Collection
}

// Collection is one crawl collection's configuration.
type Collection struct {
	Name string
	Params
	SubDomains []Named // SubDomain elements, under "subdomains"
	Logins     []Named // Login elements, under "logins"
	Nodes      []Named // Node elements, under "nodes"
}

// Named is a SubDomain, Login or Node element: a name and its parameters.
type Named struct {
	Name string
	Params
}

// Section is a section element: a name and its parameters. Sections nest.
type Section struct {
	Name string
	Params
}

// Params are the attribs and sections of one dictionary.
type Params struct {
	Attribs  []Attrib
	Sections []Section
}

// AttribType is the type attribute of an attrib element (2.2.2.3.2).
type AttribType uint8

// Attrib types. On the wire a boolean is an integer, so a decoded boolean
// comes back as AttribInteger.
const (
	AttribInteger    AttribType = iota + 1 // Int
	AttribString                           // Str
	AttribListString                       // List
	AttribBoolean                          // Int: 1 true, 0 false
	AttribReal                             // Real
)

func (t AttribType) String() string {
	switch t {
	case AttribInteger:
		return "integer"
	case AttribString:
		return "string"
	case AttribListString:
		return "list-string"
	case AttribBoolean:
		return "boolean"
	case AttribReal:
		return "real"
	}
	return fmt.Sprintf("AttribType(%d)", uint8(t))
}

// Attrib is one configuration parameter; the field its Type names holds
// the value.
type Attrib struct {
	Name string
	Type AttribType
	Int  int64
	Str  string
	List []string
	Real float64
}

// IntAttrib, StrAttrib, ListAttrib, BoolAttrib and RealAttrib build attribs.
func IntAttrib(name string, v int64) Attrib { return Attrib{Name: name, Type: AttribInteger, Int: v} }
func StrAttrib(name, v string) Attrib       { return Attrib{Name: name, Type: AttribString, Str: v} }
func ListAttrib(name string, v ...string) Attrib {
	return Attrib{Name: name, Type: AttribListString, List: v}
}
func BoolAttrib(name string, v bool) Attrib {
	a := Attrib{Name: name, Type: AttribBoolean}
	if v {
		a.Int = 1
	}
	return a
}
func RealAttrib(name string, v float64) Attrib { return Attrib{Name: name, Type: AttribReal, Real: v} }

// Attrib returns the attrib called name.
func (p *Params) Attrib(name string) (Attrib, bool) {
	for _, a := range p.Attribs {
		if a.Name == name {
			return a, true
		}
	}
	return Attrib{}, false
}

// Section returns the section called name.
func (p *Params) Section(name string) (*Section, bool) {
	for i := range p.Sections {
		if p.Sections[i].Name == name {
			return &p.Sections[i], true
		}
	}
	return nil, false
}

// Collection returns the collection called name.
func (c *CrawlConfig) Collection(name string) (*Collection, bool) {
	for i := range c.Collections {
		if c.Collections[i].Name == name {
			return &c.Collections[i], true
		}
	}
	return nil, false
}

// Reserved keys of a collection dictionary (2.2.2.3.1).
const (
	keySubDomains = "subdomains"
	keyLogins     = "logins"
	keyNodes      = "nodes"
	// LinkExtractionSection is the section whose attrib names travel as
	// the integer keys of LinkExtractionKey (2.2.2.3.3).
	LinkExtractionSection = "link_extraction"
)

// linkExtractionKeys maps the attrib names of the link_extraction section
// to their integer dictionary keys (2.2.2.3.3).
var linkExtractionKeys = [...]struct {
	name string
	key  int64
}{
	{"a", 0x1}, {"action", 0x2}, {"area", 0x4}, {"comment", 0x10}, {"frame", 0x20}, {"go", 0x40},
	{"img", 0x80}, {"layer", 0x100}, {"link", 0x200}, {"meta", 0x400}, {"script", 0x800},
	{"script_java", 0x1000}, {"style", 0x2000}, {"object", 0x4000}, {"meta_refresh", 0x8000},
	{"embed", 0x100000}, {"card", 0x400000},
}

// LinkExtractionKey returns the integer dictionary key of a link_extraction
// attrib name (2.2.2.3.3).
func LinkExtractionKey(name string) (int64, bool) {
	for _, e := range linkExtractionKeys {
		if e.name == name {
			return e.key, true
		}
	}
	return 0, false
}

// LinkExtractionName returns the link_extraction attrib name of an integer
// dictionary key.
func LinkExtractionName(key int64) (string, bool) {
	for _, e := range linkExtractionKeys {
		if e.key == key {
			return e.name, true
		}
	}
	return "", false
}

// Value returns the configuration as the dictionary of 2.2.2.3. It fails on
// an attrib of unknown type or an unknown link_extraction attrib name.
func (c *CrawlConfig) Value() (marshal.Dict, error) {
	d := make(marshal.Dict, 0, len(c.Collections))
	for i := range c.Collections {
		col := &c.Collections[i]
		v, err := col.Params.value(col.Name, false)
		if err != nil {
			return nil, err
		}
		for _, g := range []struct {
			key   string
			items []Named
		}{{keySubDomains, col.SubDomains}, {keyLogins, col.Logins}, {keyNodes, col.Nodes}} {
			if g.items == nil {
				continue
			}
			sub := make(marshal.Dict, 0, len(g.items))
			for _, n := range g.items {
				nv, err := n.Params.value(col.Name+"/"+g.key+"/"+n.Name, false)
				if err != nil {
					return nil, err
				}
				sub = append(sub, marshal.Pair{Key: str(n.Name), Value: nv})
			}
			v = append(v, marshal.Pair{Key: str(g.key), Value: sub})
		}
		d = append(d, marshal.Pair{Key: str(col.Name), Value: v})
	}
	return d, nil
}

func (p *Params) value(path string, linkExtraction bool) (marshal.Dict, error) {
	d := make(marshal.Dict, 0, len(p.Attribs)+len(p.Sections))
	for _, a := range p.Attribs {
		var key marshal.Value = str(a.Name)
		if linkExtraction {
			k, ok := LinkExtractionKey(a.Name)
			if !ok {
				return nil, fmt.Errorf("cmt: crawl configuration %s: unknown link_extraction attrib %q", path, a.Name)
			}
			key = marshal.Int(k)
		}
		var v marshal.Value
		switch a.Type {
		case AttribInteger:
			v = marshal.Int(a.Int)
		case AttribBoolean:
			v = boolInt(a.Int != 0)
		case AttribString:
			v = str(a.Str)
		case AttribListString:
			v = stringList(a.List)
		case AttribReal:
			v = marshal.Float(a.Real)
		default:
			return nil, fmt.Errorf("cmt: crawl configuration %s: attrib %q has no type", path, a.Name)
		}
		d = append(d, marshal.Pair{Key: key, Value: v})
	}
	for _, s := range p.Sections {
		sv, err := s.Params.value(path+"/"+s.Name, s.Name == LinkExtractionSection)
		if err != nil {
			return nil, err
		}
		d = append(d, marshal.Pair{Key: str(s.Name), Value: sv})
	}
	return d, nil
}

// CrawlConfigFromValue converts the dictionary of 2.2.2.3.
func CrawlConfigFromValue(v marshal.Value) (CrawlConfig, error) {
	var c CrawlConfig
	d, err := asDict(v, "crawl configuration")
	if err != nil {
		return c, err
	}
	for _, p := range d {
		name, err := asString(p.Key, "crawl configuration collection name")
		if err != nil {
			return c, err
		}
		cd, err := asDict(p.Value, "crawl configuration "+name)
		if err != nil {
			return c, err
		}
		col := Collection{Name: name}
		var rest marshal.Dict
		for _, q := range cd {
			k, isStr := keyString(q.Key)
			var dst *[]Named
			switch {
			case isStr && k == keySubDomains:
				dst = &col.SubDomains
			case isStr && k == keyLogins:
				dst = &col.Logins
			case isStr && k == keyNodes:
				dst = &col.Nodes
			default:
				rest = append(rest, q)
				continue
			}
			sub, err := asDict(q.Value, "crawl configuration "+name+"/"+k)
			if err != nil {
				return c, err
			}
			*dst = make([]Named, 0, len(sub))
			for _, e := range sub {
				n, err := asString(e.Key, "crawl configuration "+name+"/"+k+" name")
				if err != nil {
					return c, err
				}
				nd, err := asDict(e.Value, "crawl configuration "+name+"/"+k+"/"+n)
				if err != nil {
					return c, err
				}
				np, err := paramsFromDict(nd, name+"/"+k+"/"+n, false)
				if err != nil {
					return c, err
				}
				*dst = append(*dst, Named{Name: n, Params: np})
			}
		}
		if col.Params, err = paramsFromDict(rest, name, false); err != nil {
			return c, err
		}
		c.Collections = append(c.Collections, col)
	}
	return c, nil
}

func keyString(k marshal.Value) (string, bool) {
	switch x := k.(type) {
	case marshal.Bytes:
		return string(x), true
	case marshal.Unicode:
		return string(x), true
	}
	return "", false
}

func paramsFromDict(d marshal.Dict, path string, linkExtraction bool) (Params, error) {
	var p Params
	for _, e := range d {
		name, ok := keyString(e.Key)
		if !ok {
			i, isInt := e.Key.(marshal.Int)
			if !isInt || !linkExtraction {
				return p, fmt.Errorf("cmt: crawl configuration %s: key of type %s", path, kindOf(e.Key))
			}
			if name, ok = LinkExtractionName(int64(i)); !ok {
				return p, fmt.Errorf("cmt: crawl configuration %s: unknown link_extraction key 0x%x", path, int64(i))
			}
		}
		what := "crawl configuration " + path + "/" + name
		switch x := e.Value.(type) {
		case marshal.Dict:
			sp, err := paramsFromDict(x, path+"/"+name, name == LinkExtractionSection)
			if err != nil {
				return p, err
			}
			p.Sections = append(p.Sections, Section{Name: name, Params: sp})
		case marshal.Int, marshal.Bool:
			i, _ := asInt(x, what)
			p.Attribs = append(p.Attribs, IntAttrib(name, i))
		case marshal.Bytes, marshal.Unicode:
			s, _ := asString(x, what)
			p.Attribs = append(p.Attribs, StrAttrib(name, s))
		case marshal.Float:
			p.Attribs = append(p.Attribs, RealAttrib(name, float64(x)))
		case marshal.List, marshal.Tuple:
			l, err := asStringList(x, what)
			if err != nil {
				return p, err
			}
			if len(l) == 0 {
				l = nil
			}
			p.Attribs = append(p.Attribs, ListAttrib(name, l...))
		default:
			return p, fieldError(what, "value of type %s", kindOf(e.Value))
		}
	}
	return p, nil
}
