package fetch

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"path"
	"sort"
	"strings"
	"sync"
	"time"
)

// FTPOptions configure ftp:// fetching.
type FTPOptions struct {
	// Accounts are the ftp_acct entries: site ("host" or "host:port") to
	// account. Sites without one are logged into anonymously.
	Accounts map[string]FTPAccount
	// Anonymous is the password of anonymous logins (default "trawl@").
	Anonymous string
	// DisableEPSV makes the client ask for PASV only, and PORT only in
	// active mode (some servers answer EPSV wrongly behind NAT).
	DisableEPSV bool
	// Active is ftp_passive=no: the server opens the data connections to
	// the crawler (EPRT, then PORT) instead of the crawler to the server.
	Active bool
}

// FTPAccount is one ftp_acct entry, password in clear.
type FTPAccount struct {
	User, Password string
	// Account is sent with ACCT when the server asks for one (reply 332).
	Account string
}

// MaxFTPListing bounds the entries of one directory listing.
const MaxFTPListing = 100000

// FTP status codes as Response.Status: a file or a listing is 200, a
// directory asked for without its trailing slash is a 301 to the slashed
// URL, and an FTP failure reply keeps its own code (530 not logged in, 550
// no such file, 421 service not available, ...), which ftp_errors keys
// match.
const (
	FTPStatusOK        = http.StatusOK
	FTPStatusDirectory = http.StatusMovedPermanently
)

// fetchFTP downloads an ftp:// URL with trawl's FTP client (ftpclient.go):
// passive mode (EPSV, then PASV) by default, active mode (EPRT, then PORT)
// with Options.FTP.Active (ftp_passive=no). A directory (a path ending in
// "/") comes back as an HTML page with one link per entry, subdirectories
// with a trailing slash, so that link extraction walks the tree.
func (f *Fetcher) fetchFTP(ctx, parent context.Context, u *url.URL, req Request, start time.Time) (*Response, error) {
	resp := &Response{URL: req.URL, FinalURL: req.URL}
	defer func() { resp.Timing.Total = time.Since(start) }()
	fail := func(err error) (*Response, error) {
		var te *textproto.Error
		if errors.As(err, &te) && te.Code >= 400 {
			resp.Status = te.Code
			return resp, nil
		}
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return nil, &Error{Kind: classify(err, parent), URL: req.URL, Err: err}
	}
	p := u.Path
	if p == "" {
		p = "/"
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "21")
	}
	acct := f.ftpLogin(u)
	dial := f.o.Dial
	if dial == nil {
		d := &net.Dialer{Timeout: 30 * time.Second}
		dial = d.DialContext
	}
	limit := f.o.CutOff
	if limit <= 0 {
		limit = HardMaxBody
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wire  int64
	)
	track := func(c net.Conn, data bool) net.Conn {
		mu.Lock()
		defer mu.Unlock()
		if data { // count and cap what a data connection reads
			c = &capConn{Conn: c, left: limit + 1 + 64<<10, n: &wire}
		}
		conns = append(conns, c)
		return c
	}
	// Closing the connections unblocks every read when the fetch times out
	// or is canceled.
	closeAll := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	}
	stop := context.AfterFunc(ctx, closeAll)
	defer stop()
	defer closeAll()
	cc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return fail(err)
	}
	cc = track(cc, false)
	c := &ftpClient{ctx: ctx, conn: cc, r: bufio.NewReaderSize(cc, 4096), dial: dial, active: f.o.FTP.Active, noEPSV: f.o.FTP.DisableEPSV, track: track}
	if rep, err := ReadFTPReply(c.r); err != nil {
		return fail(err)
	} else if rep.Code != 220 {
		return fail(&textproto.Error{Code: rep.Code, Msg: rep.Text})
	}
	defer c.cmd("QUIT", "")
	if err := c.login(acct); err != nil {
		return fail(err)
	}
	if _, err := c.expect("TYPE", "I", 200); err != nil {
		return fail(err)
	}
	if !strings.HasSuffix(p, "/") {
		if rep, err := c.cmd("CWD", p); err != nil {
			return fail(err)
		} else if rep.Code == 250 {
			target := *u
			target.Path = p + "/"
			target.RawPath = ""
			resp.Status = FTPStatusDirectory
			resp.Header = http.Header{"Location": {target.String()}}
			return resp, nil
		}
		dc, err := c.dataConn("RETR", p)
		if err != nil {
			return fail(err)
		}
		buf := bytes.NewBuffer(make([]byte, 0, min(limit+1, 64<<10)))
		_, rerr := buf.ReadFrom(io.LimitReader(dc, limit+1))
		dc.Close()
		b := buf.Bytes()
		if rerr != nil {
			return fail(rerr)
		}
		if int64(len(b)) > limit {
			if !f.o.Truncate {
				resp.Status = FTPStatusOK
				return resp, &Error{Kind: KindTooLarge, URL: req.URL, Err: fmt.Errorf("file exceeds %d bytes", limit)}
			}
			b, resp.Truncated = b[:limit], true
		} else if err := c.transferEnd(); err != nil {
			return fail(err)
		}
		resp.Status = FTPStatusOK
		resp.Body = b
		resp.BytesOnWire = int64(len(b))
		f.setFTPFileType(resp, p)
		if !TypeAllowed(f.o.AllowedTypes, resp.ContentType) {
			resp.Body = nil
			return resp, &Error{Kind: KindTypeNotAllowed, URL: req.URL, Err: fmt.Errorf("type %s not allowed", resp.ContentType)}
		}
		return resp, nil
	}
	dc, err := c.dataConn("LIST", p)
	if err != nil {
		return fail(err)
	}
	entries, err := readFTPListing(dc)
	dc.Close()
	if err != nil {
		return fail(err)
	}
	if err := c.transferEnd(); err != nil {
		return fail(err)
	}
	resp.Status = FTPStatusOK
	resp.Body = FTPListingHTML(p, entries)
	resp.FTPListing = true
	resp.BytesOnWire = wire
	resp.ContentType, resp.Charset = "text/html", "utf-8"
	resp.Header = http.Header{"Content-Type": {"text/html; charset=utf-8"}}
	return resp, nil
}

// ftpLogin returns the account to log in to u's server with: the URL's
// user and password over the configured account of its host (ftp_acct),
// over anonymous with Options.FTP.Anonymous (or "trawl@") as the password.
func (f *Fetcher) ftpLogin(u *url.URL) FTPAccount {
	acct, ok := f.ftpAccount(u)
	if !ok {
		acct = FTPAccount{User: "anonymous", Password: f.o.FTP.Anonymous}
		if acct.Password == "" {
			acct.Password = "trawl@"
		}
	}
	if u.User != nil {
		acct.User = u.User.Username()
		if pw, ok := u.User.Password(); ok {
			acct.Password = pw
		}
	}
	return acct
}

// setFTPFileType sets the content type of a file fetched over FTP from
// the extension of its path p, or from its body (resp.Body) when the
// extension says nothing or Options.ForceMimeDetection is set.
func (f *Fetcher) setFTPFileType(resp *Response, p string) {
	ct := mime.TypeByExtension(path.Ext(p))
	mt, params, _ := mime.ParseMediaType(ct)
	resp.ContentType, resp.Charset = strings.ToLower(mt), params["charset"]
	if resp.ContentType == "" || f.o.ForceMimeDetection {
		mt, params, _ := mime.ParseMediaType(http.DetectContentType(resp.Body))
		resp.ContentType, resp.Detected = strings.ToLower(mt), true
		if resp.Charset == "" {
			resp.Charset = params["charset"]
		}
	}
	resp.Header = http.Header{"Content-Type": {resp.ContentType}}
}

// readFTPListing reads the lines of a LIST answer, at most MaxFTPListing
// entries (the data connection itself is capped by capConn).
func readFTPListing(r io.Reader) ([]FTPEntry, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), MaxFTPReplyLine)
	var out []FTPEntry
	for sc.Scan() {
		if e, ok := ParseFTPListLine(sc.Text()); ok && len(out) < MaxFTPListing {
			out = append(out, e)
		}
	}
	if err := sc.Err(); err != nil && !errors.Is(err, bufio.ErrTooLong) {
		return out, err
	}
	return out, nil
}

func (f *Fetcher) ftpAccount(u *url.URL) (FTPAccount, bool) {
	if len(f.o.FTP.Accounts) == 0 {
		return FTPAccount{}, false
	}
	for _, k := range []string{u.Host, strings.ToLower(u.Host), u.Hostname(), strings.ToLower(u.Hostname())} {
		if a, ok := f.o.FTP.Accounts[k]; ok {
			return a, true
		}
	}
	return FTPAccount{}, false
}

// FTPListingHTML renders a directory listing as an HTML page of relative
// links: files as "name", directories as "name/" ("." and ".." left out,
// links followed as files), at most MaxFTPListing entries, in name order.
func FTPListingHTML(dir string, entries []FTPEntry) []byte {
	sort.Slice(entries, func(i, j int) bool { return entries[i].Name < entries[j].Name })
	var b bytes.Buffer
	t := html.EscapeString(dir)
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html><head><title>Index of %s</title></head><body><h1>Index of %s</h1><ul>\n", t, t)
	n := 0
	for _, e := range entries {
		if e.Name == "" || e.Name == "." || e.Name == ".." || strings.ContainsAny(e.Name, "/\x00") {
			continue
		}
		if n++; n > MaxFTPListing {
			break
		}
		href := (&url.URL{Path: e.Name}).EscapedPath()
		if strings.Contains(e.Name, ":") && !strings.HasPrefix(href, "./") {
			href = "./" + href // "a:b" must not read as a scheme
		}
		name := e.Name
		if e.Dir {
			href += "/"
			name += "/"
		}
		fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a></li>\n", html.EscapeString(href), html.EscapeString(name))
	}
	b.WriteString("</ul></body></html>\n")
	return b.Bytes()
}

// capConn ends reads after left bytes (a listing or file cannot fill
// memory) and counts them.
type capConn struct {
	net.Conn
	left int64
	n    *int64
}

func (c *capConn) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.Conn.Read(p)
	c.left -= int64(n)
	*c.n += int64(n)
	return n, err
}
