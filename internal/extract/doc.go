// Package extract finds links and metadata in fetched documents.
//
// Extract reads HTML (and WML) with golang.org/x/net/html's tokenizer, in
// one streaming pass without building a tree. It returns every link with
// the MS-FSCCFG link_extraction kind it came from (a, action, area, card,
// comment, embed, frame, go, img, layer, link, meta, meta_refresh, object,
// script, script_java, style), unresolved, together with <base href>, the
// title, description, keywords and language, the meta robots directives
// (for check_meta_robots), the meta refresh (for html_redir_is_redir and
// html_redir_threshold), the meta tags (for use_meta_csum) and the visible
// text (for checksums and indexing). Documents in other encodings than
// UTF-8 are decoded first (BOM, Content-Type, <meta charset>). Every output
// is capped: links, text, URL length, anchor text, title and meta values.
//
// ParseSitemap reads sitemaps.org XML sitemaps and sitemap indexes, text
// sitemaps, RSS and Atom feeds, gzip-compressed or not, with encoding/xml
// in streaming mode, capped at the protocol's 50,000 URLs and 50 MiB.
//
// Checksum computes the duplicate-detection checksum under use_meta_csum
// and csum_cut_off.
package extract
