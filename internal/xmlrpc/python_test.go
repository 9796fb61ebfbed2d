package xmlrpc

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/testenv"
)

// TestPythonEncodes decodes what Python's xmlrpc.client writes, and has
// Python read back what the encoder writes.
func TestPythonEncodes(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 is not installed")
	}
	const script = `
import sys, xmlrpc.client, datetime
v = [1, -2**31, True, "a<&>\u00e9\U0001F600", 2.5, None, xmlrpc.client.Binary(b"\x00\xff"*50),
     datetime.datetime(2009, 2, 9, 16, 38, 39), {"k": [1, {"n": "x"}]}, []]
sys.stdout.write(xmlrpc.client.dumps((v,), methodname="Echo", allow_none=True))
`
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatal(err)
	}
	c, err := DecodeCall(bytes.NewReader(out), Limits{})
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	want := Array{Int(1), Int(-1 << 31), Bool(true), String("a<&>\u00e9\U0001F600"), Double(2.5), Nil{},
		Base64(bytes.Repeat([]byte{0, 0xff}, 50)), DateTime(time.Date(2009, 2, 9, 16, 38, 39, 0, time.UTC)),
		Struct{{"k", Array{Int(1), Struct{{"n", String("x")}}}}}, Array{}}
	if c.Method != "Echo" || len(c.Params) != 1 || !Equal(c.Params[0], want) {
		t.Fatalf("got %#v", c)
	}
	// Back: Python loads our response and prints its repr.
	resp, err := EncodeResponse(want)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(py, "-c", `import sys, xmlrpc.client
(v,), _ = xmlrpc.client.loads(sys.stdin.read(), use_builtin_types=True)
print(repr(v))`)
	cmd.Stdin = bytes.NewReader(resp)
	got, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, got)
	}
	wantRepr := `[1, -2147483648, True, 'a<&>é😀', 2.5, None, b'` + strings.Repeat(`\x00\xff`, 50) +
		`', datetime.datetime(2009, 2, 9, 16, 38, 39), {'k': [1, {'n': 'x'}]}, []]`
	if strings.TrimSpace(string(got)) != wantRepr {
		t.Errorf("python read:\n%s\nwant:\n%s", got, wantRepr)
	}
}
