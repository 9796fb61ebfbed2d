package fetch

import (
	"strings"
)

// Challenge is one authentication challenge of a WWW-Authenticate header
// (RFC 9110 section 11.6.1): a scheme and either a token68 or parameters.
type Challenge struct {
	Scheme  string            // lower case: "basic", "digest", "ntlm", "negotiate", ...
	Token68 string            // e.g. the NTLM challenge message, base64
	Params  map[string]string // parameter names in lower case
}

// Bounds on what ParseChallenges reads from a header.
const (
	maxChallengeHeader = 16 << 10
	maxChallenges      = 16
	maxChallengeParams = 32
)

// ParseChallenges parses the values of WWW-Authenticate (or
// Proxy-Authenticate) headers. Several challenges may share one value,
// separated by commas. Malformed parts end the parse of their value; what
// was parsed before is kept. It never panics.
func ParseChallenges(values []string) []Challenge {
	var out []Challenge
	total := 0
	for _, v := range values {
		total += len(v)
		if total > maxChallengeHeader {
			break
		}
		p := &chParser{s: v}
		for len(out) < maxChallenges {
			ch, ok := p.challenge()
			if !ok {
				break
			}
			out = append(out, ch)
		}
	}
	return out
}

type chParser struct {
	s string
	i int
}

func (p *chParser) skipSpace() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t') {
		p.i++
	}
}

// skipCommas skips white space and empty list elements.
func (p *chParser) skipCommas() {
	for p.i < len(p.s) && (p.s[p.i] == ' ' || p.s[p.i] == '\t' || p.s[p.i] == ',') {
		p.i++
	}
}

func isTokenChar(c byte) bool {
	if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' {
		return true
	}
	return strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0
}

func (p *chParser) token() string {
	start := p.i
	for p.i < len(p.s) && isTokenChar(p.s[p.i]) {
		p.i++
	}
	return p.s[start:p.i]
}

func (p *chParser) quoted() (string, bool) {
	// p.s[p.i] == '"'
	p.i++
	var b strings.Builder
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch c {
		case '"':
			p.i++
			return b.String(), true
		case '\\':
			p.i++
			if p.i >= len(p.s) {
				return "", false
			}
			c = p.s[p.i]
		}
		b.WriteByte(c)
		p.i++
	}
	return "", false
}

func (p *chParser) challenge() (Challenge, bool) {
	p.skipCommas()
	scheme := p.token()
	if scheme == "" {
		return Challenge{}, false
	}
	ch := Challenge{Scheme: strings.ToLower(scheme)}
	p.skipSpace()
	// token68: token68 chars followed by optional '=' padding, then end or comma.
	save := p.i
	start := p.i
	for p.i < len(p.s) && (isTokenChar(p.s[p.i]) || p.s[p.i] == '/' || p.s[p.i] == '+') {
		if p.s[p.i] == '=' {
			break
		}
		p.i++
	}
	if p.i > start {
		j := p.i
		for j < len(p.s) && p.s[j] == '=' {
			j++
		}
		k := j
		for k < len(p.s) && (p.s[k] == ' ' || p.s[k] == '\t') {
			k++
		}
		// It is a token68 when what follows the '='s is the end or a comma
		// and either there were '='s or the token is not followed by '='.
		if (k == len(p.s) || p.s[k] == ',') && (j > p.i || p.i == len(p.s) || p.s[p.i] != '=') {
			ch.Token68 = p.s[start:j]
			p.i = k
			return ch, true
		}
	}
	p.i = save
	for len(ch.Params) < maxChallengeParams {
		p.skipSpace()
		save := p.i
		name := p.token()
		if name == "" {
			break
		}
		p.skipSpace()
		if p.i >= len(p.s) || p.s[p.i] != '=' {
			// the scheme of the next challenge
			p.i = save
			break
		}
		p.i++
		p.skipSpace()
		var val string
		if p.i < len(p.s) && p.s[p.i] == '"' {
			v, ok := p.quoted()
			if !ok {
				p.i = len(p.s)
				break
			}
			val = v
		} else {
			val = p.token()
		}
		if ch.Params == nil {
			ch.Params = map[string]string{}
		}
		ch.Params[strings.ToLower(name)] = val
		p.skipSpace()
		if p.i < len(p.s) && p.s[p.i] == ',' {
			p.i++
			continue
		}
		break
	}
	return ch, true
}
