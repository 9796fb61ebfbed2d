#!/usr/bin/env bash
# bench/chaos.sh: the chaos test (internal/multinode/clustertest TestChaos)
# RUNS times in a row, each killing processes for DURATION, with a one-line
# summary per run (seed, kills, repeated requests and their bound, documents
# in the index, result). Exits non-zero
# if any run failed; the failed runs' logs stay in the printed directory.
#
#   bench/chaos.sh                      # 10 runs of 20 s of chaos
#   RUNS=3 DURATION=60s bench/chaos.sh
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-10}
DURATION=${DURATION:-20s}
out=$(mktemp -d /tmp/trawl-chaos.XXXXXX)
go test -c -o "$out/clustertest.test" ./internal/multinode/clustertest
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, trawl $(git rev-parse --short HEAD), $RUNS runs of $DURATION chaos; logs in $out"
failed=0
for i in $(seq 1 "$RUNS"); do
	log="$out/run$i.log"
	start=$(date +%s)
	if (cd internal/multinode/clustertest && TRAWL_CHAOS_DURATION=$DURATION "$out/clustertest.test" -test.run '^TestChaos$' -test.v -test.count=1) >"$log" 2>&1; then
		result=PASS
	else
		result=FAIL
		failed=$((failed + 1))
	fi
	seed=$(grep -o 'chaos seed [0-9]*' "$log" | head -1 || true)
	kills=$(grep -o 'chaos over: .*' "$log" | head -1 || true)
	reps=$(grep -o '[0-9]* requests repeated ([0-9]* of them robots.txt).*bound on page repeats [0-9]*' "$log" | head -1 || true)
	index=$(grep -o 'index equals the stores: [0-9]* documents' "$log" | head -1 || true)
	echo "run $i: $result in $(($(date +%s) - start)) s; $seed; $kills; $reps; $index"
	[ "$result" = FAIL ] || rm -f "$log"
done 2>&1
echo "$((RUNS - failed)) of $RUNS runs passed"
[ "$failed" -eq 0 ]
