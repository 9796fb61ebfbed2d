package config

import (
	"math"
	"strings"
)

// This file is the definition table of MS-FSCCFG: every parameter of
// sections 2.2.3 and 2.2.4, with the specification's type, default and
// meaning. The parser, the validator, the writer, the defaults, the typed
// accessors and docs/configuration.md are all derived from it.
//
// The parameter rows were extracted from the specification's tables; the
// range, enumeration and syntax checks after each row are trawl's.

const (
	maxInt32 = math.MaxInt32
	maxReal  = math.MaxFloat64
)

// p makes a parameter definition; def "N/A" means no default.
func p(name string, t Type, def, meaning string) *ParamDef {
	d := &ParamDef{Name: name, Type: t, Meaning: meaning, SpecDefault: def}
	if def != "N/A" {
		d.Default, d.HasDefault = def, true
	}
	return d
}

func (d *ParamDef) in(spec string) *ParamDef { d.Spec = spec; return d }

func (d *ParamDef) rng(lo, hi float64) *ParamDef {
	d.Min, d.Max, d.HasMin, d.HasMax = lo, hi, true, true
	return d
}

func (d *ParamDef) enum(vals ...string) *ParamDef { d.Enum = vals; return d }

func (d *ParamDef) alias(names ...string) *ParamDef {
	d.Aliases = append(d.Aliases, names...)
	return d
}

// rename makes canonical the written name and the others aliases.
func (d *ParamDef) rename(canonical string, aliases ...string) *ParamDef {
	d.Name = canonical
	d.Aliases = append(d.Aliases, aliases...)
	return d
}

// ignore marks a parameter trawl accepts and ignores, with the reason
// (also added to the note).
func (d *ParamDef) ignore(reason string) *ParamDef {
	d.Ignored = reason
	return d.note("Accepted and ignored: " + reason + ".")
}

func (d *ParamDef) note(s string) *ParamDef {
	if d.Note != "" {
		d.Note += " "
	}
	d.Note += s
	return d
}

func (d *ParamDef) honoured() *ParamDef { d.Honoured = true; return d }

// def replaces the default (where the table's default is prose).
func (d *ParamDef) def(v string) *ParamDef { d.Default, d.HasDefault = v, true; return d }

func (d *ParamDef) nodef() *ParamDef { d.Default, d.HasDefault = "", false; return d }

// chk sets a syntax check for a scalar value.
func (d *ParamDef) chk(f func(*checkContext, string) error) *ParamDef { d.check = f; return d }

// each sets a syntax check applied to every member of a list-string.
func (d *ParamDef) each(f func(*checkContext, string) error) *ParamDef { d.check = f; return d }

func pick(defs []*ParamDef, names ...string) []*ParamDef {
	var out []*ParamDef
	for _, n := range names {
		found := false
		for _, d := range defs {
			if d.Name == n {
				out = append(out, d)
				found = true
			}
		}
		if !found {
			panic("config: definition table: no parameter " + n)
		}
	}
	return out
}

func without(defs []*ParamDef, names ...string) []*ParamDef {
	var out []*ParamDef
	for _, d := range defs {
		skip := false
		for _, n := range names {
			if d.Name == n {
				skip = true
			}
		}
		if !skip {
			out = append(out, d)
		}
	}
	return out
}

func sec(name, spec, meaning string, params []*ParamDef, children ...*SectionDef) *SectionDef {
	return &SectionDef{Name: name, Spec: spec, Meaning: meaning, Params: params, Sections: children}
}

// anyParam makes the template of a user-named attrib.
func anyParam(placeholder string, t Type, spec, meaning string, check func(*checkContext, string) error) *ParamDef {
	d := p(placeholder, t, "N/A", meaning).in(spec)
	d.check = check
	return d
}

// buildSchema assembles the scopes from the tables. It runs once.
func buildSchema() *Schema {
	top := append(topParams(),
		p("login_failed_ignore", Boolean, "no", "Not defined by any table of the specification; example 3.2 sets it to no. trawl reads it as: keep crawling a site when its HTML form login fails.").in("3.2").
			note("Appears only in example 3.2; accepted so that the example validates."))
	dom := func(name, spec, meaning string) *SectionDef {
		s := sec(name, spec, meaning, domParams())
		s.Rules, s.replaceWhole = DomainRules, true
		return s
	}
	uri := func(name, spec, meaning string) *SectionDef {
		s := sec(name, spec, meaning, uriParams())
		s.Rules, s.replaceWhole = URIRules, true
		return s
	}
	includeDomains := dom("include_domains", "2.2.4.1", "Domain rules choosing which URIs to include in the crawl collection. An empty section matches all domains.")
	excludeDomains := dom("exclude_domains", "2.2.4.2", "Domain rules choosing which URIs to exclude from the crawl collection. An empty section matches no domain.")
	includeURIs := uri("include_uris", "2.2.4.3", "URI rules choosing which URIs to include in the crawl collection. An empty section matches all URIs.")
	excludeURIs := uri("exclude_uris", "2.2.4.4", "URI rules choosing which URIs to exclude from the crawl collection. An empty section matches no URI.")
	focusedExclude := dom("exclude_domains", "2.2.4.19", "Domains excluded from focused scheduling. Without it every domain takes part.")
	focusedExclude.Aliases = []string{"exclude_domain"}

	log := sec("log", "2.2.4.5", "Logging behaviour of the Web crawler process.", logParams())
	storage := sec("storage", "2.2.4.6", "How the Web crawler stores data and metadata.", storageParams())
	pp := sec("pp", "2.2.4.7", "Node scheduler post processing: feeding documents to the index and duplicate detection.", ppParams())
	ppdup := sec("ppdup", "2.2.4.8", "Duplicate server settings.", ppdupParams())

	dest := sec("", "2.2.4.9", "A content destination: where and how documents of the collection are sent to the indexing engine. The section name is the destination's unique name.", feedingParams())
	feeding := sec("feeding", "2.2.4.9", "Content destinations (at least one section, each naming a destination).", nil)
	feeding.AnySection, feeding.anySectionName, feeding.MinSections = dest, checkSectionName, 1

	cachesize := sec("cachesize", "2.2.4.10", "Cache sizes of the Web crawler process.", cachesizeParams())

	httpErrors := sec("http_errors", "2.2.4.11", "How HTTP/HTTPS error response codes and network errors are handled. Attrib names are a status code (X is a wildcard digit, as in 4xx), net, int or ttl.", errorDefaults("2.2.4.12",
		[][2]string{{"4xx", "DELETE:0"}, {"5xx", "DELETE:10"}, {"int", "KEEP:0"}, {"net", "DELETE:3, RETRY:1"}, {"ttl", "DELETE:3"}}))
	httpErrors.AnyParam = errorTemplate("2.2.4.11")
	httpErrors.anyParamName, httpErrors.foldNames = checkErrorCode, true
	ftpErrors := sec("ftp_errors", "2.2.4.13", "How FTP response codes and network errors are handled; same syntax as http_errors.", errorDefaults("2.2.4.14",
		[][2]string{{"4xx", "DELETE:3"}, {"550", "DELETE:0"}, {"5xx", "DELETE:3"}, {"int", "KEEP:0"}, {"net", "DELETE:3, RETRY:1"}}))
	ftpErrors.AnyParam = errorTemplate("2.2.4.13")
	ftpErrors.anyParamName, ftpErrors.foldNames = checkErrorCode, true

	wqAll := wqParams()
	level := sec("", "2.2.4.16", "A priority level of the crawl queues; the section name is the level number (1 is the highest). URIs matching its include rules are queued at this level when put_scheme is include.", pick(wqAll, "share"),
		includeDomains, includeURIs)
	wq := sec("workqueue_priority", "2.2.4.15", "Priority levels of the crawl queues and the schemes used to insert URIs into and extract them from the queues.", without(wqAll, "share"))
	wq.AnySection, wq.anySectionName = level, checkLevelName

	linkExtraction := sec("link_extraction", "2.2.4.17", "Which kinds of hyperlinks to follow.", leParams())
	limits := sec("limits", "2.2.4.18", "Fail-safe limits; when exceeded the collection enters refresh-only mode.", limitsParams())
	focused := sec("focused", "2.2.4.19", "Focused crawl by document language.", focusedParams(), focusedExclude)

	passwd := sec("passwd", "2.2.4.20", "Credentials for sites that require authentication. The attrib name is a URI (a prefix) or a realm.", nil)
	passwd.AnyParam = anyParam("<URI or realm>", String, "2.2.4.20",
		"Credentials: \"username:password\" or \"username:password:realm:scheme\", scheme one of basic, digest, ntlmv1, ntlmv2, auto. The password may be encrypted: \"!ENC!\" followed by the encrypted password (AES-CBC, see docs/decisions.md for trawl's encoding).",
		checkCredentials)
	passwd.anyParamName = same(checkNonEmptyName)
	ftpAcct := sec("ftp_acct", "2.2.4.21", "FTP accounts. The attrib name is the site the account is valid for.", nil)
	ftpAcct.AnyParam = anyParam("<site>", String, "2.2.4.21", "The user name and password of the FTP account, as \"username:password\".", checkUserPassword)
	ftpAcct.anyParamName = same(checkNonEmptyName)
	excludeHeaders := sec("exclude_headers", "2.2.4.22", "Documents excluded from the crawl by the contents of HTTP header fields. The attrib name is the header to test.", nil)
	excludeHeaders.AnyParam = anyParam("<header name>", ListString, "2.2.4.22", "Regular expressions ([MC-RegEx]); a document whose header value matches one of them is excluded.", checkRegexp)
	excludeHeaders.anyParamName = same(checkHeaderName)
	variableDelay := sec("variable_delay", "2.2.4.23", "Time slots with their own delay. Outside every slot the delay parameter applies. The attrib name is a slot DDD:HH.MM-DDD:HH.MM (minutes optional).", nil)
	variableDelay.AnyParam = anyParam("<time slot>", String, "2.2.4.23", "The delay in seconds for this time slot, or \"suspend\" to suspend crawling of the collection.", checkSlotDelay)
	variableDelay.anyParamName = same(checkTimeSlot)

	weights := sec("weights", "2.2.4.25", "Weights of the scoring rules of adaptive crawling (inside adaptive; accepted at top level too).", weightsParams())
	sitemapWeights := sec("sitemap_weights", "2.2.4.26", "Weights of sitemap changefreq values, 0.0 to 1.0 (inside adaptive; accepted at top level too).", smwParams())
	adaptive := sec("adaptive", "2.2.4.24", "Adaptive refresh; used only when refresh_mode is adaptive.", adaptiveParams(), weights, sitemapWeights)

	siteClusters := sec("site_clusters", "2.2.4.27", "Groups of sites routed to the same node scheduler. The attrib name identifies the group.", nil)
	siteClusters.AnyParam = anyParam("<cluster name>", ListString, "2.2.4.27", "Domains that must be routed to the same node scheduler.", checkHostName)
	siteClusters.anyParamName = same(checkNonEmptyName)

	crawlmode := sec("crawlmode", "2.2.4.28", "The span of the crawl.", crawlmodeParams())
	postPayload := sec("post_payload", "2.2.4.29", "Data POSTed to URIs. The attrib name is an exact URI, or \"prefix:\" followed by a URI prefix.", nil)
	postPayload.AnyParam = anyParam("<URI or prefix:URI>", String, "2.2.4.29", "The payload string posted to matching URIs.", nil)
	postPayload.anyParamName = same(checkPayloadName)
	rss := sec("rss", "2.2.4.30", "RSS channel support.", rssParams())
	warc := sec("warc", TrawlExtension, "trawl extension, not in MS-FSCCFG: write the collection's crawl as web archive files (WARC/1.1, ISO 28500) while crawling, for replay tools (pywb, ReplayWeb.page) and archives. Each node scheduler writes its own files: request, response, metadata (outlinks, fetch time, IP) and revisit records (a 304, or a payload identical to an earlier capture), a warcinfo record opening each file, every record gzipped on its own, SHA-1 block and payload digests in base32. trawl run --warc DIR switches it on for every collection (internal/warc/doc.go).", warcParams())

	parameters := sec("parameters", "2.2.4.32", "Variables of the HTML login form. The attrib name is the form variable.", nil)
	parameters.AnyParam = anyParam("<form variable>", String, "2.2.4.32", "The value of the HTML form variable; it overrides any value stored in the form.", nil)
	parameters.anyParamName = same(checkNonEmptyName)
	login := sec("", "2.2.4.31", "An HTML form login (a Login element or a section of logins). The name is the login's unique name.", loginParams(), parameters)
	logins := sec("logins", "2.2.4.31", "HTML form logins (at least one section; equivalent to Login elements).", nil)
	logins.AnySection, logins.anySectionName, logins.MinSections = login, checkSectionName, 1

	subParams := pick(top, "accept_compression", "allowed_schemes", "cut_off", "delay", "ftp_passive", "headers", "max_doc",
		"proxy", "refresh", "refresh_mode", "start_uri_files", "start_uris", "use_http_1_1", "use_javascript", "use_sitemaps")
	for i, d := range subParams {
		// Copies: a subcollection's override is honoured only where the
		// crawl applies it per URI (honouredSubParams), whatever the
		// collection-level row says.
		c := *d
		c.Honoured = false
		subParams[i] = &c
	}
	sub := sec("", "2.2.4.33", "A crawl subcollection (a SubDomain element or a section of subdomains): URIs matching its own include and exclude rules are crawled with its parameters.", subParams,
		crawlmode, rss, variableDelay, includeDomains, excludeDomains, includeURIs, excludeURIs)
	subdomains := sec("subdomains", "2.2.4.33", "Crawl subcollections (at least one section; equivalent to SubDomain elements).", nil)
	subdomains.AnySection, subdomains.anySectionName, subdomains.MinSections = sub, checkSectionName, 1

	topSections := []*SectionDef{includeDomains, excludeDomains, includeURIs, excludeURIs, log, storage, pp, ppdup, feeding, cachesize,
		httpErrors, ftpErrors, wq, linkExtraction, limits, focused, passwd, ftpAcct, excludeHeaders, variableDelay,
		adaptive, siteClusters, crawlmode, postPayload, rss, warc, logins, subdomains}
	collection := sec("DomainSpecification", "2.2.2", "A crawl collection.", top, topSections...)
	var nodeSections []*SectionDef
	for _, s := range topSections {
		if s != logins && s != subdomains {
			nodeSections = append(nodeSections, s)
		}
	}
	markHonoured(collection, honouredParams)
	markHonoured(sub, honouredSubParams)
	markHonoured(login, honouredLoginParams)
	node := sec("", "2.2.7", "Overrides of collection parameters for one node scheduler; the name is the node scheduler's identifier.", top, nodeSections...)
	return &Schema{Collection: collection, SubCollection: sub, Login: login, Node: node}
}

// honouredParams are the parameters the crawl uses, each exercised by a
// test: "name" at top level, "section/name" in a section, "a/b/name" in
// section b inside section a ("section/*" for every parameter of the
// section and its template; "section/*/name" for a parameter of the
// section's user-named subsections). The rows are read by
// internal/nodesched (Compile: fetching, robots, extraction, screening,
// duplicates, http_errors), internal/frontier (scheduling, politeness,
// seen-set, refresh) and internal/multinode (routing). A subcollection's
// copies of the top-level rows are honoured as honouredSubParams says.
var honouredParams = []string{
	"info", "start_uris", "fetch_timeout", "allowed_types", "force_mimetype_detection", "allowed_schemes",
	"accept_compression", "cut_off", "truncate", "headers", "if_modified_since",
	"max_redirects", "html_redir_is_redir", "html_redir_thresh", "check_meta_robots", "uri_search_mime",
	"exclude_exts", "max_uri_recursion", "sort_query_params", "rewrite_rules",
	"robots", "robots_ttl", "robots_timeout", "robots_auth_ignore", "robots_tout_ignore", "obey_robots_delay", "use_sitemaps",
	"delay", "enforce_delay_per_ip", "max_sites", "max_pending", "max_inter_docs", "max_doc",
	"wqfilter", "smfilter", "max_backoff_counter", "max_backoff_delay",
	"refresh", "refresh_mode", "refresh_when_idle", "dbswitch", "dbswitch_delete",
	"use_meta_csum", "csum_cut_off", "near_duplicate_detection", "domain_clustering",
	"include_domains/*", "exclude_domains/*", "include_uris/*", "exclude_uris/*",
	"http_errors/*", "link_extraction/*",
	"crawlmode/mode", "crawlmode/fwdlinks", "crawlmode/fwdredirects", "crawlmode/reset_level",
	"workqueue_priority/levels", "workqueue_priority/default", "workqueue_priority/start_uri_pri", "workqueue_priority/pop_scheme",
	"adaptive/refresh_count", "adaptive/refresh_quota", "adaptive/coverage_min", "adaptive/coverage_max_pct",
	"pp/use_dupservers", "site_clusters/*",
	// Access (internal/fetch, internal/nodesched/access.go).
	"use_cookies", "cookie_timeout", "passwd/*", "proxy", "proxy_max_pending", "key_file", "cert_file",
	"ftp_acct/*", "ftp_searchlinks", "ftp_passive", "login_timeout", "login_failed_ignore",
	"exclude_headers/*", "post_payload/*",
	// Sitemaps, feeds, start URI files, JavaScript (internal/nodesched,
	// internal/render).
	"start_uri_files", "use_javascript", "javascript_delay", "javascript_keep_html",
	"rss/start_uris", "rss/start_uri_files", "rss/follow_links", "rss/max_link_age", "rss/max_link_count",
	// Crawl options of internal/nodesched/options.go and
	// internal/frontier (slots.go, adaptive.go).
	"variable_delay/*", "mirror_site_files", "focused/languages", "focused/depth", "send_links_to",
	"extract_links_from_dupes",
	"adaptive/weights/*", "adaptive/sitemap_weights/*",
	"rss/ignore_rules", "rss/index_feed",
	// internal/nodesched/wqlevels.go.
	"workqueue_priority/put_scheme", "workqueue_priority/*/share",
	"focused/exclude_domains/*",
	"ftp_errors/*",                               // internal/nodesched/step.go (TestCrawlFTPErrors)
	"rss/auto_discover", "rss/del_expired_links", // internal/nodesched/extras.go
	// internal/nodesched/storage.go, limits.go, internal/fetch/http10.go.
	"diffcheck", "use_http_1_1",
	"storage/store_http_header", "storage/store_dupes", "storage/compress", "storage/compress_exclude_mime", "storage/remove_docs",
	"storage/uri_dir", // internal/nodesched/uridir.go (TestCrawlURIDir)
	"warc/*",          // internal/warc, internal/nodesched/warc.go (cmd/trawl TestRunWARC)
	"limits/*",
	// internal/frontier seencache.go and queue heads (nodesched TestCrawlCachesize).
	"cachesize/screened", "cachesize/wqcache",
	// Crawl logs (internal/crawllog, internal/nodesched/crawllog.go;
	// TestCrawlLogs, TestCrawlLogsNoneAndUMLogs; the scheduler log from the
	// frontier's Config.OnAdaptive, TestCrawlSchedulerLog); mufilter is the
	// multinode scheduler's (internal/multinode TestMufilter).
	"log/fetch", "log/postprocess", "log/header", "log/screened", "log/scheduler", "log/dsfeed", "log/site", "umlogs", "mufilter",
	// Content destinations: internal/feed (Targets, Feeder) and
	// internal/nodesched/feeding.go (cmd/trawl TestRunFeedingDestinations).
	"feeding/*/collection", "feeding/*/paused", "feeding/*/primary",
	// internal/nodesched/feeding.go (cmd/trawl TestRunPostProcessing).
	"pp/ds_paused", "pp/ds_send_links",
	// internal/nodesched/reported.go (nodesched TestFeedReportedURIs).
	"pp/ds_meta_info", "pp/ds_max_ecl", "pp/max_dupes", "pp/ecl_override",
}

// honouredSubParams are the rows of a subcollection (SubDomain) the crawl
// applies to the URIs the subcollection's rules contain
// (nodesched.Settings.For, the frontier's per-site delay and max_doc),
// each exercised by nodesched's TestSubCollections and
// TestSubCollectionsPerURI (use_javascript: TestCrawlJavaScriptPerSite); its crawlmode section
// is the collection's definition, honoured with it.
var honouredSubParams = []string{"delay", "headers", "max_doc", "accept_compression",
	"allowed_schemes", "cut_off", "proxy", "use_sitemaps", "start_uris", "start_uri_files", "use_javascript",
	"ftp_passive",  // nodesched TestSubCollectionFTPPassive
	"use_http_1_1", // nodesched TestSubCollectionUseHTTP11
	// refresh rounds of the subcollection's URIs (internal/frontier
	// subrefresh.go; nodesched TestSubCollectionRefresh).
	"refresh", "refresh_mode"}

// honouredLoginParams are the honoured rows of a Login element (forms
// login, internal/fetch/login.go).
var honouredLoginParams = []string{"preload", "scheme", "site", "form", "action", "sites", "ttl", "html_form", "autofill", "relogin_if_failed",
	"parameters/*", // the form variables (nodesched TestCrawlBehindFormLogin: user and password)
}

// markHonoured sets Honoured on the rows named by paths (see
// honouredParams); a name that matches nothing is a mistake in the table.
func markHonoured(d *SectionDef, paths []string) {
	for _, path := range paths {
		// "a/b/name": parameter name of section b inside section a.
		parts := strings.Split(path, "/")
		name := parts[len(parts)-1]
		target := d
		for _, secName := range parts[:len(parts)-1] {
			var next *SectionDef
			if target != nil && secName == "*" {
				next = target.AnySection // a user-named section (priority levels)
			} else if target != nil {
				for _, c := range target.Sections {
					if c.Name == secName {
						next = c
					}
				}
			}
			target = next
		}
		found := false
		if target != nil {
			for _, p := range target.Params {
				if name == "*" || p.Name == name {
					p.Honoured, found = true, true
				}
			}
			if name == "*" && target.AnyParam != nil {
				target.AnyParam.Honoured, found = true, true
			}
		}
		if !found {
			panic("config: definition table: no parameter " + path)
		}
	}
}

// errorDefaults makes the fixed rows of http_errors or ftp_errors.
func errorDefaults(spec string, rows [][2]string) []*ParamDef {
	var out []*ParamDef
	for _, r := range rows {
		m := "How the error is handled (default from section " + spec + ")."
		switch r[0] {
		case "net":
			m = "How network socket errors are handled."
		case "int":
			m = "How internal errors of the Web crawler are handled."
		case "ttl":
			m = "How connection time-outs are handled."
		default:
			if strings.Contains(r[0], "x") {
				m = "How " + strings.ToUpper(r[0][:1]) + "xx responses are handled (X is a wildcard digit)."
			} else {
				m = "How " + r[0] + " responses are handled."
			}
		}
		m += " KEEP keeps the document; DELETE[:X] deletes it after X failures (immediately without X); \", RETRY:X\" re-fetches at most X times in the same refresh cycle."
		out = append(out, p(r[0], String, r[1], m).in(spec).chk(checkErrorAction))
	}
	return out
}

func errorTemplate(spec string) *ParamDef {
	return anyParam("<status code>", String, spec, "How responses with this status code (X is a wildcard digit, as in 4xx), net (socket errors), int (internal errors) or ttl (time-outs) are handled: KEEP, DELETE[:X], optionally followed by \", RETRY:X\". An exact code beats a wildcard.", checkErrorAction)
}

// topParams returns the parameters of Top-level (MS-FSCCFG 2.2.3).
func topParams() []*ParamDef {
	const sec = "2.2.3"
	return []*ParamDef{
		p("info", String, "N/A", "Specifies meta information about this crawl collection.").in(sec).honoured(),
		p("fetch_timeout", Integer, "300", "Specifies the maximum downloading time, in seconds, for a web document.").in(sec).rng(1, maxInt32),
		p("allowed_types", ListString, "text/html, text/plain, application/msword, application/msexcel, application/pt, application/pdf", "Specifies valid web document MIME types. The Web crawler process discards other MIME types. This configuration parameter supports wildcard expansion of an entire field. Wildcards are represented by an asterisk character, for example, \"text/*\" or \"*/*\".").in(sec).each(checkMIME),
		p("force_mimetype_detection", Boolean, "no", "Specifies that the Web crawler process uses its own MIME type detection on documents.").in(sec),
		p("allowed_schemes", ListString, "http", "Specifies the URI schemes, as specified in [RFC2396], that the web crawler MUST process.").in(sec),
		p("ftp_passive", Boolean, "yes", "Specifies that the Web crawler uses passive FTP mode, as specified in [RFC959].").in(sec),
		p("domain_clustering", Boolean, "no", "Specifies the Web crawler to route hosts from the same domain to one node scheduler in a multi node installation.").in(sec),
		p("max_inter_docs", Integer, "N/A", "Specifies the maximum number of documents that can be crawled on one crawl site prior to processing a new crawl site. If this limit is reached a new crawl site will be crawled, thus interleaving crawling of the crawl sites.").in(sec).rng(1, maxInt32),
		p("max_redirects", Integer, "10", "Specifies the maximum number of HTTP redirects to follow from a URI.").in(sec).rng(0, maxInt32),
		p("diffcheck", Boolean, "yes", "Specifies that the Web crawler performs duplicate detection. The duplicate detection is performed by checking whether two or more web documents have the same content.").in(sec),
		p("near_duplicate_detection", Boolean, "no", "Specifies that the Web crawler MUST use a less strict duplicate detection algorithm. In this case duplicate documents are detected by identifying a unique pattern of words.").in(sec),
		p("max_uri_recursion", Integer, "5", "Specifies the maximum number of times a pattern can be appended to successors of a URI.").in(sec).rng(0, maxInt32),
		p("ftp_searchlinks", Boolean, "yes", "Specifies that the Web crawler MUST search for hyperlinks in documents downloaded from FTP servers.").in(sec),
		p("use_javascript", Boolean, "no", "Specifies that the Web crawler MUST process JavaScript that is contained in HTML documents.").in(sec),
		p("javascript_keep_html", Boolean, "no", "Specifies what to submit to the indexing engine. If this parameter is set to yes, the HTML resulting from the JavaScript processing is used. Otherwise, the original HTML document is used. This option MUST NOT be used if the use_javascript configuration parameter is not set to yes.").in(sec).note("Setting it to yes without use_javascript=yes is an error."),
		p("javascript_delay", Real, "N/A", "Specifies the delay, in seconds, to use when retrieving dependencies associated with an HTML document with JavaScript. If this configuration parameter is not specified, the Web crawler MUST use the delay configuration parameter to fetch external JavaScript documents.").in(sec).rng(0, maxReal),
		p("exclude_exts", ListString, ".jpg,.jpeg,.ico,.tif,.png,.bmp,.gif,.wmf,.avi,.mpg,.wmv,.wma,.ram,.asx,.ASF,.mp3,.wav,.ogg,.ra,.aac,.m4a,.zip,.gz,.vmarc,.z,.tar,.iso,.img,.rpm,.cab,.rar,.ace,.hqx,.swf,.exe,.java,.jar,.prz,.wrl,.midr,.css,.ps,.ttf,.mso,.dvi", "Specifies file extensions that MUST be excluded by the crawl.").in(sec),
		p("use_http_1_1", Boolean, "yes", "Specifies that the Web crawler MUST use HTTP/1.1.").in(sec),
		p("accept_compression", Boolean, "yes", "Specifies that the Web crawler MUST accept compression. This parameter has no effect if the use_http_1_1 configuration parameter is not enabled.").in(sec),
		p("dbswitch", Integer, "5", "Specifies the number of crawl refresh cycles a web document can have without being processed by the Web crawler. The dbswitch_delete configuration parameter specifies the action to perform on expired documents.").in(sec).rng(0, maxInt32),
		p("dbswitch_delete", Boolean, "no", "Specifies that the Web crawler MUST delete URIs that were not crawled in dbswitch crawl refresh cycles.").in(sec),
		p("html_redir_is_redir", Boolean, "yes", "Specifies that the Web crawler MUST treat documents as HTTP redirects if they are associated with a refresh HTML META / tag as specified in [HTML].").in(sec),
		p("hmtl_redir_threshold", Integer, "3", "Specifies the maximum number of seconds that a web document with an HTML META / tag can be treated as an HTTP redirect. This configuration parameter MUST be ignored if the html_redir_is_redir configuration parameter is not set.").in(sec).rename("html_redir_thresh", "hmtl_redir_threshold", "html_redir_threshold").note("The table spells it hmtl_redir_threshold, example 3.2 html_redir_thresh; trawl writes html_redir_thresh and accepts hmtl_redir_threshold and html_redir_threshold as aliases.").rng(0, maxInt32),
		p("robots_ttl", Integer, "86400", "Specifies how frequently the Web crawler MUST retrieve the robots.txt file, as specified in [ROBOTSTXT], from a crawl site. This frequency must be specified in seconds.").in(sec).rng(0, maxInt32),
		p("use_sitemaps", Boolean, "no", "Specifies whether the Web crawler MUST use sitemaps, as specified in [SITEMAPS]. If this parameter is enabled, the Web crawler finds and parses sitemaps. The sitemap information is used if the refresh_mode configuration parameter is set to \"adaptive\", in which case the Web crawler uses the change frequency information, otherwise it only extracts and follows links from sitemaps.").in(sec),
		p("max_pending", Integer, "2", "Specifies the maximum number of outstanding HTTP requests for a crawl site.").in(sec).rng(1, maxInt32),
		p("robots_auth_ignore", Boolean, "yes", "Specifies whether or not the Web crawler MUST ignore robots.txt, as specified in [ROBOTSTXT], if a 401/403 HTTP authentication error is returned by the server. If disabled, the crawler will not crawl the site.").in(sec),
		p("robots_tout_ignore", Boolean, "no", "Specifies whether the Web crawler MUST ignore rules from the robots.txt file if the request for this file times out.").in(sec),
		p("rewrite_rules", ListString, "N/A", "Specifies a set of rules that are used to rewrite URIs. A rewrite rule has two components: an expression to match (match_pattern), and a replacement string (replacement_string) that MUST replace the first expression. The expression to match is a grouped match regular expression, as specified in [MC-ReqEx]. The format of the rewrite rule is \"*match_pattern*replacement_string*\", where * is any character that is not white space.").in(sec).each(checkRewriteRule),
		p("extract_links_from_dunes", Boolean, "no", "Specifies that the Web crawler MUST extract hyperlinks from documents.").in(sec).rename("extract_links_from_dupes", "extract_links_from_dunes").note("The table spells it extract_links_from_dunes, example 3.2 extract_links_from_dupes (extract links from duplicate documents); trawl writes extract_links_from_dupes and accepts the table spelling as an alias."),
		p("use_meta_csum", Boolean, "no", "Specifies that the Web crawler uses META tags, as specified in [HTML], to generate a duplicate detection checksum.").in(sec),
		p("csum_cut_off", Integer, "0", "Specifies the maximum number of bytes to use to generate the duplicate detection checksum. If this parameter is set to 0, the feature is disabled.").in(sec).rng(0, maxInt32),
		p("if_modified_since", Boolean, "yes", "Specifies whether the Web crawler MUST send HTTP headers that contain a value of \"If-Modified-Since\".").in(sec),
		p("use_cookies", Boolean, "no", "Specifies whether the Web crawler MUST send and store cookies.").in(sec),
		p("uri_search_mime", ListString, "text/html, text/vnd.wap.xml, text/wml, text/x-wap.wml, x-application/wml, text/x-hdml", "Specifies the MIME types from which the Web crawler extracts hyperlinks. This configuration parameter supports wildcard expansion only at entire field level. A wildcard is represented by the asterisk character, for example, \"text/*\" or \"*/*\".").in(sec).each(checkMIME).note("The table default lists text/vnd.wap.xml where example 3.2 has the registered type text/vnd.wap.wml; trawl keeps the table default verbatim."),
		p("max_backoff_counter", Integer, "50", "Specifies the maximum number of crawl site connection failures. If the number of failed connections exceeds this limit, then the crawling process will stop on this crawl site.").in(sec).rng(0, maxInt32),
		p("max_backoff_delay", Integer, "600", "Specifies the maximum delay, in seconds, for a crawl site when network problems occur. When sites have network failures, the Web crawler increases the fetch delay to no more than this amount.").in(sec).rng(0, maxInt32),
		p("delay", Real, "60.0", "Specifies how frequently the Web crawler can retrieve a document from a crawl site. This parameter is represented in seconds.").in(sec).rng(0, maxReal),
		p("refresh", Real, "1500.0", "Specifies how frequently the Web crawler MUST perform a crawl refresh cycle. This parameter is represented in minutes.").in(sec).rng(0, maxReal),
		p("robots", Boolean, "yes", "Specifies that the Web crawler MUST obey the rules found in robot.txt files, as specified in [ROBOTSTXT].").in(sec),
		p("start_uris", ListString, "N/A", "Specifies start URIs for the Web crawler.").in(sec).each(checkStartURI),
		p("start_uri_files", ListString, "N/A", "Specifies a list of files that contain start URIs. These files are stored in plain text file format, with one start URI per line.").in(sec).each(checkReadableFile),
		p("max_sites", Integer, "128", "Specifies the maximum number of sites to crawl concurrently.").in(sec).rng(1, maxInt32),
		p("mirror_site_files", ListString, "N/A", "Specifies a list of files that contain mirror sites for a specified domain. A mirror site is a replica of an already existing crawl site. This file MUST use following format: a plain text file with a space-separated list of crawl sites, with the preferred name listed first.").in(sec).each(checkReadableFile),
		p("proxy", ListString, "N/A", "Specifies a set of proxies that the Web crawler MUST use to fetch documents. Each proxy is specified using the following format: \"(http://)(username:password@)hostname(:port)\", optional parts are contained within parentheses. The password is encrypted as specified in section 2.2.4.20.").in(sec).each(checkProxy),
		p("proxy_max_pending", Integer, "Maximum value of INT32, as specified in [MS-DTYP1].", "Specifies a limit on the number of outstanding open connections per proxy.").in(sec).def("2147483647").rng(1, maxInt32),
		p("headers", ListString, "User-Agent: FAST Search Web Crawler <version>", "Specifies additional HTTP headers to add to the request sent to the web servers.").in(sec).each(checkHeader).note("<version> in the default is the spec's placeholder for the crawler version."),
		p("cut_off", Integer, "N/A", "Specifies the maximum number of bytes in a document. A web document larger than this size limit is discarded or truncated depending on the value of the truncate configuration parameter. If no cut_off configuration parameter is specified, this option is disabled.").in(sec).rng(0, maxInt32),
		p("truncate", Boolean, "yes", "Specifies whether a web document MUST be truncated when a web document exceeds the specified cut_off threshold.").in(sec),
		p("check_meta_robots", Boolean, "yes", "Specifies that the Web crawler MUST follow the directives given by the NoIndex / and NoFollow / META tags as specified in [HTML].").in(sec),
		p("obey_robots_delay", Boolean, "no", "Specifies that the Web crawler MUST follow the crawl-delay directive in robots.txt files, as specified in [ROBOTSTXT].").in(sec),
		p("key_file", String, "N/A", "Specifies the path to an SSL key file used for HTTPS connections as specified in [SSL3].").in(sec),
		p("cert_file", String, "N/A", "Specifies the path to a X509 certificate file used for HTTPS connections as specified in [X509].").in(sec),
		p("max_doc", Integer, "100000", "Specifies the maximum number of documents to download from a site.").in(sec).rng(0, maxInt32),
		p("enforce_delay_per_ip", Boolean, "yes", "Specifies that the Web crawler limits requests to web servers whose names map to a shared IPv4 or IPv6 address. This parameter depends on the delay configuration parameter.").in(sec),
		p("wqfilter", Boolean, "yes", "Specifies whether the Web crawler MUST use a filter that removes duplicate URIs from the crawl queues.").in(sec),
		p("smfilter", Integer, "0", "Specifies the maximum number of bits in the bloom filter that removes duplicate URIs from the queue associated with the node scheduler. A bloom filter is a space-efficient probabilistic data structure, a bit array, which is used to test if an element is a member of a given set. The test may yield a false positive but never a false negative").in(sec).rng(0, maxInt32),
		p("mufilter", Integer, "0", "Specifies the maximum number of bits used in the bloom filter, see smfilter, which removes duplicate URIs, which are sent from a node scheduler to a multinode scheduler.").in(sec).rng(0, maxInt32),
		p("umlogs", Boolean, "yes", "Specifies whether all logging is sent to the multinode scheduler for storage. If this parameter is not enabled, logs reside only on the node schedulers.").in(sec),
		p("sort_query_params", Boolean, "no", "Specifies whether the Web crawler MUST sort the parameters in the query component of a URI, as specified in [RFC2396]. Typically, query components are key-value pairs that are separated by semicolons or ampersands. When this configuration parameter is set, the query is sorted alphabetical by the key name.").in(sec),
		p("robots_timeout", Integer, "300", "Specifies the maximum number of seconds that the Web crawler can use to download a robots.txt file.").in(sec).rng(1, maxInt32),
		p("login_timeout", Integer, "300", "Specifies the maximum number of seconds that the Web crawler can use for a login request.").in(sec).rng(1, maxInt32),
		p("send_links_to", String, "N/A", "Specifies a crawl collection name to which all extracted hyperlinks is sent.").in(sec),
		p("cookie_timeout", Integer, "900", "Specifies the maximum number of seconds a session cookie is stored. A session cookie is a cookie with no expiration date.").in(sec).rng(0, maxInt32),
		p("refresh_when_idle", Boolean, "no", "Specifies whether the Web crawler MUST trigger a new crawl refresh cycle when it becomes idle. This option MUST NOT be used in a multinode installation.").in(sec).note("Setting it to yes in a collection that has Node elements (a multinode installation) is an error."),
		p("refresh_mode", String, "scratch", "Specifies the refresh mode of a crawl collection. There are five valid values for the refresh_mode configuration parameter: append: Add the start URIs to the end of the crawl queue when a crawl refresh cycle begins. prepend: Add the start URIs to the beginning of the crawl queue when a crawl refresh cycle begins. scratch: Truncate the crawl queue previous to appending the start URIs to the queue. soft: If the crawl queue for a site is not empty at the end of a crawl refresh cycle, the Web crawler continues crawling into the next crawl refresh cycle. A site is not refreshed until the crawl queue is empty. adaptive: Build crawl queue according to the adaptive section configuration parameters specified in section 2.2.4.24.").in(sec).enum("append", "prepend", "scratch", "soft", "adaptive"),
	}
}

// domParams returns the parameters of include_domains (MS-FSCCFG 2.2.4.1).
func domParams() []*ParamDef {
	const sec = "2.2.4.1"
	return []*ParamDef{
		p("exact", ListString, "N/A", "Specifies a list of host names. If the domain name of a URI matches exactly one of these host names, the URI is included by this rule.").in(sec),
		p("prefix", ListString, "N/A", "Specifies a list of host names. If the domain name of a URI begins with one of these host names, the URI is included by this rule.").in(sec),
		p("suffix", ListString, "N/A", "Specifies a list of host names. If the domain name of a URI ends with one of these host names, the URI is included by this rule.").in(sec),
		p("regexp", ListString, "N/A", "Specifies a list of regular expressions [MC-RegEx]. If the domain name matches one of these regular expressions, the URI is included by this rule.").in(sec).each(checkRegexp),
		p("ipmask", ListString, "N/A", "Specifies a list of IPv4 address masks. If the IPv4 address of a URI that was retrieved matches one of these IPv4 address masks, the URI is included by this rule. An IPv4 address mask MUST follow one of the following formats: A range of IPv4 address can be specified by writing an IPv4 address in string format and using a hyphen for the range, for example, 207.46.197.0-100 or 207.46.190-197.100. If an IPv4 address is within this range, it is included by this mask. A IPv4 mask can also be specified by examining the *N* most significant bits of an IPv4 address, where *N* is within the range of {0, 32}. The mask is an IPv4 address in string format followed by a forward slash and the number of most significant bits, for example, 207.46.197.0 /24. If an IPv4 address has the same *N* bits of the specified IPv4 address, it is included by this mask. A IPv4 mask can also be specified by using a bit mask to mask out important bits of an IPv4 address. The format of this mask is \"IPv4 address in string format:ip-mask\", where ip-mask is an IPv4 address in string format used for masking or a 32 bit hexadecimal digit, for example, 207.46.197.0:255.255.255.0 or 207.46.197.0:0xffffffff00. If an IPv4 address has the same bits set as specified by the ip-mask and the IPv4 address, it is included by this mask.").in(sec).each(checkIPMask),
		p("ip6mask", ListString, "N/A", "Specifies a list of IPv6 address masks. If the IPv6 address of a URI that was retrieved matches one of these IPv6 address masks, the URI is included by this rule. An IPv6 address mask MUST follow one of the following formats: A range of IPv6 address can be specified by writing an IPv6 address in string format and using a hyphen for the range, for example 2002:CF2E:C500-C564:0:0:0:0 or ::ffff:207.46.197.0-100. If an IPv6 address is within this range it is included by this mask. A IPv6 mask can also be specified by looking at the *N* most significant bits of an IPv6 address, where *N* has the range of {0, 128}. This mask is an IPv6 address in string format followed by a forward slash and the number of most significant bits, for example, 2002:CF2E:C500:0:0:0:0/60. If an IPv6 address has the same *N* bits of the specified IPv6 address, it is included by this mask.").in(sec).each(checkIP6Mask),
		p("file", ListString, "N/A", "Specifies a list of files that contains a set of rules. These files are stored in plain text file format, with one rule per line. Each rule is given on the following format \"ruletype:rule\". Valid ruletype values are: \"exact\", \"prefix\", \"suffix\", \"regexp\", \"ipmask\" or \"ip6mask\".").in(sec).each(checkDomainRuleFile),
	}
}

// uriParams returns the parameters of include_uris (MS-FSCCFG 2.2.4.3).
func uriParams() []*ParamDef {
	const sec = "2.2.4.3"
	return []*ParamDef{
		p("exact", ListString, "N/A", "Specifies a list of URIs. If a URI exactly matches one of these URIs, the URI is included by this rule.").in(sec),
		p("prefix", ListString, "N/A", "Specifies a list of strings. If a URI begins with one of these strings, the URI is included by this rule.").in(sec),
		p("suffix", ListString, "N/A", "Specifies a list of strings. If a URI ends with one of these strings, the URI is included by this rule.").in(sec),
		p("regexp", ListString, "N/A", "Specifies a list of regular expressions [MC-RegEx]. If a URI matches one of these regular expressions, the URI is included by this rule.").in(sec).each(checkRegexp),
		p("file", ListString, "N/A", "Specifies a list of files that contains a set of rules. These files are stored in plain text file format, with one rule per line. Each rule is given on the following format \"ruletype:rule\". Valid ruletype values are: \"exact\", \"prefix\", \"suffix\" or \"regexp\".").in(sec).each(checkURIRuleFile),
	}
}

// logParams returns the parameters of log (MS-FSCCFG 2.2.4.5).
func logParams() []*ParamDef {
	const sec = "2.2.4.5"
	return []*ParamDef{
		p("fetch", String, "text", "Enable or disable logging of downloaded documents. Valid values are: ▪ text: This creates a text formatted log. ▪ none: This disables logging.").in(sec).enum("text", "none"),
		p("postprocess", String, "text", "Enable or disable logging of node scheduler post processing of the documents. Valid values are: ▪ text: This creates a text formatted log. ▪ xml: This creates an XML formatted log. ▪ none: This disables logging.").in(sec).enum("text", "xml", "none"),
		p("header", String, "none", "Enable or disable logging of HTTP headers. Valid values are: ▪ text: This creates a text formatted log. ▪ none: This disables logging.").in(sec).enum("text", "none"),
		p("screened", String, "none", "Enable or disable logging of all screened URIs. Valid values are: ▪ text: This creates a text formatted log. ▪ none: This disables logging.").in(sec).enum("text", "none"),
		p("scheduler", String, "none", "Enable or disable logging of adaptive crawling. Valid values are: ▪ text: This creates a text formatted log. ▪ none: This disables logging.").in(sec).enum("text", "none"),
		p("dsfeed", String, "text", "Enable or disable logging of feeding data to the indexing engine. Valid values are: ▪ text: This creates a text formatted log. ▪ none: This disables logging.").in(sec).enum("text", "none"),
		p("site", String, "text", "Enable or disable logging per site. Valid values are: ▪ text: This creates a text formatted log. ▪ none: This disables logging.").in(sec).enum("text", "none"),
	}
}

// storageParams returns the parameters of storage (MS-FSCCFG 2.2.4.6).
func storageParams() []*ParamDef {
	const sec = "2.2.4.6"
	return []*ParamDef{
		p("datastore", String, "bstore", "Specifies the format for web document data storage. Valid values are: ▪ flatfile: This format stores documents directly into the file system. ▪ bstore: This format partitions documents into fixed sized blocks and distributes them across a set of files. An index maps the order of the blocks, and specifies which blocks belong to a document.").in(sec).enum("flatfile", "bstore").
			ignore("trawl keeps documents in its Pebble crawl store, which has no flatfile or bstore layout (docs/decisions.md)"),
		p("store_http_header", Boolean, "yes", "Specifies that the process MUST store the received HTTP header.").in(sec),
		p("store_dupes", Boolean, "no", "Specifies that the Web crawler MUST store duplicate documents.").in(sec),
		p("compress", Boolean, "yes", "Specifies that downloaded documents MUST be compressed previous to storing them.").in(sec),
		p("compress_exclude_mime", ListString, "none", "Specifies a set of MIME types. Downloaded documents that match these MIME types MUST NOT be compressed. If the compress configuration parameter is not set, this parameter is not applicable.").in(sec).def("").note("The table default \"none\" means an empty list.").each(checkMIME),
		p("remove_docs", Boolean, "no", "Specifies that the Web crawler MUST delete documents that were submitted to the indexing engine.").in(sec),
		p("clusters", Integer, "8", "Specifies the number of clusters to use for storage in a crawl collection. Web documents are distributed among these storage clusters.").in(sec).rng(1, maxInt32).
			ignore("the Pebble crawl store is one database, not split into storage clusters (docs/decisions.md)"),
		p("defrag_threshold", Integer, "85", "Specifies defragmentation thresholds as a percentage. Data storage can become fragmented; defragmentation must be performed to reclaim fragmented space. The default value means that the reclaimable space in the data storage file is 100% minus the default value. If the value specified in this parameter is reached, the Web crawler triggers defragmentation of a particular file.").in(sec).rng(0, 100).
			ignore("Pebble reclaims space by compaction on its own; there is no file to defragment (docs/decisions.md)"),
		p("uri_dir", String, "none", "Specifies a path to store URIs that are extracted from a document. A file is generated for each crawled document.").in(sec).nodef().note("The table default \"none\" means the feature is off (no value). A relative path is relative to the node's data directory; each crawled document's file is <uri_dir>/<collection>/xx/yy/<hash of its URI>.uris: a \"# document: <URI>\" line, then one extracted URI per line (docs/decisions.md)."),
	}
}

// TrawlExtension is the Spec of a section trawl adds to MS-FSCCFG.
const TrawlExtension = "trawl"

// warcParams returns the parameters of warc (a trawl extension).
func warcParams() []*ParamDef {
	return []*ParamDef{
		p("enable", Boolean, "no", "Write WARC files of the collection's crawl.").in(TrawlExtension),
		p("dir", String, "warc", "Directory of the WARC files; a relative path is relative to the node scheduler's data directory. Collections may share it.").in(TrawlExtension).chk(checkNonEmptyValue),
		p("file_prefix", String, "trawl", "File name prefix: files are named <file_prefix>-<UTC time, 14 digits>-<serial, 5 digits>-<node scheduler>.warc.gz.").in(TrawlExtension).chk(checkWARCPrefix),
		p("max_size", Integer, "1024", "Size in MiB a file may reach: a file is closed before a record would take it past the size (a record is never split, so a larger record gets a file of its own).").in(TrawlExtension).rng(1, maxInt32),
	}
}

// ppParams returns the parameters of pp (MS-FSCCFG 2.2.4.7).
func ppParams() []*ParamDef {
	const sec = "2.2.4.7"
	return []*ParamDef{
		p("use_dupservers", Boolean, "no", "Specifies that the Web crawler MUST use one or more duplicate servers. This option is applicable only in a multinode installation.").in(sec),
		p("max_dupes", Integer, "10", "Specifies the maximum number of duplicates to record.").in(sec).rng(0, maxInt32),
		p("stripe", Integer, "1", "Specifies the number of files to spread data to. This is done in order improve the performance of the post processing database.").in(sec).rng(1, maxInt32),
		p("ds_meta_info", ListString, "duplicates, redirects, mirrors, metadata", "Specifies the type of metadata a node scheduler MUST report to the indexing engine. Valid values are: ▪ duplicates: Report URIs that are duplicates of this document. ▪ redirects: Report URIs that are redirected to this document. ▪ metadata: Report meta data of this document. ▪ mirrors: Report all mirror URIs of this web document.").in(sec).enum("duplicates", "redirects", "mirrors", "metadata"),
		p("ds_max_ecl", Integer, "10", "Specifies the maximum number of duplicates or redirects to report to the indexing engine, as specified by the ds_meta_info configuration parameter.").in(sec).rng(0, maxInt32),
		p("ecl_override", String, "N/A", "Specifies a regular expression [MC-RegEx]. URIs that match this expression, and are associated with a specific status, are submitted to the indexing engine whether or not the max_dupes configuration parameter limit has been reached. The URI MUST have a status of duplicates or redirects.").in(sec).chk(checkRegexp),
		p("ds_send_links", Boolean, "no", "Specifies whether all extracted hyperlinks from a web document MUST be sent to the indexing engine.").in(sec),
		p("ds_paused", Boolean, "no", "Specifies whether a node scheduler MUST pause content submission of data to the indexing engine.").in(sec),
	}
}

// ppdupParams returns the parameters of ppdup (MS-FSCCFG 2.2.4.8).
func ppdupParams() []*ParamDef {
	const sec = "2.2.4.8"
	return []*ParamDef{
		p("format", String, "N/A", "Specifies the duplicate server database format. Valid values are: ▪ gigabase: A simple key-value database. ▪ hashlog: An in-memory data structure consisting of a hash table and a log. The log ensures the rebuilding of the hash table. ▪ diskhashlog: The same as hashlog, except that the data structure is persisted to disk.").in(sec).enum("gigabase", "hashlog", "diskhashlog"),
		p("cachesize", Integer, "N/A", "Specifies the duplicate server database cache size in megabytes. If the format configuration parameter is set to hashlog or diskhashlog this parameter specifies the initial size of the hash table.").in(sec).rng(0, maxInt32),
		p("stripes", Integer, "N/A", "Specifies the number of files to spread data to. This is done in order to improve the performance of the duplicate server database.").in(sec).rng(1, maxInt32),
		p("compact", Boolean, "yes", "Specifies whether or not the duplicate server database MUST perform compaction.").in(sec),
	}
}

// feedingParams returns the parameters of feeding (MS-FSCCFG 2.2.4.9).
func feedingParams() []*ParamDef {
	const sec = "2.2.4.9"
	return []*ParamDef{
		p("collection", String, "N/A", "Specifies the name of the content collection to which to submit documents. This configuration parameter MUST be specified within a feeding section.").in(sec).note("Required in every content destination."),
		p("destination", String, "default", "Reserved. This configuration parameter MUST contain the value \"default\".").in(sec).enum("default").honoured().note("Reserved: nothing in the crawl depends on it."),
		p("paused", Boolean, "no", "Specifies whether the web crawler suspend submission of content to the indexing engine.").in(sec),
		p("primary", Boolean, "N/A", "Specifies whether this content destination is a primary or secondary content destination. A primary content destination can act on callback information, as specified in [MS-FSID], during content submission to the indexing engine.").in(sec).note("At most one destination of a collection may be primary."),
	}
}

// cachesizeParams returns the parameters of cachesize (MS-FSCCFG 2.2.4.10).
func cachesizeParams() []*ParamDef {
	const sec = "2.2.4.10"
	return []*ParamDef{
		p("duplicates", Integer, "N/A", "Specifies the maximum number of entries in the duplicate checksum cache.").in(sec).rng(0, maxInt32),
		p("screened", Integer, "N/A", "Specifies the maximum number of entries in the screened URI cache.").in(sec).rng(0, maxInt32),
		p("smcomm", Integer, "N/A", "Specifies the maximum number of entries in the cache used for communication within a node scheduler.").in(sec).rng(0, maxInt32),
		p("mucomm", Integer, "N/A", "Specifies the maximum number of entries in the cache for communication between a multinode scheduler and the crawler single node schedulers.").in(sec).rng(0, maxInt32),
		p("wqcache", Integer, "N/A", "Specifies the maximum number of entries in the crawl queue for a site.").in(sec).rng(0, maxInt32),
		p("crosslinks", Integer, "N/A", "Specifies the maximum number of entries in the crosslink cache. The crosslink cache contains retrieved hyperlinks and referring hyperlinks.").in(sec).rng(0, maxInt32),
		p("routetab", Integer, "1048576", "Specifies the crawl routing database cache size, in bytes.").in(sec).rng(0, maxInt32),
		p("pp", Integer, "1048576", "Specifies the post process database cache size, in bytes.").in(sec).rng(0, maxInt32),
		p("pp_pending", Integer, "131072", "Specifies the post process pending cache size, in bytes. The pending cache contains entries that were not sent to the duplicate servers.").in(sec).rng(0, maxInt32),
		p("aliases", Integer, "1048576", "Specifies the aliases data mapping database cache size, in bytes. A site can be associated with one or more aliases or alternative names.").in(sec).rng(0, maxInt32),
	}
}

// wqParams returns the parameters of workqueue_priority (MS-FSCCFG 2.2.4.15).
func wqParams() []*ParamDef {
	const sec = "2.2.4.15"
	return []*ParamDef{
		p("levels", Integer, "1", "Specifies the number of priority levels used for the crawl queues.").in(sec).rng(1, 1000),
		p("default", Integer, "1", "Specifies a default priority level that is assigned to URIs in a crawl queue.").in(sec).rng(1, 1000),
		p("start_uri_pri", Integer, "1", "Specifies the priority level for start URIs, see the start_uris and the start_uri_files configuration parameters specified in section 2.2.3.").in(sec).rng(1, 1000),
		p("pop_scheme", String, "default", "Specifies the mode the Web crawler uses to extract URIs from the crawl queue. Valid values are: ▪ rr: This mode extracts URIs from the priority levels in round-robin order. ▪ wrr: This mode extracts URIs from the priority levels in a weighted round-robin order. The weights are based on their respective share setting per priority level, as specified in section 2.2.4.13. ▪ pri: This mode extracts URIs from the priority levels in priority order by when entries still remain in the crawl queue. 1 is the highest priority, as specified in section 2.2.4.13. ▪ default: This mode is the same as wrr.").in(sec).enum("rr", "wrr", "pri", "default"),
		p("put_scheme", String, "default", "Specifies which Web crawler mode to use when inserting URIs into the crawl queue. Valid values are: ▪ default: This mode always inserts URIs with the priority level specified in the default configuration parameter. ▪ include: This mode inserts URIs with the priority level of include_domains or include_uris, as specified in section 2.2.4.13 for every priority level. The Web crawler process assigns the default priority level when a URI does not match any of these sections.").in(sec).enum("default", "include"),
		p("share", Integer, "N/A", "Specifies a weight to use for each crawl queue. This weight MUST only be used if the pop_scheme configuration parameter is set to \"wrr\".").in(sec).rng(0, maxInt32).in("2.2.4.16"),
	}
}

// leParams returns the parameters of link_extraction (MS-FSCCFG 2.2.4.17).
func leParams() []*ParamDef {
	const sec = "2.2.4.17"
	return []*ParamDef{
		p("a", Boolean, "yes", "Extract hyperlinks from A/ HTML tags.").in(sec),
		p("action", Boolean, "yes", "Extract hyperlinks from action attributes in HTML tags.").in(sec),
		p("area", Boolean, "yes", "Extract hyperlinks from AREA/ HTML tags.").in(sec),
		p("card", Boolean, "yes", "Extract hyperlinks from the CARD/ Wireless Markup Language tags as specified in [WML2.0].").in(sec),
		p("comment", Boolean, "yes", "Extract hyperlinks from comments within a web document.").in(sec),
		p("embed", Boolean, "yes", "Extract hyperlinks from EMBED/ HTML tags.").in(sec),
		p("frame", Boolean, "yes", "Extract hyperlinks from FRAME/ HTML tags.").in(sec),
		p("go", Boolean, "yes", "Extract hyperlinks from GO/ Wireless Markup Language tags as specified in [WML2.0].").in(sec),
		p("img", Boolean, "no", "Extract hyperlinks from IMG/ HTML tags.").in(sec),
		p("layer", Boolean, "yes", "Extract hyperlinks from LAYER/ HTML tags.").in(sec),
		p("link", Boolean, "yes", "Extract hyperlinks from LINK/ HTML tags.").in(sec),
		p("meta", Boolean, "yes", "Extract hyperlinks from META/ HTML tags.").in(sec),
		p("meta_refresh", Boolean, "yes", "Extract hyperlinks from META http-equiv=\"refresh\"/ HTML tags.").in(sec),
		p("object", Boolean, "yes", "Extract hyperlinks from OBJECT/ HTML tags.").in(sec),
		p("script", Boolean, "yes", "Extract hyperlinks from SCRIPT/ HTML tags.").in(sec),
		p("script_java", Boolean, "yes", "Extract hyperlinks from SCRIPT/ HTML tags that contain JavaScript.").in(sec),
		p("style", Boolean, "yes", "Extract hyperlinks from STYLE/ HTML tags.").in(sec),
	}
}

// limitsParams returns the parameters of limits (MS-FSCCFG 2.2.4.18).
func limitsParams() []*ParamDef {
	const sec = "2.2.4.18"
	return []*ParamDef{
		p("disk_free", Integer, "0", "Specifies the percentage of free disk space that must be available for the Web crawler to operate in normal crawl mode. If the percentage becomes less than this limit, the Web crawler enters the *refresh only* crawl mode. If the parameter is set to 0, this feature is disabled.").in(sec).rng(0, 100),
		p("disk_free_slack", Integer, "3", "Specifies, in percentage, an amount of disk space which can be used in addition to the disk space reserved by disk_free.").in(sec).rng(0, 100),
		p("max_doc", Integer, "0", "Specifies the number of stored documents required to trigger the *refresh only* crawl mode. If this parameter is set to 0 this feature is disabled.").in(sec).rng(0, maxInt32),
		p("max_doc_slack", Integer, "1000", "Specifies the maximum number of documents that can be contained in a slack, up to the max_doc configuration parameter threshold.").in(sec).rng(0, maxInt32),
	}
}

// focusedParams returns the parameters of focused (MS-FSCCFG 2.2.4.19).
func focusedParams() []*ParamDef {
	const sec = "2.2.4.19"
	return []*ParamDef{
		p("languages", ListString, "N/A", "Specifies list of languages for documents that can be stored by the Web crawler, as specified in [ISO-639-1].").in(sec).each(checkLanguage),
		p("depth", Integer, "N/A", "Specifies the number of page hops to follow for web documents that do not match the specified languages, as set by the languages configuration parameter.").in(sec).rng(0, maxInt32),
	}
}

// adaptiveParams returns the parameters of adaptive (MS-FSCCFG 2.2.4.24).
func adaptiveParams() []*ParamDef {
	const sec = "2.2.4.24"
	return []*ParamDef{
		p("refresh_count", Integer, "4", "Specifies the number of minor refresh cycles. A refresh cycle can be divided into a number of fixed size time intervals that are called minor refresh cycles.").in(sec).rng(1, maxInt32),
		p("refresh_quota", Integer, "90", "Specifies the ratio of existing re-crawled URIs to new unseen URIs, expressed as a percentage. Setting the percentage low gives preference to new URIs.").in(sec).rng(0, 100),
		p("coverage_min", Integer, "25", "Specifies a minimum number of URIs to be crawled in a minor refresh cycle.").in(sec).rng(0, maxInt32),
		p("coverage_max_pct", Integer, "10", "Specifies a limit percentile to site re-crawl within a minor refresh cycle.").in(sec).rng(0, 100),
	}
}

// weightsParams returns the parameters of weights (MS-FSCCFG 2.2.4.25).
func weightsParams() []*ParamDef {
	const sec = "2.2.4.25"
	return []*ParamDef{
		p("inverse_length", Real, "1.0", "Specifies the weight for the inverse length rule. The inverse length rule gives URIs with less than 10 slashes a high score, and it gives no score to URIs with 10 or more slashes.").in(sec).rng(0, maxReal),
		p("inverse_depth", Real, "1.0", "Specifies the weight for the inverse depth rule. The number of page hops from a start URI is computed; a high score is assigned to URIs that have less than 10 page hops. The rule gives a score of zero for URIs with 10 or more page hops.").in(sec).rng(0, maxReal),
		p("is_landing_page", Real, "1.0", "Specifies the weight for the is_landing_page rule. This rule gives URIs that ends with a slash (/) or \"index.html\" a higher score. The rule gives no score to URIs that have query components.").in(sec).rng(0, maxReal),
		p("is_mime_markup", Real, "1.0", "Specifies the weight for the is_mime_markup rule. This rule gives an extra score to pages whose MIME type is specified in the uri_search_mime configuration parameter in section 2.2.3.").in(sec).rng(0, maxReal),
		p("change_history", Real, "10.0", "Specifies the weight for the change history rule. This rule scores on the basis of HTTP header \"last-modified\" value over time, as described in [RFC2616]. Documents that change frequently have a higher score than documents that change less frequently.").in(sec).rng(0, maxReal),
		p("sitemap", Real, "10.0", "Specifies the weight for the sitemap rule. The score for the sitemap rule is specified in 2.2.4.26.").in(sec).rng(0, maxReal),
	}
}

// smwParams returns the parameters of sitemap_weights (MS-FSCCFG 2.2.4.26).
func smwParams() []*ParamDef {
	const sec = "2.2.4.26"
	return []*ParamDef{
		p("always", Real, "1.0", "Specifies the weight of the changefreq value \"always\" as a numerical value.").in(sec).rng(0, 1),
		p("hourly", Real, "0.64", "Specifies the weight of the changefreq value \"hourly\" as a numerical value.").in(sec).rng(0, 1),
		p("daily", Real, "0.32", "Specifies the weight of the changefreq value \"daily\" as a numerical value.").in(sec).rng(0, 1),
		p("weekly", Real, "0.16", "Specifies the weight of the changefreq value \"weekly\" as a numerical value.").in(sec).rng(0, 1),
		p("monthly", Real, "0.08", "Specifies the weight of the changefreq value \"monthly\" as a numerical value.").in(sec).rng(0, 1),
		p("yearly", Real, "0.04", "Specifies the weight of the changefreq value \"yearly\" as a numerical value.").in(sec).rng(0, 1),
		p("never", Real, "0.0", "Specifies the weight of the changefreq value \"never\" as a numerical value.").in(sec).rng(0, 1),
		p("default", Real, "0.16", "Specifies the weight for all URIs that are not associated with a changefreq value.").in(sec).rng(0, 1),
	}
}

// crawlmodeParams returns the parameters of crawlmode (MS-FSCCFG 2.2.4.28).
func crawlmodeParams() []*ParamDef {
	const sec = "2.2.4.28"
	return []*ParamDef{
		p("mode", String, "FULL", "Specifies the depth of the crawling. Valid values are \"FULL\" or \"DEPTH:#\", where # is the number of page hops from a start URI.").in(sec).chk(checkCrawlMode),
		p("fwdlinks", Boolean, "yes", "Specifies whether to follow hyperlinks that are located on a different domain.").in(sec),
		p("fwdredirects", Boolean, "no", "Specifies whether to follow external HTTP redirects received from servers. External redirects are HTTP redirects that point from one domain to another domain.").in(sec),
		p("reset_level", Boolean, "yes", "Specifies whether to reset the page hop counter when following a hyperlink to another domain.").in(sec),
	}
}

// rssParams returns the parameters of rss (MS-FSCCFG 2.2.4.30).
func rssParams() []*ParamDef {
	const sec = "2.2.4.30"
	return []*ParamDef{
		p("start_uris", ListString, "N/A", "Specifies a list of start URIs that contain RSS channel documents.").in(sec).each(checkStartURI),
		p("start_uri_files", ListString, "N/A", "Specifies a list of paths to files that contain RSS channel documents. The format of these files MUST be a plain text file with one URI per line.").in(sec).each(checkReadableFile),
		p("auto_discover", Boolean, "no", "Specifies whether the Web crawler MUST identify new RSS channels.").in(sec),
		p("follow_links", Boolean, "yes", "Specifies that the Web crawler MUST follow hyperlinks from HTML documents found in the RSS channel.").in(sec),
		p("ignore_rules", Boolean, "no", "Specifies that the Web crawler MUST crawl all documents referenced by the RSS channel, regardless of their inclusion in the include and exclude rules, as specified in sections 2.2.4.1, 2.2.4.2, 2.2.4.3, and 2.2.4.4.").in(sec),
		p("index_feed", Boolean, "no", "Specifies whether the Web crawler MUST send RSS channel documents to the indexing engine.").in(sec),
		p("del_expired_links", Boolean, "no", "Specifies whether the Web crawler MUST delete documents from the RSS channel when they expire.").in(sec),
		p("max_link_age", Integer, "0", "Specifies the maximum age, in minutes, for a web document found in an RSS channel. Expired documents will be deleted if the del_expired_links configuration parameter is set to yes.").in(sec).rng(0, maxInt32),
		p("max_link_count", Integer, "128", "Specifies the maximum number of hyperlinks the Web crawler saves for an RSS channel. If the Web crawler encounters more hyperlinks, they expire in a first-in-first-out order. Expired documents will be deleted if del_expired_links configuration parameter is set to yes.").in(sec).rng(0, maxInt32),
	}
}

// loginParams returns the parameters of logins (MS-FSCCFG 2.2.4.31).
func loginParams() []*ParamDef {
	const sec = "2.2.4.31"
	return []*ParamDef{
		p("preload", String, "N/A", "Specifies the full URI of the page to retrieve previous to processing the login form.").in(sec).chk(checkStartURI),
		p("scheme", String, "N/A", "Specifies the URI scheme of the login site. Valid values: \"http\" or \"https\".").in(sec).enum("http", "https"),
		p("site", String, "N/A", "Specifies the hostname of the login form page.").in(sec),
		p("form", String, "N/A", "Specifies the path to the login form.").in(sec),
		p("action", String, "N/A", "Specifies whether the form uses HTTP POST or HTTP GET as specified in [RFC2616]. Valid values are: \"GET\" or \"POST\".").in(sec).enum("GET", "POST"),
		p("sites", ListString, "N/A", "Specifies a list of sites or hostnames that the Web crawler MUST log into previous to beginning the crawl process.").in(sec),
		p("ttl", Integer, "N/A", "Specifies the time, in seconds, that can elapse previous to requiring another login to continue the crawl.").in(sec).rng(0, maxInt32),
		p("html_form", String, "N/A", "Specifies the URI to the HTML page containing the login form.").in(sec).chk(checkStartURI),
		p("autofill", Boolean, "N/A", "Specifies whether the Web crawler should try to automatically fill out the HTML login form. The html_form configuration parameter MUST be specified if this attribute is set to \"yes\".").in(sec).alias("autocomplete").note("The parameters section calls it autocomplete; accepted as an alias. Setting it to yes requires html_form."),
		p("relogin_if_failed", Boolean, "N/A", "Specifies whether the Web crawler can attempt to re-login to the crawl site after ttl seconds if the login failed.").in(sec),
	}
}

// same adapts a name check that keeps the name as written.
func same(f func(string) error) func(string) (string, error) {
	return func(s string) (string, error) { return s, f(s) }
}
