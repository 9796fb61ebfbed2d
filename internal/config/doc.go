// Package config reads, validates and writes crawl configurations in the
// XML format of [MS-FSCCFG].
//
// A file holds one CrawlerConfig element with one DomainSpecification per
// crawl collection:
//
//	<CrawlerConfig>
//	  <DomainSpecification name="C">        a crawl collection
//	    <attrib name="P" type="T">V</attrib> a parameter (T: boolean, integer,
//	    <attrib ... type="list-string">      real, string, list-string)
//	      <member>V</member>
//	    </attrib>
//	    <section name="S"> attrib | section </section>
//	    <SubDomain name="N"> ... </SubDomain> a subcollection
//	    <Login name="N"> ... </Login>         an HTML form login
//	    <Node name="N"> ... </Node>           overrides for one node scheduler
//	  </DomainSpecification>
//	</CrawlerConfig>
//
// The same parameter name means different things in different sections
// (max_doc at top level and in limits), so the model is a scoped tree: a
// Section per scope, each with its SectionDef from the definition table
// (Spec). The table drives everything: parsing and validation (Parse),
// defaults (Section.Lookup, Effective), the canonical writer (Write),
// the typed accessors (accessors_gen.go) and docs/configuration.md
// (Reference); regenerate the last two with "go run ./internal/config/gen".
//
// Parse reports every problem of a file at once, as an ErrorList of
// "file:line: collection C: parameter P: message" errors, with "did you
// mean" suggestions for near-miss names. Filter rules are parsed and
// validated here (Rule, Scope); matching them is the filter package's job.
// Encrypted passwords ("!ENC!...") are handled by Key.
//
// [MS-FSCCFG]: https://learn.microsoft.com/en-us/openspecs/sharepoint_protocols/ms-fsccfg
package config
