package fetch

import (
	"crypto/tls"
	"errors"
	"fmt"
)

// LoadClientCertificate loads the client certificate of key_file and
// cert_file (MS-FSCCFG): PEM files, the certificate chain in certFile and
// its private key in keyFile. With keyFile empty, certFile must hold both
// (a combined PEM file); a key without a certificate is an error.
func LoadClientCertificate(certFile, keyFile string) (tls.Certificate, error) {
	switch {
	case certFile == "" && keyFile == "":
		return tls.Certificate{}, errors.New("fetch: no client certificate file")
	case certFile == "":
		return tls.Certificate{}, fmt.Errorf("fetch: key_file %s given without cert_file", keyFile)
	case keyFile == "":
		keyFile = certFile
	}
	c, err := tls.LoadX509KeyPair(certFile, keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("fetch: client certificate %s, key %s: %w", certFile, keyFile, err)
	}
	return c, nil
}
