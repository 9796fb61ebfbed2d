package config

import "fmt"

// Merge applies the partial configuration part to the existing collection
// old and returns the result; neither argument changes. This is
// MS-FSCADM 2.2.9.3 (CollectionAdd on an existing collection): "all settings
// that are specified in both configurations MUST be overridden by the new
// configuration". The spec does not say what a setting is; trawl's rules:
//
//   - A parameter (attrib) is one setting, whatever its type: a list in part
//     replaces the whole list in old (to add one start URI, send the list
//     with it). A parameter only in old is kept; one only in part is added.
//   - A section is not a setting but a scope: a section in both is merged
//     by the same rules, parameter by parameter and child section by child
//     section. So a partial configuration that holds only
//     <section name="crawlmode"><attrib name="mode">…</attrib></section>
//     changes that one parameter of crawlmode.
//   - Subcollections, logins and Node elements are scopes too, matched by
//     name: one in both is merged, one only in part is added after old's.
//     Nothing in a partial configuration removes a scope; CollectionDelete
//     and a full CollectionAdd of a new collection do that.
//
// The result keeps old's name; its Line fields point into whichever file set
// each parameter.
func Merge(old, part *Collection) *Collection {
	out := &Collection{Name: old.Name, Line: old.Line, Dir: old.Dir}
	if part.Dir != "" {
		out.Dir = part.Dir
	}
	out.Root = mergeSection(old.Root, part.Root)
	out.SubCollections = mergeNamed(old.SubCollections, part.SubCollections)
	out.Logins = mergeNamed(old.Logins, part.Logins)
	out.Nodes = mergeNamed(old.Nodes, part.Nodes)
	return out
}

// mergeSection merges two scopes of the same definition; either may be nil.
func mergeSection(old, part *Section) *Section {
	if part == nil {
		return cloneSection(old)
	}
	if old == nil {
		return cloneSection(part)
	}
	out := &Section{Def: old.Def, Name: old.Name, Line: old.Line}
	if out.Def == nil {
		out.Def = part.Def
	}
	for _, p := range old.Params {
		if np := part.Get(p.Name); np != nil {
			out.Params = append(out.Params, cloneParam(np))
			continue
		}
		out.Params = append(out.Params, cloneParam(p))
	}
	for _, p := range part.Params {
		if old.Get(p.Name) == nil {
			out.Params = append(out.Params, cloneParam(p))
		}
	}
	for _, c := range old.Sections {
		out.Sections = append(out.Sections, mergeSection(c, part.Child(c.Name)))
	}
	for _, c := range part.Sections {
		if old.Child(c.Name) == nil {
			out.Sections = append(out.Sections, cloneSection(c))
		}
	}
	return out
}

func mergeNamed(old, part []*Section) []*Section {
	var out []*Section
	for _, s := range old {
		out = append(out, mergeSection(s, findNamed(part, s.Name)))
	}
	for _, s := range part {
		if findNamed(old, s.Name) == nil {
			out = append(out, cloneSection(s))
		}
	}
	return out
}

func cloneSection(s *Section) *Section {
	if s == nil {
		return nil
	}
	out := &Section{Def: s.Def, Name: s.Name, Line: s.Line}
	for _, p := range s.Params {
		out.Params = append(out.Params, cloneParam(p))
	}
	for _, c := range s.Sections {
		out.Sections = append(out.Sections, cloneSection(c))
	}
	return out
}

func cloneParam(p *Param) *Param {
	q := *p
	q.Value.List = append([]string(nil), p.Value.List...)
	q.MemberLines = append([]int(nil), p.MemberLines...)
	return &q
}

// MergeXML merges the partial configuration part into old (Merge) and
// checks the result as a whole file would be checked: it is written out
// and parsed again, so a merge that makes the collection invalid (a
// parameter that only made sense with a value the merge replaced) fails
// here, naming the parameter.
func MergeXML(old, part *Collection, opts *Options) (*Collection, error) {
	merged := Merge(old, part)
	data := Marshal(&Config{Collections: []*Collection{merged}})
	name := fmt.Sprintf("collection %s (merged configuration)", old.Name)
	cfg, err := Parse(name, data, opts)
	if err != nil {
		return nil, err
	}
	c := cfg.Collection(old.Name)
	if c == nil {
		return nil, fmt.Errorf("config: %s: the merged configuration lost the collection", name)
	}
	c.Dir = merged.Dir
	return c, nil
}
