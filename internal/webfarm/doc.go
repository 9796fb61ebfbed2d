// Package webfarm is a deterministic synthetic web for tests, demos and
// benchmarks of the crawler, served on loopback.
//
// A farm has Config.Hosts virtual sites named site0000.farm.test,
// site0001.farm.test, ..., each on its own address 127.1.x.y (host i lives
// on 127.1.<i/254>.<i%254+1>; the last Config.SharedIPHosts hosts share the
// addresses of the first ones, for per-IP politeness), all on one port.
// Linux routes all of 127.0.0.0/8 to the loopback interface, so no setup
// is needed. HostsFile/WriteHostsFile give the names in /etc/hosts format
// for the crawler's resolver.
//
// Everything served is a pure function of (Config, host, path, query,
// refresh cycle): Describe computes a response without serving it, and
// Expect computes, by a breadth-first walk of that function, the exact set
// of URLs a correct crawl fetches; the doc comment of Expect is the
// contract crawlers are tested against. Nothing large is kept in memory:
// pages are generated on the fly from the seed.
//
// The URL space of a host (P = Config.PagesPerHost; N an item number):
//
//	/                        home page (page 0): links to backbone pages 1..8 and the traps
//	/<topic>/<n>.html        ordinary page n (1 <= n < P): backbone children n*8+1..n*8+8,
//	                         4 random pages, 2 pages of other hosts, prose text
//	/robots.txt              FeatRobots: three rule variants; FeatRobotsErrors: 404/401/403/503
//	/sitemap.xml             FeatSitemap: every live page plus /hidden/<i>.html (sitemap only)
//	/redir/<N>/h<k>          FeatRedirects: 301/302/303/307/308 chains (1..12 hops, some to other
//	                         hosts), loops of 2-3, an endless chain
//	/mr/<N>/h<k>.html        FeatMetaRefresh: meta-refresh chains, loops, a 10 s refresh
//	/k/<kind>/<N>...         FeatLinkKinds: targets reachable only through one link kind
//	/dup/<N>/<k>.html, /q/<N>?a=..&b=..&c=.. (three orders), /near/<N>/<k>.html
//	                         FeatDuplicates: exact duplicates and near duplicates (no links)
//	/files/<N>.pdf|txt|png|bin   FeatFiles
//	/err/<code>/<N>.html     FeatErrors: 404, 410, 500, 503 + Retry-After
//	/nf/<n>.html             FeatMetaRobots: linked only from nofollow page n
//	/cal/YYYY-MM/, /cal/YYYY-MM-DD.html   FeatCalendar: infinite calendar
//	/deep/(more/)*, /deep2/(a/b/)*        FeatDeepPaths: ever-deeper paths
//	/slow/<i>.html, /stall/0.html, /big/0.html   FeatSlow, FeatStall, FeatLarge
//
// Special items hang off ordinary pages: page n carries feature slot
// n%10 with item number n/10 (1 redirects, 2 meta refresh, 3 link kinds,
// 4 duplicates, 5 files, 6 errors, 7 robots META, 8 <base href>).
// Documents carry ETag and Last-Modified and answer 304 to
// If-None-Match/If-Modified-Since; text is gzip- or deflate-compressed
// when Accept-Encoding asks. With FeatChanges, SetCycle(n) changes the
// text of some pages, adds pages (in cycles 1-2) and removes others (404 or
// 410 from cycles 1-2 on, still linked).
//
// Every request is logged (Requests, and as JSON lines to
// Config.LogWriter).
package webfarm
