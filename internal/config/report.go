package config

import (
	"fmt"
	"io"
	"strconv"
	"strings"
)

// WriteWarnings writes the warnings of cfg, one line each; "not
// honoured" warnings are counted per collection unless verbose (trawl
// config check).
func (cfg *Config) WriteWarnings(w io.Writer, verbose bool) {
	type agg struct {
		n     int
		first *Error
	}
	counts := map[string]*agg{}
	var order []string
	for _, e := range cfg.Warnings {
		if e.NotHonoured && !verbose {
			a := counts[e.Collection]
			if a == nil {
				a = &agg{first: e}
				counts[e.Collection] = a
				order = append(order, e.Collection)
			}
			a.n++
			continue
		}
		fmt.Fprintf(w, "warning: %v\n", e)
	}
	for _, c := range order {
		a := counts[c]
		fmt.Fprintf(w, "warning: %s: collection %s: %d parameter(s) set here are not honoured by the crawl yet (first: %s at line %d; -v lists them)\n",
			cfg.File, c, a.n, a.first.Param, a.first.Line)
	}
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.Itoa(n) + " " + many
}

// Summary is the one-line description of a valid collection read from
// file (trawl config check).
func (c *Collection) Summary(file string) string {
	e := c.Top()
	sc := e.Scope()
	include := len(sc.IncludeDomains.Rules) + len(sc.IncludeURIs.Rules)
	exclude := len(sc.ExcludeDomains.Rules) + len(sc.ExcludeURIs.Rules)
	parts := []string{
		plural(len(e.StartURIs()), "start URI", "start URIs"),
		plural(include, "include rule", "include rules"),
	}
	if exclude > 0 {
		parts = append(parts, plural(exclude, "exclude rule", "exclude rules"))
	}
	parts = append(parts, "delay "+strconv.FormatFloat(e.Delay(), 'f', -1, 64)+"s")
	if n := len(c.SubCollections); n > 0 {
		parts = append(parts, plural(n, "subcollection", "subcollections"))
	}
	if n := len(c.Nodes); n > 0 {
		parts = append(parts, plural(n, "node override", "node overrides"))
	}
	if n := len(c.Logins); n > 0 {
		parts = append(parts, plural(n, "login", "logins"))
	}
	return fmt.Sprintf("%s: collection %s: %s", file, c.Name, strings.Join(parts, ", "))
}
