package config

// FocusedExcludeDomains returns the exclude_domains section inside focused
// (MS-FSCCFG 2.2.4.19): the domains left out of focused scheduling. The
// focused section is taken whole from the highest layer that has it.
func (e *Effective) FocusedExcludeDomains() RuleSet {
	s := e.Section("focused")
	if s == nil {
		return RuleSet{}
	}
	ex := s.Child("exclude_domains")
	if ex == nil {
		ex = s.Child("exclude_domain") // the spelling of the section's prose
	}
	return ruleSet(ex, e.Collection.Dir)
}
