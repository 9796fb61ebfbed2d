package marshal

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// Differential tests against CPython's own marshal module: python3 with
// version <= 2 (its str is our unicode, its bytes our str, and it never
// writes I or t) and CPython 2.7 when one is on the machine.

// pythonIs runs path and reports whether it is Python major version major.
func pythonIs(path string, major int) bool {
	out, err := exec.Command(path, "-c", "import sys; sys.stdout.write(str(sys.version_info[0]))").Output()
	return err == nil && strings.TrimSpace(string(out)) == strconv.Itoa(major)
}

// findPython2 returns a CPython 2.7 interpreter: $TRAWL_PYTHON2, python2.7
// or python2 on PATH, or a pyenv 2.7 install; "" when there is none.
func findPython2(t testing.TB) string {
	t.Helper()
	var cands []string
	if p := os.Getenv("TRAWL_PYTHON2"); p != "" {
		cands = append(cands, p)
	}
	for _, n := range []string{"python2.7", "python2"} {
		if p, err := exec.LookPath(n); err == nil {
			cands = append(cands, p)
		}
	}
	if home, err := os.UserHomeDir(); err == nil {
		m, _ := filepath.Glob(filepath.Join(home, ".pyenv/versions/2.7*/bin/python2.7"))
		cands = append(cands, m...)
	}
	for _, c := range cands {
		if pythonIs(c, 2) {
			return c
		}
	}
	return ""
}

// findPython3 returns a python3 interpreter, or "" when there is none.
func findPython3(t testing.TB) string {
	t.Helper()
	for _, c := range []string{"python3", "/usr/bin/python3"} {
		if p, err := exec.LookPath(c); err == nil && pythonIs(p, 3) {
			return p
		}
	}
	return ""
}

// pythons returns the interpreters to test against, by name; python3 must
// be there (it is a requirement of the build machines), python2 may not.
func pythons(t *testing.T) map[string]string {
	t.Helper()
	ps := map[string]string{}
	if p := findPython3(t); p != "" {
		ps["python3"] = p
	} else {
		t.Error("python3 not found on PATH; it is required for the differential tests")
	}
	if p := findPython2(t); p != "" {
		ps["python2"] = p
	} else {
		t.Log("no python2.7 found (TRAWL_PYTHON2, python2.7, python2, ~/.pyenv/versions/2.7*): skipping the CPython 2.7 half")
	}
	return ps
}

// runPython runs script with stdin in and returns its stdout.
func runPython(t testing.TB, py, script string, in []byte, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(py, append([]string{"-c", script}, args...)...)
	cmd.Stdin = bytes.NewReader(in)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v\n%s", py, err, stderr.String())
	}
	return out
}

func countLines(out []byte, prefix string) int {
	n := 0
	for _, l := range strings.Split(string(out), "\n") {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// pyCommon is Python code shared by the scripts: desc(v) describes a value
// canonically (types included, set and dict members sorted), so that two
// values compare equal exactly when their descriptions do; describe in Go
// mirrors it.
const pyCommon = `
import sys, marshal, struct, random, binascii
PY2 = sys.version_info[0] == 2
if PY2:
    text_type, bytes_type, int_types, uchr = unicode, str, (int, long), unichr
    stdin, stdout = sys.stdin, sys.stdout
else:
    text_type, bytes_type, int_types, uchr = str, bytes, (int,), chr
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer

def fdesc(x):
    if x != x:
        return 'nan'
    return binascii.hexlify(struct.pack('<d', x)).decode('ascii')

def desc(v):
    if v is None: return 'N'
    if v is True: return 'T'
    if v is False: return 'F'
    if v is Ellipsis: return 'E'
    if v is StopIteration: return 'S'
    t = type(v)
    if t in int_types: return 'i' + str(v)
    if t is float: return 'f' + fdesc(v)
    if t is complex: return 'c' + fdesc(v.real) + ',' + fdesc(v.imag)
    if t is bytes_type: return 's' + binascii.hexlify(v).decode('ascii')
    if t is text_type: return 'u' + '.'.join(['%x' % ord(c) for c in v])
    if t is tuple: return '(' + ','.join([desc(x) for x in v]) + ')'
    if t is list: return '[' + ','.join([desc(x) for x in v]) + ']'
    if t is dict: return '{' + ','.join(sorted([desc(k) + ':' + desc(x) for k, x in v.items()])) + '}'
    if t is set: return '<' + ','.join(sorted([desc(x) for x in v])) + '>'
    if t is frozenset: return 'z<' + ','.join(sorted([desc(x) for x in v])) + '>'
    raise TypeError('cannot describe %r' % (t,))

def readn(n):
    b = stdin.read(n)
    if len(b) != n:
        raise EOFError
    return b

def readrec():
    return readn(struct.unpack('>I', readn(4))[0])

def writerec(b):
    stdout.write(struct.pack('>I', len(b)))
    stdout.write(b)
`

// pyGenerate writes argv[2] random values (seed argv[1]): for each, the
// marshal bytes (random version 0-2) and the description of what CPython
// loads back from them.
const pyGenerate = pyCommon + `
POOL = ['k', 'ab', 'uri', 'collection', 'x_y', 'priority']

def gen_int(r):
    c = r.randrange(8)
    if c == 0: return r.randrange(-10, 10)
    if c == 1: return r.choice([2**31-1, -2**31, 2**31, -2**31-1, 2**63-1, -2**63, 2**63, -2**63-1, 2**32, 2**64, 2**15, 2**30, 2**60])
    if c == 2: return r.randrange(-2**31, 2**31)
    if c == 3: return int(r.randrange(-2**63, 2**63))
    if c == 4:
        n = r.randrange(64, 300)
        return r.randrange(-2**n, 2**n)
    if c == 5 and PY2: return long(r.randrange(-2**40, 2**40))
    if c == 6: return r.choice([0, 1, -1, 32767, 32768, -32768, 2**30, -2**30])
    return r.randrange(-1000, 1000)

def gen_float(r):
    c = r.randrange(5)
    if c == 0: return r.choice([0.0, -0.0, float('inf'), float('-inf'), float('nan'), 5e-324, -5e-324, 2.2250738585072014e-308, 1.7976931348623157e308, 0.1, 1e16, 1e-5, 123456789.0, 1e22])
    if c == 1: return struct.unpack('<d', bytes(bytearray([r.getrandbits(8) for _ in range(8)])))[0]
    if c == 2: return r.uniform(-1e6, 1e6)
    if c == 3: return float(r.randrange(-10**6, 10**6))
    return r.gauss(0, 1e10)

def gen_bytes(r):
    c = r.randrange(4)
    if c == 0 and PY2: return intern(r.choice(POOL))
    if c == 1: return r.choice(POOL).encode('ascii')
    return bytes(bytearray([r.getrandbits(8) for _ in range(r.randrange(0, 20))]))

def gen_unicode(r):
    out = []
    for _ in range(r.randrange(0, 12)):
        c = r.randrange(10)
        if c < 4: cp = r.randrange(0x20, 0x7f)
        elif c < 6: cp = r.randrange(0, 0x800)
        elif c < 8: cp = r.randrange(0x800, 0x10000)
        elif c < 9: cp = r.randrange(0x10000, 0x110000)
        else: cp = r.randrange(0xd800, 0xe000)
        out.append(uchr(cp))
    return u''.join(out)

def gen_scalar(r):
    c = r.randrange(12)
    if c == 0: return r.choice([None, True, False, Ellipsis, StopIteration])
    if c < 4: return gen_int(r)
    if c < 6: return gen_float(r)
    if c == 6: return complex(gen_float(r), gen_float(r))
    if c < 9: return gen_bytes(r)
    return gen_unicode(r)

def gen(r, depth, hashable=False):
    if depth >= 4 or r.random() < 0.45:
        return gen_scalar(r)
    n = r.randrange(0, 7)
    if hashable:
        if r.random() < 0.7:
            return tuple([gen(r, depth+1, True) for _ in range(n)])
        return frozenset([gen(r, depth+1, True) for _ in range(n)])
    c = r.randrange(5)
    if c == 0: return tuple([gen(r, depth+1) for _ in range(n)])
    if c == 1: return [gen(r, depth+1) for _ in range(n)]
    if c == 2: return dict([(gen(r, depth+1, True), gen(r, depth+1)) for _ in range(n)])
    if c == 3: return set([gen(r, depth+1, True) for _ in range(n)])
    return frozenset([gen(r, depth+1, True) for _ in range(n)])

r = random.Random(int(sys.argv[1]))
for i in range(int(sys.argv[2])):
    v = gen(r, 0)
    data = marshal.dumps(v, r.randrange(3))
    writerec(data)
    writerec(desc(marshal.loads(data)).encode('ascii'))
stdout.flush()
`

// pyCheck reads records (marshal bytes, Python literal) and prints, per
// record, "ok" when marshal.loads of the bytes equals eval of the literal,
// or a line saying how they differ.
const pyCheck = pyCommon + `
env = {'__builtins__': {}, 'set': set, 'frozenset': frozenset, 'float': float,
       'complex': complex, 'StopIteration': StopIteration, 'Ellipsis': Ellipsis,
       'True': True, 'False': False, 'None': None}
i = 0
while True:
    try:
        data = readrec()
    except EOFError:
        break
    lit = readrec().decode('utf-8')
    try:
        ours = desc(marshal.loads(data))
        want = desc(eval(lit, env))
        line = 'ok' if ours == want else 'BAD %d loads=%s eval=%s lit=%s' % (i, ours, want, lit)
    except Exception as e:
        line = 'ERR %d %r lit=%s' % (i, e, lit)
    stdout.write((line + '\n').encode('utf-8'))
    i += 1
stdout.flush()
`

// describe mirrors desc in pyCommon. py3 is set for Python 3, whose float
// description is the same but whose text and byte types keep our names.
func describe(v Value) string {
	var b strings.Builder
	describeTo(&b, v)
	return b.String()
}

func fdesc(f float64) string {
	if math.IsNaN(f) {
		return "nan"
	}
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], math.Float64bits(f))
	return hex.EncodeToString(buf[:])
}

func describeTo(b *strings.Builder, v Value) {
	sorted := func(open, close string, descs []string) {
		sort.Strings(descs)
		b.WriteString(open + strings.Join(descs, ",") + close)
	}
	seq := func(elems []Value) []string {
		out := make([]string, len(elems))
		for i, e := range elems {
			out[i] = describe(e)
		}
		return out
	}
	switch v := v.(type) {
	case None:
		b.WriteString("N")
	case Bool:
		if v {
			b.WriteString("T")
		} else {
			b.WriteString("F")
		}
	case Ellipsis:
		b.WriteString("E")
	case StopIteration:
		b.WriteString("S")
	case Int:
		b.WriteString("i" + strconv.FormatInt(int64(v), 10))
	case Long:
		b.WriteString("i" + v.String())
	case Float:
		b.WriteString("f" + fdesc(float64(v)))
	case Complex:
		b.WriteString("c" + fdesc(real(v)) + "," + fdesc(imag(v)))
	case Bytes:
		b.WriteString("s" + hex.EncodeToString(v))
	case Unicode:
		b.WriteString("u")
		s := []byte(v)
		for i := 0; len(s) > 0; i++ {
			c, n := decodeWTF8(s)
			if n == 0 {
				c, n = 0xFFFD, 1
			}
			if i > 0 {
				b.WriteString(".")
			}
			b.WriteString(strconv.FormatInt(int64(c), 16))
			s = s[n:]
		}
	case Tuple:
		b.WriteString("(" + strings.Join(seq(v), ",") + ")")
	case List:
		b.WriteString("[" + strings.Join(seq(v), ",") + "]")
	case Dict:
		ds := make([]string, len(v))
		for i, p := range v {
			ds[i] = describe(p.Key) + ":" + describe(p.Value)
		}
		sorted("{", "}", ds)
	case Set:
		sorted("<", ">", seq(v))
	case FrozenSet:
		sorted("z<", ">", seq(v))
	default:
		b.WriteString(fmt.Sprintf("?%T", v))
	}
}

const diffCount = 10000

func readRec(r io.Reader) ([]byte, error) {
	var n [4]byte
	if _, err := io.ReadFull(r, n[:]); err != nil {
		return nil, err
	}
	b := make([]byte, binary.BigEndian.Uint32(n[:]))
	_, err := io.ReadFull(r, b)
	return b, err
}

func appendRec(dst, b []byte) []byte {
	return append(binary.BigEndian.AppendUint32(dst, uint32(len(b))), b...)
}

// TestDifferentialPythonToTrawl: Python generates random values, dumps
// them with a random version (0, 1 or 2), and describes what it loads back
// from those bytes; trawl must decode the same bytes to a value with the
// same description, and re-encoding it must decode to an equal value.
func TestDifferentialPythonToTrawl(t *testing.T) {
	for name, py := range pythons(t) {
		t.Run(name, func(t *testing.T) {
			out := bytes.NewReader(runPython(t, py, pyGenerate, nil, "20240601", strconv.Itoa(diffCount)))
			codes := map[byte]int{}
			bad := 0
			for i := 0; i < diffCount; i++ {
				data, err := readRec(out)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				want, err := readRec(out)
				if err != nil {
					t.Fatalf("record %d: %v", i, err)
				}
				countCodes(data, codes)
				v, err := Decode(data)
				if err != nil {
					t.Errorf("value %d: Decode(%x): %v (python: %s)", i, data, err, want)
					bad++
				} else if got := describe(v); got != string(want) {
					t.Errorf("value %d: Decode(%x) = %s\n  trawl:  %s\n  python: %s", i, data, FormatPython(v), got, want)
					bad++
				} else if enc, err := Encode(v); err != nil {
					t.Errorf("value %d: Encode(%s): %v", i, FormatPython(v), err)
					bad++
				} else if v2, err := Decode(enc); err != nil || !Equal(v, v2) {
					t.Errorf("value %d: re-decode of %x: %v, %v", i, enc, err, v2)
					bad++
				}
				if bad > 10 {
					t.Fatal("too many mismatches")
				}
			}
			t.Logf("%d values from %s; type codes seen: %s", diffCount, name, codeCounts(codes))
		})
	}
}

// countCodes tallies the type codes in a marshal stream (by walking it).
func countCodes(data []byte, codes map[byte]int) {
	r := NewReader(data, Limits{})
	var walk func() bool
	walk = func() bool {
		c, err := r.Peek()
		if err != nil {
			return false
		}
		codes[c]++
		switch c {
		case '(', '[', '<', '>':
			_, n, err := r.ReadSeqHeader()
			if err != nil {
				return false
			}
			for range n {
				if !walk() {
					return false
				}
			}
			return true
		case '{':
			if r.ReadDictStart() != nil {
				return false
			}
			for {
				more, err := r.DictNext()
				if err != nil {
					return false
				}
				if !more {
					return true
				}
				if !walk() || !walk() {
					return false
				}
			}
		}
		return r.Skip() == nil
	}
	walk()
}

func codeCounts(codes map[byte]int) string {
	keys := make([]int, 0, len(codes))
	for c := range codes {
		keys = append(keys, int(c))
	}
	sort.Ints(keys)
	var parts []string
	for _, c := range keys {
		parts = append(parts, fmt.Sprintf("%c:%d", c, codes[byte(c)]))
	}
	return strings.Join(parts, " ")
}

// TestDifferentialTrawlToPython: trawl generates random values, encodes
// them and formats them as Python literals; Python loads the bytes, evals
// the literal, and reports any difference.
func TestDifferentialTrawlToPython(t *testing.T) {
	for name, py := range pythons(t) {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(20240601, 7))
			var in []byte
			vals := make([]Value, diffCount)
			for i := range vals {
				v := randValue(rng, 0, false)
				vals[i] = v
				data, err := Encode(v)
				if err != nil {
					t.Fatalf("Encode(%s): %v", FormatPython(v), err)
				}
				// Our own round trips first.
				if v2, err := Decode(data); err != nil || !Equal(v, v2) {
					t.Fatalf("Decode(Encode(%s)) = %v, %v", FormatPython(v), v2, err)
				}
				lit := FormatPython(v)
				if v2, err := ParsePython(lit); err != nil || !Equal(v, v2) {
					t.Fatalf("ParsePython(%s) = %v, %v", lit, v2, err)
				}
				in = appendRec(appendRec(in, data), []byte(lit))
			}
			out := runPython(t, py, pyCheck, in)
			lines := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n")
			if len(lines) != diffCount {
				t.Fatalf("python answered %d lines for %d values:\n%s", len(lines), diffCount, out)
			}
			bad := 0
			for _, l := range lines {
				if l != "ok" {
					t.Error(l)
					if bad++; bad > 10 {
						t.Fatal("too many mismatches")
					}
				}
			}
			t.Logf("%d values checked by %s", diffCount, name)
		})
	}
}

// randValue returns a random value of every kind the model has. Unicode
// holds any code point, lone surrogates included, but never a high
// surrogate right before a low one: CPython 2's UTF-8 codec joins such a
// pair, so no Python 2 value has those bytes.
func randValue(r *rand.Rand, depth int, hashable bool) Value {
	if depth >= 4 || r.Float64() < 0.45 {
		return randScalar(r)
	}
	n := r.IntN(7)
	elems := func(hash bool) []Value {
		out := make([]Value, n)
		for i := range out {
			out[i] = randValue(r, depth+1, hash)
		}
		return out
	}
	if hashable {
		if r.Float64() < 0.7 {
			return Tuple(elems(true))
		}
		return FrozenSet(elems(true))
	}
	switch r.IntN(5) {
	case 0:
		return Tuple(elems(false))
	case 1:
		return List(elems(false))
	case 2:
		d := make(Dict, n)
		for i := range d {
			d[i] = Pair{randValue(r, depth+1, true), randValue(r, depth+1, false)}
		}
		return d
	case 3:
		return Set(elems(true))
	}
	return FrozenSet(elems(true))
}

var specialFloats = []float64{0, math.Copysign(0, -1), math.Inf(1), math.Inf(-1), math.NaN(),
	5e-324, -5e-324, 2.2250738585072014e-308, math.MaxFloat64, 0.1, 1e16, 1e-5, 123456789, 1e22, 1e-4, 9999999999999998}

func randFloat(r *rand.Rand) float64 {
	switch r.IntN(4) {
	case 0:
		return specialFloats[r.IntN(len(specialFloats))]
	case 1:
		return math.Float64frombits(r.Uint64())
	case 2:
		return (r.Float64() - 0.5) * 2e6
	}
	return float64(r.IntN(2000000) - 1000000)
}

func randScalar(r *rand.Rand) Value {
	switch r.IntN(13) {
	case 0:
		return []Value{None{}, Bool(true), Bool(false), Ellipsis{}, StopIteration{}}[r.IntN(5)]
	case 1, 2:
		switch r.IntN(5) {
		case 0:
			return Int(r.IntN(20) - 10)
		case 1:
			return Int([]int64{math.MaxInt32, math.MinInt32, math.MaxInt32 + 1, math.MinInt32 - 1,
				math.MaxInt64, math.MinInt64, 1 << 15, 1 << 30, -1 << 30, 1 << 45}[r.IntN(10)])
		case 2:
			return Int(int32(r.Uint32()))
		}
		return Int(int64(r.Uint64()))
	case 3:
		b := new(big.Int).Lsh(big.NewInt(1), uint(64+r.IntN(240)))
		b.Add(b, new(big.Int).SetUint64(r.Uint64()))
		if r.IntN(2) == 0 {
			b.Neg(b)
		}
		return Long{b}
	case 4, 5:
		return Float(randFloat(r))
	case 6:
		return Complex(complex(randFloat(r), randFloat(r)))
	case 7, 8:
		b := make([]byte, r.IntN(20))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return Bytes(b)
	case 9:
		return Str([]string{"k", "ab", "uri", "collection", ""}[r.IntN(5)])
	}
	var s []byte
	prevHigh := false
	for range r.IntN(12) {
		var c rune
		switch k := r.IntN(10); {
		case k < 4:
			c = rune(0x20 + r.IntN(0x5f))
		case k < 6:
			c = rune(r.IntN(0x800))
		case k < 8:
			c = rune(0x800 + r.IntN(0x10000-0x800))
		case k < 9:
			c = rune(0x10000 + r.IntN(0x110000-0x10000))
		default:
			c = rune(0xD800 + r.IntN(0x800))
		}
		if prevHigh && c >= 0xDC00 && c <= 0xDFFF {
			c = 'x'
		}
		prevHigh = c >= 0xD800 && c <= 0xDBFF
		s = appendWTF8(s, c)
	}
	return Unicode(s)
}
