package nodesched

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/trawl/trawl/internal/stats"
	"github.com/trawl/trawl/internal/webfarm"
)

// testCA is a certificate authority for the TLS crawl tests.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
	pool *x509.CertPool
}

func newTestCA(t *testing.T) *testCA {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "trawl audit CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	c, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(c)
	return &testCA{cert: c, key: k, pool: pool}
}

// issue makes a certificate for cn (a server's DNS name when server).
func (ca *testCA) issue(t *testing.T, serial int64, cn string, server bool) ([]byte, *ecdsa.PrivateKey) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}
	if server {
		tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
		tmpl.DNSNames = []string{cn}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &k.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	return der, k
}

// clientFiles writes a client certificate and its key as PEM files (the
// key_file and cert_file of a collection).
func (ca *testCA) clientFiles(t *testing.T, cn string) (certFile, keyFile string) {
	der, k := ca.issue(t, 3, cn, false)
	dir := t.TempDir()
	certFile, keyFile = filepath.Join(dir, "client.crt"), filepath.Join(dir, "client.key")
	kDER, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// certSite is an AccessSite served over TLS as host, demanding a client
// certificate the CA signed when requireClient; it records the common
// name of the client certificate of each request.
type certSite struct {
	site *webfarm.AccessSite
	mu   sync.Mutex
	cns  map[string]int
}

func (c *certSite) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cn := ""
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		cn = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	c.mu.Lock()
	c.cns[cn]++
	c.mu.Unlock()
	c.site.ServeHTTP(w, r)
}

func serveTLSSite(t *testing.T, ca *testCA, host string, requireClient bool) (*certSite, int) {
	t.Helper()
	der, k := ca.issue(t, 2, host, true)
	tc := &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: k}}}
	if requireClient {
		tc.ClientCAs, tc.ClientAuth = ca.pool, tls.RequireAndVerifyClientCert
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	cs := &certSite{site: &webfarm.AccessSite{Pages: 12}, cns: map[string]int{}}
	srv := &http.Server{Handler: cs, TLSConfig: tc, ErrorLog: nil}
	go srv.Serve(tls.NewListener(ln, tc))
	t.Cleanup(func() { srv.Close() })
	return cs, ln.Addr().(*net.TCPAddr).Port
}

// TestCrawlClientCertificate crawls an https site that refuses a TLS
// handshake without a client certificate its CA signed: with key_file and
// cert_file every page is fetched, each request carrying the certificate;
// without them no page is, the failures are counted under a document skip
// code (ne, a TLS error) and the crawl ends. A second case reaches the same site through a
// forward proxy demanding credentials, by CONNECT, with the certificate
// inside the tunnel.
func TestCrawlClientCertificate(t *testing.T) {
	ca := newTestCA(t)
	certFile, keyFile := ca.clientFiles(t, "trawl audit crawler")
	for _, tt := range []struct {
		name         string
		cert, proxy  bool
		wantAll      bool
		wantSkipCode string
	}{
		{"key_file and cert_file", true, false, true, ""},
		{"no certificate", false, false, false, stats.DocNetworkError},
		{"through a CONNECT proxy", true, true, true, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cs, port := serveTLSSite(t, ca, "secure.test", true)
			base := fmt.Sprintf("https://secure.test:%d", port)
			extra := `<attrib name="allowed_schemes" type="list-string"><member> https </member></attrib>`
			if !tt.cert {
				// robots=no: robots.txt fails the same handshake, and
				// robots=yes would skip the start URI as robots-denied
				// before any document fetch (counted under skip code rb).
				extra += `
    <attrib name="robots" type="boolean"> no </attrib>`
			}
			if tt.cert {
				extra += fmt.Sprintf(`
    <attrib name="cert_file" type="string"> %s </attrib>
    <attrib name="key_file" type="string"> %s </attrib>`, certFile, keyFile)
			}
			var proxy *webfarm.ForwardProxy
			if tt.proxy {
				var addr string
				proxy, addr = startProxy(t, "pu", "pp")
				extra += fmt.Sprintf(`
    <attrib name="proxy" type="list-string"><member> http://pu:pp@%s </member></attrib>`, addr)
			}
			counters, _ := auditCrawl(t, optXML(optCollection("tls", base+"/", "secure.test", extra)), "tls",
				func(c *Config) { c.TLSConfig = &tls.Config{RootCAs: ca.pool} })
			granted := cs.site.GrantedPaths()
			if !tt.wantAll {
				if len(granted) != 0 {
					t.Errorf("pages served without a client certificate: %v", granted)
				}
				if docSkips(counters)[tt.wantSkipCode] == 0 {
					t.Errorf("handshake failures not counted under %s: skips %v, counters %v", tt.wantSkipCode, docSkips(counters), counters)
				}
				return
			}
			if d := cmp.Diff(allPaths(cs.site), granted); d != "" {
				t.Errorf("pages fetched (-want +got):\n%s\ncounters %v", d, counters)
			}
			cs.mu.Lock()
			cns := map[string]int{}
			for k, v := range cs.cns {
				cns[k] = v
			}
			cs.mu.Unlock()
			if len(cns) != 1 || cns["trawl audit crawler"] == 0 {
				t.Errorf("client certificates seen by the site: %v", cns)
			}
			if proxy != nil {
				st := proxy.Stats()
				if st.Tunnels == 0 || st.Forwarded != 0 || st.Refused != 0 {
					t.Errorf("proxy %+v: want tunnels only", st)
				}
				for h := range st.Hosts {
					if !strings.HasPrefix(h, "secure.test:") {
						t.Errorf("tunnel to %s", h)
					}
				}
			}
		})
	}
}
