package tlsconf_test

import (
	"context"
	"flag"
	"net"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/trawl/trawl/internal/testenv"
	"github.com/trawl/trawl/internal/tlsconf"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// TestMakeTestCAScript: scripts/make-test-ca.sh (openssl) makes an
// authority and two certificates that load with the flags and let the two
// processes talk mutual TLS on 127.0.0.1, each as server and as client.
func TestMakeTestCAScript(t *testing.T) {
	testenv.Tool(t, "apt-get install openssl", "openssl")
	dir := t.TempDir()
	script := filepath.Join(testenv.ModuleRoot(t), "scripts", "make-test-ca.sh")
	if out, err := exec.Command("sh", script, dir, "a", "b").CombinedOutput(); err != nil {
		t.Fatalf("make-test-ca.sh: %v\n%s", err, out)
	}
	load := func(name string) *tlsconf.Config {
		fs := flag.NewFlagSet(name, flag.ContinueOnError)
		f := tlsconf.Register(fs)
		if err := fs.Parse([]string{"--tls-cert", filepath.Join(dir, name+".pem"), "--tls-key", filepath.Join(dir, name+".key"),
			"--tls-ca", filepath.Join(dir, "ca.pem")}); err != nil {
			t.Fatal(err)
		}
		c, err := f.Load()
		if err != nil || c == nil {
			t.Fatalf("loading %s: %v", name, err)
		}
		return c
	}
	a, b := load("a"), load("b")
	for _, pair := range [][2]*tlsconf.Config{{a, b}, {b, a}} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tln := pair[0].Listener(ln, nil)
		go func() {
			if c, err := tln.Accept(); err == nil {
				defer c.Close()
				var buf [1]byte
				c.Read(buf[:])
			}
		}()
		addr := ln.Addr().String()
		if err := tlstest.Probe(context.Background(), addr, pair[1].Client(addr)); err != nil {
			t.Errorf("a certificate of the script's CA refused: %v", err)
		}
		tln.Close()
	}
}
