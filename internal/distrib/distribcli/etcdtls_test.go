package distribcli_test

import (
	"context"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/trawl/trawl/internal/distrib/etcdreg/etcdtest"
	"github.com/trawl/trawl/internal/distrib/wire"
	"github.com/trawl/trawl/internal/tlsconf/tlstest"
)

// TestRegistryEtcdTLS: trawl distributor and trawl distributors with
// --registry etcd://... and the --tls-* flags, against an etcd that serves
// TLS and requires client certificates: the distributor binds itself and
// becomes master, and trawl distributors finds it; without the flags
// trawl distributors cannot read the registry.
func TestRegistryEtcdTLS(t *testing.T) {
	ca := tlstest.NewCA(t, "test CA")
	_, ef := ca.Issue("etcd")
	reg := "etcd://" + etcdtest.StartTLS(t, ef)
	_, df := ca.Issue("distributor")
	cd, base := startListening(t, regexp.MustCompile(`distributor \d+ listening on`), func(base int) []string {
		return append([]string{"distributor", "--id", "1", "--base-port", strconv.Itoa(base), "--host", "127.0.0.1",
			"--listen", "127.0.0.1", "--ping-master", "300ms", "--check-master", "300ms", "--registry", reg}, df.Args()...)
	}, wire.PortInternal, wire.PortExternal)
	waitLine(cd, regexp.MustCompile(`(I am the master)`))

	run := func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
		defer cancel()
		out, err := exec.CommandContext(ctx, trawl.Path(t), args...).CombinedOutput()
		return string(out), err
	}
	out, err := run(append([]string{"distributors", "--registry", reg}, df.Args()...)...)
	master := "127.0.0.1:" + strconv.Itoa(base+wire.PortInternal)
	if err != nil || !strings.Contains(out, "master "+master) {
		t.Fatalf("trawl distributors with the TLS flags: %v\n%s", err, out)
	}
	if out, err := run("distributors", "--registry", reg, "--timeout", "3s"); err == nil {
		t.Fatalf("trawl distributors without a client certificate read the registry:\n%s", out)
	}
}
