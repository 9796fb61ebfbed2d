// Package cmtconfig converts between a parsed MS-FSCCFG collection
// (internal/config) and the MS-FSCMT crawl configuration structure of
// MS-FSCMT 2.2.2.3 (internal/cmt) that CMD_ADM_CONF_ADD and
// PPDUP_SET_CONFIG carry. It lives beside the wire package so that the
// configuration model imports no wire format.
package cmtconfig

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
)

// CrawlConfig returns a collection as the MS-FSCMT crawl configuration
// structure of 2.2.2.3, ready for CMD_ADM_CONF_ADD: every parameter the
// file set (defaults are not sent; the receiver applies the same table),
// sections as nested dictionaries, SubDomain, Login and Node elements under
// "subdomains", "logins" and "nodes".
func CrawlConfig(c *config.Collection) cmt.Collection {
	out := cmt.Collection{Name: c.Name, Params: cmtParams(c.Root)}
	for _, s := range c.SubCollections {
		out.SubDomains = append(out.SubDomains, cmt.Named{Name: s.Name, Params: cmtParams(s)})
	}
	for _, s := range c.Logins {
		out.Logins = append(out.Logins, cmt.Named{Name: s.Name, Params: cmtParams(s)})
	}
	for _, s := range c.Nodes {
		out.Nodes = append(out.Nodes, cmt.Named{Name: s.Name, Params: cmtParams(s)})
	}
	return out
}

// PPDUPConfig returns a collection's ppdup section as PPDUP_SET_CONFIG
// carries it (MS-FSCMT 3.1.5.11: only the ppdup section).
func PPDUPConfig(c *config.Collection) cmt.Collection {
	out := cmt.Collection{Name: c.Name}
	if s := c.Root.Child("ppdup"); s != nil {
		out.Params = cmtParams(s)
	}
	return out
}

func cmtParams(s *config.Section) cmt.Params {
	var p cmt.Params
	if s == nil {
		return p
	}
	for _, prm := range s.Params {
		if !prm.Set {
			continue
		}
		v := prm.Value
		switch v.Type {
		case config.Integer:
			p.Attribs = append(p.Attribs, cmt.IntAttrib(prm.Name, v.Int))
		case config.Real:
			p.Attribs = append(p.Attribs, cmt.RealAttrib(prm.Name, v.Real))
		case config.Boolean:
			p.Attribs = append(p.Attribs, cmt.BoolAttrib(prm.Name, v.Bool))
		case config.ListString:
			p.Attribs = append(p.Attribs, cmt.ListAttrib(prm.Name, append([]string(nil), v.List...)...))
		default:
			p.Attribs = append(p.Attribs, cmt.StrAttrib(prm.Name, v.Text))
		}
	}
	for _, child := range s.Sections {
		p.Sections = append(p.Sections, cmt.Section{Name: child.Name, Params: cmtParams(child)})
	}
	return p
}

// FromCrawlConfig rebuilds a collection from the MS-FSCMT crawl
// configuration structure (a node scheduler receiving CMD_ADM_CONF_ADD).
// It writes the structure as MS-FSCCFG XML and parses that, so the
// received configuration gets exactly the validation and defaults of a
// file; name is used in error messages. Booleans arrive as integers (the
// wire has no boolean type) and are restored from the definition table.
func FromCrawlConfig(name string, col cmt.Collection, opts *config.Options) (*config.Collection, error) {
	if err := checkCarried(col); err != nil {
		return nil, fmt.Errorf("config: %s: %w", name, err)
	}
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<CrawlerConfig>\n")
	fmt.Fprintf(&b, "<DomainSpecification name=%s>\n", xmlAttr(col.Name))
	sch := config.Spec()
	writeCMTParams(&b, sch.Collection, col.Params)
	for _, n := range col.SubDomains {
		fmt.Fprintf(&b, "<SubDomain name=%s>\n", xmlAttr(n.Name))
		writeCMTParams(&b, sch.SubCollection, n.Params)
		b.WriteString("</SubDomain>\n")
	}
	for _, n := range col.Logins {
		fmt.Fprintf(&b, "<Login name=%s>\n", xmlAttr(n.Name))
		writeCMTParams(&b, sch.Login, n.Params)
		b.WriteString("</Login>\n")
	}
	for _, n := range col.Nodes {
		fmt.Fprintf(&b, "<Node name=%s>\n", xmlAttr(n.Name))
		writeCMTParams(&b, sch.Node, n.Params)
		b.WriteString("</Node>\n")
	}
	b.WriteString("</DomainSpecification>\n</CrawlerConfig>\n")
	cfg, err := config.Parse(name, b.Bytes(), opts)
	if err != nil {
		return nil, err
	}
	if len(cfg.Collections) != 1 {
		return nil, fmt.Errorf("cmtconfig: %s: want one collection, got %d", name, len(cfg.Collections))
	}
	return cfg.Collections[0], nil
}

func writeCMTParams(b *bytes.Buffer, def *config.SectionDef, p cmt.Params) {
	for _, a := range p.Attribs {
		typ := a.Type.String()
		text := ""
		switch a.Type {
		case cmt.AttribInteger, cmt.AttribBoolean:
			text = strconv.FormatInt(a.Int, 10)
			if pd := paramDef(def, a.Name); a.Type == cmt.AttribBoolean || (pd != nil && pd.Type == config.Boolean) {
				typ = "boolean"
				text = "no"
				if a.Int != 0 {
					text = "yes"
				}
			}
		case cmt.AttribReal:
			typ = "real"
			text = strconv.FormatFloat(a.Real, 'f', -1, 64)
			if pd := paramDef(def, a.Name); pd != nil && pd.Type == config.Integer && a.Real == float64(int64(a.Real)) {
				typ, text = "integer", strconv.FormatInt(int64(a.Real), 10)
			}
		case cmt.AttribString:
			text = a.Str
		case cmt.AttribListString:
			fmt.Fprintf(b, "<attrib name=%s type=\"list-string\">", xmlAttr(a.Name))
			for _, m := range a.List {
				b.WriteString("<member>")
				xml.EscapeText(b, []byte(m))
				b.WriteString("</member>")
			}
			b.WriteString("</attrib>\n")
			continue
		}
		fmt.Fprintf(b, "<attrib name=%s type=%q>", xmlAttr(a.Name), typ)
		xml.EscapeText(b, []byte(text))
		b.WriteString("</attrib>\n")
	}
	for _, s := range p.Sections {
		fmt.Fprintf(b, "<section name=%s>\n", xmlAttr(s.Name))
		var child *config.SectionDef
		if def != nil {
			if child = def.Section(s.Name); child == nil {
				child = def.AnySection
			}
		}
		writeCMTParams(b, child, s.Params)
		b.WriteString("</section>\n")
	}
}

func paramDef(def *config.SectionDef, name string) *config.ParamDef {
	if def == nil {
		return nil
	}
	if pd := def.Param(name); pd != nil {
		return pd
	}
	return def.AnyParam
}

// checkCarried refuses a configuration holding text that the XML it is
// rewritten as cannot carry unchanged: names with white space around them
// (carriedName), bytes that are not UTF-8, and
// characters outside XML 1.0's Char production (the control characters
// other than tab, line feed and carriage return, U+FFFE, U+FFFF), which
// encoding/xml would replace by U+FFFD. Such a name or value would be
// applied silently changed (a collection under another name).
func checkCarried(col cmt.Collection) error {
	if err := carriedName("collection name", col.Name); err != nil {
		return err
	}
	if err := carriedParams(col.Params); err != nil {
		return err
	}
	for _, list := range []struct {
		what string
		els  []cmt.Named
	}{{"SubDomain", col.SubDomains}, {"Login", col.Logins}, {"Node", col.Nodes}} {
		for _, n := range list.els {
			if err := carriedName(list.what+" name", n.Name); err != nil {
				return err
			}
			if err := carriedParams(n.Params); err != nil {
				return err
			}
		}
	}
	return nil
}

func carriedParams(p cmt.Params) error {
	for _, a := range p.Attribs {
		if err := carriedName("attrib name", a.Name); err != nil {
			return err
		}
		if err := carried("value of "+config.Clip(a.Name), a.Str); err != nil {
			return err
		}
		for _, m := range a.List {
			if err := carried("member of "+config.Clip(a.Name), m); err != nil {
				return err
			}
		}
	}
	for _, s := range p.Sections {
		if err := carriedName("section name", s.Name); err != nil {
			return err
		}
		if err := carriedParams(s.Params); err != nil {
			return err
		}
	}
	return nil
}

// carriedName is carried for a name, which a configuration file trims of
// white space: a received name with white space around it would be
// applied as another name (values are trimmed as in a file).
func carriedName(what, s string) error {
	if strings.TrimSpace(s) != s {
		return fmt.Errorf("%s %q has white space around it", what, config.Clip(s))
	}
	return carried(what, s)
}

// carried returns an error naming what when s holds text XML cannot carry.
func carried(what, s string) error {
	if !utf8.ValidString(s) {
		return fmt.Errorf("%s %q is not UTF-8", what, config.Clip(s))
	}
	for _, r := range s {
		if !xmlChar(r) {
			return fmt.Errorf("%s %q holds %U, which XML cannot carry", what, config.Clip(s), r)
		}
	}
	return nil
}

// xmlChar is XML 1.0's Char production (2.2).
func xmlChar(r rune) bool {
	return r == 0x09 || r == 0x0A || r == 0x0D ||
		r >= 0x20 && r <= 0xD7FF ||
		r >= 0xE000 && r <= 0xFFFD ||
		r >= 0x10000 && r <= 0x10FFFF
}

func xmlAttr(s string) string {
	var b bytes.Buffer
	b.WriteByte('"')
	xml.EscapeText(&b, []byte(s))
	b.WriteByte('"')
	return b.String()
}
