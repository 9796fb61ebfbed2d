package cmt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"

	"github.com/trawl/trawl/internal/marshal"
)

// Message is one MS-FSCMT message: a typed view of the message dictionary.
// The set is closed: every message of 2.2.3-2.2.5 has its own type in this
// package, and only those implement Message.
//
// A command code can name two message shapes that differ by direction
// (CMD_UM_ADD_ROUTE, CMD_UM_START_CRAWL_IP, CMD_UM_CONF_STATE); each shape
// has its own type and DecodeFrame tells them apart by the shape of
// PKT_DATA, so decoding does not depend on the receiver's role.
type Message interface {
	// Code returns the PKT_CMD value of the message.
	Code() Command
	// appendDict appends the marshalled message dictionary, PKT_CMD
	// included, keys in trawl's order (keyOrder).
	appendDict(dst []byte) ([]byte, error)
	// decodeField reads the value of key k into the message. It returns
	// false, having consumed nothing, for a key the message does not use.
	decodeField(r *marshal.Reader, k keyID) (bool, error)
	// required returns the keys the message must carry besides PKT_CMD.
	required() keySet
}

// Frame is a decoded frame: a message and its priority.
type Frame struct {
	Priority Priority
	Message  Message
}

// ErrMalformed is wrapped by every error DecodeFrame returns for a frame
// body that is not a valid message (other than an unknown command).
var ErrMalformed = errors.New("cmt: malformed message")

// ErrUnknownCommand matches (errors.Is) an *UnknownCommandError.
var ErrUnknownCommand = errors.New("cmt: unknown command")

// UnknownCommandError reports a well-formed message whose command code the
// spec does not define. A connection logs it and goes on.
type UnknownCommandError struct {
	Code     Command
	Priority Priority
	Dict     marshal.Dict // the whole message dictionary
}

func (e *UnknownCommandError) Error() string {
	return fmt.Sprintf("cmt: unknown command %d", int32(e.Code))
}

// Is makes errors.Is(err, ErrUnknownCommand) true.
func (e *UnknownCommandError) Is(target error) bool { return target == ErrUnknownCommand }

func malformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrMalformed, fmt.Sprintf(format, args...))
}

// keyID numbers the dictionary keys of 2.2.1.1.
type keyID uint8

const (
	kNone keyID = iota
	kCmd
	kURI
	kVClock
	kSiteAddrInfo
	kDSpecName
	kSite
	kDSpec
	kEpoch
	kCsum
	kID
	kOwnURI
	kWhy
	kNodeID
	kData
	kPPDUPID
	kDBName
	kXMLRPCRT
	numKeys
)

var keyNames = [numKeys]string{"", KeyCmd, KeyURI, KeyVClock, KeySiteAddrInfo, KeyDSpecName, KeySite,
	KeyDSpec, KeyEpoch, KeyCsum, KeyID, KeyOwnURI, KeyWhy, KeyNodeID, KeyData, KeyPPDUPID, KeyDBName, KeyXMLRPCRT}

func (k keyID) String() string { return keyNames[k] }

// lookupKey returns the keyID of a wire key, kNone for any other.
func lookupKey(b []byte) keyID {
	if len(b) != 2 {
		return kNone
	}
	switch string(b) {
	case KeyCmd:
		return kCmd
	case KeyURI:
		return kURI
	case KeyVClock:
		return kVClock
	case KeySiteAddrInfo:
		return kSiteAddrInfo
	case KeyDSpecName:
		return kDSpecName
	case KeySite:
		return kSite
	case KeyDSpec:
		return kDSpec
	case KeyEpoch:
		return kEpoch
	case KeyCsum:
		return kCsum
	case KeyID:
		return kID
	case KeyOwnURI:
		return kOwnURI
	case KeyWhy:
		return kWhy
	case KeyNodeID:
		return kNodeID
	case KeyData:
		return kData
	case KeyPPDUPID:
		return kPPDUPID
	case KeyDBName:
		return kDBName
	case KeyXMLRPCRT:
		return kXMLRPCRT
	}
	return kNone
}

// keySet is a set of keyIDs.
type keySet uint32

func keys(ks ...keyID) keySet {
	var s keySet
	for _, k := range ks {
		s |= 1 << k
	}
	return s
}

// keyOrder is the order in which trawl writes dictionary keys: CPython 2's
// iteration order for these keys (slot = hash & 7), with the collisions
// resolved as the examples of section 4 show (cs before dn, pd before cm).
// Encoding in this order reproduces every example byte for byte; decoding
// accepts any order.
//
//	cs dn xp si ou vc pi mi db ds ep id pd wy cm ur st

// dictionary entry helpers, each appending key then value.

func appendKey(dst []byte, k string) []byte { return marshal.AppendString(dst, k) }

func appendStrField(dst []byte, k, v string) []byte {
	return marshal.AppendString(appendKey(dst, k), v)
}

func appendIntField(dst []byte, k string, v int64) []byte {
	return marshal.AppendInt(appendKey(dst, k), v)
}

func appendCmd(dst []byte, c Command) []byte { return appendIntField(dst, KeyCmd, int64(c)) }

// appendOptStrField appends the entry only when v is not empty.
func appendOptStrField(dst []byte, k, v string) []byte {
	if v == "" {
		return dst
	}
	return appendStrField(dst, k, v)
}

func appendChecksumField(dst []byte, c Checksum) []byte {
	return marshal.AppendBytes(appendKey(dst, KeyCsum), c[:])
}

func appendValueField(dst []byte, k string, v marshal.Value) ([]byte, error) {
	return marshal.AppendValue(appendKey(dst, k), v)
}

// field readers

// readString reads a string; the strings of a small message share one
// copy of it (marshal.Reader.ReadSharedString).
func readString(r *marshal.Reader, what string) (string, error) {
	s, err := r.ReadSharedString()
	if err != nil {
		return "", fmt.Errorf("cmt: %s: %w", what, err)
	}
	return s, nil
}

func readInt(r *marshal.Reader, what string) (int64, error) {
	i, err := r.ReadInt()
	if err == nil {
		return i, nil
	}
	if b, berr := r.ReadBool(); berr == nil {
		if b {
			return 1, nil
		}
		return 0, nil
	}
	return 0, fmt.Errorf("cmt: %s: %w", what, err)
}

func readInt32(r *marshal.Reader, what string) (int32, error) {
	i, err := readInt(r, what)
	if err != nil {
		return 0, err
	}
	if i < math.MinInt32 || i > math.MaxInt32 {
		return 0, fieldError(what, "%d out of the 32-bit range", i)
	}
	return int32(i), nil
}

func readUint32(r *marshal.Reader, what string) (uint32, error) {
	i, err := readInt(r, what)
	if err != nil {
		return 0, err
	}
	if i < math.MinInt32 || i > math.MaxUint32 {
		return 0, fieldError(what, "%d out of the 32-bit range", i)
	}
	return uint32(i), nil
}

func readChecksum(r *marshal.Reader, what string) (Checksum, error) {
	b, err := r.ReadBytes()
	if err != nil {
		return Checksum{}, fmt.Errorf("cmt: %s: %w", what, err)
	}
	return asChecksum(marshal.Bytes(b), what)
}

// pdShape is what the scan of a frame (scanFrame) saw of PKT_DATA, enough
// to tell apart the message shapes that share a command code.
type pdShape struct {
	present bool
	code    byte // type code of the value
	n       int  // element count of a tuple or list
}

// newMessage returns an empty message of the type that command c with
// PKT_DATA of shape pd decodes into, or nil for an unknown command.
func newMessage(c Command, pd pdShape) Message {
	switch c {
	case CmdAdmConfUpdate:
		return &AdmConfUpdate{}
	case CmdAdmConfAdd:
		return &AdmConfAdd{}
	case CmdAdmConfRemove:
		return &AdmConfRemove{}
	case CmdAdmConfSuspend:
		return &AdmConfSuspend{}
	case CmdAdmConfResume:
		return &AdmConfResume{}
	case CmdAdmConfRefresh:
		return &AdmConfRefresh{}
	case CmdAdmPreemptSite:
		return &AdmPreemptSite{}
	case CmdUMAddRoute:
		// NS-bound: a 5-tuple; MNS-bound: a list of (attr, node) pairs.
		if pd.code == '(' && pd.n == 5 {
			return &UMAddRoute{}
		}
		return &UMAddRouteReply{}
	case CmdUMAskRoute:
		return &UMAskRoute{}
	case CmdUMLastRoute:
		return &UMLastRoute{}
	case CmdUMKeepalive:
		return &UMKeepalive{}
	case CmdUMKeepaliveAck:
		return &UMKeepaliveAck{}
	case CmdUMDNSRequest:
		return &UMDNSRequest{}
	case CmdUMDNSReply:
		return &UMDNSReply{}
	case CmdUMReprocessSite:
		return &UMReprocessSite{}
	case CmdUMQuarantineSite:
		return &UMQuarantineSite{}
	case CmdUMStartCrawlIP:
		// Request to the MNS: a 3-tuple; reply to the NS: a 4-tuple.
		if pd.n == 4 {
			return &UMStartCrawlIPReply{}
		}
		return &UMStartCrawlIP{}
	case CmdUMStopCrawlIP:
		return &UMStopCrawlIP{}
	case CmdUMDeleteSite:
		return &UMDeleteSite{}
	case CmdUMDeleteURIs:
		return &UMDeleteURIs{}
	case CmdUMConfState:
		// Request to the MNS: no PKT_DATA; to the NS: the state.
		if pd.present {
			return &UMConfState{}
		}
		return &UMConfStateRequest{}
	case CmdUMQuarantineSiteRequeue:
		return &UMQuarantineSiteRequeue{}
	case CmdUMDeleteOK:
		return &UMDeleteOK{}
	case CmdAdmConfFeedingSuspend:
		return &AdmConfFeedingSuspend{}
	case CmdUMInit:
		return &UMInit{}
	case CmdUMURI:
		return &UMURI{}
	case CmdUMURIUrg:
		return &UMURIUrg{}
	case CmdUMStat:
		return &UMStat{}
	case CmdUMLog:
		return &UMLog{}
	case CmdPPDUPAddOK:
		return &PPDUPAddOK{}
	case CmdPPDUPError:
		return &PPDUPError{}
	case CmdPPDUPAdd:
		return &PPDUPAdd{}
	case CmdPPDUPRemove:
		return &PPDUPRemove{}
	case CmdPPDUPRemoveOK:
		return &PPDUPRemoveOK{}
	case CmdPPDUPKeepalive:
		return &PPDUPKeepalive{}
	case CmdPPDUPKeepaliveAck:
		return &PPDUPKeepaliveAck{}
	case CmdPPDUPPromoteReq:
		return &PPDUPPromoteReq{}
	case CmdPPDUPConfRemove:
		return &PPDUPConfRemove{}
	case CmdPPDUPSetConfig:
		return &PPDUPSetConfig{}
	case CmdPPDUPConfigAck:
		return &PPDUPConfigAck{}
	case CmdPPDUPConfRemove2:
		return &PPDUPConfRemove2{}
	}
	return nil
}

// AppendPayload appends the frame body of m with priority p to dst: the
// marshalled tuple (dict, priority). On error dst is returned unchanged in
// length.
func AppendPayload(dst []byte, m Message, p Priority) ([]byte, error) {
	if p != PriorityNormal && p != PriorityHigh {
		return dst, fmt.Errorf("cmt: priority %d: must be 0 or 1", int32(p))
	}
	if m == nil {
		return dst, errors.New("cmt: nil message")
	}
	start := len(dst)
	dst = marshal.AppendTupleHeader(dst, 2)
	dst, err := m.appendDict(dst)
	if err != nil {
		return dst[:start], fmt.Errorf("cmt: encoding %v: %w", m.Code(), err)
	}
	return marshal.AppendInt(dst, int64(p)), nil
}

// EncodePayload returns the frame body of m with priority p.
func EncodePayload(m Message, p Priority) ([]byte, error) { return AppendPayload(nil, m, p) }

// Decoder decodes frame bodies into messages, reusing its marshal reader
// between calls. The zero value decodes with marshal's default limits. A
// Decoder is not safe for concurrent use.
type Decoder struct {
	r   *marshal.Reader
	lim marshal.Limits
	// noGuess turns off the one-pass decoding of a guessed command
	// (Decode), for the tests that compare both ways.
	noGuess bool
}

// NewDecoder returns a Decoder that decodes within lim (zero fields take
// marshal's defaults).
func NewDecoder(lim marshal.Limits) *Decoder {
	return &Decoder{r: marshal.NewReader(nil, lim), lim: lim}
}

// DecodeFrame decodes a frame body (as FrameReader.ReadFrame returns it)
// with default limits. See Decoder.Decode.
func DecodeFrame(payload []byte) (Frame, error) {
	var d Decoder
	return d.Decode(payload)
}

// DecodeMessage decodes a frame body and returns its message, dropping the
// priority. See Decoder.Decode.
func DecodeMessage(payload []byte) (Message, error) {
	f, err := DecodeFrame(payload)
	return f.Message, err
}

// Decode decodes a frame body: a marshalled (dict, priority) tuple with
// nothing after it. A well-formed message with a command code the spec
// does not define gives an *UnknownCommandError; every other failure
// wraps ErrMalformed. Keys a message does not use are ignored; keys it
// needs must be present. The message does not alias payload; the strings
// of a message of up to marshal.SharedStringMax bytes share one copy of
// it (one allocation, not one per string).
//
// The command decides the type of the message and so how to read the
// other keys, but it may come after them: trawl and CPython 2 both write
// PKT_CMD after PKT_DATA. So Decode first guesses the command from the
// end of the frame, where PKT_CMD is when it is the last key (the usual
// case, and always for the crawl queue entry traffic), and fills the
// message in one pass, checking that the command read is the one
// guessed. Without a guess, or when the guess was wrong or the pass
// failed, it goes over the dictionary once with Skip to find the command
// (and the shape of PKT_DATA, for the commands with two shapes), returns
// to the start of the dictionary (marshal.Reader.Seek) and fills the
// message; the errors are then those of the careful reading.
func (d *Decoder) Decode(payload []byte) (Frame, error) {
	if d.r == nil {
		d.r = marshal.NewReader(nil, d.lim)
	}
	r := d.r
	r.Reset(payload)
	begin := r.Mark()
	if cmd, ok := tailCommand(payload); ok && !d.noGuess && !shapeDependent(cmd) {
		if m := newMessage(cmd, pdShape{}); m != nil {
			if f, ok := d.speculate(m, cmd); ok {
				return f, nil
			}
			r.Seek(begin)
		}
	}
	var f Frame
	cmd, pd, prio, err := scanFrame(r)
	if err != nil {
		return f, err
	}
	f.Priority = prio
	m := newMessage(cmd, pd)
	if m == nil {
		var dict marshal.Dict
		v, _, err := marshal.DecodeLimits(payload, d.lim)
		if err != nil {
			return f, malformed("%v", err)
		}
		if t, ok := v.(marshal.Tuple); ok && len(t) == 2 {
			dict, _ = t[0].(marshal.Dict)
		}
		return f, &UnknownCommandError{Code: cmd, Priority: prio, Dict: dict}
	}
	// scanFrame checked the tuple and the dict: fill the message.
	r.Seek(begin)
	if _, err := r.ReadTupleHeader(); err != nil {
		return f, malformed("%v", err)
	}
	if err := r.ReadDictStart(); err != nil {
		return f, malformed("%v", err)
	}
	if _, err := fillMessage(r, m, cmd, false); err != nil {
		return f, err
	}
	f.Message = m
	return f, nil
}

// speculate decodes the frame in r as message m of command cmd, in one
// pass, and reports whether it was that: a valid frame whose (last)
// PKT_CMD is cmd. When it is not, r is somewhere in the frame.
func (d *Decoder) speculate(m Message, cmd Command) (Frame, bool) {
	r := d.r
	if n, err := r.ReadTupleHeader(); err != nil || n != 2 {
		return Frame{}, false
	}
	if err := r.ReadDictStart(); err != nil {
		return Frame{}, false
	}
	got, err := fillMessage(r, m, cmd, true)
	if err != nil || got != int64(cmd) {
		return Frame{}, false
	}
	p, err := readInt(r, "priority")
	if err != nil || (p != 0 && p != 1) || r.Remaining() != 0 {
		return Frame{}, false
	}
	return Frame{Priority: Priority(p), Message: m}, true
}

// fillMessage reads the pairs of the message dictionary after its start
// code, and its end code, into m and checks that m got the keys it needs.
// With readCmd it also reads PKT_CMD and returns the value of the last
// one (-1<<63 if there is none); else it skips it.
func fillMessage(r *marshal.Reader, m Message, cmd Command, readCmd bool) (int64, error) {
	var seen keySet
	got := int64(math.MinInt64)
	for {
		more, err := r.DictNext()
		if err != nil {
			return got, malformed("%v", err)
		}
		if !more {
			break
		}
		kb, err := r.ReadBytes()
		if err != nil {
			// A key of another type: not one of ours.
			if err := skipPair(r); err != nil {
				return got, err
			}
			continue
		}
		k := lookupKey(kb)
		if k == kCmd && readCmd {
			if got, err = readInt(r, "PKT_CMD"); err != nil {
				return got, malformed("%v", err)
			}
			continue
		}
		handled := false
		if k != kNone && k != kCmd {
			if handled, err = m.decodeField(r, k); err != nil {
				return got, fmt.Errorf("%w: %v: %v", ErrMalformed, cmd, err)
			}
		}
		if handled {
			seen |= 1 << k
		} else if err := r.Skip(); err != nil {
			return got, malformed("%v", err)
		}
	}
	if missing := m.required() &^ seen; missing != 0 {
		for k := keyID(1); k < numKeys; k++ {
			if missing&(1<<k) != 0 {
				return got, malformed("%v: missing key %q", cmd, keyNames[k])
			}
		}
	}
	return got, nil
}

// tailCommand returns the command of a frame body whose message dictionary
// ends with the PKT_CMD entry, as trawl and CPython 2 write it, from its
// last 18 bytes: s or t, length 2, "cm", i and the command, the end code
// '0', i and the priority. It is a guess: those bytes may be something
// else that looks the same, and Decode checks it.
func tailCommand(b []byte) (Command, bool) {
	const n = 18
	if len(b) < n {
		return 0, false
	}
	t := b[len(b)-n:]
	if (t[0] != 's' && t[0] != 't') || string(t[1:7]) != "\x02\x00\x00\x00"+KeyCmd ||
		t[7] != 'i' || t[12] != '0' || t[13] != 'i' {
		return 0, false
	}
	return Command(int32(binary.LittleEndian.Uint32(t[8:12]))), true
}

// shapeDependent reports whether command c names two message types that
// the shape of PKT_DATA tells apart (newMessage).
func shapeDependent(c Command) bool {
	return c == CmdUMAddRoute || c == CmdUMStartCrawlIP || c == CmdUMConfState
}

func skipPair(r *marshal.Reader) error {
	if err := r.Skip(); err != nil {
		return malformed("%v", err)
	}
	if err := r.Skip(); err != nil {
		return malformed("%v", err)
	}
	return nil
}

// scanFrame checks that the reader holds a 2-tuple of a dict and a
// priority 0 or 1, and nothing more, and returns the command, the shape
// of PKT_DATA and the priority.
func scanFrame(r *marshal.Reader) (Command, pdShape, Priority, error) {
	var pd pdShape
	n, err := r.ReadTupleHeader()
	if err != nil {
		return 0, pd, 0, malformed("frame body is not a tuple: %v", err)
	}
	if n != 2 {
		return 0, pd, 0, malformed("frame body is a tuple of %d, want 2", n)
	}
	if err := r.ReadDictStart(); err != nil {
		return 0, pd, 0, malformed("message is not a dictionary: %v", err)
	}
	var cmd int64
	haveCmd := false
	for {
		more, err := r.DictNext()
		if err != nil {
			return 0, pd, 0, malformed("%v", err)
		}
		if !more {
			break
		}
		kb, err := r.ReadBytes()
		if err != nil {
			if err := skipPair(r); err != nil {
				return 0, pd, 0, err
			}
			continue
		}
		switch lookupKey(kb) {
		case kCmd:
			if cmd, err = readInt(r, "PKT_CMD"); err != nil {
				return 0, pd, 0, malformed("%v", err)
			}
			haveCmd = true
			continue
		case kData:
			pd = pdShape{present: true}
			if pd.code, err = r.Peek(); err != nil {
				return 0, pd, 0, malformed("%v", err)
			}
			if pd.code == '(' || pd.code == '[' {
				_, pd.n, err = r.ReadSeqHeader()
				if err != nil {
					return 0, pd, 0, malformed("%v", err)
				}
				// Skip the elements (the header is consumed).
				for range pd.n {
					if err := r.Skip(); err != nil {
						return 0, pd, 0, malformed("%v", err)
					}
				}
				continue
			}
		}
		if err := r.Skip(); err != nil {
			return 0, pd, 0, malformed("%v", err)
		}
	}
	p, err := readInt(r, "priority")
	if err != nil {
		return 0, pd, 0, malformed("%v", err)
	}
	if p != 0 && p != 1 {
		return 0, pd, 0, malformed("priority %d, want 0 or 1", p)
	}
	if r.Remaining() != 0 {
		return 0, pd, 0, malformed("%d bytes after the message tuple", r.Remaining())
	}
	if !haveCmd {
		return 0, pd, 0, malformed("no PKT_CMD (%q) key", KeyCmd)
	}
	if cmd < -1<<31 || cmd > 1<<31-1 {
		return 0, pd, 0, malformed("command %d out of range", cmd)
	}
	return Command(cmd), pd, Priority(p), nil
}

// MessageDict returns the message dictionary of m as a marshal value.
func MessageDict(m Message) (marshal.Dict, error) {
	if m == nil {
		return nil, errors.New("cmt: nil message")
	}
	b, err := m.appendDict(nil)
	if err != nil {
		return nil, err
	}
	v, err := marshal.Decode(b)
	if err != nil {
		return nil, err
	}
	return v.(marshal.Dict), nil
}

// MessageFromDict converts a message dictionary to its message, as
// DecodeFrame would.
func MessageFromDict(d marshal.Dict) (Message, error) {
	b, err := marshal.AppendValue(marshal.AppendTupleHeader(nil, 2), d)
	if err != nil {
		return nil, err
	}
	return DecodeMessage(marshal.AppendInt(b, 0))
}
