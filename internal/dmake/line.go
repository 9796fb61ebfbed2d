package dmake

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"strconv"
)

// Limits of the line codec. Every length is checked against them before
// anything is allocated for it.
const (
	// MaxLine is the longest command line accepted, LF included.
	MaxLine = 1 << 20
	// MaxTokens is the most tokens (named arguments and arguments) a line
	// may carry.
	MaxTokens = 4096
	// MaxData is the longest data stream (stdout, stderr, simple_response)
	// accepted after its header line.
	MaxData = 64 << 20
	// MaxTaskID is the most digits of a task identifier.
	MaxTaskID = 64
)

// Command names, exactly as on the wire (MS-FSFDMW 2.2.4-2.2.27, with the
// underscores the extraction lost restored).
const (
	CmdAbort = "abort"
	CmdCd    = "cd"
	// NamedBuild is cd's named argument that carries the master's build
	// id (ours; named arguments precede arguments, section 2.2).
	NamedBuild          = "build"
	CmdCloseStdin       = "close-stdin"
	CmdDiskLimit        = "disk_limit"
	CmdError            = "error"
	CmdFinish           = "finish"
	CmdFinishTasks      = "finish-tasks"
	CmdFinishTasksAck   = "finish-tasks-ack"
	CmdForget           = "forget"
	CmdHeartbeat        = "heartbeat"
	CmdInfo             = "info"
	CmdNetsink          = "netsink"
	CmdNetsource        = "netsource"
	CmdPollTask         = "poll-task"
	CmdRemoveFiles      = "remove-files"
	CmdRequestHeartbeat = "request_heartbeat"
	CmdSetenv           = "setenv"
	CmdShell            = "shell"
	CmdSimpleCommand    = "simple_command"
	CmdSimpleResponse   = "simple_response"
	CmdSlot             = "slot"
	CmdStderr           = "stderr"
	CmdStdout           = "stdout"
	CmdTaskInfo         = "task-info"
)

// commands is the closed set of command names; the value says whether a
// data stream follows the line.
var commands = map[string]bool{
	CmdAbort: false, CmdCd: false, CmdCloseStdin: false, CmdDiskLimit: false,
	CmdError: false, CmdFinish: false, CmdFinishTasks: false, CmdFinishTasksAck: false,
	CmdForget: false, CmdHeartbeat: false, CmdInfo: false, CmdNetsink: false,
	CmdNetsource: false, CmdPollTask: false, CmdRemoveFiles: false,
	CmdRequestHeartbeat: false, CmdSetenv: false, CmdShell: false,
	CmdSimpleCommand: false, CmdSimpleResponse: true, CmdSlot: false,
	CmdStderr: true, CmdStdout: true, CmdTaskInfo: false,
}

// HasData reports whether a data stream follows a line of command name.
func HasData(name string) bool { return commands[name] }

// KnownCommand reports whether name is a command of the protocol.
func KnownCommand(name string) bool {
	_, ok := commands[name]
	return ok
}

// b64Prefix marks a base64 token (section 4 of the spec).
const b64Prefix = "@base64:"

// Named is one named argument, "#name=value" on the wire.
type Named struct {
	Name  string
	Value []byte
}

// Message is one command line, decoded: the command name, the named
// arguments in order, the positional arguments with any base64 removed,
// and the data stream of stdout, stderr and simple_response (without its
// trailing LF).
type Message struct {
	Name  string
	Named []Named
	Args  [][]byte
	// B64 records, per argument, whether it arrived base64 encoded; a blob
	// may carry several parameters separated by SP (section 2.2).
	B64  []bool
	Data []byte
	// Err is set, by Codec.Decode only, on a line that could not be
	// parsed: the connection goes on, and the receiver logs it (or answers
	// it when it can tell the task).
	Err error
}

// Arg returns positional argument i as a string, or "" when absent.
func (m *Message) Arg(i int) string {
	if i < 0 || i >= len(m.Args) {
		return ""
	}
	return string(m.Args[i])
}

// NamedValue returns the value of the named argument name.
func (m *Message) NamedValue(name string) ([]byte, bool) {
	for _, n := range m.Named {
		if n.Name == name {
			return n.Value, true
		}
	}
	return nil, false
}

// SplitArgs returns the positional arguments with every base64 blob split
// on SP into the parameters it carries ("multiple parameters can be
// contained within one base64 encoded string", 2.2). Free text such as an
// info parameter must not be split; callers use Args for those.
func (m *Message) SplitArgs() [][]byte {
	out := make([][]byte, 0, len(m.Args))
	for i, a := range m.Args {
		if i < len(m.B64) && m.B64[i] && bytes.IndexByte(a, ' ') >= 0 {
			for _, f := range bytes.Split(a, []byte{' '}) {
				if len(f) > 0 {
					out = append(out, f)
				}
			}
			continue
		}
		out = append(out, a)
	}
	return out
}

// Errors of the codec. Each returned error wraps ErrMalformed.
var (
	ErrMalformed = errors.New("dmake: malformed line")
	ErrTooLong   = fmt.Errorf("%w: too long", ErrMalformed)
)

func malformed(format string, a ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, a...)...)
}

// ParseLine decodes one command line. line must start with '#' and end with
// LF; for the data-stream commands the stream is not part of line, and
// DataLen returns its announced length. The command name must be one of the
// protocol's, with exactly the case of the spec.
func ParseLine(line []byte) (Message, error) {
	var m Message
	if len(line) > MaxLine {
		return m, ErrTooLong
	}
	if len(line) < 2 || line[0] != '#' {
		return m, malformed("line does not start with '#'")
	}
	if line[len(line)-1] != '\n' {
		return m, malformed("line does not end with LF")
	}
	body := line[1 : len(line)-1]
	if bytes.IndexByte(body, '\n') >= 0 {
		return m, malformed("LF inside the line")
	}
	name, rest, _ := bytes.Cut(body, []byte{' '})
	if !KnownCommand(string(name)) {
		return m, malformed("unknown command %q", truncate(name))
	}
	m.Name = string(name)
	positional := false
	ntok := 0
	for len(rest) > 0 {
		var tok []byte
		tok, rest, _ = bytes.Cut(rest, []byte{' '})
		if len(tok) == 0 {
			continue // consecutive and trailing delimiters are ignored
		}
		ntok++
		if ntok > MaxTokens {
			return m, malformed("more than %d tokens", MaxTokens)
		}
		if !positional && tok[0] == '#' {
			n, err := parseNamed(tok)
			if err != nil {
				return m, err
			}
			m.Named = append(m.Named, n)
			continue
		}
		positional = true
		v, b64, err := decodeToken(tok)
		if err != nil {
			return m, err
		}
		m.Args = append(m.Args, v)
		m.B64 = append(m.B64, b64)
	}
	return m, nil
}

func parseNamed(tok []byte) (Named, error) {
	name, val, ok := bytes.Cut(tok[1:], []byte{'='})
	if !ok || len(name) == 0 {
		return Named{}, malformed("named argument %q without name=value", truncate(tok))
	}
	for _, c := range name {
		if !isNameChar(c) {
			return Named{}, malformed("bad named argument name %q", truncate(name))
		}
	}
	v, _, err := decodeToken(val)
	if err != nil {
		return Named{}, err
	}
	return Named{Name: string(name), Value: v}, nil
}

func isNameChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
}

// decodeToken removes the base64 wrapping of an "@base64:" token; other
// tokens are returned as they are.
func decodeToken(tok []byte) ([]byte, bool, error) {
	if !bytes.HasPrefix(tok, []byte(b64Prefix)) {
		return tok, false, nil
	}
	enc := tok[len(b64Prefix):]
	// Tolerate missing padding (the digest's advice), never extra bytes.
	trimmed := bytes.TrimRight(enc, "=")
	dec := make([]byte, base64.RawStdEncoding.DecodedLen(len(trimmed)))
	n, err := base64.RawStdEncoding.Decode(dec, trimmed)
	if err != nil {
		return nil, true, malformed("bad base64 token: %v", err)
	}
	if pad := len(enc) - len(trimmed); pad > 2 {
		return nil, true, malformed("bad base64 padding")
	}
	return dec[:n], true, nil
}

// DataLen returns the length of the data stream announced by a parsed
// header of stdout, stderr or simple_response: the second argument, which
// is one less than the bytes that follow (2.2). stderr's count is a signed
// 32-bit integer (2.2.25); every count is capped at MaxData.
func DataLen(m *Message) (int, error) {
	if !HasData(m.Name) {
		return 0, nil
	}
	if len(m.Args) != 2 {
		return 0, malformed("%s needs <task-ID> <number-of-bytes>", m.Name)
	}
	if _, err := ParseTaskID(m.Args[0]); err != nil {
		return 0, err
	}
	bits := 64
	if m.Name == CmdStderr {
		bits = 32
	}
	s := m.Args[1]
	if len(s) == 0 || len(s) > 19 {
		return 0, malformed("bad number-of-bytes %q", truncate(s))
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, malformed("bad number-of-bytes %q", truncate(s))
		}
	}
	n, err := strconv.ParseInt(string(s), 10, bits)
	if err != nil {
		return 0, malformed("bad number-of-bytes %q", truncate(s))
	}
	if n > MaxData {
		return 0, fmt.Errorf("%w: data stream of %d bytes over the limit %d", ErrTooLong, n, MaxData)
	}
	return int(n), nil
}

// ParseTaskID checks a task identifier: a positive integer of arbitrary
// size in base 10 (2.2.1.1), here at most MaxTaskID digits and without
// leading zeros, so that equal identifiers are equal strings.
func ParseTaskID(b []byte) (string, error) {
	if len(b) == 0 || len(b) > MaxTaskID || b[0] == '0' {
		return "", malformed("bad task identifier %q", truncate(b))
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return "", malformed("bad task identifier %q", truncate(b))
		}
	}
	return string(b), nil
}

func truncate(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// plainSafe reports whether an argument can go on the wire as it is: the
// token characters every receiver reads back unchanged. Anything else,
// including the empty string and a leading '#' or '@', is base64 encoded.
func plainSafe(a []byte) bool {
	if len(a) == 0 || a[0] == '#' || a[0] == '@' {
		return false
	}
	for _, c := range a {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case c == '.' || c == '_' || c == ',' || c == '=' || c == '/' || c == '+' || c == '-' || c == ':':
		default:
			return false
		}
	}
	return true
}

// AppendLine appends the wire form of m to dst: "#", the name, the named
// arguments, the arguments (base64 where plainSafe says so), LF, and for
// the data-stream commands the data and its LF. The number-of-bytes
// argument of a data-stream command is written from len(m.Data); m.Args
// then holds only the task identifier.
func AppendLine(dst []byte, m *Message) []byte {
	dst = append(dst, '#')
	dst = append(dst, m.Name...)
	for _, n := range m.Named {
		dst = append(dst, ' ', '#')
		dst = append(dst, n.Name...)
		dst = append(dst, '=')
		dst = appendToken(dst, n.Value)
	}
	for _, a := range m.Args {
		dst = append(dst, ' ')
		dst = appendToken(dst, a)
	}
	if HasData(m.Name) {
		dst = append(dst, ' ')
		dst = strconv.AppendInt(dst, int64(len(m.Data)), 10)
		dst = append(dst, '\n')
		dst = append(dst, m.Data...)
	}
	return append(dst, '\n')
}

func appendToken(dst, a []byte) []byte {
	if plainSafe(a) {
		return append(dst, a...)
	}
	dst = append(dst, b64Prefix...)
	return base64.StdEncoding.AppendEncode(dst, a)
}

// New builds a message from string arguments.
func New(name string, args ...string) *Message {
	m := &Message{Name: name, Args: make([][]byte, len(args))}
	for i, a := range args {
		m.Args[i] = []byte(a)
	}
	return m
}

// Decoder splits a byte stream into messages, data streams included. It is
// a pure state machine: the caller feeds it bytes as they arrive (Feed) and
// takes complete messages out (Next). Its buffer never exceeds MaxLine plus
// MaxData.
type Decoder struct {
	buf []byte
	off int
}

// Feed appends received bytes. It fails when the buffered, unparsed bytes
// would exceed the codec's limits; the connection is then beyond repair.
func (d *Decoder) Feed(p []byte) error {
	if d.off > 0 && d.off == len(d.buf) {
		d.buf, d.off = d.buf[:0], 0
	}
	if len(d.buf)-d.off+len(p) > MaxLine+MaxData+1 {
		return ErrTooLong
	}
	if d.off > 0 && len(d.buf)+len(p) > cap(d.buf) {
		n := copy(d.buf, d.buf[d.off:])
		d.buf, d.off = d.buf[:n], 0
	}
	d.buf = append(d.buf, p...)
	return nil
}

// Buffered returns how many bytes wait for parsing.
func (d *Decoder) Buffered() int { return len(d.buf) - d.off }

// ErrDesync is returned by Next when a data stream does not end with its
// LF: the stream can no longer be split into messages.
var ErrDesync = fmt.Errorf("%w: data stream not terminated by LF", ErrMalformed)

// Next returns the next complete message. ok is false when more bytes are
// needed. A malformed line is returned as an error and skipped, so the
// caller may log it and go on; ErrDesync and ErrTooLong are fatal. The
// returned message's slices are copies.
func (d *Decoder) Next() (m Message, ok bool, err error) {
	pending := d.buf[d.off:]
	nl := bytes.IndexByte(pending, '\n')
	if nl < 0 {
		if len(pending) > MaxLine {
			return m, false, ErrTooLong
		}
		return m, false, nil
	}
	line := pending[:nl+1]
	m, err = ParseLine(line)
	if err != nil {
		d.off += nl + 1
		return Message{}, false, err
	}
	if HasData(m.Name) {
		n, err := DataLen(&m)
		if err != nil {
			if errors.Is(err, ErrTooLong) {
				return Message{}, false, err
			}
			// Without a length the stream cannot be skipped.
			return Message{}, false, fmt.Errorf("%w (%v)", ErrDesync, err)
		}
		if len(pending) < nl+1+n+1 {
			return Message{}, false, nil
		}
		data := pending[nl+1 : nl+1+n+1]
		if data[n] != '\n' {
			return Message{}, false, ErrDesync
		}
		m.Data = bytes.Clone(data[:n])
		m.Args = m.Args[:1]
		m.B64 = m.B64[:1]
		d.off += nl + 1 + n + 1
	} else {
		d.off += nl + 1
	}
	m = cloneMessage(m)
	return m, true, nil
}

func cloneMessage(m Message) Message {
	for i := range m.Args {
		m.Args[i] = bytes.Clone(m.Args[i])
	}
	for i := range m.Named {
		m.Named[i].Value = bytes.Clone(m.Named[i].Value)
	}
	return m
}

func strs(b [][]byte) []string {
	out := make([]string, len(b))
	for i, x := range b {
		out[i] = string(x)
	}
	return out
}
