package dmake

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Section 4's examples in the corrected single-line forms of the digest
// (7.2). The netsource example lost its last two tokens in the source; the
// form here completes it with the netsink example's key and "nocompress".
var specExamples = []struct {
	name  string
	line  string
	data  string // the data stream after a data-stream header
	cmd   string
	named []Named
	args  []string
	exact bool // re-encoding gives the same bytes
}{
	{name: "4.1 cd", line: `#cd $FASTSEARCH/data/webanalyzer/waworker1\` + "\n", cmd: "cd",
		args: []string{`$FASTSEARCH/data/webanalyzer/waworker1\`}},
	{name: "4.2 cd", line: `#cd c:\tmp\` + "\n", cmd: "cd", args: []string{`c:\tmp\`}},
	{name: "4.3 simple_command", line: "#simple_command 14 @base64:dG91Y2ggJEZBU1RTRUFSQ0gvZGF0YS93ZWJhbmFseXplci93YXdvcmtlcjFcYnVpbGRfY29sbGVjdGlvbnNcbWFrZV9zcC5ub19saW5rc19ieV91cmloYXNoX3RzXzExLmVuZA==\n",
		cmd: "simple_command", args: []string{"14", `touch $FASTSEARCH/data/webanalyzer/waworker1\build_collections\make_sp.no_links_by_urihash_ts_11.end`}, exact: true},
	{name: "4.3 simple_response", line: "#simple_response 14 0\n", data: "\n", cmd: "simple_response", args: []string{"14"}, exact: true},
	{name: "4.4 shell", line: "#shell #umask=54 30 cmd /C jsort2.exe -S 200M -T . -m -k2,2 2.sp.0_no_links_by_urihash_new.12 1.sp.no_links_by_urihash.12 -o 2.sp.no_links_by_urihash_ts.12\n",
		cmd: "shell", named: []Named{{Name: "umask", Value: []byte("54")}},
		args: strings.Fields("30 cmd /C jsort2.exe -S 200M -T . -m -k2,2 2.sp.0_no_links_by_urihash_new.12 1.sp.no_links_by_urihash.12 -o 2.sp.no_links_by_urihash_ts.12"), exact: true},
	{name: "4.4 slot", line: "#slot shell 30 5564\n", cmd: "slot", args: []string{"shell", "30", "5564"}, exact: true},
	{name: "4.4 finish", line: "#finish 30 shell completed 0 @base64:VGhlIHN5c3RlbSBjYW5ub3QgZmluZCB0aGUgZmlsZSBzcGVjaWZpZWQuDQo=\n",
		cmd: "finish", args: []string{"30", "shell", "completed", "0", "The system cannot find the file specified.\r\n"}, exact: true},
	{name: "4.4 forget", line: "#forget 30\n", cmd: "forget", args: []string{"30"}, exact: true},
	{name: "4.5 netsink", line: "#netsink 42 @base64:YzpcdG1wXHRhbGVzXGZkbVxhdXRvdGVzdFxmZG13b3JrZXIxXGJ1aWxkLTAwMFx0ZXh0X29uX3IxLjg= @base64:LWM6XHRtcFx0YWxlc1xmZG1cYXV0b3Rlc3RcZmRtd29ya2VyMVxidWlsZC0wMDBcdGV4dF9vbl9yMS44LTYyMDQ5OTUwMjgzNDI3MDM5Nzk= nocompress\n",
		cmd: "netsink", args: []string{"42", `c:\tmp\tales\fdm\autotest\fdmworker1\build-000\text_on_r1.8`, `-c:\tmp\tales\fdm\autotest\fdmworker1\build-000\text_on_r1.8-6204995028342703979`, "nocompress"}, exact: true},
	{name: "4.5 slot netsink", line: "#slot netsink 42 9002\n", cmd: "slot", args: []string{"netsink", "42", "9002"}, exact: true},
	{name: "4.5 finish netsink", line: "#finish 42 netsink completed 5034\n", cmd: "finish", args: []string{"42", "netsink", "completed", "5034"}, exact: true},
	{name: "4.5 forget 42", line: "#forget 42\n", cmd: "forget", args: []string{"42"}, exact: true},
	{name: "4.5 netsource", line: "#netsource 130 @base64:YzpcdG1wXHRhbGVzXGZkbVxhdXRvdGVzdFxmZG13b3JrZXIxXGJ1aWxkLTAwMFx0ZXh0X29uX3IxLjE0 8P8HB4J.ad.fast.no 9002 @base64:LWM6XHRtcFx0YWxlc1xmZG1cYXV0b3Rlc3RcZmRtd29ya2VyMVxidWlsZC0wMDBcdGV4dF9vbl9yMS44LTYyMDQ5OTUwMjgzNDI3MDM5Nzk= nocompress\n",
		cmd: "netsource", args: []string{"130", `c:\tmp\tales\fdm\autotest\fdmworker1\build-000\text_on_r1.14`, "8P8HB4J.ad.fast.no", "9002", `-c:\tmp\tales\fdm\autotest\fdmworker1\build-000\text_on_r1.8-6204995028342703979`, "nocompress"}, exact: true},
	{name: "4.5 finish netsource", line: "#finish 130 netsource completed 5370\n", cmd: "finish", args: []string{"130", "netsource", "completed", "5370"}, exact: true},
	{name: "4.5 forget 130", line: "#forget 130\n", cmd: "forget", args: []string{"130"}, exact: true},
}

func TestSpecExamples(t *testing.T) {
	for _, ex := range specExamples {
		t.Run(ex.name, func(t *testing.T) {
			var d Decoder
			if err := d.Feed([]byte(ex.line + ex.data)); err != nil {
				t.Fatal(err)
			}
			m, ok, err := d.Next()
			if err != nil || !ok {
				t.Fatalf("Next = %v, %v", ok, err)
			}
			if m.Name != ex.cmd {
				t.Errorf("name %q, want %q", m.Name, ex.cmd)
			}
			if diff := cmp.Diff(ex.args, strs(m.Args)); diff != "" {
				t.Errorf("args (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(ex.named, m.Named); diff != "" {
				t.Errorf("named (-want +got):\n%s", diff)
			}
			if d.Buffered() != 0 {
				t.Errorf("%d bytes left over", d.Buffered())
			}
			if ex.data != "" && string(m.Data)+"\n" != ex.data {
				t.Errorf("data %q", m.Data)
			}
			enc := AppendLine(nil, &m)
			if ex.exact && string(enc) != ex.line+ex.data {
				t.Errorf("re-encoded\n%q\nwant\n%q", enc, ex.line+ex.data)
			}
			// Whatever the form, the encoding parses back to the same message.
			var d2 Decoder
			_ = d2.Feed(enc)
			m2, ok, err := d2.Next()
			if err != nil || !ok {
				t.Fatalf("re-parse: %v %v", ok, err)
			}
			if diff := cmp.Diff(strs(m.Args), strs(m2.Args)); diff != "" {
				t.Errorf("round trip (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSimpleCommandBlobSplits(t *testing.T) {
	m, err := ParseLine([]byte(specExamples[2].line))
	if err != nil {
		t.Fatal(err)
	}
	got := strs(m.SplitArgs())
	want := []string{"14", "touch", `$FASTSEARCH/data/webanalyzer/waworker1\build_collections\make_sp.no_links_by_urihash_ts_11.end`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	env := func(k string) (string, bool) {
		if k == "FASTSEARCH" {
			return "/opt/fast", true
		}
		return "", false
	}
	p := Resolve("/work", got[2], env)
	if p != "/opt/fast/data/webanalyzer/waworker1/build_collections/make_sp.no_links_by_urihash_ts_11.end" {
		t.Errorf("resolved %q", p)
	}
	// Example 4.1: the cd path with a trailing backslash.
	if p := Resolve("/", `$FASTSEARCH/data/webanalyzer/waworker1\`, env); p != "/opt/fast/data/webanalyzer/waworker1" {
		t.Errorf("cd path %q", p)
	}
}

func TestExpand(t *testing.T) {
	env := map[string]string{"A": "x", "B_1": "y", "C-D": "z", "E": ""}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"$A/b", "x/b"},
		{"${A}b", "xb"},
		{"$B_1.c", "y.c"},
		{"$C-D", "z"},
		{"$$A", "$A"},
		{"$$", "$"},
		{"$", "$"},
		{"a$", "a$"},
		{"$NOPE/x", "$NOPE/x"},
		{"${NOPE}x", "${NOPE}x"},
		{"${A", "${A"},
		{"'$A'$A", "'$A'x"},
		{"x'$A", "x$A"},
		{"$E.", "."},
		{`$A\b/c`, `x\b/c`},
	} {
		if got := Expand(tc.in, lookup); got != tc.want {
			t.Errorf("Expand(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestTransferKey(t *testing.T) {
	k := `-c:\tmp\tales\fdm\autotest\fdmworker1\build-000\text_on_r1.8-6204995028342703979`
	p, r, err := ParseTransferKey(k)
	if err != nil || p != `c:\tmp\tales\fdm\autotest\fdmworker1\build-000\text_on_r1.8` || r != 6204995028342703979 {
		t.Fatalf("ParseTransferKey = %q %d %v", p, r, err)
	}
	if TransferKey(p, r) != k || len(k) != 80 {
		t.Errorf("TransferKey round trip")
	}
}

func TestMalformedLines(t *testing.T) {
	for _, tc := range []string{
		"", "\n", "cd x\n", "#cd x", "#CD x\n", "#nosuch 1\n", "#shell #=3 1\n",
		"#shell #umask 1\n", "#cd @base64:!!!\n", "#cd @base64:QQ====\n", "#cd a\nb\n",
	} {
		if _, err := ParseLine([]byte(tc)); !errors.Is(err, ErrMalformed) {
			t.Errorf("ParseLine(%q) = %v, want ErrMalformed", tc, err)
		}
	}
	for _, tc := range []string{"#stdout 1 x\n", "#stdout 0 1\n", "#stderr 1 9999999999\n", "#stdout 1 -1\n", "#stdout 1\n"} {
		m, err := ParseLine([]byte(tc))
		if err != nil {
			t.Fatalf("%q: %v", tc, err)
		}
		if _, err := DataLen(&m); err == nil {
			t.Errorf("DataLen(%q) accepted", tc)
		}
	}
	if _, err := ParseTaskID([]byte("012")); err == nil {
		t.Error("leading zero accepted")
	}
}

func TestDecoderStreams(t *testing.T) {
	var buf []byte
	buf = AppendLine(buf, &Message{Name: CmdStdout, Args: [][]byte{[]byte("7")}, Data: []byte("a\nb #finish 1\n")})
	buf = AppendLine(buf, New(CmdInfo, "hello world"))
	buf = AppendLine(buf, &Message{Name: CmdStderr, Args: [][]byte{[]byte("7")}, Data: nil})
	buf = append(buf, "#bogus\n"...)
	buf = AppendLine(buf, New(CmdForget, "7"))
	var d Decoder
	var got []string
	var errs int
	// Byte by byte: every split point must work.
	for _, c := range buf {
		if err := d.Feed([]byte{c}); err != nil {
			t.Fatal(err)
		}
		for {
			m, ok, err := d.Next()
			if err != nil {
				errs++
				continue
			}
			if !ok {
				break
			}
			got = append(got, m.Name+":"+strings.Join(strs(m.Args), ",")+":"+string(m.Data))
		}
	}
	want := []string{"stdout:7:a\nb #finish 1\n", "info:hello world:", "stderr:7:", "forget:7:"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if errs != 1 {
		t.Errorf("%d errors, want 1 (the bogus line)", errs)
	}
	var d2 Decoder
	_ = d2.Feed([]byte("#stdout 1 3\nabcX#forget 1\n"))
	if _, _, err := d2.Next(); !errors.Is(err, ErrDesync) {
		t.Errorf("unterminated stream: %v", err)
	}
	var d3 Decoder
	if err := d3.Feed(bytes.Repeat([]byte("x"), MaxLine+1)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := d3.Next(); !errors.Is(err, ErrTooLong) {
		t.Errorf("long line: %v", err)
	}
}

func FuzzParseLine(f *testing.F) {
	for _, ex := range specExamples {
		f.Add([]byte(ex.line + ex.data))
	}
	f.Add([]byte("#request_heartbeat #tmp=@base64:dG1w 5\n"))
	f.Add([]byte("#stderr 3 2\nab\n"))
	f.Fuzz(func(t *testing.T, in []byte) {
		var d Decoder
		if err := d.Feed(in); err != nil {
			return
		}
		for i := 0; i < 100; i++ {
			m, ok, err := d.Next()
			if err != nil {
				if errors.Is(err, ErrDesync) || errors.Is(err, ErrTooLong) {
					return
				}
				continue
			}
			if !ok {
				return
			}
			// Whatever parses re-encodes to something that parses to the same.
			enc := AppendLine(nil, &m)
			var d2 Decoder
			if err := d2.Feed(enc); err != nil {
				t.Fatal(err)
			}
			m2, ok, err := d2.Next()
			if err != nil || !ok {
				t.Fatalf("re-parse of %q: %v %v", enc, ok, err)
			}
			if m2.Name != m.Name || !cmp.Equal(strs(m.Args), strs(m2.Args)) || !bytes.Equal(m.Data, m2.Data) {
				t.Fatalf("round trip %q -> %q", in, enc)
			}
		}
	})
}
