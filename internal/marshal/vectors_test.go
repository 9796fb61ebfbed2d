package marshal

import (
	"encoding/hex"
	"math"
	"math/big"
	"testing"
)

// vector is one row of pyfastmarshal.md B.5: bytes CPython 2.7.18 wrote
// for a value with marshal.dumps(v, version).
type vector struct {
	name string
	want Value
	// hex per version 0, 1, 2; "" where the table has no entry.
	ver [3]string
	// enc is what our encoder writes when it differs from ver[2] (the
	// encoder writes 's' not 't', 'l' not 'I'); "" means ver[2].
	enc string
}

func pow2(n uint) Long { return Long{new(big.Int).Lsh(big.NewInt(1), n)} }

func all3(h string) [3]string { return [3]string{h, h, h} }

var b5 = []vector{
	{name: "None", want: None{}, ver: all3("4e")},
	{name: "True", want: Bool(true), ver: all3("54")},
	{name: "False", want: Bool(false), ver: all3("46")},
	{name: "1", want: Int(1), ver: all3("6901000000")},
	{name: "-1", want: Int(-1), ver: all3("69ffffffff")},
	{name: "2**31-1", want: Int(math.MaxInt32), ver: [3]string{2: "69ffffff7f"}},
	{name: "-2**31", want: Int(math.MinInt32), ver: [3]string{2: "6900000080"}},
	{name: "2**31 int", want: Int(1 << 31), ver: [3]string{2: "490000008000000000"}, enc: "6c03000000000000000200"},
	{name: "2**40 int", want: Int(1 << 40), ver: all3("490000000000010000"), enc: "6c03000000000000000004"},
	{name: "-2**40 int", want: Int(-1 << 40), ver: [3]string{2: "490000000000ffffff"}, enc: "6cfdffffff000000000004"},
	{name: "5L", want: Int(5), ver: [3]string{2: "6c010000000500"}, enc: "6905000000"},
	{name: "-5L", want: Int(-5), ver: [3]string{2: "6cffffffff0500"}, enc: "69fbffffff"},
	{name: "0L", want: Int(0), ver: [3]string{2: "6c00000000"}, enc: "6900000000"},
	{name: "32768L", want: Int(32768), ver: [3]string{2: "6c0200000000000100"}, enc: "6900800000"},
	{name: "-(2L**40)", want: Int(-1 << 40), ver: [3]string{2: "6cfdffffff000000000004"}},
	{name: "2**70 long", want: pow2(70), ver: all3("6c0500000000000000000000000004")},
	{name: "1.5", want: Float(1.5), ver: [3]string{"6603312e35", "6603312e35", "67000000000000f83f"}},
	{name: "0.1", want: Float(0.1), ver: [3]string{0: "6613302e3130303030303030303030303030303031", 2: "679a9999999999b93f"}},
	{name: "-1.0", want: Float(-1), ver: [3]string{2: "67000000000000f0bf"}},
	{name: "inf", want: Float(math.Inf(1)), ver: [3]string{0: "6603696e66", 2: "67000000000000f07f"}},
	{name: "'ab'", want: Str("ab"), ver: [3]string{"73020000006162", "74020000006162", "74020000006162"}, enc: "73020000006162"},
	{name: "u'ab'", want: Unicode("ab"), ver: all3("75020000006162")},
	{name: "u'\\xe9'", want: Unicode("\u00e9"), ver: all3("7502000000c3a9")},
	{name: "u'\\U0001F600'", want: Unicode("\U0001F600"), ver: [3]string{2: "7504000000f09f9880"}},
	{name: "(1,'x')", want: Tuple{Int(1), Str("x")}, ver: [3]string{0: "28020000006901000000730100000078", 2: "28020000006901000000740100000078"}, enc: "28020000006901000000730100000078"},
	{name: "()", want: Tuple{}, ver: [3]string{2: "2800000000"}},
	{name: "[1]", want: List{Int(1)}, ver: all3("5b010000006901000000")},
	{name: "[None,True]", want: List{None{}, Bool(true)}, ver: [3]string{2: "5b020000004e54"}},
	{name: "{'a':1}", want: Dict{{Str("a"), Int(1)}}, ver: [3]string{"7b730100000061690100000030", "7b740100000061690100000030", "7b740100000061690100000030"}, enc: "7b730100000061690100000030"},
	{name: "{1:(2,3)}", want: Dict{{Int(1), Tuple{Int(2), Int(3)}}}, ver: [3]string{2: "7b690100000028020000006902000000690300000030"}},
	{name: "(k,k)", want: Tuple{Str("k"), Str("k")}, ver: [3]string{"280200000073010000006b73010000006b", "280200000074010000006b5200000000", "280200000074010000006b5200000000"}, enc: "280200000073010000006b73010000006b"},
	{name: "set([1])", want: Set{Int(1)}, ver: [3]string{2: "3c010000006901000000"}},
	{name: "frozenset()", want: FrozenSet{}, ver: [3]string{2: "3e00000000"}},
	{name: "1+2j", want: Complex(1 + 2i), ver: [3]string{2: "79000000000000f03f0000000000000040"}},
	{name: "Ellipsis", want: Ellipsis{}, ver: [3]string{2: "2e"}},
	{name: "StopIteration", want: StopIteration{}, ver: [3]string{2: "53"}},
	// Not in B.5; from its text: loads('{' 'i\x01\x00\x00\x00' 'N' '0').
	{name: "{1: None}", want: Dict{{Int(1), None{}}}, ver: [3]string{2: "7b69010000004e30"}},
}

func mustHex(t testing.TB, h string) []byte {
	t.Helper()
	b, err := hex.DecodeString(h)
	if err != nil {
		t.Fatalf("bad hex %q: %v", h, err)
	}
	return b
}

func TestDecodeB5Vectors(t *testing.T) {
	for _, tc := range b5 {
		for ver, h := range tc.ver {
			if h == "" {
				continue
			}
			t.Run(tc.name+"/ver"+string(rune('0'+ver)), func(t *testing.T) {
				got, err := Decode(mustHex(t, h))
				if err != nil {
					t.Fatalf("Decode(%s): %v", h, err)
				}
				if !Equal(got, tc.want) {
					t.Errorf("Decode(%s) = %s, want %s", h, FormatPython(got), FormatPython(tc.want))
				}
				// The Reader's Skip agrees on the extent.
				r := NewReader(mustHex(t, h), Limits{})
				if err := r.Skip(); err != nil || r.Remaining() != 0 {
					t.Errorf("Skip: err %v, %d bytes left", err, r.Remaining())
				}
			})
		}
	}
}

func TestEncodeB5Vectors(t *testing.T) {
	for _, tc := range b5 {
		t.Run(tc.name, func(t *testing.T) {
			want := tc.enc
			if want == "" {
				want = tc.ver[2]
			}
			got, err := Encode(tc.want)
			if err != nil {
				t.Fatalf("Encode: %v", err)
			}
			if hex.EncodeToString(got) != want {
				t.Errorf("Encode(%s) = %x, want %s", FormatPython(tc.want), got, want)
			}
		})
	}
}

// TestEncodeDiffersLoadsEqual checks, with CPython 2.7 itself, that where
// our bytes differ from CPython's own (s for t, l for I, i for a small
// long), CPython loads ours to a value equal to the original.
func TestEncodeDiffersLoadsEqual(t *testing.T) {
	py := findPython2(t)
	if py == "" {
		t.Skip("no python2.7 on this machine (set TRAWL_PYTHON2): skipping the CPython 2.7 half")
	}
	script := `
import sys, marshal, binascii
for line in sys.stdin:
    h, lit = line.rstrip('\n').split(' ', 1)
    ours = marshal.loads(binascii.unhexlify(h))
    want = eval(lit)
    ok = ours == want and type(ours) in (type(want), int, long) and type(want) in (type(ours), int, long)
    print('%s %s %r' % ('ok' if ok else 'BAD', h, ours))
`
	var in []byte
	n := 0
	for _, tc := range b5 {
		if tc.enc == "" {
			continue
		}
		lit := FormatPython(tc.want)
		in = append(in, tc.enc+" "+lit+"\n"...)
		n++
	}
	out := runPython(t, py, script, in)
	if got := countLines(out, "ok "); got != n {
		t.Errorf("python2 disagrees:\n%s", out)
	}
}
