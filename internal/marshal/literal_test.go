package marshal

import (
	"math"
	"math/big"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestFormatPython(t *testing.T) {
	big70, _ := new(big.Int).SetString("-1180591620717411303424", 10)
	tests := []struct {
		v    Value
		want string
	}{
		{None{}, "None"},
		{Bool(true), "True"},
		{Int(-5), "-5"},
		{Long{big70}, "-1180591620717411303424"},
		{Float(1), "1.0"},
		{Float(math.Copysign(0, -1)), "-0.0"},
		{Float(0.1), "0.1"},
		{Float(1e16), "1e+16"},
		{Float(123456789012345.6), "123456789012345.6"},
		{Float(1e-5), "1e-05"},
		{Float(0.0001), "0.0001"},
		{Float(math.Inf(1)), "1e999"},
		{Float(math.Inf(-1)), "-1e999"},
		{Float(math.NaN()), "float('nan')"},
		{Complex(1 + 2i), "(1.0+2.0j)"},
		{Complex(complex(-1, -2.5)), "(-1.0-2.5j)"},
		{Complex(complex(0, math.Inf(-1))), "(0.0-1e999j)"},
		{Complex(complex(math.Copysign(0, -1), 1)), "complex(-0.0, 1.0)"},
		{Complex(complex(1, math.NaN())), "complex(1.0, float('nan'))"},
		{Bytes("a'\\\x00\t\n\r\x7f\xff\""), `b'a\'\\\x00\t\n\r\x7f\xff"'`},
		{Unicode("a'\u00e9\u20ac\U0001F600\x01"), `u'a\'\xe9\u20ac\U0001f600\x01'`},
		{Unicode("\xed\xa0\x80"), `u'\ud800'`},
		{Tuple{}, "()"},
		{Tuple{Int(1)}, "(1,)"},
		{Tuple{Int(1), Int(2)}, "(1, 2)"},
		{List{}, "[]"},
		{Dict{}, "{}"},
		{Dict{{Int(1), Tuple{Str("a")}}, {Str("k"), List{None{}}}}, "{1: (b'a',), b'k': [None]}"},
		{Set{}, "set()"},
		{Set{Int(1), Int(2)}, "{1, 2}"},
		{FrozenSet{}, "frozenset()"},
		{FrozenSet{Int(1)}, "frozenset({1})"},
		{StopIteration{}, "StopIteration"},
		{Ellipsis{}, "Ellipsis"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := FormatPython(tc.v); got != tc.want {
				t.Errorf("FormatPython = %s, want %s", got, tc.want)
			}
			v, err := ParsePython(tc.want)
			if err != nil || !Equal(v, tc.v) {
				t.Errorf("ParsePython(%s) = %v, %v", tc.want, v, err)
			}
		})
	}
}

func TestParsePython(t *testing.T) {
	tests := []struct {
		in   string
		want Value
	}{
		{"  None ", None{}},
		{"5L", Int(5)},
		{"-0x10l", Int(-16)},
		{"0o17", Int(15)},
		{"0b101", Int(5)},
		{"017", Int(15)},
		{"00", Int(0)},
		{"- 3", Int(-3)},
		{"9223372036854775808", Long{new(big.Int).Lsh(big.NewInt(1), 63)}},
		{"-9223372036854775808", Int(math.MinInt64)},
		{".5", Float(0.5)},
		{"1.", Float(1)},
		{"-.5e-3", Float(-0.0005)},
		{"2j", Complex(2i)},
		{"(1-2j)", Complex(1 - 2i)},
		{"(1e999+1e999j)", Complex(complex(math.Inf(1), math.Inf(1)))},
		{"float('inf')", Float(math.Inf(1))},
		{"float(\"-inf\")", Float(math.Inf(-1))},
		{"float(2)", Float(2)},
		{"complex(1, -0.0)", Complex(complex(1, math.Copysign(0, -1)))},
		{`'a\x41\101\n\q'`, Str("aAA\n\\q")},
		{`"it's"`, Str("it's")},
		{`b'\u0041'`, Str(`\u0041`)},
		{`u'\u0041\x41\101\U0001F600é'`, Unicode("AAA\U0001F600é")},
		{"'''a\n'b'''", Str("a\n'b")},
		{`'a\
b'`, Str("ab")},
		{"(1)", Int(1)},
		{"((1,),)", Tuple{Tuple{Int(1)}}},
		{"[1, 2,]", List{Int(1), Int(2)}},
		{"{1: 2,}", Dict{{Int(1), Int(2)}}},
		{"{1,}", Set{Int(1)}},
		{"set([1, 1])", Set{Int(1), Int(1)}},
		{"set(())", Set{}},
		{"set({})", Set{}},
		{"frozenset([(1, 2)])", FrozenSet{Tuple{Int(1), Int(2)}}},
		{"...", Ellipsis{}},
		{"[..., Ellipsis]", List{Ellipsis{}, Ellipsis{}}},
		{"StopIteration", StopIteration{}},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			v, err := ParsePython(tc.in)
			if err != nil {
				t.Fatalf("ParsePython: %v", err)
			}
			if !Equal(v, tc.want) {
				t.Errorf("ParsePython = %s, want %s", FormatPython(v), FormatPython(tc.want))
			}
		})
	}
}

func TestParsePythonErrors(t *testing.T) {
	tests := []struct{ in, msg string }{
		{"", "expected a value, found end of input at byte 0"},
		{"[1, 2", "expected ',', found end of input at byte 5"},
		{"(1, 2", "expected ',', found end of input"},
		{"{1: 2", "expected ',', found end of input"},
		{"{[1]: 2}", "unhashable dict key list"},
		{"{[1]}", "unhashable set member list"},
		{"set([{}])", "unhashable set member dict"},
		{"'abc", "unterminated string at byte 0"},
		{"'a\nb'", "newline inside a string"},
		{"b'é'", "non-ASCII character in a byte string"},
		{"r'x'", `unknown string prefix "r"`},
		{"foo", `unknown name "foo" at byte 0`},
		{"1 2", "unexpected '2' after the value at byte 2"},
		{"u'\\U00110000'", "beyond U+10FFFF"},
		{"u'\\x4'", "bad \\x escape"},
		{"b'\\777'", "octal escape beyond"},
		{"1e", "exponent without digits"},
		{"0x", "number without digits"},
		{"0b102", "bad base-2 integer"},
		{"(1+2)", "expected an imaginary number"},
		{"('a'+2j)", "only a number may be added"},
		{"set(1)", "takes a list, tuple or set literal"},
		{"float('x')", "bad float text"},
		{strings.Repeat("[", 2000), "nesting deeper than 1999 levels"},
		{"u'\xff'", "invalid UTF-8"},
	}
	for _, tc := range tests {
		t.Run(tc.in, func(t *testing.T) {
			v, err := ParsePython(tc.in)
			if err == nil {
				t.Fatalf("ParsePython = %s, want an error", FormatPython(v))
			}
			if !strings.Contains(err.Error(), tc.msg) || !strings.HasPrefix(err.Error(), "marshal: ") {
				t.Errorf("error %q does not say %q", err, tc.msg)
			}
		})
	}
}

// literalEvalable reports whether Python 3's ast.literal_eval reads v as
// FormatPython writes it.
func literalEvalable(v Value) bool {
	switch v := v.(type) {
	case Float:
		return !math.IsNaN(float64(v))
	case Complex:
		return !strings.HasPrefix(FormatPython(v), "complex(")
	case FrozenSet, StopIteration, Ellipsis:
		return false
	case Tuple:
		return allEvalable(v)
	case List:
		return allEvalable(v)
	case Set:
		return allEvalable(v)
	case Dict:
		for _, p := range v {
			if !literalEvalable(p.Key) || !literalEvalable(p.Value) {
				return false
			}
		}
	}
	return true
}

func allEvalable(vs []Value) bool {
	for _, v := range vs {
		if !literalEvalable(v) {
			return false
		}
	}
	return true
}

// TestFormatPythonLiteralEval: for values with no NaN, frozenset,
// StopIteration or Ellipsis, Python 3's ast.literal_eval (3.9+ for set())
// reads FormatPython's output to the value marshal.loads gives.
func TestFormatPythonLiteralEval(t *testing.T) {
	py := findPython3(t)
	if py == "" {
		t.Fatal("python3 not found on PATH")
	}
	script := pyCommon + `
import ast
while True:
    try:
        data = readrec()
    except EOFError:
        break
    lit = readrec().decode('utf-8')
    try:
        ours, want = desc(marshal.loads(data)), desc(ast.literal_eval(lit))
        line = 'ok' if ours == want else 'BAD %s %s' % (ours, lit)
    except Exception as e:
        line = 'ERR %r %s' % (e, lit)
    stdout.write((line + '\n').encode('utf-8'))
`
	rng := rand.New(rand.NewPCG(99, 1))
	var in []byte
	n := 0
	for n < 2000 {
		v := randValue(rng, 0, false)
		if !literalEvalable(v) {
			continue
		}
		data, err := Encode(v)
		if err != nil {
			t.Fatal(err)
		}
		in = appendRec(appendRec(in, data), []byte(FormatPython(v)))
		n++
	}
	out := strings.TrimSuffix(string(runPython(t, py, script, in)), "\n")
	for _, l := range strings.Split(out, "\n") {
		if l != "ok" {
			t.Error(l)
		}
	}
}
