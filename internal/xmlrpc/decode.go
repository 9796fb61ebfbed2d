package xmlrpc

import (
	"bytes"
	"encoding/base64"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Errors a decoding error wraps; test for them with errors.Is.
var (
	// ErrInvalid reports a body that is not a well-formed XML-RPC message.
	ErrInvalid = errors.New("xmlrpc: invalid message")
	// ErrLimit reports a message beyond the Limits.
	ErrLimit = errors.New("xmlrpc: limit exceeded")
)

// Default limits.
const (
	DefaultMaxBytes  = 16 << 20
	DefaultMaxDepth  = 100
	DefaultMaxValues = 1 << 20
)

// Limits bound what one decode may read. A zero or negative field takes its
// default.
type Limits struct {
	// MaxBytes is the largest message, in bytes.
	MaxBytes int64
	// MaxDepth is the deepest nesting of values; a parameter is at depth 1.
	MaxDepth int
	// MaxValues is the largest number of values in one message, counting
	// every array element and struct member.
	MaxValues int
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxValues <= 0 {
		l.MaxValues = DefaultMaxValues
	}
	return l
}

// DecodeCall reads one <methodCall> from r.
func DecodeCall(r io.Reader, lim Limits) (*Call, error) {
	d := newDecoder(r, lim)
	if err := d.expectStart("methodCall"); err != nil {
		return nil, err
	}
	if err := d.expectStart("methodName"); err != nil {
		return nil, err
	}
	name, err := d.text("methodName")
	if err != nil {
		return nil, err
	}
	name = strings.TrimSpace(name)
	if name == "" {
		return nil, d.invalid("empty methodName")
	}
	c := &Call{Method: name}
	tok, err := d.next()
	if err != nil {
		return nil, err
	}
	if se, ok := tok.(xml.StartElement); ok {
		if se.Name.Local != "params" {
			return nil, d.invalid("<%s> where <params> or </methodCall> was expected", se.Name.Local)
		}
		if c.Params, err = d.params(); err != nil {
			return nil, err
		}
		if err := d.expectEnd(); err != nil {
			return nil, err
		}
	}
	// tok was </methodCall>, or we consumed it above.
	if err := d.expectEOF(); err != nil {
		return nil, err
	}
	return c, nil
}

// DecodeResponse reads one <methodResponse> from r and returns its value.
// A fault response returns a *Fault as the error.
func DecodeResponse(r io.Reader, lim Limits) (Value, error) {
	d := newDecoder(r, lim)
	if err := d.expectStart("methodResponse"); err != nil {
		return nil, err
	}
	se, err := d.nextStart()
	if err != nil {
		return nil, err
	}
	var (
		v     Value
		fault *Fault
	)
	switch se.Name.Local {
	case "params":
		ps, err := d.params()
		if err != nil {
			return nil, err
		}
		if len(ps) != 1 {
			return nil, d.invalid("response has %d params, want 1", len(ps))
		}
		v = ps[0]
	case "fault":
		if err := d.expectStart("value"); err != nil {
			return nil, err
		}
		fv, err := d.value(1)
		if err != nil {
			return nil, err
		}
		if fault, err = d.fault(fv); err != nil {
			return nil, err
		}
		if err := d.expectEnd(); err != nil { // </fault>
			return nil, err
		}
	default:
		return nil, d.invalid("<%s> where <params> or <fault> was expected", se.Name.Local)
	}
	if err := d.expectEnd(); err != nil { // </methodResponse>
		return nil, err
	}
	if err := d.expectEOF(); err != nil {
		return nil, err
	}
	if fault != nil {
		return nil, fault
	}
	return v, nil
}

// limitReader fails with ErrLimit once more than n bytes were asked for.
type limitReader struct {
	r   io.Reader
	n   int64
	hit bool
}

func (l *limitReader) Read(p []byte) (int, error) {
	if l.n <= 0 {
		l.hit = true
		return 0, ErrLimit
	}
	if int64(len(p)) > l.n {
		p = p[:l.n]
	}
	n, err := l.r.Read(p)
	l.n -= int64(n)
	return n, err
}

type decoder struct {
	x      *xml.Decoder
	lr     *limitReader
	lim    Limits
	values int
}

func newDecoder(r io.Reader, lim Limits) *decoder {
	lim = lim.withDefaults()
	// One byte more than the cap, so that a message of exactly MaxBytes
	// reads to its EOF without tripping the limit.
	lr := &limitReader{r: r, n: lim.MaxBytes + 1}
	x := xml.NewDecoder(lr)
	x.Strict = true
	x.CharsetReader = charsetReader
	return &decoder{x: x, lr: lr, lim: lim}
}

// charsetReader accepts the declarations of encodings that are UTF-8 or a
// subset of it; any other encoding is refused.
func charsetReader(charset string, input io.Reader) (io.Reader, error) {
	switch strings.ToLower(charset) {
	case "utf-8", "utf8", "us-ascii", "ascii":
		return input, nil
	}
	return nil, fmt.Errorf("%w: unsupported encoding %q", ErrInvalid, charset)
}

func (d *decoder) invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s (byte %d)", ErrInvalid, fmt.Sprintf(format, args...), d.x.InputOffset())
}

// rawNext returns the next token that matters: comments and processing
// instructions are skipped, a DOCTYPE is refused.
func (d *decoder) rawNext() (xml.Token, error) {
	for {
		tok, err := d.x.Token()
		if err != nil {
			if d.lr.hit || errors.Is(err, ErrLimit) {
				return nil, fmt.Errorf("%w: message larger than %d bytes", ErrLimit, d.lim.MaxBytes)
			}
			if errors.Is(err, ErrInvalid) {
				return nil, err
			}
			if err == io.EOF {
				return nil, io.EOF
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				return nil, fmt.Errorf("%w: unexpected end of message", ErrInvalid)
			}
			var se *xml.SyntaxError
			if errors.As(err, &se) {
				return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
			}
			return nil, fmt.Errorf("xmlrpc: reading message: %w", err)
		}
		switch t := tok.(type) {
		case xml.Comment, xml.ProcInst:
			continue
		case xml.Directive:
			return nil, d.invalid("XML directive <!%.20s> not allowed", string(t))
		}
		return tok, nil
	}
}

// next returns the next structural token: whitespace between elements is
// skipped, other text is an error.
func (d *decoder) next() (xml.Token, error) {
	for {
		tok, err := d.rawNext()
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%w: unexpected end of message", ErrInvalid)
			}
			return nil, err
		}
		if cd, ok := tok.(xml.CharData); ok {
			if len(bytes.TrimSpace(cd)) != 0 {
				return nil, d.invalid("unexpected text %q", truncate(string(cd)))
			}
			continue
		}
		return tok, nil
	}
}

func truncate(s string) string {
	s = strings.TrimSpace(s)
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

func (d *decoder) nextStart() (xml.StartElement, error) {
	tok, err := d.next()
	if err != nil {
		return xml.StartElement{}, err
	}
	switch t := tok.(type) {
	case xml.StartElement:
		return t, nil
	case xml.EndElement:
		return xml.StartElement{}, d.invalid("unexpected </%s>", t.Name.Local)
	}
	return xml.StartElement{}, d.invalid("unexpected token")
}

func (d *decoder) expectStart(name string) error {
	se, err := d.nextStart()
	if err != nil {
		return err
	}
	if se.Name.Local != name {
		return d.invalid("<%s> where <%s> was expected", se.Name.Local, name)
	}
	return nil
}

// expectEnd reads the end tag of the element being read (the XML decoder
// checks that it matches).
func (d *decoder) expectEnd() error {
	tok, err := d.next()
	if err != nil {
		return err
	}
	switch t := tok.(type) {
	case xml.EndElement:
		return nil
	case xml.StartElement:
		return d.invalid("unexpected <%s>", t.Name.Local)
	}
	return d.invalid("unexpected token")
}

func (d *decoder) expectEOF() error {
	for {
		tok, err := d.rawNext()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if cd, ok := tok.(xml.CharData); ok && len(bytes.TrimSpace(cd)) == 0 {
			continue
		}
		return d.invalid("data after the message")
	}
}

// text reads character data up to the end of the element named name.
func (d *decoder) text(name string) (string, error) {
	var b strings.Builder
	for {
		tok, err := d.rawNext()
		if err != nil {
			if err == io.EOF {
				return "", fmt.Errorf("%w: unexpected end of message", ErrInvalid)
			}
			return "", err
		}
		switch t := tok.(type) {
		case xml.CharData:
			b.Write(t)
		case xml.EndElement:
			return b.String(), nil
		case xml.StartElement:
			return "", d.invalid("<%s> inside <%s>", t.Name.Local, name)
		}
	}
}

// params reads <param><value>...</value></param>... up to </params>.
func (d *decoder) params() ([]Value, error) {
	var ps []Value
	for {
		tok, err := d.next()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return ps, nil
		case xml.StartElement:
			if t.Name.Local != "param" {
				return nil, d.invalid("<%s> where <param> was expected", t.Name.Local)
			}
		default:
			return nil, d.invalid("unexpected token")
		}
		if err := d.expectStart("value"); err != nil {
			return nil, err
		}
		v, err := d.value(1)
		if err != nil {
			return nil, err
		}
		if err := d.expectEnd(); err != nil { // </param>
			return nil, err
		}
		ps = append(ps, v)
	}
}

// value reads the content of a <value> element whose start tag was read,
// and its end tag.
func (d *decoder) value(depth int) (Value, error) {
	if depth > d.lim.MaxDepth {
		return nil, fmt.Errorf("%w: values nested deeper than %d", ErrLimit, d.lim.MaxDepth)
	}
	d.values++
	if d.values > d.lim.MaxValues {
		return nil, fmt.Errorf("%w: more than %d values", ErrLimit, d.lim.MaxValues)
	}
	var text strings.Builder
	for {
		tok, err := d.rawNext()
		if err != nil {
			if err == io.EOF {
				return nil, fmt.Errorf("%w: unexpected end of message", ErrInvalid)
			}
			return nil, err
		}
		switch t := tok.(type) {
		case xml.CharData:
			text.Write(t)
		case xml.EndElement:
			return String(text.String()), nil
		case xml.StartElement:
			if strings.TrimSpace(text.String()) != "" {
				return nil, d.invalid("text and <%s> mixed in a value", t.Name.Local)
			}
			v, err := d.typed(t, depth)
			if err != nil {
				return nil, err
			}
			if err := d.expectEnd(); err != nil { // </value>
				return nil, err
			}
			return v, nil
		}
	}
}

func (d *decoder) typed(se xml.StartElement, depth int) (Value, error) {
	name := se.Name.Local
	switch name {
	case "struct":
		return d.structValue(depth)
	case "array":
		return d.arrayValue(depth)
	case "nil":
		if err := d.expectEnd(); err != nil {
			return nil, err
		}
		return Nil{}, nil
	}
	s, err := d.text(name)
	if err != nil {
		return nil, err
	}
	switch name {
	case "string":
		return String(s), nil
	case "int", "i4", "i8":
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return nil, d.invalid("bad <%s> %q", name, truncate(s))
		}
		return Int(n), nil
	case "boolean":
		switch strings.TrimSpace(s) {
		case "1", "true":
			return Bool(true), nil
		case "0", "false":
			return Bool(false), nil
		}
		return nil, d.invalid("bad <boolean> %q", truncate(s))
	case "double":
		f, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, d.invalid("bad <double> %q", truncate(s))
		}
		return Double(f), nil
	case "dateTime.iso8601":
		t, err := parseDateTime(strings.TrimSpace(s))
		if err != nil {
			return nil, d.invalid("bad <dateTime.iso8601> %q", truncate(s))
		}
		return DateTime(t), nil
	case "base64":
		b, err := decodeBase64(s)
		if err != nil {
			return nil, d.invalid("bad <base64>: %v", err)
		}
		return Base64(b), nil
	}
	return nil, d.invalid("unknown value type <%s>", name)
}

func (d *decoder) structValue(depth int) (Value, error) {
	s := Struct{}
	for {
		tok, err := d.next()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement:
			return s, nil
		case xml.StartElement:
			if t.Name.Local != "member" {
				return nil, d.invalid("<%s> where <member> was expected", t.Name.Local)
			}
		default:
			return nil, d.invalid("unexpected token")
		}
		if err := d.expectStart("name"); err != nil {
			return nil, err
		}
		name, err := d.text("name")
		if err != nil {
			return nil, err
		}
		if err := d.expectStart("value"); err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := d.expectEnd(); err != nil { // </member>
			return nil, err
		}
		s = append(s, Member{Name: name, Value: v})
	}
}

func (d *decoder) arrayValue(depth int) (Value, error) {
	if err := d.expectStart("data"); err != nil {
		return nil, err
	}
	a := Array{}
	for {
		tok, err := d.next()
		if err != nil {
			return nil, err
		}
		switch t := tok.(type) {
		case xml.EndElement: // </data>
			if err := d.expectEnd(); err != nil { // </array>
				return nil, err
			}
			return a, nil
		case xml.StartElement:
			if t.Name.Local != "value" {
				return nil, d.invalid("<%s> where <value> was expected", t.Name.Local)
			}
		default:
			return nil, d.invalid("unexpected token")
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		a = append(a, v)
	}
}

// fault checks the value of a <fault>: a struct with an int faultCode and a
// string faultString.
func (d *decoder) fault(v Value) (*Fault, error) {
	s, ok := v.(Struct)
	if !ok {
		return nil, d.invalid("fault value is %s, want struct", v.TypeName())
	}
	f := &Fault{}
	code, ok1 := s.Get("faultCode")
	msg, ok2 := s.Get("faultString")
	if !ok1 || !ok2 {
		return nil, d.invalid("fault without faultCode and faultString")
	}
	c, ok := code.(Int)
	if !ok || c < math.MinInt32 || c > math.MaxInt32 {
		return nil, d.invalid("faultCode is not an int")
	}
	m, ok := msg.(String)
	if !ok {
		return nil, d.invalid("faultString is not a string")
	}
	f.Code, f.String = int(c), string(m)
	return f, nil
}

var dateTimeLayouts = []string{
	"20060102T15:04:05",
	"20060102T15:04:05Z07:00",
	"20060102T15:04:05Z0700",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05Z07:00",
	"20060102T150405",
	"20060102T150405Z07:00",
}

func parseDateTime(s string) (time.Time, error) {
	for _, l := range dateTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, errors.New("unknown layout")
}

// decodeBase64 decodes standard base64, ignoring whitespace (Python's
// encoder breaks lines every 76 characters) and accepting missing padding.
func decodeBase64(s string) ([]byte, error) {
	clean := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\r', '\n':
		default:
			clean = append(clean, c)
		}
	}
	if len(clean)%4 != 0 {
		out := make([]byte, base64.RawStdEncoding.DecodedLen(len(clean)))
		n, err := base64.RawStdEncoding.Decode(out, clean)
		if err != nil {
			return nil, err
		}
		return out[:n], nil
	}
	out := make([]byte, base64.StdEncoding.DecodedLen(len(clean)))
	n, err := base64.StdEncoding.Decode(out, clean)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}
