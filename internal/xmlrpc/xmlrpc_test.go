package xmlrpc

import (
	"bytes"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func readSpec(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "spec-"+name+".xml"))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestSpecRequests(t *testing.T) {
	tests := []struct {
		file string
		want *Call
	}{
		{"41-request", &Call{Method: "CollectionGetList"}},
		{"42-request", &Call{Method: "AddURIs", Params: []Value{
			String("contoso"), Int(0),
			Array{String("http://www.contoso.com/"), String("http://www.contoso.com/about/")},
		}}},
		{"43-request", &Call{Method: "CollectionGetStatistics2", Params: []Value{String("contoso")}}},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			c, err := DecodeCall(bytes.NewReader(readSpec(t, tt.file)), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if c.Method != tt.want.Method || !Equal(Array(c.Params), Array(tt.want.Params)) {
				t.Errorf("got %+v, want %+v", c, tt.want)
			}
		})
	}
}

func TestSpecResponses(t *testing.T) {
	v, err := DecodeResponse(bytes.NewReader(readSpec(t, "41-response")), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Array{String("contoso"), String("web")}); !Equal(v, want) {
		t.Errorf("4.1: got %v", v)
	}
	v, err = DecodeResponse(bytes.NewReader(readSpec(t, "42-response")), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Array{Int(1), String("Queued collection contoso with 2 URIs")}); !Equal(v, want) {
		t.Errorf("4.2: got %v", v)
	}
	v, err = DecodeResponse(bytes.NewReader(readSpec(t, "43-response")), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	a := v.(Array)
	if len(a) != 2 || !Equal(a[0], Int(1)) {
		t.Fatalf("4.3: got %v", a)
	}
	s := a[1].(Struct)
	counts := map[string]int{}
	for _, m := range s {
		counts[m.Name] = len(m.Value.(Struct))
	}
	if diff := cmp.Diff(map[string]int{"cur": 46, "complete": 54, "delta": 14}, counts); diff != "" {
		t.Errorf("4.3 member counts (-want +got):\n%s", diff)
	}
	cur, _ := s.Get("cur")
	checks := []struct {
		name string
		want Value
	}{
		{"PPAdded", Double(40)},
		{"Feeding", Int(1)},
		{"DLTimeMax", Double(0.20227789878845215)},
		{"URISkip", Struct{}},
		{"Status", String("Crawling")},
		{"CrawlMode", String("")},
		{"Progress", Array{Int(2), String("1 days 8h 34m 23s until scratch refresh")}},
		{"HTTPResponse", Struct{{"200", Double(41)}, {"404", Double(1)}}},
		{"LastRefresh", Int(1234195119)},
		{"DataRateOut", Double(4.6740836939130403)},
	}
	for _, c := range checks {
		got, ok := cur.(Struct).Get(c.name)
		if !ok || !Equal(got, c.want) {
			t.Errorf("4.3 cur.%s = %v, want %v", c.name, got, c.want)
		}
	}
	// Re-encoding gives the same value.
	b, err := EncodeResponse(v)
	if err != nil {
		t.Fatal(err)
	}
	v2, err := DecodeResponse(bytes.NewReader(b), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	if !Equal(v, v2) {
		t.Error("4.3 re-encoded value differs")
	}
}

func roundTripValues() []Value {
	return []Value{
		Int(0), Int(-1), Int(math.MaxInt32), Int(math.MinInt32), Int(math.MaxInt32 + 1), Int(math.MinInt64),
		Bool(true), Bool(false),
		String(""), String("a & b < c > d"), String("tab\tnl\ncr\r end"), String("ünïcødé 日本 \U0001F600"),
		String("  spaces  "),
		Double(0), Double(40), Double(-0.5), Double(0.0075536489486694334), Double(1e300), Double(5e-324),
		Double(1234197854.7414169),
		DateTime(time.Date(1998, 7, 17, 14, 8, 55, 0, time.UTC)),
		Base64(nil), Base64("\x00\x01binary\xff"),
		Array{}, Array{Int(1), String("x"), Array{Nil{}}},
		Struct{}, Struct{{"a", Int(1)}, {"", String("empty name")}, {"n", Struct{{"deep", Bool(true)}}}},
		Nil{},
	}
}

func TestRoundTrip(t *testing.T) {
	for _, v := range roundTripValues() {
		t.Run(v.TypeName(), func(t *testing.T) {
			b, err := EncodeResponse(v)
			if err != nil {
				t.Fatal(err)
			}
			got, err := DecodeResponse(bytes.NewReader(b), Limits{})
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if !Equal(got, v) {
				t.Errorf("got %#v, want %#v\n%s", got, v, b)
			}
			b, err = EncodeCall("m.x", v, Int(7))
			if err != nil {
				t.Fatal(err)
			}
			c, err := DecodeCall(bytes.NewReader(b), Limits{})
			if err != nil {
				t.Fatalf("%v\n%s", err, b)
			}
			if c.Method != "m.x" || len(c.Params) != 2 || !Equal(c.Params[0], v) {
				t.Errorf("call: got %#v", c)
			}
		})
	}
}

func TestFault(t *testing.T) {
	b := EncodeFault(&Fault{Code: 1, String: "no collection \"x\" <&>\x01"})
	_, err := DecodeResponse(bytes.NewReader(b), Limits{})
	var f *Fault
	if !errors.As(err, &f) {
		t.Fatalf("got %v, want a fault", err)
	}
	if f.Code != 1 || f.String != "no collection \"x\" <&>\uFFFD" {
		t.Errorf("got %+v", f)
	}
}

func TestEncodeErrors(t *testing.T) {
	bad := []Value{
		Double(math.NaN()), Double(math.Inf(1)), String("nul\x00"), String("\xff"),
		Struct{{"k\x01", Int(1)}}, Array{nil}, nil,
	}
	for _, v := range bad {
		if _, err := EncodeResponse(v); err == nil {
			t.Errorf("EncodeResponse(%#v) succeeded", v)
		}
	}
	deep := Value(Int(1))
	for range DefaultMaxDepth + 1 {
		deep = Array{deep}
	}
	if _, err := EncodeResponse(deep); err == nil {
		t.Error("encoding a value nested too deep succeeded")
	}
	if _, err := EncodeCall(""); err == nil {
		t.Error("empty method name accepted")
	}
}

func TestAppendDouble(t *testing.T) {
	tests := []struct {
		f    float64
		want string
	}{
		{0, "0.0"}, {40, "40.0"}, {-2.5, "-2.5"}, {0.0001, "0.0001"}, {0.00001, "1e-05"},
		{1e15, "1000000000000000.0"}, {1e16, "1e+16"}, {1234197854.7414169, "1234197854.741417"},
		{0.0075536489486694334, "0.007553648948669433"},
	}
	for _, tt := range tests {
		if got := string(AppendDouble(nil, tt.f)); got != tt.want {
			t.Errorf("AppendDouble(%v) = %s, want %s", tt.f, got, tt.want)
		}
	}
}

func TestDecodeLenient(t *testing.T) {
	tests := []struct {
		name, body string
		want       Value
	}{
		{"untyped", `<methodResponse><params><param><value>plain text</value></param></params></methodResponse>`, String("plain text")},
		{"empty value", `<methodResponse><params><param><value/></param></params></methodResponse>`, String("")},
		{"i4 and i8", `<methodResponse><params><param><value><array><data><value><i4> 5 </i4></value><value><i8>9000000000</i8></value></data></array></value></param></params></methodResponse>`, Array{Int(5), Int(9000000000)}},
		{"ex:nil", `<methodResponse xmlns:ex="http://ws.apache.org/xmlrpc/namespaces/extensions"><params><param><value><ex:nil/></value></param></params></methodResponse>`, Nil{}},
		{"base64 lines", "<methodResponse><params><param><value><base64>aGVs\nbG8=\n</base64></value></param></params></methodResponse>", Base64("hello")},
		{"base64 unpadded", "<methodResponse><params><param><value><base64>aGVsbG8</base64></value></param></params></methodResponse>", Base64("hello")},
		{"comment and decl", "<?xml version='1.0' encoding='UTF-8'?><!-- hi --><methodResponse><params><param><value><boolean>true</boolean></value></param></params></methodResponse>\n", Bool(true)},
		{"dashed date", `<methodResponse><params><param><value><dateTime.iso8601>2024-02-03T04:05:06Z</dateTime.iso8601></value></param></params></methodResponse>`, DateTime(time.Date(2024, 2, 3, 4, 5, 6, 0, time.UTC))},
		{"cdata", `<methodResponse><params><param><value><string><![CDATA[<x>]]></string></value></param></params></methodResponse>`, String("<x>")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeResponse(strings.NewReader(tt.body), Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if !Equal(got, tt.want) {
				t.Errorf("got %#v, want %#v", got, tt.want)
			}
		})
	}
}

func TestDecodeErrors(t *testing.T) {
	const pre, post = `<methodResponse><params><param><value>`, `</value></param></params></methodResponse>`
	tests := []struct {
		name, body string
		lim        Limits
		want       error
	}{
		{"empty", ``, Limits{}, ErrInvalid},
		{"not xml", `hello`, Limits{}, ErrInvalid},
		{"wrong root", `<methodCall><methodName>x</methodName></methodCall>`, Limits{}, ErrInvalid},
		{"truncated", pre + `<int>1</int>`, Limits{}, ErrInvalid},
		{"bad int", pre + `<int>x</int>` + post, Limits{}, ErrInvalid},
		{"int overflow", pre + `<int>99999999999999999999</int>` + post, Limits{}, ErrInvalid},
		{"bad bool", pre + `<boolean>2</boolean>` + post, Limits{}, ErrInvalid},
		{"nan", pre + `<double>nan</double>` + post, Limits{}, ErrInvalid},
		{"bad date", pre + `<dateTime.iso8601>yesterday</dateTime.iso8601>` + post, Limits{}, ErrInvalid},
		{"bad base64", pre + `<base64>!!!</base64>` + post, Limits{}, ErrInvalid},
		{"unknown type", pre + `<float>1</float>` + post, Limits{}, ErrInvalid},
		{"mixed", pre + `x<int>1</int>` + post, Limits{}, ErrInvalid},
		{"two types", pre + `<int>1</int><int>2</int>` + post, Limits{}, ErrInvalid},
		{"nested in leaf", pre + `<string><b>x</b></string>` + post, Limits{}, ErrInvalid},
		{"member no name", pre + `<struct><member><value>1</value></member></struct>` + post, Limits{}, ErrInvalid},
		{"array no data", pre + `<array><value>1</value></array>` + post, Limits{}, ErrInvalid},
		{"two params", `<methodResponse><params><param><value>1</value></param><param><value>2</value></param></params></methodResponse>`, Limits{}, ErrInvalid},
		{"no params", `<methodResponse><params></params></methodResponse>`, Limits{}, ErrInvalid},
		{"trailing", pre + `1` + post + `<x/>`, Limits{}, ErrInvalid},
		{"doctype", `<!DOCTYPE x [<!ENTITY a "b">]>` + pre + `1` + post, Limits{}, ErrInvalid},
		{"entity", pre + `&a;` + post, Limits{}, ErrInvalid},
		{"latin1", `<?xml version="1.0" encoding="ISO-8859-1"?>` + pre + `1` + post, Limits{}, ErrInvalid},
		{"control char", pre + "a\x01b" + post, Limits{}, ErrInvalid},
		{"bad utf8", pre + "a\xffb" + post, Limits{}, ErrInvalid},
		{"fault not struct", `<methodResponse><fault><value>x</value></fault></methodResponse>`, Limits{}, ErrInvalid},
		{"fault no code", `<methodResponse><fault><value><struct><member><name>faultString</name><value>x</value></member></struct></value></fault></methodResponse>`, Limits{}, ErrInvalid},
		{"too big", pre + strings.Repeat("x", 200) + post, Limits{MaxBytes: 100}, ErrLimit},
		{"too deep", pre + strings.Repeat(`<array><data><value>`, 5) + strings.Repeat(`</value></data></array>`, 5) + post, Limits{MaxDepth: 3}, ErrLimit},
		{"too many", pre + `<array><data>` + strings.Repeat(`<value>1</value>`, 20) + `</data></array>` + post, Limits{MaxValues: 10}, ErrLimit},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeResponse(strings.NewReader(tt.body), tt.lim)
			if !errors.Is(err, tt.want) {
				t.Errorf("got %v, want %v", err, tt.want)
			}
		})
	}
	callTests := []struct{ name, body string }{
		{"no method name", `<methodCall><params/></methodCall>`},
		{"empty method name", `<methodCall><methodName> </methodName></methodCall>`},
		{"param not value", `<methodCall><methodName>x</methodName><params><param><int>1</int></param></params></methodCall>`},
		{"junk in params", `<methodCall><methodName>x</methodName><params><foo/></params></methodCall>`},
		{"response", `<methodResponse><params><param><value>1</value></param></params></methodResponse>`},
	}
	for _, tt := range callTests {
		t.Run("call "+tt.name, func(t *testing.T) {
			if _, err := DecodeCall(strings.NewReader(tt.body), Limits{}); !errors.Is(err, ErrInvalid) {
				t.Errorf("got %v, want ErrInvalid", err)
			}
		})
	}
}

func TestExactSizeLimit(t *testing.T) {
	b, err := EncodeResponse(String("x"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := DecodeResponse(bytes.NewReader(b), Limits{MaxBytes: int64(len(b))}); err != nil {
		t.Errorf("message of exactly MaxBytes: %v", err)
	}
	if _, err := DecodeResponse(bytes.NewReader(b), Limits{MaxBytes: int64(len(b) - 1)}); !errors.Is(err, ErrLimit) {
		t.Errorf("message of MaxBytes+1: got %v, want ErrLimit", err)
	}
}
