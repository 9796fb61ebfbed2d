package robots

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"
)

// MaxFileSize is how much of a robots.txt file is parsed: RFC 9309 section
// 2.5 asks crawlers to parse at least 500 kibibytes.
const MaxFileSize = 500 * 1024

// maxCrawlDelay caps a Crawl-delay value; longer values are clamped.
const maxCrawlDelay = 24 * time.Hour

// File is a parsed robots.txt file. It is immutable once parsed and safe for
// concurrent use.
type File struct {
	groups   []group
	sitemaps []string // raw values, deduplicated, in file order
	// Warnings counts lines that could not be understood (no key, an empty
	// key, a rule outside any group). Known extension records
	// (Request-rate, Visit-time, Host, ...) are not warnings.
	Warnings int
}

type agent struct {
	token      string // lower case; "*" for the wildcard
	crawlDelay time.Duration
	hasDelay   bool
}

type group struct {
	agents []agent
	rules  []rule
}

type rule struct {
	allow   bool
	pattern string // normalised, trailing '*' removed
	anchor  bool   // pattern ended with '$'
}

type directive int

const (
	dirUnknown directive = iota
	dirExtension
	dirUserAgent
	dirAllow
	dirDisallow
	dirSitemap
	dirCrawlDelay
)

// keys maps lower-case keys, including misspellings accepted by Google's
// parser and crawler-commons, to directives.
var keys = map[string]directive{
	"user-agent": dirUserAgent, "useragent": dirUserAgent, "user agent": dirUserAgent,
	"user_agent": dirUserAgent, "useg-agent": dirUserAgent,
	"allow":    dirAllow,
	"disallow": dirDisallow, "dissallow": dirDisallow, "dissalow": dirDisallow, "disalow": dirDisallow,
	"diasllow": dirDisallow, "disallaw": dirDisallow, "desallow": dirDisallow, "dis-allow": dirDisallow,
	"sitemap": dirSitemap, "site-map": dirSitemap, "sitemaps": dirSitemap,
	"crawl-delay": dirCrawlDelay, "crawldelay": dirCrawlDelay, "crawl_delay": dirCrawlDelay,
	// Known extensions: accepted, no effect on rules.
	"request-rate": dirExtension, "visit-time": dirExtension, "robot-version": dirExtension,
	"comment": dirExtension, "host": dirExtension, "clean-param": dirExtension, "noindex": dirExtension,
	"no-index": dirExtension, "content-signal": dirExtension, "content-signals": dirExtension,
	"llm-policy": dirExtension,
}

// Parse parses a robots.txt body. It never fails: what it cannot understand
// it skips (and counts in Warnings), as RFC 9309 section 2.2 asks.
func Parse(data []byte) *File {
	data = decode(data)
	f := &File{}
	var cur *group    // group being built
	inAgents := false // the previous directive was a user-agent line (or only non-rules followed it)
	seen := map[string]bool{}

	for len(data) > 0 {
		var line []byte
		i := bytes.IndexAny(data, "\r\n")
		if i < 0 {
			line, data = data, nil
		} else {
			line = data[:i]
			if data[i] == '\r' && i+1 < len(data) && data[i+1] == '\n' {
				i++
			}
			data = data[i+1:]
		}
		if j := bytes.IndexByte(line, '#'); j >= 0 {
			line = line[:j]
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		key, value, ok := splitLine(string(line))
		if !ok {
			f.Warnings++
			continue
		}
		d, known := keys[key]
		if !known && (key == "http" || key == "https") && strings.HasPrefix(value, "//") {
			// A bare sitemap URL on its own line (crawler-commons accepts it).
			d, value = dirSitemap, key+":"+value
		}
		switch d {
		case dirUserAgent:
			if cur == nil || !inAgents {
				f.groups = append(f.groups, group{})
				cur = &f.groups[len(f.groups)-1]
			}
			inAgents = true
			cur.agents = append(cur.agents, agent{token: agentToken(value)})
		case dirAllow, dirDisallow:
			if cur == nil {
				f.Warnings++ // a rule before any user-agent line
				continue
			}
			inAgents = false
			if value == "" {
				continue // "Disallow:" with no path allows everything: no rule
			}
			cur.rules = append(cur.rules, makeRules(d == dirAllow, value)...)
		case dirCrawlDelay:
			if cur == nil {
				continue
			}
			delay, ok := parseDelay(value)
			if !ok {
				f.Warnings++
				continue
			}
			for k := range cur.agents {
				a := &cur.agents[k]
				if !a.hasDelay { // the first Crawl-delay of an agent wins
					a.crawlDelay, a.hasDelay = delay, true
				}
			}
		case dirSitemap:
			if value != "" && !seen[value] {
				seen[value] = true
				f.sitemaps = append(f.sitemaps, value)
			}
		case dirExtension:
		default:
			f.Warnings++
		}
	}
	return f
}

// decode strips a BOM, decodes UTF-16 when a UTF-16 BOM says so, and cuts
// the input to MaxFileSize.
func decode(data []byte) []byte {
	switch {
	case bytes.HasPrefix(data, []byte{0xEF, 0xBB, 0xBF}):
		data = data[3:]
	case len(data) >= 2 && (data[0] == 0xFF && data[1] == 0xFE || data[0] == 0xFE && data[1] == 0xFF):
		be := data[0] == 0xFE
		data = data[2:]
		if len(data) > 2*MaxFileSize {
			data = data[:2*MaxFileSize]
		}
		u := make([]uint16, len(data)/2)
		for i := range u {
			if be {
				u[i] = uint16(data[2*i])<<8 | uint16(data[2*i+1])
			} else {
				u[i] = uint16(data[2*i+1])<<8 | uint16(data[2*i])
			}
		}
		data = []byte(string(utf16.Decode(u)))
	}
	if len(data) > MaxFileSize {
		data = data[:MaxFileSize]
	}
	return data
}

// splitLine returns the lower-case key and the value of a trimmed,
// comment-free line.
func splitLine(line string) (key, value string, ok bool) {
	if i := strings.IndexByte(line, ':'); i >= 0 {
		key = strings.ToLower(strings.TrimSpace(line[:i]))
		value = strings.TrimSpace(line[i+1:])
		if key == "" {
			return "", "", false
		}
		if _, known := keys[key]; !known {
			// "user agent: x" keeps its space; "disallow /x: y" is not a key.
			if f := strings.Fields(key); len(f) > 1 {
				if _, k2 := keys[strings.Join(f, " ")]; !k2 {
					return tryFields(line)
				}
				key = strings.Join(f, " ")
			}
		}
		return key, value, true
	}
	return tryFields(line)
}

// tryFields accepts "key value" (no colon), as Google's parser does.
func tryFields(line string) (string, string, bool) {
	f := strings.Fields(line)
	if len(f) != 2 {
		return "", "", false
	}
	k := strings.ToLower(f[0])
	if _, ok := keys[k]; !ok {
		return "", "", false
	}
	return k, f[1], true
}

// agentToken extracts the product token of a user-agent value: "*", or the
// leading run of letters, '-' and '_' (RFC 9309 section 2.2.1), lower cased.
// Digits are accepted too, so that "bot1" and "bot2" stay distinct tokens.
func agentToken(v string) string {
	if strings.HasPrefix(v, "*") {
		return "*"
	}
	end := 0
	for end < len(v) {
		c := v[end]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' {
			end++
			continue
		}
		break
	}
	return strings.ToLower(v[:end])
}

func parseDelay(v string) (time.Duration, bool) {
	if f := strings.Fields(v); len(f) > 0 {
		v = f[0]
	}
	s, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(s) || s < 0 {
		return 0, false
	}
	if s > maxCrawlDelay.Seconds() {
		return maxCrawlDelay, true
	}
	return time.Duration(s * float64(time.Second)), true
}

// makeRules turns an allow or disallow value into rules. Like Google's
// parser, an Allow of ".../index.htm" or ".../index.html" also allows the
// directory itself (".../$").
func makeRules(allow bool, value string) []rule {
	// Only the first whitespace-separated word is the path (trailing
	// junk after a path is ignored).
	if i := strings.IndexAny(value, " \t"); i >= 0 {
		value = value[:i]
	}
	anchor := false
	if strings.HasSuffix(value, "$") {
		anchor = true
		value = value[:len(value)-1]
	}
	if value == "" {
		value = "/"
	}
	if value[0] != '/' && value[0] != '*' {
		// RFC 9309 patterns start with "/"; "Disallow: private" is read
		// as "/private" rather than as a rule that can never match.
		value = "/" + value
	}
	out := []rule{{allow: allow, pattern: normalize(value), anchor: anchor}}
	if allow && !anchor && (strings.HasSuffix(value, "/index.htm") || strings.HasSuffix(value, "/index.html")) {
		dir := value[:strings.LastIndex(value, "/index.htm")+1]
		out = append(out, rule{allow: true, pattern: normalize(dir), anchor: true})
	}
	return out
}

const upperHex = "0123456789ABCDEF"

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	default:
		return c - 'A' + 10
	}
}

func unreserved(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' ||
		c == '-' || c == '.' || c == '_' || c == '~'
}

// normalize puts a pattern or a path into the canonical form compared by
// match: octets outside printable ASCII are percent-encoded, escapes get
// upper-case hex digits, and escapes of unreserved characters are decoded.
// The same function serves patterns and paths: '*' and '$' are left alone,
// and their meaning is given by match, which reads them only in patterns.
func normalize(s string) string {
	clean := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' || c <= 0x20 || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]):
			v := unhex(s[i+1])<<4 | unhex(s[i+2])
			if unreserved(v) {
				b.WriteByte(v)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[v>>4])
				b.WriteByte(upperHex[v&15])
			}
			i += 2
		case c <= 0x20 || c >= 0x7f:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}
