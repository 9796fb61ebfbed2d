package webfarm

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// FTPServer is a minimal FTP server (RFC 959, passive mode with PASV and
// EPSV, active mode with PORT and EPRT of RFC 2428, SIZE of RFC 3659) over
// a tree of files held in memory, for the crawler's ftp:// tests.
// Directories are implied by the file paths. Logins are checked against
// Users; "anonymous" gets in only with Anonymous set; a user listed in
// Accounts must also send ACCT with that account (the server answers PASS
// with 332). RefusePassive (RefuseActive) answers 502 to PASV and EPSV
// (PORT and EPRT), so that a test proves which mode a client used. An
// active data connection is opened only to the control connection's peer
// address. It logs what it served, with the data mode of each transfer.
type FTPServer struct {
	// Files maps absolute paths ("/pub/a.txt") to contents.
	Files map[string]string
	// Users maps user names to passwords.
	Users     map[string]string
	Anonymous bool
	// Accounts maps user names to the ACCT they must send.
	Accounts      map[string]string
	RefusePassive bool
	RefuseActive  bool
	// Fail maps paths of Files to the reply code RETR answers for them
	// instead of sending the file (450 busy, 550 unavailable, 552...): the
	// file is listed but cannot be downloaded. Set it before serving.
	Fail map[string]int

	mu  sync.Mutex
	log []FTPCommand
}

// FTPCommand is one logged command.
type FTPCommand struct {
	User, Verb, Arg string
	Code            int
	// Mode is the data connection of a transfer: "passive" or "active".
	Mode string
}

// Log returns the commands served.
func (s *FTPServer) Log() []FTPCommand {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]FTPCommand(nil), s.log...)
}

// Retrieved lists the paths of files sent (RETR answered 226), sorted.
func (s *FTPServer) Retrieved() []string {
	var out []string
	for _, c := range s.Log() {
		if c.Verb == "RETR" && c.Code == 226 {
			out = append(out, c.Arg)
		}
	}
	sort.Strings(out)
	return out
}

// Serve accepts control connections until ctx ends or ln fails.
func (s *FTPServer) Serve(ctx context.Context, ln net.Listener) error {
	context.AfterFunc(ctx, func() { ln.Close() })
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		go s.session(ctx, c)
	}
}

func (s *FTPServer) isDir(p string) bool {
	if p == "/" {
		return true
	}
	pre := strings.TrimSuffix(p, "/") + "/"
	for f := range s.Files {
		if strings.HasPrefix(f, pre) {
			return true
		}
	}
	return false
}

// entries lists the direct children of dir: name -> isDir.
func (s *FTPServer) entries(dir string) map[string]bool {
	pre := strings.TrimSuffix(dir, "/") + "/"
	out := map[string]bool{}
	for f := range s.Files {
		if rest, ok := strings.CutPrefix(f, pre); ok && rest != "" {
			name, more, sub := strings.Cut(rest, "/")
			_ = more
			out[name] = out[name] || sub
		}
	}
	return out
}

type ftpSession struct {
	s        *FTPServer
	c        net.Conn
	w        *bufio.Writer
	user     string
	loggedIn bool
	needAcct bool
	cwd      string
	pasv     net.Listener
	port     string // active mode: the client's data address
	mode     string // mode of the last transfer
}

func (s *FTPServer) session(ctx context.Context, c net.Conn) {
	defer c.Close()
	ss := &ftpSession{s: s, c: c, w: bufio.NewWriter(c), cwd: "/"}
	defer func() {
		if ss.pasv != nil {
			ss.pasv.Close()
		}
	}()
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	ss.reply(220, "webfarm FTP ready")
	r := bufio.NewReaderSize(c, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(2 * time.Minute))
		line, err := r.ReadString('\n')
		if err != nil || len(line) > 2048 {
			return
		}
		line = strings.TrimRight(line, "\r\n")
		verb, arg, _ := strings.Cut(line, " ")
		verb = strings.ToUpper(verb)
		ss.mode = ""
		code := ss.command(verb, arg)
		s.mu.Lock()
		if len(s.log) < 100000 {
			s.log = append(s.log, FTPCommand{User: ss.user, Verb: verb, Arg: ss.abs(arg), Code: code, Mode: ss.mode})
		}
		s.mu.Unlock()
		if verb == "QUIT" {
			return
		}
	}
}

func (ss *ftpSession) reply(code int, msg string) int {
	fmt.Fprintf(ss.w, "%d %s\r\n", code, msg)
	ss.w.Flush()
	return code
}

func (ss *ftpSession) abs(p string) string {
	if p == "" {
		return ss.cwd
	}
	if !strings.HasPrefix(p, "/") {
		p = ss.cwd + "/" + p
	}
	c := path.Clean(p)
	return c
}

func (ss *ftpSession) command(verb, arg string) int {
	switch verb {
	case "USER":
		ss.user, ss.loggedIn = arg, false
		return ss.reply(331, "password please")
	case "PASS":
		pw, ok := ss.s.Users[ss.user]
		if (ok && pw == arg) || (ss.user == "anonymous" && ss.s.Anonymous) {
			if _, acct := ss.s.Accounts[ss.user]; acct {
				ss.needAcct = true
				return ss.reply(332, "need account for login")
			}
			ss.loggedIn = true
			return ss.reply(230, "logged in")
		}
		return ss.reply(530, "login incorrect")
	case "ACCT":
		if ss.needAcct && ss.s.Accounts[ss.user] == arg {
			ss.needAcct, ss.loggedIn = false, true
			return ss.reply(230, "logged in")
		}
		return ss.reply(530, "account refused")
	case "QUIT":
		return ss.reply(221, "bye")
	case "NOOP":
		return ss.reply(200, "ok")
	case "SYST":
		return ss.reply(215, "UNIX Type: L8")
	case "FEAT":
		fmt.Fprintf(ss.w, "211-Features:\r\n EPSV\r\n PASV\r\n SIZE\r\n UTF8\r\n211 End\r\n")
		ss.w.Flush()
		return 211
	case "OPTS":
		return ss.reply(200, "ok")
	}
	if !ss.loggedIn {
		return ss.reply(530, "not logged in")
	}
	switch verb {
	case "TYPE":
		return ss.reply(200, "type set")
	case "PWD":
		return ss.reply(257, strconv.Quote(ss.cwd))
	case "CWD":
		p := ss.abs(arg)
		if !ss.s.isDir(p) {
			return ss.reply(550, "no such directory")
		}
		ss.cwd = p
		return ss.reply(250, "ok")
	case "SIZE":
		f, ok := ss.s.Files[ss.abs(arg)]
		if !ok {
			return ss.reply(550, "no such file")
		}
		return ss.reply(213, strconv.Itoa(len(f)))
	case "PORT", "EPRT":
		if ss.s.RefuseActive {
			return ss.reply(502, "active mode refused")
		}
		addr, ok := parseActiveAddr(verb, arg)
		if !ok {
			return ss.reply(501, "bad address")
		}
		host, _, _ := net.SplitHostPort(addr)
		peer, _, _ := net.SplitHostPort(ss.c.RemoteAddr().String())
		if !net.ParseIP(host).Equal(net.ParseIP(peer)) {
			return ss.reply(504, "data connections go to the client only")
		}
		if ss.pasv != nil {
			ss.pasv.Close()
			ss.pasv = nil
		}
		ss.port = addr
		return ss.reply(200, verb+" ok")
	case "EPSV", "PASV":
		if ss.s.RefusePassive {
			return ss.reply(502, "passive mode refused")
		}
		ss.port = ""
		if ss.pasv != nil {
			ss.pasv.Close()
		}
		host, _, _ := net.SplitHostPort(ss.c.LocalAddr().String())
		ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			return ss.reply(425, "cannot open data port")
		}
		ss.pasv = ln
		port := ln.Addr().(*net.TCPAddr).Port
		if verb == "EPSV" {
			return ss.reply(229, fmt.Sprintf("Entering Extended Passive Mode (|||%d|)", port))
		}
		ip := net.ParseIP(host).To4()
		if ip == nil {
			return ss.reply(425, "PASV needs IPv4")
		}
		return ss.reply(227, fmt.Sprintf("Entering Passive Mode (%d,%d,%d,%d,%d,%d)", ip[0], ip[1], ip[2], ip[3], port>>8, port&255))
	case "LIST", "NLST":
		a := arg
		if strings.HasPrefix(a, "-") { // "LIST -a"
			_, a, _ = strings.Cut(a, " ")
		}
		p := ss.abs(a)
		var lines []string
		if f, ok := ss.s.Files[p]; ok {
			lines = []string{ss.listLine(path.Base(p), false, len(f), verb)}
		} else if ss.s.isDir(p) {
			ents := ss.s.entries(p)
			names := make([]string, 0, len(ents))
			for n := range ents {
				names = append(names, n)
			}
			sort.Strings(names)
			for _, n := range names {
				lines = append(lines, ss.listLine(n, ents[n], len(ss.s.Files[path.Join(p, n)]), verb))
			}
		} else {
			return ss.reply(550, "no such file or directory")
		}
		return ss.transfer(strings.Join(lines, ""))
	case "RETR":
		f, ok := ss.s.Files[ss.abs(arg)]
		if !ok {
			return ss.reply(550, "no such file")
		}
		if code := ss.s.Fail[ss.abs(arg)]; code != 0 {
			return ss.reply(code, "file unavailable")
		}
		return ss.transfer(f)
	}
	return ss.reply(502, "command not implemented")
}

func (ss *ftpSession) listLine(name string, dir bool, size int, verb string) string {
	if verb == "NLST" {
		return name + "\r\n"
	}
	if dir {
		return fmt.Sprintf("drwxr-xr-x 2 ftp ftp %8d Jan 02 2024 %s\r\n", 4096, name)
	}
	return fmt.Sprintf("-rw-r--r-- 1 ftp ftp %8d Jan 02 2024 %s\r\n", size, name)
}

func (ss *ftpSession) transfer(data string) int {
	var dc net.Conn
	switch {
	case ss.port != "":
		addr := ss.port
		ss.port, ss.mode = "", "active"
		ss.reply(150, "opening active data connection")
		c, err := net.DialTimeout("tcp", addr, 10*time.Second)
		if err != nil {
			return ss.reply(425, "cannot open data connection")
		}
		dc = c
	case ss.pasv != nil:
		ln := ss.pasv
		ss.pasv, ss.mode = nil, "passive"
		defer ln.Close()
		ss.reply(150, "opening data connection")
		ln.(*net.TCPListener).SetDeadline(time.Now().Add(10 * time.Second))
		c, err := ln.Accept()
		if err != nil {
			return ss.reply(425, "no data connection")
		}
		dc = c
	default:
		return ss.reply(425, "use PASV, EPSV, PORT or EPRT first")
	}
	_, err := io.WriteString(dc, data)
	dc.Close()
	if err != nil {
		return ss.reply(426, "transfer aborted")
	}
	return ss.reply(226, "transfer complete")
}

// parseActiveAddr reads the address of PORT (h1,h2,h3,h4,p1,p2) or EPRT
// (|1|ip|port| or |2|ip|port|) as host:port.
func parseActiveAddr(verb, arg string) (string, bool) {
	if verb == "PORT" {
		parts := strings.Split(strings.TrimSpace(arg), ",")
		if len(parts) != 6 {
			return "", false
		}
		var v [6]int
		for i, p := range parts {
			n, err := strconv.Atoi(p)
			if err != nil || n < 0 || n > 255 {
				return "", false
			}
			v[i] = n
		}
		port := v[4]<<8 | v[5]
		if port == 0 {
			return "", false
		}
		return net.JoinHostPort(fmt.Sprintf("%d.%d.%d.%d", v[0], v[1], v[2], v[3]), strconv.Itoa(port)), true
	}
	arg = strings.TrimSpace(arg)
	if len(arg) < 7 {
		return "", false
	}
	f := strings.Split(arg[1:len(arg)-1], arg[:1])
	if len(f) != 3 || arg[len(arg)-1] != arg[0] || (f[0] != "1" && f[0] != "2") {
		return "", false
	}
	ip := net.ParseIP(f[1])
	port, err := strconv.Atoi(f[2])
	if ip == nil || err != nil || port < 1 || port > 65535 {
		return "", false
	}
	return net.JoinHostPort(ip.String(), strconv.Itoa(port)), true
}
