#!/usr/bin/env bash
# test.sh: install what trawl's tests need on a fresh Debian machine, then run
# every test. Usage: ./test.sh [go test flags...]   (default: -race ./...)
#
#   FUZZTIME=30s ./test.sh   also runs each fuzz target for that long (default: seeds only).
set -euo pipefail
cd "$(dirname "$0")"
export PATH="$PATH:/usr/local/go/bin:$HOME/go/bin"

need=()
command -v python3 >/dev/null 2>&1 || need+=(python3)
# pip installs the Python packages below (warcio, pywb).
python3 -m pip --version >/dev/null 2>&1 || need+=(python3-pip)
# The search page is checked in a real headless browser.
command -v chromium >/dev/null 2>&1 || need+=(chromium)
# wget writes the peer WARC the WARC tests compare trawl's with.
command -v wget >/dev/null 2>&1 || need+=(wget)
# The full-disk tests mount a size-limited tmpfs (as root) with mount(8).
command -v mount >/dev/null 2>&1 || need+=(mount)
# scripts/make-test-ca.sh (mutual TLS) is tested with openssl.
command -v openssl >/dev/null 2>&1 || need+=(openssl)
# The content distributors' registry is also tested on etcd.
command -v etcd >/dev/null 2>&1 || need+=(etcd-server)
# The web analyzer's static rank is checked against python-igraph's PageRank.
{ python3 -c 'import igraph' || /usr/bin/python3 -c 'import igraph'; } >/dev/null 2>&1 || need+=(python3-igraph)
# The OpenSearch feeding tests start a two-node OpenSearch 2.19 cluster from
# Maven Central artifacts (testdata/opensearch), built with Maven on Java 17.
command -v javac >/dev/null 2>&1 || need+=(openjdk-17-jdk-headless)
command -v mvn >/dev/null 2>&1 || need+=(maven)
if [ ${#need[@]} -gt 0 ]; then
	echo "test.sh: installing ${need[*]}" >&2
	if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
	$SUDO apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi

# Python 2.7 is the reference marshal implementation when the machine has one
# (Debian 12 does not package it; pyenv images do).
if [ -z "${TRAWL_PYTHON2:-}" ]; then
	for p in python2.7 python2 "$HOME"/.pyenv/versions/2.7*/bin/python2.7; do
		if command -v "$p" >/dev/null 2>&1 && "$p" -c 'import marshal' >/dev/null 2>&1; then
			TRAWL_PYTHON2=$(command -v "$p"); export TRAWL_PYTHON2; break
		fi
	done
fi
echo "test.sh: python3=$(command -v python3) python2=${TRAWL_PYTHON2:-none}" >&2

# Python packages the WARC tests check trawl's archives with: warcio (check,
# index) and pywb (wb-manager, wayback: replay).
python3 -c 'import warcio' >/dev/null 2>&1 || python3 -m pip install --break-system-packages -q warcio
python3 -c 'import pywb' >/dev/null 2>&1 || python3 -m pip install --break-system-packages -q pywb

# The OpenSearch test node's launcher: its artifacts are fetched from Maven
# Central once here; internal/opensearch's tests build it offline.
[ -s testdata/opensearch/target/classpath.txt ] ||
	mvn -q -B -f testdata/opensearch/pom.xml dependency:go-offline compile dependency:build-classpath \
		-Dmdep.outputFile=target/classpath.txt

# Files CI keeps (the status page's screenshot): $TRAWL_ARTIFACTS, by default
# ./artifacts at the top of the checkout.
export TRAWL_ARTIFACTS="${TRAWL_ARTIFACTS:-$PWD/artifacts}"
mkdir -p "$TRAWL_ARTIFACTS"
echo "test.sh: artifacts in $TRAWL_ARTIFACTS" >&2

unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "test.sh: gofmt needed on:" >&2; echo "$unformatted" >&2; exit 1
fi
go vet ./...

if [ $# -eq 0 ]; then
	# A package binary may take longer than go test's default 10 minutes on a
	# loaded 2-core machine (internal/nodesched is the longest).
	go test -race -timeout 30m ./...
	# The 20,000-page crawl at full size (under -race it runs smaller).
	go test -count=1 -run '^TestCrawlBig$' ./internal/nodesched
	# pywb's replay of trawl's WARC checked in headless Chromium, alone.
	TRAWL_PYWB=1 go test -count=1 -run '^TestRunWARC$' ./cmd/trawl
	# The dmake build over a 200 MB table on a master and three worker processes.
	TRAWL_DMAKE_BIG=1 go test -count=1 -run '^TestBuildOnThreeWorkers$' ./internal/dmake
else
	go test "$@"
fi

if [ -n "${FUZZTIME:-}" ]; then
	for pkg in $(go list ./...); do
		for f in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
			echo "test.sh: fuzzing $pkg $f for $FUZZTIME" >&2
			go test -run '^$' -fuzz "^$f\$" -fuzztime "$FUZZTIME" "$pkg"
		done
	done
fi
