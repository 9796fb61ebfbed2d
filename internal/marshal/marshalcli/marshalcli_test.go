package marshalcli

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/testenv"
)

// runMarshalCLI runs trawl with args and stdin, returning exit code, stdout and
// stderr.
func runMarshalCLI(t *testing.T, stdin string, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(context.Background(), []cli.Command{Command()}, stdin, args...)
}

func TestMarshalCLI(t *testing.T) {
	tests := []struct {
		name    string
		stdin   string
		args    []string
		code    int
		stdout  string
		errLine string // substring of stderr
	}{
		{"decode hex", "28020000006901000000\n740100000078\n", []string{"marshal", "decode", "--hex"}, 0, "(1, b'x')\n", ""},
		{"decode raw", "N", []string{"marshal", "decode"}, 0, "None\n", ""},
		{"decode all", "NT(\x01\x00\x00\x00F", []string{"marshal", "decode", "--all"}, 0, "None\nTrue\n(False,)\n", ""},
		{"decode trailing", "NT", []string{"marshal", "decode"}, 1, "", "trailing data after the value at byte 1"},
		{"decode bad code", "4e63", []string{"marshal", "decode", "--hex", "--all"}, 1, "None\n", "code object (type code 0x63 'c') not allowed at byte 1"},
		{"decode bad hex", "4x", []string{"marshal", "decode", "--hex"}, 1, "", "bad hex input"},
		{"decode empty", "", []string{"marshal", "decode"}, 1, "", "data ends inside value"},
		{"encode hex", "{'a': 1}", []string{"marshal", "encode", "--hex"}, 0, "7b730100000061690100000030\n", ""},
		{"encode raw", "u'\\xe9'", []string{"marshal", "encode"}, 0, "u\x02\x00\x00\x00\xc3\xa9", ""},
		{"encode bad", "[1, 2", []string{"marshal", "encode"}, 1, "", "expected ',', found end of input at byte 5"},
		{"encode unhashable", "{[1]: 2}", []string{"marshal", "encode"}, 1, "", "unhashable dict key"},
		{"decode help", "", []string{"marshal", "decode", "--help"}, 0, "", "usage: trawl marshal decode"},
		{"encode help", "", []string{"marshal", "encode", "--help"}, 0, "", "usage: trawl marshal encode"},
		{"marshal help", "", []string{"marshal", "--help"}, 0, "", "subcommands:"},
		{"no subcommand", "", []string{"marshal"}, 2, "", "usage: trawl marshal"},
		{"unknown subcommand", "", []string{"marshal", "dump"}, 2, "", "unknown subcommand \"dump\""},
		{"stray argument", "", []string{"marshal", "decode", "x"}, 2, "", "unexpected argument"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errs := runMarshalCLI(t, tc.stdin, tc.args...)
			if code != tc.code {
				t.Errorf("exit %d, want %d (stderr %q)", code, tc.code, errs)
			}
			if out != tc.stdout {
				t.Errorf("stdout %q, want %q", out, tc.stdout)
			}
			if !strings.Contains(errs, tc.errLine) {
				t.Errorf("stderr %q does not contain %q", errs, tc.errLine)
			}
			if code == 1 && strings.Count(errs, "\n") != 1 {
				t.Errorf("error is not one line: %q", errs)
			}
		})
	}
}

// TestMarshalCLIRoundTrip: encode then decode gives the literal back.
func TestMarshalCLIRoundTrip(t *testing.T) {
	lit := "({b'cm': 25, b'dn': b'web', b'pd': [1.5, -2, 12345678901234567890, u'\\u20ac', (None,)]}, 0)"
	code, hexOut, errs := runMarshalCLI(t, lit, "marshal", "encode", "--hex")
	if code != 0 {
		t.Fatalf("encode: exit %d: %s", code, errs)
	}
	code, out, errs := runMarshalCLI(t, hexOut, "marshal", "decode", "--hex")
	if code != 0 || out != lit+"\n" {
		t.Fatalf("decode: exit %d, %q, %s", code, out, errs)
	}
}

// TestMarshalCLIPythonLiteralEval: what decode prints, Python 3's
// ast.literal_eval reads to the value Python's marshal.loads gives for the
// same bytes.
func TestMarshalCLIPythonLiteralEval(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		testenv.Missing(t, "python3 not on PATH")
	}
	inputs := []string{
		"28020000006901000000730100000078", // s, not t: Python 3 loads t as str
		"7b690100000028020000006902000000690300000030",
		"79000000000000f03f0000000000000040",
		"6c0500000000000000000000000004",
		"7504000000f09f9880",
		"5b05000000" + "67000000000000f07f" + "670000000000000080" + "73010000000a" + "75020000000a27" + "6900000000",
	}
	for _, h := range inputs {
		code, out, errs := runMarshalCLI(t, h, "marshal", "decode", "--hex")
		if code != 0 {
			t.Fatalf("decode %s: exit %d: %s", h, code, errs)
		}
		script := `import ast, marshal, sys, binascii
lit, h = sys.argv[1], sys.argv[2]
got = ast.literal_eval(lit)
want = marshal.loads(binascii.unhexlify(h))
ok = repr(got) == repr(want) and type(got) is type(want)
print('ok' if ok else 'BAD %r %r' % (got, want))`
		res, err := exec.Command(py, "-c", script, strings.TrimSpace(out), h).CombinedOutput()
		if err != nil || strings.TrimSpace(string(res)) != "ok" {
			t.Errorf("%s printed %s; python3: %s %v", h, strings.TrimSpace(out), res, err)
		}
	}
}
