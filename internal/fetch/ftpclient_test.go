package fetch

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/webfarm"
)

func TestReadFTPReply(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     FTPReply
		wantErr  bool
	}{
		{"single", "220 ready\r\n", FTPReply{220, "ready"}, false},
		{"bare LF", "230 in\n", FTPReply{230, "in"}, false},
		{"code only", "200\r\n", FTPReply{200, ""}, false},
		{"multi-line (RFC 959 4.2)", "211-Features:\r\n EPSV\r\n PASV\r\n211 End\r\n", FTPReply{211, "Features:\n EPSV\n PASV\nEnd"}, false},
		{"multi-line with other code inside", "220-welcome\r\n230 not the end\r\n220 end\r\n", FTPReply{220, "welcome\n230 not the end\nend"}, false},
		{"multi-line, last line code only", "211-a\r\n211\r\n", FTPReply{211, "a"}, false},
		{"letters", "abc hello\r\n", FTPReply{}, true},
		{"first digit 6", "600 x\r\n", FTPReply{}, true},
		{"no separator", "220xready\r\n", FTPReply{}, true},
		{"short", "22\r\n", FTPReply{}, true},
		{"unterminated multi-line", "211-a\r\n b\r\n", FTPReply{}, true},
		{"empty", "", FTPReply{}, true},
		{"line too long", "200 " + strings.Repeat("x", MaxFTPReplyLine) + "\r\n", FTPReply{}, true},
		{"too many lines", "211-a\r\n" + strings.Repeat(" x\r\n", MaxFTPReplyLines+1) + "211 end\r\n", FTPReply{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ReadFTPReply(bufio.NewReaderSize(strings.NewReader(tt.in), 16))
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, want error %v", err, tt.wantErr)
			}
			if d := cmp.Diff(tt.want, got); d != "" && !tt.wantErr {
				t.Errorf("(-want +got)\n%s", d)
			}
		})
	}
	// Two replies in a row are read one at a time.
	r := bufio.NewReader(strings.NewReader("331 pw\r\n230-hi\r\n there\r\n230 in\r\n"))
	var codes []int
	for {
		rep, err := ReadFTPReply(r)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		codes = append(codes, rep.Code)
	}
	if !cmp.Equal(codes, []int{331, 230}) {
		t.Errorf("codes %v", codes)
	}
}

func TestParsePassiveReplies(t *testing.T) {
	for _, tt := range []struct {
		verb, in string
		want     int
	}{
		{"EPSV", "Entering Extended Passive Mode (|||6446|)", 6446},
		{"EPSV", "ok (!!!21!)", 21},
		{"EPSV", "(|||0|)", 0},
		{"EPSV", "(|||70000|)", 0},
		{"EPSV", "no parens", 0},
		{"EPSV", "(||x|)", 0},
		{"PASV", "Entering Passive Mode (127,0,0,1,25,10)", 25<<8 | 10},
		{"PASV", "=127,0,0,1,0,21", 21},
		{"PASV", "(127,0,0,1,256,1)", 0},
		{"PASV", "(127,0,0,1,0)", 0},
		{"PASV", "(1,2,3,4,0,0)", 0},
	} {
		t.Run(tt.verb+" "+tt.in, func(t *testing.T) {
			parse := ParsePASV
			if tt.verb == "EPSV" {
				parse = ParseEPSV
			}
			got, err := parse(tt.in)
			if tt.want == 0 {
				if err == nil {
					t.Errorf("port %d, want an error", got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("got %d, %v; want %d", got, err, tt.want)
			}
		})
	}
}

func TestParseFTPListLine(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want FTPEntry
		ok   bool
	}{
		{"-rw-r--r-- 1 ftp ftp      123 Jan 02 2024 readme.txt", FTPEntry{"readme.txt", false}, true},
		{"drwxr-xr-x 2 ftp ftp     4096 Jan 02 10:30 sub dir", FTPEntry{"sub dir", true}, true},
		{"-rw-r--r-- 1 owner 5 Mar 3 2020 no group.txt", FTPEntry{"no group.txt", false}, true},
		{"lrwxrwxrwx 1 ftp ftp 7 Feb 1 2021 latest -> v1.2", FTPEntry{"latest", false}, true},
		{"01-02-24  10:00AM       <DIR>          Folder A", FTPEntry{"Folder A", true}, true},
		{"01-02-24  10:00AM                 1234 file b.txt", FTPEntry{"file b.txt", false}, true},
		{"total 12", FTPEntry{}, false},
		{"", FTPEntry{}, false},
		{"-rw-r--r-- 1 ftp ftp 1 Foo 2 2024 x", FTPEntry{}, false},
	} {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := ParseFTPListLine(tt.in)
			if ok != tt.ok || got != tt.want {
				t.Errorf("got %+v %v, want %+v %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func FuzzReadFTPReply(f *testing.F) {
	for _, s := range []string{"220 ready\r\n", "211-Features:\r\n EPSV\r\n211 End\r\n", "229 Entering Extended Passive Mode (|||6446|)\r\n",
		"227 Entering Passive Mode (127,0,0,1,25,10)\r\n", "331 pw\r\n230 in\r\n", "211-\r\n211\r\n", "999 x\r\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		r := bufio.NewReaderSize(strings.NewReader(in), 16)
		for i := 0; i < 10; i++ {
			rep, err := ReadFTPReply(r)
			if err != nil {
				break
			}
			if rep.Code < 100 || rep.Code > 599 || len(rep.Text) > MaxFTPReplyBytes {
				t.Fatalf("reply %d with %d bytes of text", rep.Code, len(rep.Text))
			}
			ParseEPSV(rep.Text)
			ParsePASV(rep.Text)
		}
		for _, l := range strings.Split(in, "\n") {
			if e, ok := ParseFTPListLine(l); ok && e.Name == "" {
				t.Fatalf("empty name from %q", l)
			}
		}
	})
}

// TestFTPModes proves which data connection mode the client used: the
// server refuses the other one, and logs the mode of every transfer.
func TestFTPModes(t *testing.T) {
	files := map[string]string{"/pub/a.txt": "alpha", "/pub/sub/b.txt": "beta"}
	for _, tt := range []struct {
		name                        string
		active, noEPSV              bool
		refusePassive, refuseActive bool
		wantMode                    string
		wantStatus                  int
		wantVerbs                   []string
	}{
		{name: "passive", refuseActive: true, wantMode: "passive", wantStatus: 200, wantVerbs: []string{"EPSV"}},
		{name: "passive, PASV only", noEPSV: true, refuseActive: true, wantMode: "passive", wantStatus: 200, wantVerbs: []string{"PASV"}},
		{name: "active", active: true, refusePassive: true, wantMode: "active", wantStatus: 200, wantVerbs: []string{"EPRT"}},
		{name: "active, PORT only", active: true, noEPSV: true, refusePassive: true, wantMode: "active", wantStatus: 200, wantVerbs: []string{"PORT"}},
		{name: "passive against a server that refuses it", refusePassive: true, wantStatus: 502, wantVerbs: []string{"EPSV", "PASV"}},
		{name: "active against a server that refuses it", active: true, refuseActive: true, wantStatus: 502, wantVerbs: []string{"EPRT", "PORT"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := &webfarm.FTPServer{Files: files, Users: map[string]string{"u": "p"}, Accounts: map[string]string{"u": "dept7"},
				RefusePassive: tt.refusePassive, RefuseActive: tt.refuseActive}
			base := startFTP(t, srv)
			host := strings.TrimPrefix(base, "ftp://")
			f := newFetcher(t, func(o *Options) {
				o.AllowedTypes = nil
				o.FTP = FTPOptions{Active: tt.active, DisableEPSV: tt.noEPSV, Accounts: map[string]FTPAccount{host: {User: "u", Password: "p", Account: "dept7"}}}
			})
			for _, p := range []string{"/pub/a.txt", "/pub/"} {
				resp := get(t, f, base+p)
				if resp.Status != tt.wantStatus {
					t.Fatalf("%s: status %d, want %d", p, resp.Status, tt.wantStatus)
				}
				if tt.wantStatus == 200 && p == "/pub/a.txt" && string(resp.Body) != "alpha" {
					t.Errorf("body %q", resp.Body)
				}
				if tt.wantStatus == 200 && p == "/pub/" && !strings.Contains(string(resp.Body), `href="sub/"`) {
					t.Errorf("listing %s", resp.Body)
				}
			}
			var modes, verbs []string
			for _, c := range srv.Log() {
				if c.Mode != "" {
					modes = append(modes, fmt.Sprintf("%s %s", c.Verb, c.Mode))
				}
				switch c.Verb {
				case "EPSV", "PASV", "EPRT", "PORT":
					verbs = append(verbs, c.Verb)
				}
			}
			var want []string
			if tt.wantMode != "" {
				want = []string{"RETR " + tt.wantMode, "LIST " + tt.wantMode}
			}
			if d := cmp.Diff(want, modes); d != "" {
				t.Errorf("transfers (-want +got):\n%s", d)
			}
			// Each of the two fetches asks in the same way.
			if d := cmp.Diff(append(append([]string(nil), tt.wantVerbs...), tt.wantVerbs...), verbs); d != "" {
				t.Errorf("data commands (-want +got):\n%s", d)
			}
		})
	}
	t.Run("ACCT missing", func(t *testing.T) {
		srv := &webfarm.FTPServer{Files: files, Users: map[string]string{"u": "p"}, Accounts: map[string]string{"u": "dept7"}}
		base := startFTP(t, srv)
		f := newFetcher(t, func(o *Options) {
			o.FTP.Accounts = map[string]FTPAccount{strings.TrimPrefix(base, "ftp://"): {User: "u", Password: "p"}}
		})
		if resp := get(t, f, base+"/pub/a.txt"); resp.Status != 530 {
			t.Errorf("status %d, want 530 (not logged in: account needed)", resp.Status)
		}
	})
}
