// Package urls parses, resolves and normalizes the URIs the crawler handles,
// and implements the URI-related parameters of the crawl configuration
// (MS-FSCCFG section 2.2.3): rewrite_rules, sort_query_params,
// allowed_schemes and exclude_exts.
//
// Parsing follows the WHATWG URL Standard for the special schemes a crawler
// fetches (http, https, ftp, and ws/wss which share their syntax): the same
// rules a browser applies when it follows a link, so the crawler requests
// what a user would. Resolve returns the WHATWG serialization (href).
// Other schemes (mailto:, javascript:, file:, ...) are rejected with
// ErrUnsupportedScheme: the crawler never fetches them.
//
// Normalize goes further and produces the canonical form used as the key of
// the crawl store, the duplicate filters and the per-site queues:
//
//   - relative references are resolved against the base (RFC 3986 section 5,
//     in the WHATWG variant: backslashes are slashes, tabs and newlines are
//     dropped, "%2e" is a dot segment);
//   - scheme and host are lower case, the host is IDNA-mapped to punycode
//     (UTS #46 nontransitional), IPv4 hosts in any WHATWG form (0x7f.1) are
//     dotted decimal, IPv6 hosts are compressed, a trailing dot is removed;
//   - default ports (http 80, https 443, ftp 21, ws 80, wss 443) are removed;
//   - dot segments are removed and an empty path becomes "/";
//   - percent-encoding is normalized (RFC 3986 section 6.2.2): escapes of
//     unreserved characters are decoded, other escapes get upper-case hex, a
//     '%' that starts no valid escape becomes "%25", and every character that
//     RFC 3986 does not allow in that component is encoded (UTF-8);
//   - the fragment and an empty query ("?") are dropped;
//   - optionally repeated slashes are collapsed and the query parameters are
//     sorted (sort_query_params).
//
// The result is always a valid RFC 3986 URI that net/url parses and prints
// back unchanged.
package urls
