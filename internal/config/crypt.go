package config

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// Encrypted passwords (MS-FSCCFG 2.2.4.20). The spec says: "!ENC!" followed
// by the password encrypted with AES in CBC mode, with a key file holding a
// 128-bit key and a 128-bit IV. It does not say how the ciphertext becomes
// text, how it is padded or what the key file looks like; trawl's choices
// (docs/decisions/config.md):
//
//	key file:  64 hex digits (32 random bytes, the spec's 256 bits of key
//	           material) and a newline, mode 0600
//	keys:      AES-128 key = HMAC-SHA256(material, "trawl password encryption")[:16]
//	           MAC key     = HMAC-SHA256(material, "trawl password authentication")
//	value:     "!ENC!" + base64(std, padded) of
//	           version (1 byte, 0x01) | IV (16 random bytes) |
//	           AES-128-CBC(PKCS#7-padded UTF-8 password) |
//	           HMAC-SHA256(MAC key, version|IV|ciphertext)[:16]
//
// A fresh IV per value (RFC 3602 requires unpredictable IVs), and
// encrypt-then-MAC, so a wrong key or a damaged value is reported as such
// and never decrypts to a garbled password.

// EncPrefix marks an encrypted password.
const EncPrefix = "!ENC!"

const (
	sealVersion  = 1
	tagLen       = 16
	maxSealedLen = 4096
	keyFileBytes = 32
)

// ErrNotAuthentic is returned when an encrypted password does not
// authenticate under the key: the key file is not the one it was encrypted
// with, or the value was damaged.
var ErrNotAuthentic = errors.New("config: encrypted password does not authenticate: wrong key file or damaged value")

// Key encrypts and decrypts passwords.
type Key struct {
	enc []byte
	mac []byte
}

// IsEncrypted reports whether a password is encrypted ("!ENC!...").
func IsEncrypted(s string) bool { return strings.HasPrefix(s, EncPrefix) }

func newKey(material []byte) *Key {
	derive := func(label string) []byte {
		h := hmac.New(sha256.New, material)
		h.Write([]byte(label))
		return h.Sum(nil)
	}
	return &Key{enc: derive("trawl password encryption")[:16], mac: derive("trawl password authentication")}
}

// GenerateKeyMaterial reads 32 random bytes from r.
func generateMaterial(r io.Reader) ([]byte, error) {
	m := make([]byte, keyFileBytes)
	if _, err := io.ReadFull(r, m); err != nil {
		return nil, fmt.Errorf("config: reading random bytes: %w", err)
	}
	return m, nil
}

// DefaultKeyFile returns ~/.trawl/key.
func DefaultKeyFile() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("config: no home directory for the default key file (use --key-file): %w", err)
	}
	return filepath.Join(home, ".trawl", "key"), nil
}

// KeyFileHelp is the help text of a role's --key-file flag.
const KeyFileHelp = "key file that decrypts !ENC! passwords (default ~/.trawl/key when it exists; see trawl config encrypt)"

// PasswordKey loads the key that decrypts "!ENC!" passwords: path, or the
// default key file when path is empty and that file exists. No key at all
// is not an error: a collection with encrypted passwords then fails with
// "no key" when it is set up.
func PasswordKey(path string) (*Key, error) {
	if path == "" {
		def, err := DefaultKeyFile()
		if err != nil {
			return nil, nil
		}
		if _, err := os.Stat(def); errors.Is(err, fs.ErrNotExist) {
			return nil, nil
		}
		path = def
	}
	k, err := LoadKey(path)
	if err != nil {
		return nil, fmt.Errorf("key file: %w", err)
	}
	return k, nil
}

// LoadKey reads a key file. The file must not be readable or writable by
// group or others.
func LoadKey(path string) (*Key, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("config: key file: %w", err)
	}
	if fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("config: key file %s has mode %04o; it must be private (chmod 600 %s)", path, fi.Mode().Perm(), path)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: key file: %w", err)
	}
	return ParseKey(data)
}

// ParseKey parses the contents of a key file: 64 hex digits, surrounding
// white space ignored.
func ParseKey(data []byte) (*Key, error) {
	t := bytes.TrimSpace(data)
	if len(t) != 2*keyFileBytes {
		return nil, fmt.Errorf("config: key file must hold %d hex digits, found %d characters", 2*keyFileBytes, len(t))
	}
	m := make([]byte, keyFileBytes)
	if _, err := hex.Decode(m, t); err != nil {
		return nil, fmt.Errorf("config: key file is not hexadecimal: %v", err)
	}
	return newKey(m), nil
}

// CreateKeyFile writes a new key file with random material from r, mode
// 0600, creating its directory (0700) if needed. It refuses to overwrite an
// existing file.
func CreateKeyFile(path string, r io.Reader) (*Key, error) {
	m, err := generateMaterial(r)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("config: key file directory: %w", err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, fmt.Errorf("config: creating key file: %w", err)
	}
	if _, err := fmt.Fprintf(f, "%s\n", hex.EncodeToString(m)); err != nil {
		f.Close()
		return nil, fmt.Errorf("config: writing key file: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("config: writing key file: %w", err)
	}
	return newKey(m), nil
}

// Encrypt returns "!ENC!..." for the password, with an IV read from r
// (crypto/rand.Reader in production).
func (k *Key) Encrypt(password string, r io.Reader) (string, error) {
	if !utf8.ValidString(password) {
		return "", errors.New("config: password is not valid UTF-8")
	}
	if len(password) > maxSealedLen/2 {
		return "", errors.New("config: password too long")
	}
	block, _ := aes.NewCipher(k.enc)
	pad := aes.BlockSize - len(password)%aes.BlockSize
	plain := append([]byte(password), bytes.Repeat([]byte{byte(pad)}, pad)...)
	out := make([]byte, 1+aes.BlockSize, 1+aes.BlockSize+len(plain)+tagLen)
	out[0] = sealVersion
	if _, err := io.ReadFull(r, out[1:1+aes.BlockSize]); err != nil {
		return "", fmt.Errorf("config: reading random IV: %w", err)
	}
	ct := make([]byte, len(plain))
	cipher.NewCBCEncrypter(block, out[1:1+aes.BlockSize]).CryptBlocks(ct, plain)
	out = append(out, ct...)
	out = append(out, k.tag(out)...)
	return EncPrefix + base64.StdEncoding.EncodeToString(out), nil
}

func (k *Key) tag(b []byte) []byte {
	h := hmac.New(sha256.New, k.mac)
	h.Write(b)
	return h.Sum(nil)[:tagLen]
}

// decodeSealed checks the form of an encrypted password without a key.
func decodeSealed(v string) ([]byte, error) {
	s, ok := strings.CutPrefix(v, EncPrefix)
	if !ok {
		return nil, errors.New("config: password is not encrypted (no !ENC! prefix)")
	}
	if len(s) > maxSealedLen {
		return nil, errors.New("config: encrypted password too long")
	}
	b, err := base64.StdEncoding.Strict().DecodeString(s)
	if err != nil {
		return nil, errors.New("config: encrypted password is not valid base64 (produce it with trawl config encrypt)")
	}
	if len(b) < 1+2*aes.BlockSize+tagLen || (len(b)-1-tagLen)%aes.BlockSize != 0 {
		return nil, errors.New("config: encrypted password has the wrong length (produce it with trawl config encrypt)")
	}
	if b[0] != sealVersion {
		return nil, fmt.Errorf("config: encrypted password has unknown version %d", b[0])
	}
	return b, nil
}

// Decrypt returns the password of an "!ENC!..." value. A wrong key or a
// damaged value gives ErrNotAuthentic, never a wrong password.
func (k *Key) Decrypt(v string) (string, error) {
	b, err := decodeSealed(v)
	if err != nil {
		return "", err
	}
	body, tag := b[:len(b)-tagLen], b[len(b)-tagLen:]
	if !hmac.Equal(tag, k.tag(body)) {
		return "", ErrNotAuthentic
	}
	block, _ := aes.NewCipher(k.enc)
	ct := body[1+aes.BlockSize:]
	plain := make([]byte, len(ct))
	cipher.NewCBCDecrypter(block, body[1:1+aes.BlockSize]).CryptBlocks(plain, ct)
	pad := int(plain[len(plain)-1])
	if pad < 1 || pad > aes.BlockSize || !bytes.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return "", ErrNotAuthentic
	}
	plain = plain[:len(plain)-pad]
	if !utf8.Valid(plain) {
		return "", ErrNotAuthentic
	}
	return string(plain), nil
}

// Password returns pw itself when it is not encrypted, and decrypts it
// otherwise; k may be nil when no key is configured.
func (k *Key) Password(pw string) (string, error) {
	if !IsEncrypted(pw) {
		return pw, nil
	}
	if k == nil {
		return "", errors.New("config: the password is encrypted and no key file was given")
	}
	return k.Decrypt(pw)
}
