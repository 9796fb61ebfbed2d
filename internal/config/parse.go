package config

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Limits of the decoder, checked before anything is allocated for them.
const (
	// MaxFileSize is the largest configuration file accepted.
	MaxFileSize = 16 << 20
	maxDepth    = 32
	maxElements = 1 << 20
	maxText     = 1 << 20
	maxErrors   = 1000
)

// Options tune Parse. The zero value reads referenced files with
// os.ReadFile and does not decrypt passwords.
type Options struct {
	// ReadFile reads files the configuration names (rule files, start URI
	// files), given a path already resolved against the configuration
	// file's directory. Nil means os.ReadFile.
	ReadFile func(path string) ([]byte, error)
	// SkipFileChecks skips reading referenced files.
	SkipFileChecks bool
	// Key, when set, is used to check that every encrypted password
	// decrypts.
	Key *Key
	// Partial parses a partial configuration (MS-FSCADM 2.2.9.3): every
	// value is checked, but not the rules that concern the collection as a
	// whole (a subcollection's scope, required combinations); MergeXML
	// checks those on the merged result.
	Partial bool
}

// ParseFile reads and parses a configuration file. See Parse.
func ParseFile(path string, opts *Options) (*Config, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("config: %s: %w", path, err)
	}
	return Parse(path, data, opts)
}

// Parse parses and validates a configuration; name is used in messages and
// its directory resolves relative paths. It returns every problem of the
// file at once as an ErrorList (each *Error names file, line, collection and
// parameter). When the error is non-nil the Config may be partial and must
// not be used to crawl. Warnings (parameters the crawl does not honour yet,
// settings without effect) are in Config.Warnings.
func Parse(name string, data []byte, opts *Options) (*Config, error) {
	if opts == nil {
		opts = &Options{}
	}
	p := &parser{file: name, cx: &checkContext{dir: filepath.Dir(name), key: opts.Key}}
	if !opts.SkipFileChecks {
		p.cx.readFile = opts.ReadFile
		if p.cx.readFile == nil {
			p.cx.readFile = os.ReadFile
		}
	}
	cfg := &Config{File: name, Dir: filepath.Dir(name)}
	if len(data) > MaxFileSize {
		p.errorf(0, "", "", "file larger than %d bytes", MaxFileSize)
		return cfg, p.errs
	}
	root := p.decode(data)
	if len(p.errs) > 0 {
		return cfg, sortErrors(p.errs)
	}
	names := map[string]int{}
	for _, n := range root.children {
		c := p.collection(n)
		if c == nil {
			continue
		}
		if first, dup := names[c.Name]; dup {
			p.add(&Error{Line: n.line, Collection: c.Name, Msg: fmt.Sprintf("collection defined twice (first at line %d)", first)})
			continue
		}
		names[c.Name] = n.line
		c.Dir = cfg.Dir
		canonicalize(c.Root)
		for _, l := range [][]*Section{c.SubCollections, c.Logins, c.Nodes} {
			for _, s := range l {
				canonicalize(s)
			}
		}
		cfg.Collections = append(cfg.Collections, c)
	}
	for _, c := range cfg.Collections {
		if opts == nil || !opts.Partial {
			p.validate(c)
		}
	}
	cfg.Warnings = sortErrors(p.warns)
	if len(p.errs) > 0 {
		return cfg, sortErrors(p.errs)
	}
	return cfg, nil
}

type parser struct {
	// suggestions counts the did-you-mean searches made, at most
	// maxSuggestions per file.
	suggestions int
	file        string
	cx          *checkContext
	errs        ErrorList
	warns       ErrorList
	// coll is the collection being built (for messages).
	coll string
}

func (p *parser) add(e *Error) {
	e.File = p.file
	if len(p.errs) < maxErrors {
		p.errs = append(p.errs, e)
	}
}

func (p *parser) warn(e *Error) {
	e.File = p.file
	if len(p.warns) < maxErrors {
		p.warns = append(p.warns, e)
	}
}

// maxSuggestions bounds the did-you-mean searches of one file: each costs
// an edit distance against every candidate name.
const maxSuggestions = 100

// suggest is the package's suggest while the file has searches left and
// room for errors.
func (p *parser) suggest(name string, candidates []string) string {
	if p.suggestions >= maxSuggestions || len(p.errs) >= maxErrors {
		return ""
	}
	p.suggestions++
	return suggest(name, candidates)
}

func (p *parser) errorf(line int, param, section, format string, args ...any) {
	p.add(&Error{Line: line, Collection: p.coll, Param: param, Section: section, Msg: fmt.Sprintf(format, args...)})
}

// node is one element of the raw XML tree.
type node struct {
	tag      string
	name     string
	hasName  bool
	typ      string
	hasType  bool
	line     int
	text     []byte
	children []*node
}

// allowed children per element; "" is the document itself.
var allowedChildren = map[string][]string{
	"":                    {"CrawlerConfig"},
	"CrawlerConfig":       {"DomainSpecification"},
	"DomainSpecification": {"attrib", "section", "SubDomain", "Login", "Node"},
	"section":             {"attrib", "section"},
	"SubDomain":           {"attrib", "section"},
	"Login":               {"attrib", "section"},
	"Node":                {"attrib", "section"},
	"attrib":              {"member"},
	"member":              nil,
}

// decode reads the XML into a tree of nodes, reporting XML-level problems.
func (p *parser) decode(data []byte) *node {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = true
	charsetErr := ""
	d.CharsetReader = func(label string, r io.Reader) (io.Reader, error) {
		charsetErr = fmt.Sprintf("encoding %q is not supported: the file must be UTF-8 (MS-FSCCFG section 2)", label)
		return nil, errors.New(charsetErr)
	}
	doc := &node{}
	stack := []*node{doc}
	elements := 0
	rootDone := false
	for {
		line, _ := d.InputPos()
		tok, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				msg := se.Msg
				if strings.Contains(msg, "invalid character entity") {
					msg += " (write a literal & as &amp;)"
				}
				if rootDone && strings.HasPrefix(msg, "unexpected end element") {
					msg += " after the end of CrawlerConfig (stray closing tags)"
				}
				p.errorf(se.Line, "", "", "XML syntax error: %s", msg)
			} else if charsetErr != "" {
				p.errorf(line, "", "", "XML error: %s", charsetErr)
			} else {
				p.errorf(line, "", "", "XML error: %v", err)
			}
			return doc
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case xml.StartElement:
			if rootDone {
				p.errorf(line, "", "", "XML error: element <%s> after the end of CrawlerConfig (a file holds exactly one CrawlerConfig element)", t.Name.Local)
				return doc
			}
			elements++
			if elements > maxElements || len(stack) > maxDepth {
				p.errorf(line, "", "", "XML error: too many or too deeply nested elements")
				return doc
			}
			allowed := allowedChildren[top.tag]
			if !contains(allowed, t.Name.Local) {
				where := "inside <" + top.tag + ">"
				if top.tag == "" {
					where = "as the root element (want <CrawlerConfig>)"
				}
				p.errorf(line, "", "", "unknown element <%s> %s%s", Clip(t.Name.Local), where, p.suggest(t.Name.Local, allowed))
				if err := d.Skip(); err != nil {
					p.errorf(line, "", "", "XML syntax error: %v", err)
					return doc
				}
				continue
			}
			n := &node{tag: t.Name.Local, line: line}
			for _, a := range t.Attr {
				switch {
				case a.Name.Space == "xmlns" || a.Name.Local == "xmlns" && a.Name.Space == "":
				case a.Name.Local == "name" && a.Name.Space == "":
					n.name, n.hasName = strings.TrimSpace(a.Value), true
				case (a.Name.Local == "type" || a.Name.Local == "ST_type") && a.Name.Space == "" && n.tag == "attrib":
					// ST_type is the spelling of MS-FSCCFG 2.2.3's table.
					n.typ, n.hasType = strings.TrimSpace(a.Value), true
				default:
					p.errorf(line, "", "", "unknown XML attribute %q on <%s>", a.Name.Local, n.tag)
				}
			}
			if n.tag != "CrawlerConfig" && n.tag != "member" && !n.hasName {
				p.errorf(line, "", "", "<%s> has no name attribute", n.tag)
			}
			top.children = append(top.children, n)
			stack = append(stack, n)
		case xml.EndElement:
			if len(stack) > 1 {
				stack = stack[:len(stack)-1]
			}
			if len(stack) == 1 {
				rootDone = true
			}
		case xml.CharData:
			if top.tag == "attrib" || top.tag == "member" {
				if len(top.text)+len(t) > maxText {
					p.errorf(line, "", "", "XML error: text longer than %d bytes", maxText)
					return doc
				}
				top.text = append(top.text, t...)
			} else if len(bytes.TrimSpace(t)) > 0 {
				where := "<" + top.tag + ">"
				if top.tag == "" {
					where = "the document"
				}
				l := line + bytes.Count(t[:len(t)-len(bytes.TrimLeft(t, " \t\r\n"))], []byte("\n"))
				p.errorf(l, "", "", "unexpected text %q in %s", abbreviate(string(bytes.TrimSpace(t))), where)
			}
		case xml.Directive:
			p.errorf(line, "", "", "XML error: <!%s> is not allowed", abbreviate(firstWord(string(t))))
			return doc
		case xml.ProcInst, xml.Comment:
		}
	}
	if len(doc.children) == 0 && len(p.errs) == 0 {
		p.errorf(1, "", "", "no CrawlerConfig element")
	}
	if len(doc.children) == 1 {
		return doc.children[0]
	}
	return doc
}

func abbreviate(s string) string {
	if len(s) > 40 {
		s = s[:40]
		for !utf8.ValidString(s) {
			s = s[:len(s)-1]
		}
		s += "..."
	}
	return s
}

func firstWord(s string) string {
	if i := strings.IndexAny(s, " \t\r\n"); i >= 0 {
		return s[:i]
	}
	return s
}

// scope describes where a section is being filled, for messages.
type scope struct {
	path string // "", "crawlmode/", "SubDomain[x]/", ...
	// kind names the container for "not allowed here" messages.
	kind string
}

func (s scope) param(name string) string   { return s.path + name }
func (s scope) section(name string) string { return s.path + name }

// collection builds one DomainSpecification.
func (p *parser) collection(n *node) *Collection {
	if !n.hasName {
		return nil
	}
	p.coll = n.name
	if n.name == "" {
		p.errorf(n.line, "", "", "DomainSpecification has an empty name")
	}
	s := Spec()
	c := &Collection{Name: n.name, Line: n.line, Root: &Section{Def: s.Collection, Line: n.line}}
	named := func(list *[]*Section, def *SectionDef, kind string, child *node, path string) {
		if !child.hasName {
			return
		}
		if child.name == "" {
			p.errorf(child.line, "", kind, "empty name")
			return
		}
		for _, e := range *list {
			if e.Name == child.name {
				p.errorf(child.line, "", path, "defined twice (first at line %d)", e.Line)
				return
			}
		}
		sec := &Section{Def: def, Name: child.name, Line: child.line}
		p.fill(sec, child, scope{path: path + "/", kind: kind})
		*list = append(*list, sec)
	}
	var rootChildren []*node
	for _, ch := range n.children {
		switch ch.tag {
		case "SubDomain":
			named(&c.SubCollections, s.SubCollection, "SubDomain", ch, "SubDomain["+ch.name+"]")
		case "Login":
			named(&c.Logins, s.Login, "Login", ch, "Login["+ch.name+"]")
		case "Node":
			named(&c.Nodes, s.Node, "Node", ch, "Node["+ch.name+"]")
		case "section":
			switch ch.name {
			case "subdomains", "logins":
				list, def, kind := &c.SubCollections, s.SubCollection, "SubDomain"
				if ch.name == "logins" {
					list, def, kind = &c.Logins, s.Login, "Login"
				}
				p.containerSection(ch, def.Spec)
				for _, g := range ch.children {
					if g.tag == "attrib" {
						p.errorf(g.line, ch.name+"/"+g.name, "", "section %s holds only sections, one per %s", ch.name, strings.ToLower(kind))
						continue
					}
					named(list, def, kind, g, ch.name+"/"+g.name)
				}
				continue
			}
		}
		if ch.tag == "attrib" || ch.tag == "section" {
			rootChildren = append(rootChildren, ch)
		}
	}
	p.fillChildren(c.Root, rootChildren, scope{kind: "DomainSpecification"})
	// A top-level weights or sitemap_weights section belongs in adaptive.
	var kept []*Section
	var moved []*Section
	for _, sec := range c.Root.Sections {
		if sec.Name == "weights" || sec.Name == "sitemap_weights" {
			moved = append(moved, sec)
			continue
		}
		kept = append(kept, sec)
	}
	if len(moved) > 0 {
		c.Root.Sections = kept
		ad := c.Root.Child("adaptive")
		if ad == nil {
			ad = &Section{Def: s.Collection.Section("adaptive"), Name: "adaptive", Line: moved[0].Line}
			c.Root.Sections = append(c.Root.Sections, ad)
		}
		for _, m := range moved {
			if old := ad.Child(m.Name); old != nil {
				p.errorf(m.Line, "", m.Name, "defined both at top level and inside adaptive (line %d)", old.Line)
				continue
			}
			m.Def = ad.Def.Section(m.Name)
			ad.Sections = append(ad.Sections, m)
		}
	}
	// Also at Node level.
	for _, nd := range c.Nodes {
		var kept []*Section
		for _, sec := range nd.Sections {
			if sec.Name == "weights" || sec.Name == "sitemap_weights" {
				ad := nd.Child("adaptive")
				if ad == nil {
					ad = &Section{Def: s.Node.Section("adaptive"), Name: "adaptive", Line: sec.Line}
					kept = append(kept, ad)
				}
				if ad.Child(sec.Name) == nil {
					sec.Def = ad.Def.Section(sec.Name)
					ad.Sections = append(ad.Sections, sec)
				} else {
					p.errorf(sec.Line, "", "Node["+nd.Name+"]/"+sec.Name, "defined both at top level and inside adaptive")
				}
				continue
			}
			kept = append(kept, sec)
		}
		nd.Sections = kept
	}
	return c
}

// containerSection checks a subdomains or logins section has no stray
// content and at least one child section.
func (p *parser) containerSection(n *node, spec string) {
	count := 0
	for _, g := range n.children {
		if g.tag == "section" {
			count++
		}
	}
	if count == 0 {
		p.errorf(n.line, "", n.name, "needs at least one section (MS-FSCCFG %s)", spec)
	}
}

// fill fills sec from the children of n.
func (p *parser) fill(sec *Section, n *node, sc scope) {
	p.fillChildren(sec, n.children, sc)
}

func (p *parser) fillChildren(sec *Section, children []*node, sc scope) {
	def := sec.Def
	anyCount := 0
	for _, ch := range children {
		if !ch.hasName {
			continue
		}
		switch ch.tag {
		case "attrib":
			p.attrib(sec, ch, sc)
		case "section":
			cd := def.Section(ch.name)
			name := ch.name
			if cd != nil {
				name = cd.Name
			} else if def.AnySection != nil {
				if err := def.anySectionName(ch.name); err != nil {
					p.errorf(ch.line, "", sc.section(ch.name), "%v", err)
					continue
				}
				cd = def.AnySection
				anyCount++
			}
			if cd == nil {
				p.unknownSection(def, ch, sc)
				continue
			}
			if old := sec.Child(name); old != nil {
				p.errorf(ch.line, "", sc.section(name), "section defined twice in the same scope (first at line %d)", old.Line)
				continue
			}
			child := &Section{Def: cd, Name: name, Line: ch.line}
			p.fill(child, ch, scope{path: sc.path + name + "/", kind: "section " + name})
			sec.Sections = append(sec.Sections, child)
		}
	}
	if def.MinSections > 0 && anyCount < def.MinSections {
		p.errorf(sec.Line, "", strings.TrimSuffix(sc.path, "/"), "needs at least %d section (MS-FSCCFG %s)", def.MinSections, def.Spec)
	}
}

func (p *parser) unknownSection(def *SectionDef, n *node, sc scope) {
	var names []string
	for _, s := range def.Sections {
		names = append(names, s.Name)
	}
	if Spec().Collection.Section(n.name) != nil || n.name == "subdomains" || n.name == "logins" {
		p.errorf(n.line, "", sc.section(n.name), "section %s is not allowed in %s", n.name, sc.kind)
		return
	}
	if def.Param(n.name) != nil {
		p.errorf(n.line, "", sc.section(n.name), "%s is a parameter (an attrib), not a section", n.name)
		return
	}
	p.errorf(n.line, "", sc.section(n.name), "unknown section%s", p.suggest(n.name, names))
}

// attrib adds one attrib to sec.
func (p *parser) attrib(sec *Section, n *node, sc scope) {
	def := sec.Def
	name := n.name
	pd := def.Param(name)
	if pd != nil {
		name = pd.Name
	} else if def.AnyParam != nil {
		canon, err := def.anyParamName(name)
		if err != nil {
			p.errorf(n.line, sc.param(name), "", "%v", err)
			return
		}
		name, pd = canon, def.AnyParam
	}
	if pd == nil {
		p.unknownParam(def, n, sc)
		return
	}
	path := sc.param(name)
	if !n.hasType {
		p.errorf(n.line, path, "", "attrib has no type attribute (want type=%q)", pd.Type)
		return
	}
	t, ok := parseType(n.typ)
	if !ok {
		p.errorf(n.line, path, "", "invalid type %q (want boolean, string, integer, list-string or real)", n.typ)
		return
	}
	if t != pd.Type {
		p.errorf(n.line, path, "", "declared type %s, but the parameter is %s", t, pd.Type)
		return
	}
	if old := sec.Get(name); old != nil {
		p.errorf(n.line, path, "", "set twice in the same scope (first at line %d)", old.Line)
		return
	}
	prm := &Param{Def: pd, Name: name, Set: true, Line: n.line, Value: Value{Type: t}}
	ok = true
	if t == ListString {
		if len(bytes.TrimSpace(n.text)) > 0 {
			p.errorf(n.line, path, "", "text %q outside <member> in a list-string attrib", abbreviate(string(bytes.TrimSpace(n.text))))
			ok = false
		}
		for _, m := range n.children {
			v := strings.TrimSpace(string(m.text))
			if v == "" {
				p.errorf(m.line, path, "", "empty member")
				ok = false
				continue
			}
			if len(pd.Enum) > 0 {
				e, err := matchEnum(pd, v)
				if err != nil {
					p.errorf(m.line, path, "", "%v", err)
					ok = false
					continue
				}
				v = e
			}
			if pd.check != nil {
				if err := pd.check(p.cx, v); err != nil {
					p.errorf(m.line, path, "", "%v", err)
					ok = false
					continue
				}
			}
			prm.Value.List = append(prm.Value.List, v)
			prm.MemberLines = append(prm.MemberLines, m.line)
		}
	} else {
		if len(n.children) > 0 {
			p.errorf(n.children[0].line, path, "", "<member> is only allowed in a list-string attrib (this one is %s)", t)
			return
		}
		v, err := parseScalar(pd, strings.TrimSpace(string(n.text)))
		if err != nil {
			p.errorf(n.line, path, "", "%v", err)
			return
		}
		if pd.check != nil {
			if err := pd.check(p.cx, v.Text); err != nil {
				p.errorf(n.line, path, "", "%v", err)
				return
			}
		}
		prm.Value = v
	}
	if !ok {
		return
	}
	if !pd.Honoured && pd.Ignored != "" {
		p.warn(&Error{Line: n.line, Collection: p.coll, Param: path, Msg: "accepted and ignored: " + pd.Ignored, NotHonoured: true})
	} else if !pd.Honoured {
		p.warn(&Error{Line: n.line, Collection: p.coll, Param: path, Msg: "not honoured by the crawl yet", NotHonoured: true})
	}
	if pd.Name == "regexp" && pd.Type == ListString {
		for i, re := range prm.Value.List {
			if NestedQuantifier(re) {
				line := n.line
				if i < len(prm.MemberLines) {
					line = prm.MemberLines[i]
				}
				p.warn(&Error{Line: line, Collection: p.coll, Param: path, Msg: fmt.Sprintf("regular expression %q nests quantifiers: "+
					"on some URIs it backtracks until the match timeout, and each timed-out URI is excluded and counted (screen_timeouts)", Clip(re))})
			}
		}
	}
	sec.Params = append(sec.Params, prm)
}

func (p *parser) unknownParam(def *SectionDef, n *node, sc scope) {
	path := sc.param(n.name)
	if def.Section(n.name) != nil {
		p.errorf(n.line, path, "", "%s is a section, not an attrib", n.name)
		return
	}
	if len(p.errs) >= maxErrors {
		return
	}
	msg := "unknown parameter" + p.suggest(n.name, def.names())
	if !strings.Contains(msg, "did you mean") && len(n.name) <= MaxSuggestName {
		if homes := Spec().paramHomes(n.name); len(homes) > 0 {
			msg += fmt.Sprintf(" in %s (it is a parameter of section %s)", sc.kind, strings.Join(homes, ", "))
		}
	}
	p.errorf(n.line, path, "", "%s", msg)
}
