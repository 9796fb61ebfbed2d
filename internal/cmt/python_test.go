package cmt

import (
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// python2 returns a Python 2 interpreter, looked for as test.sh does:
// $TRAWL_PYTHON2, python2.7, python2, a pyenv 2.7 install.
func python2(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TRAWL_PYTHON2"); p != "" {
		return p
	}
	cands := []string{"python2.7", "python2"}
	if home, err := os.UserHomeDir(); err == nil {
		found, _ := filepath.Glob(filepath.Join(home, ".pyenv", "versions", "2.7*", "bin", "python2.7"))
		cands = append(cands, found...)
	}
	for _, name := range cands {
		if p, err := exec.LookPath(name); err == nil {
			if exec.Command(p, "-c", "import marshal").Run() == nil {
				return p
			}
		}
	}
	t.Skip("no python2 on this machine (set TRAWL_PYTHON2): the CPython 2 marshal check needs it")
	return ""
}

// Messages marshalled by CPython 2 itself, which interns identifier-like
// strings (codes t and R, a back-reference table that spans the whole
// message), decode as the same messages.
func TestDecodeCPython2Marshal(t *testing.T) {
	py := python2(t)
	script := `
import marshal, binascii
uri = ('http://www.contoso.com/', 'http', 'www.contoso.com', 'www.contoso.com', 80, '/', '', '', '', '', '', 1, 1, 'www.contoso.com')
empty = ('', '', '', '', None, '', '', '', '', '', '', 1, 1, '')
msgs = [
    ({'dn': 'example', 'pd': ('WQE', uri, empty, 8192, 0, [('http://contoso.com/', 32)], 0, -1, {16: None, 101: '70-86-12-20'}), 'cm': 25}, 0),
    ({'cs': '\xa9\xeb\xcb\x8f\xac\xbd\xc7\x43\x77\x5a\x1d\x3b\x52\x2d\xa8\xb6', 'dn': 'example', 'id': '70-86-12-20', 'cm': 52, 'ur': 'http://www.contoso.com/'}, 0),
    ({'dn': 'example', 'vc': 1, 'pd': {'example': {'compact': 0, 'format': 'gigabase', 'link_extraction': {1: 1, 128: 0}}}, 'cm': 59}, 1),
    ({'vc': 2 ** 40, 'cm': 60}, 1),
]
for m in msgs:
    print binascii.hexlify(marshal.dumps(m))
`
	out, err := exec.Command(py, "-c", script).Output()
	if err != nil {
		t.Fatalf("%s: %v", py, err)
	}
	lines := strings.Fields(string(out))
	want := []Frame{
		{PriorityNormal, &UMURI{Collection: "example", Entry: Entry{
			URI: contosoURI, Referrer: EmptyURIStructure(), Flags: URIFUnscreened, Cycle: -1,
			Redirects: []RedirectHop{{URI: "http://contoso.com/", Type: URIFRedirect301}},
			Extra:     []ExtraItem{{IntScalar(16), NoneScalar()}, {IntScalar(101), StrScalar("70-86-12-20")}},
		}}},
		{PriorityNormal, &PPDUPAdd{Collection: "example", NodeID: "70-86-12-20", URI: "http://www.contoso.com/", Checksum: checksum46}},
		{PriorityHigh, &PPDUPSetConfig{Collection: "example", VClock: 1, Config: CrawlConfig{Collections: []Collection{{
			Name: "example", Params: Params{
				Attribs:  []Attrib{IntAttrib("compact", 0), StrAttrib("format", "gigabase")},
				Sections: []Section{{Name: LinkExtractionSection, Params: Params{Attribs: []Attrib{IntAttrib("a", 1), IntAttrib("img", 0)}}}},
			}}}}}},
		{PriorityHigh, &PPDUPConfigAck{VClock: 1 << 40}},
	}
	if len(lines) != len(want) {
		t.Fatalf("python printed %d lines, want %d", len(lines), len(want))
	}
	sawRef := false
	for i, line := range lines {
		body, err := hex.DecodeString(line)
		if err != nil {
			t.Fatal(err)
		}
		sawRef = sawRef || strings.Contains(string(body), "R")
		got, err := DecodeFrame(body)
		if err != nil {
			t.Fatalf("message %d (%s): %v", i, line, err)
		}
		// CPython's dict order is its own; compare after sorting the
		// config, whose order the wire decides.
		if sc, ok := got.Message.(*PPDUPSetConfig); ok {
			sortParams(&sc.Config.Collections[0].Params)
			sortParams(&sc.Config.Collections[0].Sections[0].Params)
		}
		if ui, ok := got.Message.(*UMURI); ok && len(ui.Entry.Extra) == 2 && ui.Entry.Extra[0].Key.Int == 101 {
			ui.Entry.Extra[0], ui.Entry.Extra[1] = ui.Entry.Extra[1], ui.Entry.Extra[0]
		}
		if diff := cmp.Diff(want[i], got); diff != "" {
			t.Errorf("message %d (-want +got):\n%s", i, diff)
		}
	}
	if !sawRef {
		t.Log("python2 wrote no string references; the t/R path was not exercised")
	}
}

func sortParams(p *Params) {
	for i := 1; i < len(p.Attribs); i++ {
		for j := i; j > 0 && p.Attribs[j].Name < p.Attribs[j-1].Name; j-- {
			p.Attribs[j], p.Attribs[j-1] = p.Attribs[j-1], p.Attribs[j]
		}
	}
}
