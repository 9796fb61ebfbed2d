package nodesched

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"strconv"

	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/config"
)

// CollectionFromWire turns one collection of a PKT_DSPEC (MS-FSCMT 2.2.2.3)
// back into a parsed MS-FSCCFG collection. The dictionary is written out as a
// DomainSpecification element and parsed by the config package, so the
// collection a node scheduler crawls with is validated by exactly the rules
// `trawl config check` applies. Attrib types come from the definition table
// (a boolean travels as an integer); parameters the table does not know keep
// the type they travelled with.
func CollectionFromWire(c *cmt.Collection) (*config.Collection, error) {
	doc, err := CollectionXML(c)
	if err != nil {
		return nil, err
	}
	cfg, err := config.Parse("collection "+c.Name+" (CMD_ADM_CONF_ADD)", doc, nil)
	if err != nil {
		// Rule and start URI files live on the machine that wrote the
		// configuration; accept the collection without them.
		cfg2, err2 := config.Parse("collection "+c.Name+" (CMD_ADM_CONF_ADD)", doc, &config.Options{SkipFileChecks: true})
		if err2 != nil {
			return nil, fmt.Errorf("nodesched: %w", err)
		}
		cfg = cfg2
	}
	col := cfg.Collection(c.Name)
	if col == nil {
		return nil, fmt.Errorf("nodesched: collection %q missing after parsing", c.Name)
	}
	return col, nil
}

// CollectionXML writes c as an MS-FSCCFG CrawlerConfig document holding one
// DomainSpecification.
func CollectionXML(c *cmt.Collection) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString("<?xml version=\"1.0\"?>\n<CrawlerConfig>\n<DomainSpecification name=\"")
	xmlText(&b, c.Name)
	b.WriteString("\">\n")
	spec := config.Spec()
	if err := writeParams(&b, spec.Collection, &c.Params); err != nil {
		return nil, err
	}
	for _, group := range []struct {
		elem  string
		def   *config.SectionDef
		items []cmt.Named
	}{{"SubDomain", spec.SubCollection, c.SubDomains}, {"Login", spec.Login, c.Logins}, {"Node", spec.Node, c.Nodes}} {
		for i := range group.items {
			n := &group.items[i]
			fmt.Fprintf(&b, "<%s name=\"", group.elem)
			xmlText(&b, n.Name)
			b.WriteString("\">\n")
			if err := writeParams(&b, group.def, &n.Params); err != nil {
				return nil, fmt.Errorf("nodesched: %s %s: %w", group.elem, n.Name, err)
			}
			fmt.Fprintf(&b, "</%s>\n", group.elem)
		}
	}
	b.WriteString("</DomainSpecification>\n</CrawlerConfig>\n")
	return b.Bytes(), nil
}

func xmlText(b *bytes.Buffer, s string) { _ = xml.EscapeText(b, []byte(s)) }

func writeParams(b *bytes.Buffer, def *config.SectionDef, p *cmt.Params) error {
	for _, a := range p.Attribs {
		var pd *config.ParamDef
		if def != nil {
			pd = def.Param(a.Name)
			if pd == nil {
				pd = def.AnyParam
			}
		}
		typ := wireType(a.Type)
		if pd != nil {
			typ = pd.Type
		}
		b.WriteString("<attrib name=\"")
		xmlText(b, a.Name)
		fmt.Fprintf(b, "\" type=\"%s\">", typ)
		switch typ {
		case config.ListString:
			vals := a.List
			if a.Type != cmt.AttribListString {
				vals = []string{scalarText(a)}
			}
			for _, m := range vals {
				b.WriteString("<member>")
				xmlText(b, m)
				b.WriteString("</member>")
			}
		case config.Boolean:
			v := false
			switch a.Type {
			case cmt.AttribString:
				v = a.Str == "yes" || a.Str == "1" || a.Str == "true"
			case cmt.AttribReal:
				v = a.Real != 0
			default:
				v = a.Int != 0
			}
			if v {
				b.WriteString("yes")
			} else {
				b.WriteString("no")
			}
		default:
			xmlText(b, scalarText(a))
		}
		b.WriteString("</attrib>\n")
	}
	for i := range p.Sections {
		s := &p.Sections[i]
		var sd *config.SectionDef
		if def != nil {
			sd = def.Section(s.Name)
			if sd == nil {
				sd = def.AnySection
			}
		}
		b.WriteString("<section name=\"")
		xmlText(b, s.Name)
		b.WriteString("\">\n")
		if err := writeParams(b, sd, &s.Params); err != nil {
			return fmt.Errorf("section %s: %w", s.Name, err)
		}
		b.WriteString("</section>\n")
	}
	return nil
}

func wireType(t cmt.AttribType) config.Type {
	switch t {
	case cmt.AttribInteger:
		return config.Integer
	case cmt.AttribBoolean:
		return config.Boolean
	case cmt.AttribReal:
		return config.Real
	case cmt.AttribListString:
		return config.ListString
	}
	return config.String
}

func scalarText(a cmt.Attrib) string {
	switch a.Type {
	case cmt.AttribInteger, cmt.AttribBoolean:
		return strconv.FormatInt(a.Int, 10)
	case cmt.AttribReal:
		return strconv.FormatFloat(a.Real, 'f', -1, 64)
	case cmt.AttribListString:
		if len(a.List) > 0 {
			return a.List[0]
		}
		return ""
	}
	return a.Str
}
