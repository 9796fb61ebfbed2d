package fetch

// The FTP client of fetchFTP (RFC 959, with EPSV and EPRT of RFC 2428):
// trawl's own, because ftp_passive=no needs active mode (PORT/EPRT), which
// the FTP libraries for Go lack (docs/decisions/fetch.md). It speaks what a crawl
// needs: USER/PASS/ACCT, TYPE I, CWD, PASV/EPSV or PORT/EPRT, RETR, LIST,
// QUIT. Replies are read by ReadFTPReply, which caps lines, line counts and
// bytes.
//
// Data connections go to (passive) or come from (active) the address of
// the control connection's peer only: the address inside a PASV reply is
// ignored, and an active connection from another address is refused, so
// that a server cannot point the crawler at a third host (the "FTP bounce").

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"strconv"
	"strings"
	"time"
)

// FTP reply limits: a line, the lines of one (multi-line) reply, and the
// bytes of one reply.
const (
	MaxFTPReplyLine  = 4096
	MaxFTPReplyLines = 1000
	MaxFTPReplyBytes = 64 << 10
)

// FTPReply is one server reply: a three-digit code and its text (the lines
// of a multi-line reply joined by "\n", the code and separator of the
// first and last line removed).
type FTPReply struct {
	Code int
	Text string
}

// ErrFTPReply marks a malformed reply.
var ErrFTPReply = errors.New("fetch: malformed FTP reply")

// ReadFTPReply reads one reply (RFC 959 section 4.2): "ddd text" or a
// multi-line "ddd-text" ... "ddd text" with the same code. Lines end with
// CRLF or LF. It never reads more than MaxFTPReplyBytes.
func ReadFTPReply(r *bufio.Reader) (FTPReply, error) {
	total := 0
	readLine := func() (string, error) {
		var b []byte
		for {
			chunk, err := r.ReadSlice('\n')
			if len(b)+len(chunk) > MaxFTPReplyLine {
				return "", fmt.Errorf("%w: line longer than %d bytes", ErrFTPReply, MaxFTPReplyLine)
			}
			b = append(b, chunk...)
			if err == bufio.ErrBufferFull {
				continue
			}
			if err != nil {
				if err == io.EOF && len(b) > 0 {
					err = io.ErrUnexpectedEOF
				}
				return "", err
			}
			break
		}
		total += len(b)
		if total > MaxFTPReplyBytes {
			return "", fmt.Errorf("%w: reply longer than %d bytes", ErrFTPReply, MaxFTPReplyBytes)
		}
		return strings.TrimRight(string(b), "\r\n"), nil
	}
	line, err := readLine()
	if err != nil {
		return FTPReply{}, err
	}
	code, ok := replyCode(line)
	if !ok || (len(line) > 3 && line[3] != ' ' && line[3] != '-') {
		return FTPReply{}, fmt.Errorf("%w: %q", ErrFTPReply, truncateForError(line))
	}
	text := ""
	if len(line) > 4 {
		text = line[4:]
	}
	if len(line) < 4 || line[3] == ' ' {
		return FTPReply{Code: code, Text: text}, nil
	}
	lines := []string{text}
	for {
		if len(lines) >= MaxFTPReplyLines {
			return FTPReply{}, fmt.Errorf("%w: more than %d lines", ErrFTPReply, MaxFTPReplyLines)
		}
		l, err := readLine()
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return FTPReply{}, err
		}
		if c, ok := replyCode(l); ok && c == code && (len(l) == 3 || l[3] == ' ') {
			if len(l) > 4 {
				lines = append(lines, l[4:])
			}
			return FTPReply{Code: code, Text: strings.Join(lines, "\n")}, nil
		}
		lines = append(lines, l)
	}
}

func replyCode(line string) (int, bool) {
	if len(line) < 3 {
		return 0, false
	}
	for i := 0; i < 3; i++ {
		if line[i] < '0' || line[i] > '9' {
			return 0, false
		}
	}
	if line[0] < '1' || line[0] > '5' {
		return 0, false
	}
	n, _ := strconv.Atoi(line[:3])
	return n, true
}

func truncateForError(s string) string {
	if len(s) > 64 {
		return s[:64] + "..."
	}
	return s
}

// ParseEPSV reads the port of a 229 reply: "... (|||port|)" (any delimiter
// in place of "|").
func ParseEPSV(text string) (int, error) {
	open := strings.IndexByte(text, '(')
	end := strings.LastIndexByte(text, ')')
	if open < 0 || end < open+6 {
		return 0, fmt.Errorf("%w: EPSV %q", ErrFTPReply, truncateForError(text))
	}
	s := text[open+1 : end]
	d := s[0]
	if d < 33 || d > 126 || len(s) < 5 || s[1] != d || s[2] != d || s[len(s)-1] != d {
		return 0, fmt.Errorf("%w: EPSV %q", ErrFTPReply, truncateForError(text))
	}
	port, err := strconv.Atoi(s[3 : len(s)-1])
	if err != nil || port < 1 || port > 65535 {
		return 0, fmt.Errorf("%w: EPSV port %q", ErrFTPReply, truncateForError(text))
	}
	return port, nil
}

// ParsePASV reads the port of a 227 reply: "... (h1,h2,h3,h4,p1,p2)" (the
// parentheses are optional in practice). The host part is checked but not
// returned: data connections go to the control connection's peer.
func ParsePASV(text string) (int, error) {
	start := strings.IndexFunc(text, func(r rune) bool { return r >= '0' && r <= '9' })
	if start < 0 {
		return 0, fmt.Errorf("%w: PASV %q", ErrFTPReply, truncateForError(text))
	}
	s := text[start:]
	end := 0
	for end < len(s) && (s[end] == ',' || (s[end] >= '0' && s[end] <= '9')) {
		end++
	}
	parts := strings.Split(s[:end], ",")
	if len(parts) != 6 {
		return 0, fmt.Errorf("%w: PASV %q", ErrFTPReply, truncateForError(text))
	}
	var v [6]int
	for i, p := range parts {
		n, err := strconv.Atoi(p)
		if err != nil || n < 0 || n > 255 {
			return 0, fmt.Errorf("%w: PASV %q", ErrFTPReply, truncateForError(text))
		}
		v[i] = n
	}
	port := v[4]<<8 | v[5]
	if port == 0 {
		return 0, fmt.Errorf("%w: PASV port 0", ErrFTPReply)
	}
	return port, nil
}

// FTPEntry is one entry of a directory listing.
type FTPEntry struct {
	Name string
	Dir  bool
}

var months = map[string]bool{"jan": true, "feb": true, "mar": true, "apr": true, "may": true, "jun": true,
	"jul": true, "aug": true, "sep": true, "oct": true, "nov": true, "dec": true}

// ParseFTPListLine reads one line of a LIST answer in the Unix ("ls -l")
// or the MS-DOS (IIS) format. Totals, blank and unreadable lines give
// ok=false. A symbolic link is listed under its own name, as a file.
func ParseFTPListLine(line string) (FTPEntry, bool) {
	line = strings.TrimRight(line, "\r\n")
	if strings.ContainsAny(line, "\r\n") {
		return FTPEntry{}, false // one line per entry: a name never spans lines
	}
	f := strings.Fields(line)
	if len(f) < 4 {
		return FTPEntry{}, false
	}
	// MS-DOS: 01-02-24  10:00AM  <DIR>  name
	if len(f[0]) >= 8 && f[0][2] == '-' && strings.ContainsRune(f[1], ':') {
		rest := fieldsAfter(line, 3)
		if rest == "" {
			return FTPEntry{}, false
		}
		return FTPEntry{Name: rest, Dir: strings.EqualFold(f[2], "<DIR>")}, true
	}
	if len(f[0]) != 10 || !strings.ContainsRune("-dlbcps", rune(f[0][0])) {
		return FTPEntry{}, false
	}
	// Unix: perms links owner [group] size month day time|year name
	for i := 3; i+3 < len(f); i++ {
		if !months[strings.ToLower(f[i])] {
			continue
		}
		if _, err := strconv.Atoi(f[i-1]); err != nil {
			continue
		}
		name := fieldsAfter(line, i+3)
		if f[0][0] == 'l' {
			if a, _, ok := strings.Cut(name, " -> "); ok {
				name = a
			}
		}
		if name == "" {
			return FTPEntry{}, false
		}
		return FTPEntry{Name: name, Dir: f[0][0] == 'd'}, true
	}
	return FTPEntry{}, false
}

// fieldsAfter returns line after its first n whitespace-separated fields
// (the rest keeps its inner spaces).
func fieldsAfter(line string, n int) string {
	s := line
	for i := 0; i < n; i++ {
		s = strings.TrimLeft(s, " \t")
		j := strings.IndexAny(s, " \t")
		if j < 0 {
			return ""
		}
		s = s[j:]
	}
	return strings.TrimLeft(s, " \t")
}

// ftpClient is one control connection.
type ftpClient struct {
	ctx    context.Context
	conn   net.Conn
	r      *bufio.Reader
	dial   func(ctx context.Context, network, addr string) (net.Conn, error)
	active bool
	// noEPSV: use PASV only (and PORT only in active mode).
	noEPSV bool
	// track registers every connection, so that canceling the fetch
	// closes it.
	track func(c net.Conn, data bool) net.Conn
}

// cmd sends a command and reads its reply.
func (c *ftpClient) cmd(verb string, arg string) (FTPReply, error) {
	if strings.ContainsAny(arg, "\r\n\x00") {
		return FTPReply{}, fmt.Errorf("fetch: FTP argument %q has a line break", truncateForError(arg))
	}
	line := verb
	if arg != "" {
		line += " " + arg
	}
	if _, err := io.WriteString(c.conn, line+"\r\n"); err != nil {
		return FTPReply{}, err
	}
	return ReadFTPReply(c.r)
}

// expect sends a command and fails with the reply's code unless it is
// one of want.
func (c *ftpClient) expect(verb, arg string, want ...int) (FTPReply, error) {
	rep, err := c.cmd(verb, arg)
	if err != nil {
		return rep, err
	}
	for _, w := range want {
		if rep.Code == w {
			return rep, nil
		}
	}
	return rep, &textproto.Error{Code: rep.Code, Msg: verb + ": " + rep.Text}
}

// login sends USER, PASS and, when the server asks for one, ACCT.
func (c *ftpClient) login(a FTPAccount) error {
	rep, err := c.expect("USER", a.User, 230, 331, 332)
	if err != nil || rep.Code == 230 {
		return err
	}
	if rep.Code == 331 {
		if rep, err = c.expect("PASS", a.Password, 230, 202, 332); err != nil || rep.Code != 332 {
			return err
		}
	}
	if a.Account == "" {
		return &textproto.Error{Code: 530, Msg: "not logged in: the server wants an account (ACCT, reply 332) and none is configured"}
	}
	_, err = c.expect("ACCT", a.Account, 230, 202)
	return err
}

// dataConn opens the data connection of a transfer command (RETR, LIST)
// and returns it once the server has answered 125 or 150.
func (c *ftpClient) dataConn(verb, arg string) (net.Conn, error) {
	peer, ok := c.conn.RemoteAddr().(*net.TCPAddr)
	if !ok {
		return nil, errors.New("fetch: FTP control connection is not TCP")
	}
	if c.active {
		return c.activeData(peer, verb, arg)
	}
	port := 0
	if !c.noEPSV {
		if rep, err := c.cmd("EPSV", ""); err != nil {
			return nil, err
		} else if rep.Code == 229 {
			if port, err = ParseEPSV(rep.Text); err != nil {
				return nil, err
			}
		}
	}
	if port == 0 {
		rep, err := c.expect("PASV", "", 227)
		if err != nil {
			return nil, err
		}
		if port, err = ParsePASV(rep.Text); err != nil {
			return nil, err
		}
	}
	dc, err := c.dial(c.ctx, "tcp", net.JoinHostPort(peer.IP.String(), strconv.Itoa(port)))
	if err != nil {
		return nil, err
	}
	dc = c.track(dc, true)
	if _, err := c.expect(verb, arg, 125, 150); err != nil {
		dc.Close()
		return nil, err
	}
	return dc, nil
}

// activeData listens on the control connection's local address, tells the
// server with EPRT (or PORT) and accepts the server's connection.
func (c *ftpClient) activeData(peer *net.TCPAddr, verb, arg string) (net.Conn, error) {
	local, ok := c.conn.LocalAddr().(*net.TCPAddr)
	if !ok {
		return nil, errors.New("fetch: FTP control connection is not TCP")
	}
	var lc net.ListenConfig
	ln, err := lc.Listen(c.ctx, "tcp", net.JoinHostPort(local.IP.String(), "0"))
	if err != nil {
		return nil, err
	}
	defer ln.Close()
	stop := context.AfterFunc(c.ctx, func() { ln.Close() })
	defer stop()
	port := ln.Addr().(*net.TCPAddr).Port
	done := false
	if !c.noEPSV {
		fam := "1"
		if local.IP.To4() == nil {
			fam = "2"
		}
		rep, err := c.cmd("EPRT", fmt.Sprintf("|%s|%s|%d|", fam, local.IP.String(), port))
		if err != nil {
			return nil, err
		}
		done = rep.Code == 200
		if !done && rep.Code != 500 && rep.Code != 501 && rep.Code != 502 && rep.Code != 522 {
			return nil, &textproto.Error{Code: rep.Code, Msg: "EPRT: " + rep.Text}
		}
	}
	if !done {
		ip := local.IP.To4()
		if ip == nil {
			return nil, errors.New("fetch: active FTP over IPv6 needs EPRT, which the server refused")
		}
		if _, err := c.expect("PORT", fmt.Sprintf("%d,%d,%d,%d,%d,%d", ip[0], ip[1], ip[2], ip[3], port>>8, port&255), 200); err != nil {
			return nil, err
		}
	}
	if _, err := c.expect(verb, arg, 125, 150); err != nil {
		return nil, err
	}
	if tl, ok := ln.(*net.TCPListener); ok {
		dl := time.Now().Add(30 * time.Second)
		if d, ok := c.ctx.Deadline(); ok && d.Before(dl) {
			dl = d
		}
		tl.SetDeadline(dl)
	}
	for {
		dc, err := ln.Accept()
		if err != nil {
			return nil, fmt.Errorf("fetch: active FTP: no data connection from the server: %w", err)
		}
		if ra, ok := dc.RemoteAddr().(*net.TCPAddr); ok && ra.IP.Equal(peer.IP) {
			return c.track(dc, true), nil
		}
		dc.Close() // not the server: refused
	}
}

// transferEnd reads the reply that ends a transfer (226 or 250).
func (c *ftpClient) transferEnd() error {
	rep, err := ReadFTPReply(c.r)
	if err != nil {
		return err
	}
	if rep.Code != 226 && rep.Code != 250 {
		return &textproto.Error{Code: rep.Code, Msg: rep.Text}
	}
	return nil
}
