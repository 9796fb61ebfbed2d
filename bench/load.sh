#!/usr/bin/env bash
# bench/load.sh: trawl's HTTP interface under load (issue 19). Builds trawl,
# crawls the built-in synthetic web (`trawl run --demo --serve`), then holds
# CLIENTS concurrent clients for DURATION against the search API and then
# against the XML-RPC admin API, with the load generator bench/cmd/load.
# Prints one line per mode (requests/s, p50, p99, errors); exits non-zero
# if any request failed.
#
#   bench/load.sh                 # 200 clients, 60 s each
#   CLIENTS=50 DURATION=10s bench/load.sh
set -euo pipefail
cd "$(dirname "$0")/.."
CLIENTS=${CLIENTS:-200}
DURATION=${DURATION:-60s}
PORT=${PORT:-17300}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT

go build -o "$work/trawl" ./cmd/trawl
(cd bench && go build -o "$work/load" ./cmd/load)
"$work/trawl" run --demo --serve --base-port "$PORT" --data "$work/data" >"$work/run.out" 2>"$work/run.err" &
for _ in $(seq 1 600); do
	# --serve prints the summary when the crawl is complete, then keeps serving.
	if grep -q "trawl search" "$work/run.out" "$work/run.err" 2>/dev/null &&
		curl -sf "http://127.0.0.1:$PORT/api/search?q=harvest" >/dev/null; then
		break
	fi
	sleep 0.5
done
curl -sf "http://127.0.0.1:$PORT/api/search?q=harvest" >/dev/null || { echo "load.sh: trawl run did not come up"; cat "$work/run.err"; exit 1; }
echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $(nproc) cores, trawl $(git rev-parse --short HEAD), $CLIENTS clients, $DURATION per mode"
rc=0
"$work/load" -url "http://127.0.0.1:$PORT" -mode search -c "$CLIENTS" -d "$DURATION" || rc=1
"$work/load" -url "http://127.0.0.1:$PORT" -mode xmlrpc -c "$CLIENTS" -d "$DURATION" || rc=1
echo "trawl run's peak resident memory: $(grep VmHWM /proc/$(pgrep -f "$work/trawl run" | head -1)/status | awk '{print $2/1024 " MiB"}')"
exit $rc
