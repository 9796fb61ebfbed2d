#!/bin/sh
# make-test-ca.sh DIR [NAME...]: a test certificate authority for trawl's
# mutual TLS (docs/security.md), made with openssl in DIR:
#   DIR/ca.pem, DIR/ca.key          the authority (10 years)
#   DIR/NAME.pem, DIR/NAME.key      one certificate per NAME (default: "peer"),
#                                   for 127.0.0.1, ::1, localhost and NAME,
#                                   usable as server and as client
# Each trawl process then runs with
#   --tls-cert DIR/NAME.pem --tls-key DIR/NAME.key --tls-ca DIR/ca.pem
# This is for tests and trials: for a real deployment, use your own PKI and
# put each host's names in its certificate.
set -eu
if [ $# -lt 1 ]; then
	echo "usage: $0 DIR [NAME...]" >&2
	exit 2
fi
dir=$1
shift
[ $# -gt 0 ] || set -- peer
mkdir -p "$dir"
cd "$dir"
if [ ! -f ca.pem ]; then
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 3650 \
		-subj "/CN=trawl test CA" -keyout ca.key -out ca.pem \
		-addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" 2>/dev/null
fi
for name in "$@"; do
	cat >"$name.ext" <<EXT
basicConstraints=CA:FALSE
keyUsage=critical,digitalSignature
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=IP:127.0.0.1,IP:::1,DNS:localhost,DNS:$name
EXT
	openssl req -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -subj "/CN=$name" \
		-keyout "$name.key" -out "$name.csr" 2>/dev/null
	openssl x509 -req -in "$name.csr" -CA ca.pem -CAkey ca.key -CAcreateserial -days 825 \
		-extfile "$name.ext" -out "$name.pem" 2>/dev/null
	rm -f "$name.csr" "$name.ext"
	chmod 600 "$name.key"
	echo "$dir/$name.pem $dir/$name.key (CA $dir/ca.pem)"
done
