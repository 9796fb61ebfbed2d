package config

import (
	"fmt"
	"strconv"
)

// validate checks the rules that span several parameters: conflicts the
// specification states (javascript_keep_html needs use_javascript, no
// refresh_when_idle in a multinode installation, subcollection refresh
// lower than the collection's, ...) as errors, and settings that have no
// effect as warnings.
func (p *parser) validate(c *Collection) {
	p.coll = c.Name
	views := []*Effective{c.Top()}
	for _, s := range c.SubCollections {
		views = append(views, c.Effective(s.Name, ""))
	}
	for _, n := range c.Nodes {
		views = append(views, c.Effective("", n.Name))
	}
	for _, e := range views {
		p.validateView(c, e)
	}
	top := c.Top()
	for _, s := range c.SubCollections {
		pre := "SubDomain[" + s.Name + "]/"
		if r := s.Get("refresh"); r != nil && r.Value.Real >= top.Real("refresh") {
			p.errorf(r.Line, pre+"refresh", "", "a subcollection's refresh (%s) must be lower than the collection's (%s) (MS-FSCCFG 2.2.4.33)",
				r.Value.Text, formatReal(top.Real("refresh")))
		}
		if scopeOf(s, c.Dir).Len() == 0 {
			p.add(&Error{Line: s.Line, Collection: c.Name, Section: "SubDomain[" + s.Name + "]",
				Msg: "a subcollection needs include or exclude rules to limit its scope (MS-FSCCFG 2.2.4.33)"})
		}
	}
	for _, l := range c.Logins {
		pre := "Login[" + l.Name + "]/"
		if af := l.Get("autofill"); af != nil && af.Value.Bool && l.Get("html_form") == nil {
			p.errorf(af.Line, pre+"autofill", "", "autofill=yes requires html_form (MS-FSCCFG 2.2.4.31)")
		}
	}
}

// prefix returns the path prefix of the layer that holds param, for
// messages.
func (e *Effective) prefix(prm *Param) string {
	if e.Node != nil && holds(e.Node, prm) {
		return "Node[" + e.Node.Name + "]/"
	}
	if e.SubCollection != nil && holds(e.SubCollection, prm) {
		return "SubDomain[" + e.SubCollection.Name + "]/"
	}
	return ""
}

func holds(s *Section, prm *Param) bool {
	for _, q := range s.Params {
		if q == prm {
			return true
		}
	}
	for _, c := range s.Sections {
		if holds(c, prm) {
			return true
		}
	}
	return false
}

func (p *parser) validateView(c *Collection, e *Effective) {
	at := func(path string) (*Param, string) {
		prm := e.Param(path)
		return prm, e.prefix(prm) + path
	}
	if k, path := at("javascript_keep_html"); k.Value.Bool && !e.Bool("use_javascript") {
		p.errorf(k.Line, path, "", "javascript_keep_html=yes requires use_javascript=yes (MS-FSCCFG 2.2.3)")
	}
	if r, path := at("refresh_when_idle"); r.Value.Bool && len(c.Nodes) > 0 {
		p.errorf(r.Line, path, "", "refresh_when_idle must not be used in a multinode installation, and this collection has Node elements (MS-FSCCFG 2.2.3)")
	}
	// Feeding destinations.
	if f := e.Section("feeding"); f != nil {
		primary := ""
		for _, d := range f.Sections {
			pre := e.prefixSection(f) + "feeding/" + d.Name + "/"
			if d.Get("collection") == nil {
				p.add(&Error{Line: d.Line, Collection: c.Name, Section: pre[:len(pre)-1], Msg: "a content destination needs a collection parameter (MS-FSCCFG 2.2.4.9)"})
			}
			if pr := d.Get("primary"); pr != nil && pr.Value.Bool {
				if primary != "" {
					p.errorf(pr.Line, pre+"primary", "", "more than one primary content destination (%s is primary too)", primary)
				}
				primary = d.Name
			}
		}
	}
	// Work queue priorities.
	levels := e.Int("workqueue_priority/levels")
	for _, name := range []string{"default", "start_uri_pri"} {
		if prm, path := at("workqueue_priority/" + name); prm.Set && int(prm.Value.Int) > levels {
			p.errorf(prm.Line, path, "", "level %d is above workqueue_priority/levels (%d)", prm.Value.Int, levels)
		}
	}
	if w := e.Section("workqueue_priority"); w != nil {
		pop := e.Str("workqueue_priority/pop_scheme")
		for _, l := range w.Sections {
			pre := e.prefixSection(w) + "workqueue_priority/" + l.Name
			if n, _ := strconv.Atoi(l.Name); n > levels {
				p.add(&Error{Line: l.Line, Collection: c.Name, Section: pre, Msg: fmt.Sprintf("priority level %d is above workqueue_priority/levels (%d)", n, levels)})
			}
			if pop == "rr" {
				p.warn(&Error{Line: l.Line, Collection: c.Name, Section: pre, Msg: "priority level sections are used only when pop_scheme is wrr or pri (MS-FSCCFG 2.2.4.16)"})
			} else if sh := l.Get("share"); sh != nil && pop == "pri" {
				p.warn(&Error{Line: sh.Line, Collection: c.Name, Param: pre + "/share", Msg: "share is used only when pop_scheme is wrr"})
			}
		}
	}
	// Settings without effect.
	noEffect := func(path, why string, cond bool) {
		if prm, full := at(path); prm.Set && cond {
			p.warn(&Error{Line: prm.Line, Collection: c.Name, Param: full, Msg: "has no effect: " + why})
		}
	}
	noEffect("html_redir_thresh", "html_redir_is_redir is no", !e.Bool("html_redir_is_redir"))
	noEffect("accept_compression", "use_http_1_1 is no", !e.Bool("use_http_1_1"))
	noEffect("truncate", "cut_off is not set", !e.Has("cut_off"))
	noEffect("javascript_delay", "use_javascript is no", !e.Bool("use_javascript"))
	noEffect("storage/compress_exclude_mime", "storage/compress is no", !e.Bool("storage/compress"))
	noEffect("focused/depth", "focused/languages is not set", !e.Has("focused/languages"))
	if a := e.Section("adaptive"); a != nil && e.Str("refresh_mode") != "adaptive" {
		p.warn(&Error{Line: a.Line, Collection: c.Name, Section: e.prefixSection(a) + "adaptive", Msg: "used only when refresh_mode is adaptive (MS-FSCCFG 2.2.4.24)"})
	}
}

func (e *Effective) prefixSection(s *Section) string {
	if e.Node != nil && containsSection(e.Node, s) {
		return "Node[" + e.Node.Name + "]/"
	}
	if e.SubCollection != nil && containsSection(e.SubCollection, s) {
		return "SubDomain[" + e.SubCollection.Name + "]/"
	}
	return ""
}

func containsSection(root, s *Section) bool {
	if root == s {
		return true
	}
	for _, c := range root.Sections {
		if containsSection(c, s) {
			return true
		}
	}
	return false
}
