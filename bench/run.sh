#!/usr/bin/env bash
# Crawler comparison: trawl against Colly v2, Scrapy, wget and httrack on the
# same `trawl webfarm`, against wrk's ceiling, plus a memory-scale run. Writes
# the "Crawler comparison" section of docs/benchmarks.md. Not part of CI:
# it needs root (apt-get, /etc/hosts) and takes about 20 minutes.
#
#   bench/run.sh                 # everything
#   BENCH_ONLY=trawl,wget bench/run.sh
#   TRAWL_CRAWL_ONLY_ARGS='...'  # `trawl run` flags of the crawl-alone row (default --index=false)
#
# Extra arguments are passed to the orchestrator (go run ./cmd/bench --help).
set -euo pipefail

BENCH_DIR=$(cd "$(dirname "$0")" && pwd)
ROOT=$(cd "$BENCH_DIR/.." && pwd)
WORK=${BENCH_WORK:-/tmp/trawl-bench}
PORT=${BENCH_PORT:-18090}
HOSTS=${BENCH_HOSTS:-200}
PAGES=${BENCH_PAGES:-100000}
export PATH="/usr/local/go/bin:$PATH"

mkdir -p "$WORK"

# 1. The peers, from Debian.
need=()
for t in wget:wget httrack:httrack wrk:wrk /usr/bin/scrapy:python3-scrapy /usr/bin/time:time; do
	command -v "${t%%:*}" >/dev/null 2>&1 || need+=("${t#*:}")
done
if ((${#need[@]})); then
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# 2. Binaries. trawl is measured two ways with one binary: the crawl alone
# (TRAWL_CRAWL_ONLY_ARGS, default --index=false: no feeding or indexing) and
# the full pipeline (feeding and bleve indexing on).
(cd "$ROOT" && go build -o "$WORK/trawl" ./cmd/trawl)
(cd "$BENCH_DIR" && go build -o "$WORK/collycrawl" ./cmd/collycrawl && go build -o "$WORK/bench" ./cmd/bench)
crawl_bin="$WORK/trawl"
crawl_args=${TRAWL_CRAWL_ONLY_ARGS:---index=false}
head=$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)
dirty=$(git -C "$ROOT" status --porcelain -- . ':!docs/benchmarks.md' 2>/dev/null | grep -c . || true)
note="trawl at HEAD $head"
if ((dirty)); then note="$note plus $dirty changed or new files"; fi
note="$note; crawl alone: \`trawl run $crawl_args\`; full pipeline: \`trawl run\` (feeding and indexing)"

# 3. The peers that use the system resolver (Scrapy, wget, httrack) need the
# farm's names: add them to /etc/hosts for the run, between markers, and take
# them out again on any exit.
rm -f "$WORK/etc-hosts.farm"
"$WORK/trawl" webfarm --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" --hosts-file "$WORK/etc-hosts.farm" >/dev/null 2>&1 &
farm_pid=$!
for _ in $(seq 300); do [[ -s "$WORK/etc-hosts.farm" ]] && break; sleep 0.1; done
kill -TERM "$farm_pid" 2>/dev/null || true
wait "$farm_pid" 2>/dev/null || true
restore_hosts() {
	awk '/^# trawl-bench begin/{skip=1} !skip{print} /^# trawl-bench end/{skip=0}' /etc/hosts >"$WORK/hosts.restored"
	cat "$WORK/hosts.restored" >/etc/hosts
}
restore_hosts
trap restore_hosts EXIT
{
	echo "# trawl-bench begin"
	grep -v '^#' "$WORK/etc-hosts.farm"
	echo "# trawl-bench end"
} >>/etc/hosts

# 4. Run and write docs/benchmarks.md.
"$WORK/bench" --trawl "$WORK/trawl" --trawl-crawl "$crawl_bin" --trawl-crawl-args "$crawl_args" \
	--trawl-full "$WORK/trawl" --trawl-note "$note" \
	--colly "$WORK/collycrawl" --scrapy-spider "$BENCH_DIR/scrapy/farmspider.py" \
	--work "$WORK" --hosts "$HOSTS" --pages "$PAGES" --port "$PORT" \
	--only "${BENCH_ONLY:-}" --docs "$ROOT/docs/benchmarks.md" --command "bench/run.sh${*:+ $*}" "$@"
