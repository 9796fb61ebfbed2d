package cmtdump

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/cli"
	"github.com/trawl/trawl/internal/cli/clitest"
	"github.com/trawl/trawl/internal/cmt"
	"github.com/trawl/trawl/internal/marshal"
)

func runCmtCLI(t *testing.T, stdin []byte, args ...string) (int, string, string) {
	t.Helper()
	return clitest.Run(context.Background(), []cli.Command{Command()}, string(stdin), args...)
}

func cmtFrame(t *testing.T, m cmt.Message, p cmt.Priority) []byte {
	t.Helper()
	b, err := cmt.EncodeFrame(m, p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Example 4.1 of MS-FSCMT.
const cmtExampleInitHex = "0000005528020000007B7302000000787028020000007310000000686F73742E636F6E746F736F2E636F6D691027000073020000006D69730B00000037302D38362D31322D32307302000000636D6918000000306901000000"

func TestCmtDecode(t *testing.T) {
	entry := cmt.Entry{
		URI:       cmt.URIStructure{URI: "http://a.example/", Scheme: "http", Host: "a.example", Port: 80, Parsed: true},
		Referrer:  cmt.EmptyURIStructure(),
		Flags:     cmt.URIFStartURI | cmt.URIFUnscreened,
		Redirects: []cmt.RedirectHop{{URI: "http://b.example/", Type: cmt.URIFRedirect301}},
		Extra:     []cmt.ExtraItem{{Key: cmt.IntScalar(16), Value: cmt.NoneScalar()}},
	}
	var capture []byte
	capture = append(capture, cmtFrame(t, &cmt.UMURI{Collection: "web", Entry: entry}, cmt.PriorityNormal)...)
	// An unknown command: {b'cm': 99, b'dn': b'x'}, priority 1.
	unknown, err := marshal.Encode(marshal.Tuple{marshal.Dict{
		{Key: marshal.Str("cm"), Value: marshal.Int(99)}, {Key: marshal.Str("dn"), Value: marshal.Str("x")}}, marshal.Int(1)})
	if err != nil {
		t.Fatal(err)
	}
	capture = binary.BigEndian.AppendUint32(capture, uint32(len(unknown)))
	capture = append(capture, unknown...)
	capture = append(capture, 0, 0, 0, 1, 'N') // malformed
	capture = append(capture, cmtFrame(t, &cmt.PPDUPAdd{Collection: "web", NodeID: "n1", URI: "http://a.example/",
		Checksum: cmt.Checksum{0xA9, 0xEB}}, cmt.PriorityNormal)...)

	code, out, errOut := runCmtCLI(t, capture, "cmt", "decode")
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{
		"frame 1 at byte 0:", "priority normal", "CMD_UM_URI (25) UMURI", `  Collection: "web"`,
		`      URI: "http://a.example/"`, "    Flags: 0x2001 (URIF_STARTURI|URIF_UNSCREENED)",
		"        Type: 0x20 (URIF_REDIRECT_301)", "      [0]: 16: None", "      Port: None",
		"frame 2 at byte", "priority high\nunknown command 99\n  {b'cm': 99, b'dn': b'x'}",
		"frame 3 at byte", "malformed: cmt: malformed message",
		"PPDUP_ADD (52) PPDUPAdd", "  Checksum: a9eb0000000000000000000000000000",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, "\n\nframe "); n != 3 {
		t.Errorf("%d blank-line separated blocks after the first, want 3:\n%s", n, out)
	}
}

func TestCmtDecodeHexFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "capture.hex")
	text := cmtExampleInitHex[:40] + "\n  " + cmtExampleInitHex[40:] + "\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCmtCLI(t, nil, "cmt", "decode", "--hex", path)
	if code != 0 {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	want := "frame 1 at byte 0: 85 bytes, priority high\nCMD_UM_INIT (24) UMInit\n" +
		"  NodeID: \"70-86-12-20\"\n  AdminHost: \"host.contoso.com\"\n  AdminPort: 10000\n"
	if out != want {
		t.Errorf("output:\n%s\nwant:\n%s", out, want)
	}
}

func TestCmtDecodeErrors(t *testing.T) {
	frame, _ := hex.DecodeString(cmtExampleInitHex)
	tests := []struct {
		name   string
		stdin  []byte
		args   []string
		code   int
		stdout string
		stderr string
	}{
		{"help", nil, []string{"cmt", "decode", "--help"}, 0, "", "usage: trawl cmt decode"},
		{"cmt help", nil, []string{"cmt", "--help"}, 0, "", "decode [FILE]"},
		{"no subcommand", nil, []string{"cmt"}, 2, "", "subcommands:"},
		{"unknown subcommand", nil, []string{"cmt", "encode"}, 2, "", `unknown subcommand "encode"`},
		{"two files", nil, []string{"cmt", "decode", "a", "b"}, 2, "", "at most one FILE"},
		{"missing file", nil, []string{"cmt", "decode", "/nonexistent/capture"}, 1, "", "no such file"},
		{"bad hex", []byte("00zz"), []string{"cmt", "decode", "--hex"}, 1, "", "bad hex"},
		{"empty", nil, []string{"cmt", "decode"}, 0, "no frames", ""},
		{"truncated", frame[:50], []string{"cmt", "decode"}, 1, "", "unexpected EOF"},
		{"too large", frame, []string{"cmt", "decode", "--max-frame", "80"}, 1, "", "frame too large"},
		{"frame then truncated", append(bytes.Clone(frame), 0, 0), []string{"cmt", "decode"}, 1, "CMD_UM_INIT", "frame header at byte 89"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCmtCLI(t, tt.stdin, tt.args...)
			if code != tt.code || !strings.Contains(out, tt.stdout) || !strings.Contains(errOut, tt.stderr) {
				t.Errorf("exit %d (want %d)\nstdout %q (want %q)\nstderr %q (want %q)", code, tt.code, out, tt.stdout, errOut, tt.stderr)
			}
		})
	}
}
