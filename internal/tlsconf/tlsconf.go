// Package tlsconf is trawl's optional mutual TLS between peers: the flags
// every role takes (--tls-cert, --tls-key, --tls-ca, --tls-server-name),
// the server and client configurations they make, and wrappers of
// listeners and dialers.
//
// With none of the flags a role listens and dials plain TCP, exactly as
// without this package (a nil *Config is valid and wraps nothing). With
// them, every listener of the role speaks TLS 1.3 and asks each peer for a
// certificate signed by the --tls-ca authority (tls.RequireAndVerifyClientCert),
// and every connection the role opens presents --tls-cert as its client
// certificate and verifies the server's against the same authority, for
// the host of the address dialled (or --tls-server-name). One certificate
// per process serves both ways, so it needs both key usages (server and
// client authentication); scripts/make-test-ca.sh makes such certificates.
// The allow-lists of the listeners (--allow) still apply, before the
// handshake. See docs/security.md.
package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"time"
)

// Flags holds the values of the TLS flags of one command.
type Flags struct {
	Cert, Key, CA, ServerName string
}

// Register adds the TLS flags to fs.
func Register(fs *flag.FlagSet) *Flags {
	f := &Flags{}
	fs.StringVar(&f.Cert, "tls-cert", "", "mutual TLS: PEM certificate of this process, presented to peers as server and as client (with --tls-key and --tls-ca)")
	fs.StringVar(&f.Key, "tls-key", "", "mutual TLS: PEM private key of --tls-cert")
	fs.StringVar(&f.CA, "tls-ca", "", "mutual TLS: PEM certificate(s) of the authority every peer's certificate must be signed by;\nwith these three flags every listener and link of this process is TLS 1.3 with client certificates")
	fs.StringVar(&f.ServerName, "tls-server-name", "", "mutual TLS: name the peers' certificates must carry (default: the host of the address dialled)")
	return f
}

// Config is the loaded TLS configuration of a process. A nil *Config means
// plain TCP; its methods then return what they were given.
type Config struct {
	server     *tls.Config
	client     *tls.Config
	serverName string
}

// Load reads the files named by the flags: nil without any of them, an
// error when only some are given or a file does not load.
func (f *Flags) Load() (*Config, error) {
	if f == nil || (f.Cert == "" && f.Key == "" && f.CA == "") {
		if f != nil && f.ServerName != "" {
			return nil, errors.New("tlsconf: --tls-server-name without --tls-cert, --tls-key and --tls-ca")
		}
		return nil, nil
	}
	if f.Cert == "" || f.Key == "" || f.CA == "" {
		return nil, errors.New("tlsconf: --tls-cert, --tls-key and --tls-ca go together")
	}
	cert, err := tls.LoadX509KeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: certificate %s, key %s: %w", f.Cert, f.Key, err)
	}
	pem, err := os.ReadFile(f.CA)
	if err != nil {
		return nil, fmt.Errorf("tlsconf: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("tlsconf: %s holds no PEM certificate", f.CA)
	}
	return New(cert, pool, f.ServerName), nil
}

// New makes a Config from a certificate and the pool of authorities the
// peers' certificates must chain to. serverName, if not empty, is the name
// checked in servers' certificates instead of the host dialled.
func New(cert tls.Certificate, cas *x509.CertPool, serverName string) *Config {
	return &Config{
		server: &tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: []tls.Certificate{cert},
			ClientCAs:    cas,
			ClientAuth:   tls.RequireAndVerifyClientCert,
		},
		client: &tls.Config{
			MinVersion:   tls.VersionTLS13,
			Certificates: []tls.Certificate{cert},
			RootCAs:      cas,
		},
		serverName: serverName,
	}
}

// Server returns the server configuration (nil for a nil Config).
func (c *Config) Server() *tls.Config {
	if c == nil {
		return nil
	}
	return c.server
}

// Client returns the client configuration for a connection to addr
// (HOST:PORT): the server's certificate must name HOST, or the
// --tls-server-name. Nil for a nil Config.
func (c *Config) Client(addr string) *tls.Config {
	if c == nil {
		return nil
	}
	cc := c.client.Clone()
	cc.ServerName = c.serverName
	if cc.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cc.ServerName = host
	}
	return cc
}

// ContextDialer is the shape of net.Dialer's DialContext.
type ContextDialer interface {
	DialContext(ctx context.Context, network, addr string) (net.Conn, error)
}

// Dialer wraps d (nil: a net.Dialer) so that its connections are TLS
// clients, the handshake done before DialContext returns. A nil Config
// returns d unchanged (or the net.Dialer).
func (c *Config) Dialer(d ContextDialer) ContextDialer {
	if d == nil {
		d = &net.Dialer{}
	}
	if c == nil {
		return d
	}
	return dialer{c: c, d: d}
}

type dialer struct {
	c *Config
	d ContextDialer
}

func (t dialer) DialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	nc, err := t.d.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	return t.c.Handshake(ctx, nc, addr)
}

// Handshake makes nc, a connection just dialled to addr, a TLS client and
// completes the handshake (bounded by ctx). On failure nc is closed. A nil
// Config returns nc.
func (c *Config) Handshake(ctx context.Context, nc net.Conn, addr string) (net.Conn, error) {
	if c == nil {
		return nc, nil
	}
	ctx, cancel := context.WithTimeout(ctx, HandshakeTimeout)
	defer cancel()
	tc := tls.Client(nc, c.Client(addr))
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("tlsconf: handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// HTTPClient returns an HTTP client that presents the certificate to the
// server at addr (HOST:PORT) and checks the server's; timeout bounds each
// request (0: none). A nil Config returns a plain client.
func (c *Config) HTTPClient(addr string, timeout time.Duration) *http.Client {
	if c == nil {
		return &http.Client{Timeout: timeout}
	}
	return &http.Client{Timeout: timeout, Transport: &http.Transport{TLSClientConfig: c.Client(addr), ForceAttemptHTTP2: true}}
}

// Scheme is "https" with a Config, "http" without.
func (c *Config) Scheme() string {
	if c == nil {
		return "http"
	}
	return "https"
}
