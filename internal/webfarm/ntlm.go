package webfarm

import (
	"bytes"
	"crypto/hmac"
	"crypto/md5"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"math/bits"
	"net/http"
	"strings"
	"sync"
	"unicode/utf16"
)

// NTLMGuard demands NTLM authentication (MS-NLMP), NTLMv2 responses only,
// as IIS does with Windows authentication: a request without credentials
// gets "401 WWW-Authenticate: NTLM"; a NEGOTIATE message gets a CHALLENGE
// for its connection; the AUTHENTICATE message that follows on the same
// connection is checked against User, Password and Domain (the user's
// domain as the client sends it; "" when the client sends none).
type NTLMGuard struct {
	User, Password, Domain string

	mu         sync.Mutex
	challenges map[string][8]byte // remote address -> server challenge
	handshakes int
}

// Handshakes is how many CHALLENGE messages were sent.
func (g *NTLMGuard) Handshakes() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.handshakes
}

const (
	ntlmUnicode        = 1 << 0
	ntlmRequestTarget  = 1 << 2
	ntlmNTLM           = 1 << 9
	ntlmAlwaysSign     = 1 << 15
	ntlmTargetDomain   = 1 << 16
	ntlmExtendedSec    = 1 << 19
	ntlmTargetInfo     = 1 << 23
	ntlmVersion        = 1 << 25
	ntlm128            = 1 << 29
	ntlm56             = 1 << 31
	ntlmChallengeFlags = ntlmUnicode | ntlmRequestTarget | ntlmNTLM | ntlmAlwaysSign | ntlmTargetDomain |
		ntlmExtendedSec | ntlmTargetInfo | ntlmVersion | ntlm128 | ntlm56
)

var ntlmSignature = []byte("NTLMSSP\x00")

// Admit implements Guard.
func (g *NTLMGuard) Admit(w http.ResponseWriter, r *http.Request) bool {
	h := r.Header.Get("Authorization")
	scheme, tok, _ := strings.Cut(h, " ")
	if strings.EqualFold(scheme, "NTLM") || strings.EqualFold(scheme, "Negotiate") {
		msg, err := base64.StdEncoding.DecodeString(strings.TrimSpace(tok))
		if err == nil && len(msg) >= 12 && bytes.Equal(msg[:8], ntlmSignature) {
			switch binary.LittleEndian.Uint32(msg[8:12]) {
			case 1:
				var ch [8]byte
				copy(ch[:], randomBytes(8))
				g.mu.Lock()
				if g.challenges == nil || len(g.challenges) > 10000 {
					g.challenges = map[string][8]byte{}
				}
				g.challenges[r.RemoteAddr] = ch
				g.handshakes++
				g.mu.Unlock()
				w.Header().Set("WWW-Authenticate", "NTLM "+base64.StdEncoding.EncodeToString(g.challengeMessage(ch)))
				w.WriteHeader(http.StatusUnauthorized)
				return false
			case 3:
				g.mu.Lock()
				ch, ok := g.challenges[r.RemoteAddr]
				delete(g.challenges, r.RemoteAddr)
				g.mu.Unlock()
				if ok && g.verify(msg, ch) == nil {
					return true
				}
			}
		}
	}
	w.Header().Add("WWW-Authenticate", "NTLM")
	http.Error(w, "authentication required", http.StatusUnauthorized)
	return false
}

func utf16le(s string) []byte {
	u := utf16.Encode([]rune(s))
	b := make([]byte, 2*len(u))
	for i, c := range u {
		binary.LittleEndian.PutUint16(b[2*i:], c)
	}
	return b
}

func fromUTF16le(b []byte) string {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = binary.LittleEndian.Uint16(b[2*i:])
	}
	return string(utf16.Decode(u))
}

func (g *NTLMGuard) challengeMessage(ch [8]byte) []byte {
	target := utf16le("FARM")
	var info bytes.Buffer
	av := func(id uint16, v []byte) {
		binary.Write(&info, binary.LittleEndian, id)
		binary.Write(&info, binary.LittleEndian, uint16(len(v)))
		info.Write(v)
	}
	av(2, utf16le("FARM"))
	av(1, utf16le("WEBFARM"))
	av(0, nil)
	const head = 56
	b := make([]byte, head, head+len(target)+info.Len())
	copy(b, ntlmSignature)
	binary.LittleEndian.PutUint32(b[8:], 2)
	binary.LittleEndian.PutUint16(b[12:], uint16(len(target)))
	binary.LittleEndian.PutUint16(b[14:], uint16(len(target)))
	binary.LittleEndian.PutUint32(b[16:], head)
	binary.LittleEndian.PutUint32(b[20:], ntlmChallengeFlags)
	copy(b[24:32], ch[:])
	binary.LittleEndian.PutUint16(b[40:], uint16(info.Len()))
	binary.LittleEndian.PutUint16(b[42:], uint16(info.Len()))
	binary.LittleEndian.PutUint32(b[44:], uint32(head+len(target)))
	copy(b[48:56], []byte{10, 0, 0x63, 0x45, 0, 0, 0, 15}) // version 10.0.17763, NTLM revision 15
	b = append(b, target...)
	return append(b, info.Bytes()...)
}

// ntlmField returns the payload a (len, maxlen, offset) field at off
// points to.
func ntlmField(msg []byte, off int) ([]byte, error) {
	if off+8 > len(msg) {
		return nil, errors.New("webfarm: ntlm message too short")
	}
	n := int(binary.LittleEndian.Uint16(msg[off:]))
	at := int(binary.LittleEndian.Uint32(msg[off+4:]))
	if at < 0 || n < 0 || at > len(msg) || n > len(msg)-at {
		return nil, errors.New("webfarm: ntlm field out of bounds")
	}
	return msg[at : at+n], nil
}

func (g *NTLMGuard) verify(msg []byte, ch [8]byte) error {
	nt, err := ntlmField(msg, 20)
	if err != nil {
		return err
	}
	dom, err := ntlmField(msg, 28)
	if err != nil {
		return err
	}
	user, err := ntlmField(msg, 36)
	if err != nil {
		return err
	}
	if len(nt) < 16+28 {
		return errors.New("webfarm: not an NTLMv2 response")
	}
	u, d := fromUTF16le(user), fromUTF16le(dom)
	if !strings.EqualFold(u, g.User) || !strings.EqualFold(d, g.Domain) {
		return errors.New("webfarm: unknown user")
	}
	h := md4Sum(utf16le(g.Password))
	m := hmac.New(md5.New, h[:])
	m.Write(utf16le(strings.ToUpper(u) + d))
	key := m.Sum(nil)
	m = hmac.New(md5.New, key)
	m.Write(ch[:])
	m.Write(nt[16:])
	if !hmac.Equal(m.Sum(nil), nt[:16]) {
		return errors.New("webfarm: wrong password")
	}
	return nil
}

// md4Sum is MD4 (RFC 1320), which NTLM's password hash needs and the
// standard library does not have.
func md4Sum(msg []byte) [16]byte {
	a, b, c, d := uint32(0x67452301), uint32(0xefcdab89), uint32(0x98badcfe), uint32(0x10325476)
	n := len(msg)
	pad := make([]byte, 0, n+72)
	pad = append(pad, msg...)
	pad = append(pad, 0x80)
	for len(pad)%64 != 56 {
		pad = append(pad, 0)
	}
	pad = binary.LittleEndian.AppendUint64(pad, uint64(n)*8)
	var x [16]uint32
	for off := 0; off < len(pad); off += 64 {
		for i := range x {
			x[i] = binary.LittleEndian.Uint32(pad[off+4*i:])
		}
		aa, bb, cc, dd := a, b, c, d
		f := func(x, y, z uint32) uint32 { return x&y | ^x&z }
		gf := func(x, y, z uint32) uint32 { return x&y | x&z | y&z }
		h := func(x, y, z uint32) uint32 { return x ^ y ^ z }
		r1 := [4]int{3, 7, 11, 19}
		for i := 0; i < 16; i++ {
			t := a + f(b, c, d) + x[i]
			a, b, c, d = d, bits.RotateLeft32(t, r1[i%4]), b, c
		}
		r2 := [4]int{3, 5, 9, 13}
		for i := 0; i < 16; i++ {
			k := (i%4)*4 + i/4
			t := a + gf(b, c, d) + x[k] + 0x5a827999
			a, b, c, d = d, bits.RotateLeft32(t, r2[i%4]), b, c
		}
		r3 := [4]int{3, 9, 11, 15}
		order := [16]int{0, 8, 4, 12, 2, 10, 6, 14, 1, 9, 5, 13, 3, 11, 7, 15}
		for i := 0; i < 16; i++ {
			t := a + h(b, c, d) + x[order[i]] + 0x6ed9eba1
			a, b, c, d = d, bits.RotateLeft32(t, r3[i%4]), b, c
		}
		a, b, c, d = a+aa, b+bb, c+cc, d+dd
	}
	var out [16]byte
	binary.LittleEndian.PutUint32(out[0:], a)
	binary.LittleEndian.PutUint32(out[4:], b)
	binary.LittleEndian.PutUint32(out[8:], c)
	binary.LittleEndian.PutUint32(out[12:], d)
	return out
}
