// Package tlstest makes certificate authorities and certificates for tests
// of trawl's mutual TLS (internal/tlsconf), in Go, in a test's temporary
// directory: the tests need no openssl.
package tlstest

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/tlsconf"
)

// CA is a test certificate authority.
type CA struct {
	t    testing.TB
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	der  []byte
	// Dir holds the files written (ca.pem and each issued pair).
	Dir string
	// CAFile is the authority's PEM certificate.
	CAFile string
}

// Files names a certificate and its key on disk.
type Files struct{ Cert, Key, CA string }

// Args returns the TLS flags of a trawl process using these files.
func (f Files) Args() []string {
	return []string{"--tls-cert", f.Cert, "--tls-key", f.Key, "--tls-ca", f.CA}
}

// NewCA makes an authority named name, written to a new temporary directory.
func NewCA(t testing.TB, name string) *CA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: name},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, _ := x509.ParseCertificate(der)
	ca := &CA{t: t, cert: cert, key: key, der: der, Dir: t.TempDir()}
	ca.CAFile = filepath.Join(ca.Dir, "ca.pem")
	writePEM(t, ca.CAFile, "CERTIFICATE", der)
	return ca
}

// Pool returns a pool holding the authority.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.cert)
	return p
}

// Issue makes a certificate for 127.0.0.1, ::1 and localhost, usable as
// server and as client, named name, and writes it and its key.
func (ca *CA) Issue(name string) (tls.Certificate, Files) {
	t := ca.t
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	sn, err := rand.Int(rand.Reader, big.NewInt(1<<62))
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: sn,
		Subject:      pkix.Name{CommonName: name},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	f := Files{Cert: filepath.Join(ca.Dir, name+".pem"), Key: filepath.Join(ca.Dir, name+".key"), CA: ca.CAFile}
	writePEM(t, f.Cert, "CERTIFICATE", der)
	writePEM(t, f.Key, "PRIVATE KEY", kder)
	cert, err := tls.X509KeyPair(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: kder}))
	if err != nil {
		t.Fatal(err)
	}
	return cert, f
}

// Config issues a certificate named name and returns the process
// configuration using it.
func (ca *CA) Config(name string) *tlsconf.Config {
	ca.t.Helper()
	cert, _ := ca.Issue(name)
	return tlsconf.New(cert, ca.Pool(), "")
}

func writePEM(t testing.TB, path, typ string, der []byte) {
	t.Helper()
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// Probe connects to addr with cfg and reports whether the server accepted
// the peer: nil when the handshake succeeded and the server kept the
// connection open for 500 ms without a word (the roles wait for the dialler
// to speak first), the error otherwise. In TLS 1.3 a server refuses a
// client certificate after the client's side of the handshake is done, so
// the refusal shows on the first read.
func Probe(ctx context.Context, addr string, cfg *tls.Config) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	tc := tls.Client(nc, cfg)
	if err := tc.HandshakeContext(ctx); err != nil {
		return err
	}
	_ = tc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	var b [1]byte
	_, err = tc.Read(b[:])
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		return nil
	}
	if err == nil {
		return nil
	}
	return err
}

// ProbePlain connects to addr over plain TCP, sends an MS-FSCMT-like line
// and an HTTP request line, and reports whether the server kept the
// connection open for 500 ms (nil) or closed it (the error).
func ProbePlain(ctx context.Context, addr string) error {
	var d net.Dialer
	nc, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	defer nc.Close()
	if _, err := nc.Write([]byte("GET / HTTP/1.0\r\n\r\n")); err != nil {
		return err
	}
	_ = nc.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	var b [512]byte
	for {
		_, err = nc.Read(b[:])
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
