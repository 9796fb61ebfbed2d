// Package robots implements the Robots Exclusion Protocol of RFC 9309 for
// trawl's node scheduler: a robots.txt parser, rule matching by product
// token, the status-code policy of RFC 9309 section 2.3.1 adjusted by the
// MS-FSCCFG options robots_auth_ignore and robots_tout_ignore, and a bounded
// per-site cache whose entries live robots_ttl seconds.
//
// Parsing follows RFC 9309 and the behaviour of Google's reference parser:
//
//   - at most MaxFileSize (500 KiB) of the file is parsed; a UTF-8 BOM is
//     skipped and a UTF-16 BOM makes the file be decoded as UTF-16;
//   - lines end with LF, CR or CRLF; "#" starts a comment;
//   - keys are case-insensitive, whitespace around the colon is ignored, a
//     line without a colon is accepted when it is exactly "key value", and
//     common misspellings (useragent, dissallow, ...) are accepted;
//   - a group is one or more user-agent lines followed by rules; other
//     records (sitemap, crawl-delay, unknown keys) do not end a group;
//   - all groups naming the crawler's product token are merged; when none
//     does, all "*" groups are merged; when there is none, everything is
//     allowed;
//   - the most specific (longest, in octets of the pattern) matching rule
//     wins, Allow wins a tie; "*" matches any sequence and a final "$"
//     anchors the end; as in Google's parser, "Allow: /d/index.html" also
//     allows "/d/";
//   - patterns and paths are compared after percent-encoding normalisation:
//     non-ASCII and control octets are percent-encoded, hex digits upper
//     cased, and escapes of unreserved characters decoded;
//   - Crawl-delay belongs to the user agents listed before it in its group
//     (as crawler-commons does); Sitemap lines are global and may be
//     relative to the robots.txt URL.
//
// The package does no I/O except through the Loader a Cache is given.
package robots
