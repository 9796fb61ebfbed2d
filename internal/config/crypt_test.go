package config

import (
	"bytes"
	"crypto/rand"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestEncryptDecrypt(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "sub", "key")
	k, err := CreateKeyFile(path, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode: %v %v", fi.Mode(), err)
	}
	if _, err := CreateKeyFile(path, rand.Reader); err == nil {
		t.Errorf("CreateKeyFile overwrote an existing file")
	}
	k2, err := LoadKey(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, pw := range []string{"p", "password", "exactly16bytes!!", "pässwörd:with:colons", strings.Repeat("x", 100)} {
		v, err := k.Encrypt(pw, rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		if !IsEncrypted(v) || len(pw) > 4 && strings.Contains(v, pw) {
			t.Errorf("bad value %q", v)
		}
		got, err := k2.Decrypt(v)
		if err != nil || got != pw {
			t.Errorf("Decrypt = %q, %v; want %q", got, err, pw)
		}
		v2, _ := k.Encrypt(pw, rand.Reader)
		if v2 == v {
			t.Errorf("two encryptions equal: IV not random")
		}
	}
}

func TestDecryptWrongKeyOrDamage(t *testing.T) {
	k, _ := ParseKey(bytes.Repeat([]byte("ab"), 32))
	other, _ := ParseKey(bytes.Repeat([]byte("cd"), 32))
	v, err := k.Encrypt("secret", rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	// A wrong key never yields a password.
	if got, err := other.Decrypt(v); !errors.Is(err, ErrNotAuthentic) || got != "" {
		t.Errorf("wrong key: %q, %v", got, err)
	}
	// Every single-character change is detected.
	for i := len(EncPrefix); i < len(v)-2; i++ {
		b := []byte(v)
		if b[i] == 'A' {
			b[i] = 'B'
		} else {
			b[i] = 'A'
		}
		got, err := k.Decrypt(string(b))
		if err == nil {
			t.Fatalf("damaged value at %d decrypted to %q", i, got)
		}
	}
	for _, bad := range []string{"!ENC!", "!ENC!not base64!", "!ENC!AAAA", "plain"} {
		if _, err := k.Decrypt(bad); err == nil {
			t.Errorf("%q decrypted", bad)
		}
	}
	if pw, err := (*Key)(nil).Password("plain"); err != nil || pw != "plain" {
		t.Errorf("plain password: %q %v", pw, err)
	}
	if _, err := (*Key)(nil).Password(v); err == nil {
		t.Errorf("encrypted password without key accepted")
	}
}

func TestKeyFileChecks(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if err := os.WriteFile(p, []byte(strings.Repeat("0", 64)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadKey(p); err == nil || !strings.Contains(err.Error(), "must be private (chmod 600") {
		t.Errorf("group-readable key file: %v", err)
	}
	os.Chmod(p, 0o600)
	if _, err := LoadKey(p); err != nil {
		t.Errorf("LoadKey: %v", err)
	}
	if _, err := ParseKey([]byte("xyz")); err == nil {
		t.Errorf("short key accepted")
	}
	if _, err := ParseKey([]byte(strings.Repeat("g", 64))); err == nil {
		t.Errorf("non-hex key accepted")
	}
}

// TestEncryptedPasswordInConfig: check validates the form of !ENC! values,
// and decrypts them when given the key.
func TestEncryptedPasswordInConfig(t *testing.T) {
	k, _ := ParseKey(bytes.Repeat([]byte("ab"), 32))
	other, _ := ParseKey(bytes.Repeat([]byte("cd"), 32))
	v, _ := k.Encrypt("s3cret", rand.Reader)
	src := `<CrawlerConfig><DomainSpecification name="c"><section name="passwd">
<attrib name="http://a.example/" type="string">user:` + v + `:realm:basic</attrib>
</section></DomainSpecification></CrawlerConfig>`
	cfg, err := Parse("p.xml", []byte(src), &Options{Key: k})
	if err != nil {
		t.Fatal(err)
	}
	creds := cfg.Collections[0].Top().Passwd()
	if len(creds) != 1 {
		t.Fatalf("passwd: %+v", creds)
	}
	if pw, err := k.Password(creds[0].Password); err != nil || pw != "s3cret" || creds[0].Scheme != "basic" {
		t.Errorf("password %q %v %+v", pw, err, creds[0])
	}
	if _, err := Parse("p.xml", []byte(src), nil); err != nil {
		t.Errorf("without key: %v", err)
	}
	_, err = Parse("p.xml", []byte(src), &Options{Key: other})
	if err == nil || err.Error() != "p.xml:2: collection c: parameter passwd/http://a.example/: "+ErrNotAuthentic.Error() {
		t.Errorf("wrong key: %v", err)
	}
	bad := strings.Replace(src, v, "!ENC!abc", 1)
	_, err = Parse("p.xml", []byte(bad), nil)
	if err == nil || !strings.Contains(err.Error(), "encrypted password is not valid base64") {
		t.Errorf("malformed: %v", err)
	}
}
