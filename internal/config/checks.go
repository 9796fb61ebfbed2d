package config

import (
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// checkContext is what syntax checks may consult: the configuration file's
// directory (relative paths) and a file reader, and the key for encrypted
// passwords when one was given.
type checkContext struct {
	dir      string
	readFile func(string) ([]byte, error)
	key      *Key
}

func (cx *checkContext) read(p string) ([]byte, error) {
	if cx == nil || cx.readFile == nil {
		return nil, errors.New("no file access")
	}
	return cx.readFile(resolvePath(cx.dir, p))
}

func checkRegexp(_ *checkContext, s string) error {
	if _, err := CompileRegexp(s); err != nil {
		return fmt.Errorf("invalid regular expression \"%s\": %v", s, err)
	}
	return nil
}

func checkIPMask(_ *checkContext, s string) error  { return CheckIPMask(s) }
func checkIP6Mask(_ *checkContext, s string) error { return CheckIP6Mask(s) }

func checkRuleFile(cx *checkContext, s string, scope RuleScope) error {
	data, err := cx.read(s)
	if err != nil {
		return fmt.Errorf("rule file %q: %v", s, unwrapPathError(err))
	}
	if _, err := ParseRuleFile(data, scope); err != nil {
		return fmt.Errorf("rule file %q: %v", s, err)
	}
	return nil
}

func checkDomainRuleFile(cx *checkContext, s string) error { return checkRuleFile(cx, s, DomainRules) }
func checkURIRuleFile(cx *checkContext, s string) error    { return checkRuleFile(cx, s, URIRules) }

func checkReadableFile(cx *checkContext, s string) error {
	if _, err := cx.read(s); err != nil {
		return fmt.Errorf("file %q: %v", s, unwrapPathError(err))
	}
	return nil
}

// unwrapPathError drops the path from an *fs.PathError (the message already
// names the file as written).
func unwrapPathError(err error) error {
	var pe interface{ Unwrap() error }
	if errors.As(err, &pe) {
		if inner := pe.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

var mimeRE = regexp.MustCompile(`^([!#$%&'+.^_` + "`" + `|~0-9A-Za-z-]+|\*)/([!#$%&'+.^_` + "`" + `|~0-9A-Za-z-]+|\*)$`)

func checkMIME(_ *checkContext, s string) error {
	if !mimeRE.MatchString(s) {
		return fmt.Errorf("invalid MIME type %q (want type/subtype; * only as a whole field)", s)
	}
	return nil
}

var headerNameRE = regexp.MustCompile(`^[!#$%&'*+.^_` + "`" + `|~0-9A-Za-z-]+$`)

func checkHeader(_ *checkContext, s string) error {
	name, _, ok := strings.Cut(s, ":")
	if !ok || !headerNameRE.MatchString(strings.TrimSpace(name)) || strings.ContainsAny(s, "\r\n") {
		return fmt.Errorf("invalid header %q (want \"Name: value\")", s)
	}
	return nil
}

func checkHeaderName(s string) error {
	if !headerNameRE.MatchString(s) {
		return fmt.Errorf("invalid HTTP header name %q", s)
	}
	return nil
}

func checkStartURI(_ *checkContext, s string) error {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return fmt.Errorf("invalid URI %q (want an absolute URI such as http://host/)", s)
	}
	return nil
}

func checkLanguage(_ *checkContext, s string) error {
	if len(s) != 2 || !isLetters(s) {
		return fmt.Errorf("invalid language %q (want a two-letter ISO 639-1 code)", s)
	}
	return nil
}

func isLetters(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

func checkHostName(_ *checkContext, s string) error {
	if strings.ContainsAny(s, " \t/") {
		return fmt.Errorf("invalid host name %q", s)
	}
	return nil
}

func checkNonEmptyName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	return nil
}

func checkSectionName(s string) error {
	if s == "" {
		return errors.New("empty name")
	}
	return nil
}

func checkLevelName(s string) error {
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 || n > 1000 {
		return fmt.Errorf("priority level section name %q must be a level number from 1", s)
	}
	return nil
}

func checkPayloadName(s string) error {
	u := strings.TrimPrefix(s, "prefix:")
	if u == "" {
		return errors.New("empty URI")
	}
	return nil
}

// CrawlMode is the parsed value of crawlmode/mode: FULL (Depth -1) or
// DEPTH:n.
type CrawlMode struct {
	Full  bool
	Depth int
}

// ParseCrawlMode parses "FULL" or "DEPTH:n" (MS-FSCCFG 2.2.4.28).
func ParseCrawlMode(s string) (CrawlMode, error) {
	if strings.EqualFold(s, "FULL") {
		return CrawlMode{Full: true, Depth: -1}, nil
	}
	if d, ok := cutPrefixFold(s, "DEPTH:"); ok {
		n, err := strconv.Atoi(strings.TrimSpace(d))
		if err == nil && n >= 0 && n <= maxInt32 {
			return CrawlMode{Depth: n}, nil
		}
	}
	return CrawlMode{}, fmt.Errorf("invalid crawl mode %q (want FULL or DEPTH:n)", s)
}

func checkCrawlMode(_ *checkContext, s string) error { _, err := ParseCrawlMode(s); return err }

func cutPrefixFold(s, prefix string) (string, bool) {
	if len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix) {
		return s[len(prefix):], true
	}
	return s, false
}

// ErrorAction is a parsed http_errors or ftp_errors value (MS-FSCCFG
// 2.2.4.11): KEEP or DELETE[:X], optionally followed by ", RETRY[:X]".
type ErrorAction struct {
	// Delete is false for KEEP.
	Delete bool
	// After is the X of DELETE:X (0: delete at once); for KEEP:X it is
	// kept but has no meaning.
	After int
	// Retry is the X of RETRY:X (0 when there is no RETRY; 1 for a bare
	// RETRY).
	Retry int
}

// ParseErrorAction parses an error handling value such as
// "DELETE:3, RETRY:1".
func ParseErrorAction(s string) (ErrorAction, error) {
	var a ErrorAction
	bad := func() (ErrorAction, error) {
		return ErrorAction{}, fmt.Errorf("invalid error action %q (want KEEP or DELETE[:X], optionally followed by \", RETRY[:X]\")", s)
	}
	first, rest, hasRetry := strings.Cut(s, ",")
	verb, n, hasN := strings.Cut(strings.TrimSpace(first), ":")
	switch strings.ToUpper(strings.TrimSpace(verb)) {
	case "KEEP":
	case "DELETE":
		a.Delete = true
	default:
		return bad()
	}
	if hasN {
		x, err := strconv.Atoi(strings.TrimSpace(n))
		if err != nil || x < 0 {
			return bad()
		}
		a.After = x
	}
	if hasRetry {
		verb, n, hasN := strings.Cut(strings.TrimSpace(rest), ":")
		if !strings.EqualFold(strings.TrimSpace(verb), "RETRY") {
			return bad()
		}
		a.Retry = 1
		if hasN {
			x, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil || x < 0 {
				return bad()
			}
			a.Retry = x
		}
	}
	return a, nil
}

func checkErrorAction(_ *checkContext, s string) error { _, err := ParseErrorAction(s); return err }

var errorCodeRE = regexp.MustCompile(`^[0-9x]{3}$`)

// checkErrorCode validates (and lower-cases) an http_errors/ftp_errors
// attrib name.
func checkErrorCode(s string) (string, error) {
	l := strings.ToLower(s)
	if l == "net" || l == "int" || l == "ttl" || errorCodeRE.MatchString(l) && l[0] != 'x' {
		return l, nil
	}
	return s, fmt.Errorf("invalid error code %q (want a status code such as 404 or 4xx, or net, int, ttl)", s)
}

// TimeSlot is a parsed variable_delay slot name DDD:HH.MM-DDD:HH.MM: the
// start and end as a weekday and minutes after midnight.
type TimeSlot struct {
	StartDay, EndDay time.Weekday
	StartMin, EndMin int
}

var slotRE = regexp.MustCompile(`^(?i)(mon|tue|wed|thu|fri|sat|sun):(\d{1,2})(?:[.:](\d{2}))?-(mon|tue|wed|thu|fri|sat|sun):(\d{1,2})(?:[.:](\d{2}))?$`)

var weekdays = map[string]time.Weekday{"sun": time.Sunday, "mon": time.Monday, "tue": time.Tuesday, "wed": time.Wednesday, "thu": time.Thursday, "fri": time.Friday, "sat": time.Saturday}

// ParseTimeSlot parses a variable_delay slot such as "Mon:21.00-Mon:22.30"
// or, as in example 3.7, "Wed:09-Wed:19" (minutes optional).
func ParseTimeSlot(s string) (TimeSlot, error) {
	m := slotRE.FindStringSubmatch(s)
	if m == nil {
		return TimeSlot{}, fmt.Errorf("invalid time slot %q (want DDD:HH.MM-DDD:HH.MM such as Mon:21.00-Mon:22.30)", s)
	}
	minutes := func(h, mm string) (int, bool) {
		hh, _ := strconv.Atoi(h)
		mi := 0
		if mm != "" {
			mi, _ = strconv.Atoi(mm)
		}
		if hh > 24 || mi > 59 || hh == 24 && mi != 0 {
			return 0, false
		}
		return hh*60 + mi, true
	}
	sm, ok1 := minutes(m[2], m[3])
	em, ok2 := minutes(m[5], m[6])
	if !ok1 || !ok2 {
		return TimeSlot{}, fmt.Errorf("invalid time slot %q: hour or minute out of range", s)
	}
	return TimeSlot{StartDay: weekdays[strings.ToLower(m[1])], StartMin: sm, EndDay: weekdays[strings.ToLower(m[4])], EndMin: em}, nil
}

func checkTimeSlot(s string) error { _, err := ParseTimeSlot(s); return err }

func checkSlotDelay(_ *checkContext, s string) error {
	if strings.EqualFold(s, "suspend") {
		return nil
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || f < 0 || f != f || !isDecimal(s) {
		return fmt.Errorf("invalid delay %q (want seconds, or suspend)", s)
	}
	return nil
}

// RewriteRule is a parsed rewrite_rules member "*match*replacement*".
type RewriteRule struct {
	Pattern, Replacement string
}

// ParseRewriteRule splits a rewrite rule on its delimiter (the first
// character, any non-space) and compiles the pattern.
func ParseRewriteRule(s string) (RewriteRule, error) {
	if s == "" {
		return RewriteRule{}, errors.New("empty rewrite rule")
	}
	d := s[:1]
	if strings.TrimSpace(d) == "" || d[0] >= 0x80 {
		return RewriteRule{}, fmt.Errorf("invalid rewrite rule %q: the delimiter must be an ASCII non-space character", s)
	}
	parts := strings.Split(s[1:], d)
	if len(parts) != 3 || parts[2] != "" {
		return RewriteRule{}, fmt.Errorf("invalid rewrite rule %q (want %smatch_pattern%sreplacement%s)", s, d, d, d)
	}
	if err := checkRegexp(nil, parts[0]); err != nil {
		return RewriteRule{}, fmt.Errorf("rewrite rule %q: %v", s, err)
	}
	return RewriteRule{Pattern: parts[0], Replacement: parts[1]}, nil
}

func checkRewriteRule(_ *checkContext, s string) error { _, err := ParseRewriteRule(s); return err }

// Proxy is a parsed proxy member "(http://)(username:password@)host(:port)".
type Proxy struct {
	User, Password string
	Host           string
	Port           int
}

// ParseProxy parses a proxy member. The password may be "!ENC!..."
// (decrypt it with Key.Password).
func ParseProxy(s string) (Proxy, error) {
	var p Proxy
	rest, _ := cutPrefixFold(strings.TrimSpace(s), "http://")
	if i := strings.LastIndex(rest, "@"); i >= 0 {
		u, pw, ok := strings.Cut(rest[:i], ":")
		if !ok || u == "" {
			return Proxy{}, fmt.Errorf("invalid proxy %q: credentials must be username:password@", s)
		}
		p.User, p.Password = u, pw
		rest = rest[i+1:]
	}
	host, port, hasPort := strings.Cut(rest, ":")
	if host == "" || strings.ContainsAny(host, "/ \t") {
		return Proxy{}, fmt.Errorf("invalid proxy %q (want (http://)(username:password@)hostname(:port))", s)
	}
	p.Host = host
	if hasPort {
		n, err := strconv.Atoi(port)
		if err != nil || n < 1 || n > 65535 {
			return Proxy{}, fmt.Errorf("invalid proxy %q: bad port %q", s, port)
		}
		p.Port = n
	}
	return p, nil
}

func checkProxy(cx *checkContext, s string) error {
	p, err := ParseProxy(s)
	if err != nil {
		return err
	}
	return checkPassword(cx, p.Password)
}

// Credentials is a parsed passwd value.
type Credentials struct {
	User, Password string
	// Realm and Scheme are empty in the two-field form (Basic is used).
	Realm, Scheme string
}

// Schemes are the authentication schemes of passwd (MS-FSCCFG 2.2.4.20).
var authSchemes = []string{"basic", "digest", "ntlmv1", "ntlmv2", "auto"}

// ParseCredentials parses "username:password" or
// "username:password:realm:scheme". The user name ends at the first colon.
// A password with colons needs the four-field form (the realm and scheme
// are the last two fields) or encryption; three fields, or a last field that
// is not a scheme, are errors rather than a guess.
func ParseCredentials(s string) (Credentials, error) {
	f := strings.Split(s, ":")
	n := len(f)
	switch {
	case n < 2 || f[0] == "":
		return Credentials{}, fmt.Errorf("invalid credentials (want username:password or username:password:realm:scheme)")
	case n == 2:
		return Credentials{User: f[0], Password: f[1]}, nil
	case n == 3:
		return Credentials{}, fmt.Errorf("invalid credentials: three fields (want username:password or username:password:realm:scheme)")
	case !contains(authSchemes, strings.ToLower(f[n-1])):
		return Credentials{}, fmt.Errorf("invalid credentials: unknown scheme %q (want one of %s)%s", f[n-1], strings.Join(authSchemes, ", "), suggest(f[n-1], authSchemes))
	}
	return Credentials{User: f[0], Password: strings.Join(f[1:n-2], ":"), Realm: f[n-2], Scheme: strings.ToLower(f[n-1])}, nil
}

func checkCredentials(cx *checkContext, s string) error {
	c, err := ParseCredentials(s)
	if err != nil {
		return err
	}
	return checkPassword(cx, c.Password)
}

func checkUserPassword(cx *checkContext, s string) error {
	u, pw, ok := strings.Cut(s, ":")
	if !ok || u == "" {
		return errors.New("invalid account (want username:password)")
	}
	return checkPassword(cx, pw)
}

// checkPassword validates an encrypted password's form, and decrypts it
// when a key is available.
func checkPassword(cx *checkContext, pw string) error {
	if !IsEncrypted(pw) {
		return nil
	}
	if cx != nil && cx.key != nil {
		_, err := cx.key.Decrypt(pw)
		return err
	}
	_, err := decodeSealed(pw)
	return err
}

func checkNonEmptyValue(_ *checkContext, s string) error {
	if strings.TrimSpace(s) == "" {
		return errors.New("empty value")
	}
	return nil
}

var warcPrefixRE = regexp.MustCompile(`^[A-Za-z0-9._-]+$`)

func checkWARCPrefix(_ *checkContext, s string) error {
	if !warcPrefixRE.MatchString(s) {
		return fmt.Errorf("invalid file name prefix %q (want letters, digits, '.', '_' or '-')", s)
	}
	return nil
}
