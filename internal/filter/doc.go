// Package filter implements the include and exclude rules of a crawl
// collection (MS-FSCCFG sections 2.2.4.1-2.2.4.4): include_domains,
// exclude_domains, include_uris and exclude_uris, with their rule types
// exact, prefix, suffix, regexp, ipmask, ip6mask and file.
//
// A List is one compiled section; a Filter combines the four sections:
//
//	allowed(uri) = (include_domains is empty  or  it matches the host or IP)
//	           and not exclude_domains matches the host or IP
//	           and (include_uris is empty  or  it matches the URI)
//	           and not exclude_uris matches the URI
//
// Within a section the rules are alternatives: the section matches when one
// rule does. Semantics of the rule types:
//
//   - Domain rules compare with the host name of the URI (no port, no
//     brackets around an IPv6 literal), case-insensitively: patterns and
//     hosts are lower-cased. exact is equality, prefix and suffix are plain
//     string tests as the spec words them ("suffix contoso.com" also matches
//     "notcontoso.com"; write ".contoso.com" for subdomains only).
//   - URI rules compare with the whole URI as given, which should be the
//     normalized form (package urls), case-sensitively: a path is case
//     sensitive. Because normalization lower-cases scheme and host, the
//     scheme and authority of exact and prefix patterns ("HTTP://WWW.X.com/A")
//     are lower-cased when compiled; the rest of the pattern is kept.
//   - regexp is a .NET regular expression (github.com/dlclark/regexp2) that
//     may match anywhere in the string (.NET IsMatch semantics: use ^ and $
//     to anchor). Domain regexps ignore case. Each match is bounded by a
//     timeout; a timed-out match rejects the URI.
//   - ipmask and ip6mask (domain sections only) match the IP address the
//     host resolved to (or the host itself when it is an IP literal); with
//     no address known they do not match. See ParseIPMask and ParseIP6Mask
//     for the accepted forms.
//   - file names a text file of further rules, one "ruletype:rule" per line
//     (split at the first ':'); blank lines and lines starting with '#' are
//     ignored, a UTF-8 byte order mark is skipped, and a file may not name
//     another file. A relative path is resolved against the base directory
//     option (the configuration file's directory).
//
// Matching is fast and does not allocate on the common path: exact rules
// sit in a hash set, prefix and suffix rules in sorted prefix-free arrays
// searched in O(log n), and a regexp only runs when the input contains the
// literal text every match of it needs. A Filter caches the verdict of the
// domain name rules per host in a bounded, lock-free table.
package filter
