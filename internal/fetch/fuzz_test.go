package fetch

import (
	"net/url"
	"strings"
	"testing"
)

// Decoders of what a remote server sends (FTP replies and listings, HTML
// forms) and of configured header lines: none panics, and what each
// accepts is within its bounds.

func FuzzParsePASV(f *testing.F) {
	for _, s := range []string{"Entering Passive Mode (127,0,0,1,25,10)", "=127,0,0,1,0,21", "(127,0,0,1,256,1)",
		"(127,0,0,1,0)", "(1,2,3,4,0,0)", "227 Entering Passive Mode (192,168,1,2,195,149).", "99999999999999999999,1,1,1,1,1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if port, err := ParsePASV(s); err == nil && (port < 1 || port > 65535) {
			t.Fatalf("port %d from %q", port, s)
		}
	})
}

func FuzzParseEPSV(f *testing.F) {
	for _, s := range []string{"Entering Extended Passive Mode (|||6446|)", "ok (!!!21!)", "(|||0|)", "(|||70000|)",
		"no parens", "(||x|)", "(|||+80|)", "(|||-1|)", ")(", "(\x00\x00\x0021\x00)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if port, err := ParseEPSV(s); err == nil && (port < 1 || port > 65535) {
			t.Fatalf("port %d from %q", port, s)
		}
	})
}

func FuzzParseFTPListLine(f *testing.F) {
	for _, s := range []string{"-rw-r--r-- 1 ftp ftp      123 Jan 02 2024 readme.txt",
		"drwxr-xr-x 2 ftp ftp     4096 Jan 02 10:30 sub dir", "-rw-r--r-- 1 owner 5 Mar 3 2020 no group.txt",
		"lrwxrwxrwx 1 ftp ftp 7 Feb 1 2021 latest -> v1.2", "01-02-24  10:00AM       <DIR>          Folder A",
		"01-02-24  10:00AM                 1234 file b.txt", "total 12", "", "-rw-r--r-- 1 ftp ftp 1 Foo 2 2024 x",
		"drwxr-xr-x 2 ftp ftp 4096 Jan 02 10:30 ..", "lrwxrwxrwx 1 ftp ftp 7 Feb 1 2021  -> x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, ok := ParseFTPListLine(s)
		if ok && (e.Name == "" || strings.ContainsAny(e.Name, "\r\n")) {
			t.Fatalf("entry %+v from %q", e, s)
		}
	})
}

func FuzzParseForms(f *testing.F) {
	f.Add(`<form action="/go" method=POST><input type=hidden name=t value=x>
<input name=user><input type=password name=pw value=d><input type=checkbox name=c1 checked><input type=checkbox name=c2>
<select name=s><option>a<option selected value=B>b</select><textarea name=ta>hi</textarea><input type=submit name=go value=Go></form>
<form><input name=q></form>`)
	f.Add(`<form action="http://[::1" method=get><input name=a></form>`)
	f.Add(`<form><select name=s><option>x</form><textarea name=t>never closed`)
	f.Add(`<input name=outside><form action="%zz"></form>`)
	base, _ := url.Parse("http://h/dir/page.html")
	f.Fuzz(func(t *testing.T, body string) {
		for _, fm := range ParseForms([]byte(body), base) {
			if fm.Action == nil {
				t.Fatal("a form without an action URL")
			}
			if fm.Method != "GET" && fm.Method != "POST" {
				t.Fatalf("method %q", fm.Method)
			}
		}
	})
}

func FuzzParseHeaderLines(f *testing.F) {
	for _, s := range []string{"X-Crawl: trawl test", "Accept-Language: en, nb", "User-Agent: FAST Search Web Crawler",
		"no colon", ": empty name", "Bad Name: x", "X: a\r\nInjected: b", "X:"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHeaderLines(strings.Split(s, "\n"))
		if err != nil {
			return
		}
		for k, vs := range h {
			for _, v := range vs {
				if strings.ContainsAny(k+v, "\r\n") {
					t.Fatalf("header %q: %q carries a line break", k, v)
				}
			}
		}
	})
}
