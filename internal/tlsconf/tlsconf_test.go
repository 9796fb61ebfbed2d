package tlsconf_test

import (
	"flag"
	"strings"
	"testing"

	"github.com/trawl/trawl/internal/tlsconf"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// TestFlags: no flag gives plain TCP (a nil Config); the three files give a
// Config; a partial set, a missing file or a CA file without certificates
// are errors.
func TestFlags(t *testing.T) {
	ca := tlstest.NewCA(t, "trawl test CA")
	_, files := ca.Issue("peer")
	for _, tc := range []struct {
		name string
		args []string
		ok   bool
		nil_ bool
		err  string
	}{
		{"none", nil, true, true, ""},
		{"all three", files.Args(), true, false, ""},
		{"server name", append(files.Args(), "--tls-server-name", "localhost"), true, false, ""},
		{"cert only", []string{"--tls-cert", files.Cert}, false, false, "go together"},
		{"server name only", []string{"--tls-server-name", "x"}, false, false, "without"},
		{"missing key", []string{"--tls-cert", files.Cert, "--tls-key", files.Key + ".no", "--tls-ca", files.CA}, false, false, "no such file"},
		{"CA not PEM", []string{"--tls-cert", files.Cert, "--tls-key", files.Key, "--tls-ca", files.Key}, false, false, "no PEM certificate"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := flag.NewFlagSet("x", flag.ContinueOnError)
			f := tlsconf.Register(fs)
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			c, err := f.Load()
			if tc.ok != (err == nil) || (err != nil && !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("Load: %v, want ok=%v (%q)", err, tc.ok, tc.err)
			}
			if tc.ok && (c == nil) != tc.nil_ {
				t.Fatalf("Load: config %v, want nil=%v", c, tc.nil_)
			}
			if c != nil && c.Server().MinVersion != 0x0304 {
				t.Errorf("server MinVersion %x, want TLS 1.3", c.Server().MinVersion)
			}
		})
	}
}

// TestNilConfig: a nil Config wraps nothing.
func TestNilConfig(t *testing.T) {
	var c *tlsconf.Config
	ln := loopback(t)
	defer ln.Close()
	if c.Listener(ln, nil) != ln || c.Server() != nil || c.Client("a:1") != nil || c.Scheme() != "http" {
		t.Error("a nil Config changed something")
	}
}

// TestServerName: the client checks the host dialled, or --tls-server-name.
func TestServerName(t *testing.T) {
	ca := tlstest.NewCA(t, "trawl test CA")
	cert, _ := ca.Issue("peer")
	if got := tlsconf.New(cert, ca.Pool(), "").Client("127.0.0.1:13001").ServerName; got != "127.0.0.1" {
		t.Errorf("ServerName %q, want 127.0.0.1", got)
	}
	if got := tlsconf.New(cert, ca.Pool(), "crawler.internal").Client("127.0.0.1:13001").ServerName; got != "crawler.internal" {
		t.Errorf("ServerName %q, want crawler.internal", got)
	}
}
