package webfarm

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"strconv"
)

// XMLOptions are the parts of a crawl configuration that do not change
// which URLs are fetched.
type XMLOptions struct {
	// Collection names the DomainSpecification. Default "webfarm".
	Collection string
	// Delay is the delay between requests to one site, in seconds.
	Delay float64
	// FetchTimeout is fetch_timeout, in seconds (0: the default, 300).
	FetchTimeout int
	// ObeyRobotsDelay is obey_robots_delay.
	ObeyRobotsDelay bool
	// Extra is raw MS-FSCCFG XML (attribs, sections, SubDomain elements)
	// written at the end of the DomainSpecification, for what the crawl
	// does not describe (near_duplicate_detection, subcollections).
	Extra string
}

// WriteCrawlXML writes c as an MS-FSCCFG crawl configuration (one
// DomainSpecification) that makes a crawler fetch what Expect(c) lists.
// MaxURILength, Cycle and Limit have no MS-FSCCFG parameter and are not
// written.
func WriteCrawlXML(w io.Writer, c Crawl, opt XMLOptions) error {
	if opt.Collection == "" {
		opt.Collection = "webfarm"
	}
	var b bytes.Buffer
	esc := func(s string) string {
		var e bytes.Buffer
		_ = xml.EscapeText(&e, []byte(s)) // writing to a bytes.Buffer does not fail
		return e.String()
	}
	yn := func(v bool) string {
		if v {
			return "yes"
		}
		return "no"
	}
	ind := "        "
	attrib := func(indent, name, typ, val string) {
		fmt.Fprintf(&b, "%s<attrib name=\"%s\" type=\"%s\"> %s </attrib>\n", indent, esc(name), typ, esc(val))
	}
	list := func(indent, name string, vals []string) {
		fmt.Fprintf(&b, "%s<attrib name=\"%s\" type=\"list-string\">\n", indent, esc(name))
		for _, v := range vals {
			fmt.Fprintf(&b, "%s    <member> %s </member>\n", indent, esc(v))
		}
		fmt.Fprintf(&b, "%s</attrib>\n", indent)
	}
	rules := func(section string, r Rules) {
		if r.empty() {
			return
		}
		fmt.Fprintf(&b, "%s<section name=\"%s\">\n", ind, section)
		for _, kv := range []struct {
			name string
			vals []string
		}{{"exact", r.Exact}, {"prefix", r.Prefix}, {"suffix", r.Suffix}, {"regexp", r.Regexp}} {
			if len(kv.vals) > 0 {
				list(ind+"    ", kv.name, kv.vals)
			}
		}
		fmt.Fprintf(&b, "%s</section>\n", ind)
	}
	b.WriteString("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<CrawlerConfig>\n")
	fmt.Fprintf(&b, "    <DomainSpecification name=\"%s\">\n", esc(opt.Collection))
	attrib(ind, "info", "string", "crawl of a trawl webfarm; expected URLs: trawl webfarm --expect")
	list(ind, "start_uris", c.StartURLs)
	attrib(ind, "delay", "real", strconv.FormatFloat(opt.Delay, 'f', -1, 64))
	if opt.FetchTimeout > 0 {
		attrib(ind, "fetch_timeout", "integer", strconv.Itoa(opt.FetchTimeout))
	}
	attrib(ind, "robots", "boolean", yn(c.Robots))
	attrib(ind, "robots_auth_ignore", "boolean", yn(c.RobotsAuthIgnore))
	attrib(ind, "obey_robots_delay", "boolean", yn(opt.ObeyRobotsDelay))
	if c.UserAgent != "" {
		list(ind, "headers", []string{"User-Agent: " + c.UserAgent + " (trawl webfarm crawl)"})
	}
	attrib(ind, "use_sitemaps", "boolean", yn(c.UseSitemaps))
	attrib(ind, "check_meta_robots", "boolean", yn(c.CheckMetaRobots))
	attrib(ind, "max_redirects", "integer", strconv.Itoa(c.MaxRedirects))
	attrib(ind, "html_redir_is_redir", "boolean", yn(c.HTMLRedirIsRedir))
	attrib(ind, "hmtl_redir_threshold", "integer", strconv.Itoa(c.HTMLRedirThreshold))
	mruri := c.MaxURIRecursion
	if mruri < 0 {
		mruri = 2147483647
	}
	attrib(ind, "max_uri_recursion", "integer", strconv.Itoa(mruri))
	attrib(ind, "max_doc", "integer", strconv.Itoa(c.MaxDoc))
	if c.CutOff > 0 {
		attrib(ind, "cut_off", "integer", strconv.FormatInt(c.CutOff, 10))
		attrib(ind, "truncate", "boolean", yn(c.Truncate))
	}
	attrib(ind, "sort_query_params", "boolean", yn(c.SortQueryParams))
	attrib(ind, "refresh_mode", "string", "scratch")
	list(ind, "exclude_exts", c.ExcludeExts)
	list(ind, "allowed_types", c.AllowedTypes)
	list(ind, "uri_search_mime", c.URISearchMIME)
	fmt.Fprintf(&b, "%s<section name=\"crawlmode\">\n", ind)
	mode := "FULL"
	if c.MaxDepth >= 0 {
		mode = "DEPTH:" + strconv.Itoa(c.MaxDepth)
	}
	attrib(ind+"    ", "mode", "string", mode)
	attrib(ind+"    ", "fwdlinks", "boolean", yn(c.FwdLinks))
	attrib(ind+"    ", "fwdredirects", "boolean", yn(c.FwdRedirects))
	attrib(ind+"    ", "reset_level", "boolean", yn(c.ResetLevel))
	fmt.Fprintf(&b, "%s</section>\n", ind)
	fmt.Fprintf(&b, "%s<section name=\"link_extraction\">\n", ind)
	for _, k := range HTMLKinds {
		attrib(ind+"    ", k.String(), "boolean", yn(c.LinkKinds.Has(k)))
	}
	fmt.Fprintf(&b, "%s</section>\n", ind)
	rules("include_domains", c.IncludeDomains)
	rules("exclude_domains", c.ExcludeDomains)
	rules("include_uris", c.IncludeURIs)
	rules("exclude_uris", c.ExcludeURIs)
	b.WriteString(opt.Extra)
	b.WriteString("    </DomainSpecification>\n</CrawlerConfig>\n")
	if _, err := w.Write(b.Bytes()); err != nil {
		return fmt.Errorf("webfarm: %w", err)
	}
	return nil
}
