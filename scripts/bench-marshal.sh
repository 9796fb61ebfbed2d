#!/bin/sh
# bench-marshal.sh: messages/s of trawl's marshal codec against CPython's C
# marshal module on the same bytes: a typical CMD_UM_URI frame payload
# (internal/marshal/bench_test.go). Runs the Go benchmarks, then
# marshal.loads/dumps under timeit in python3 and, when found, python2.7
# (TRAWL_PYTHON2, python2.7, python2 or ~/.pyenv/versions/2.7*), and prints
# one table.
#
# usage: scripts/bench-marshal.sh [benchtime]   (default 2s)
set -eu
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
benchtime="${1:-2s}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

TRAWL_MARSHAL_BENCH_OUT="$tmp/msg.bin" go test -count=1 -run '^TestURIMessage$' ./internal/marshal >/dev/null
go test -count=1 -run '^$' -bench 'URIMessage' -benchmem -benchtime "$benchtime" ./internal/marshal >"$tmp/go.txt"

pyver() { "$1" -c 'import sys; sys.stdout.write(str(sys.version_info[0]))' 2>/dev/null || true; }
py3=""
for c in python3 /usr/bin/python3; do
	if [ "$(pyver "$c")" = 3 ]; then py3="$c"; break; fi
done
py2=""
for c in "${TRAWL_PYTHON2:-}" python2.7 python2 "$HOME"/.pyenv/versions/2.7*/bin/python2.7; do
	[ -n "$c" ] || continue
	if [ "$(pyver "$c")" = 2 ]; then py2="$c"; break; fi
done

pybench='
import sys, timeit, marshal
data = open(sys.argv[1], "rb").read()
obj = marshal.loads(data)
redump = marshal.dumps(obj, 2)
if redump != data:
    sys.stderr.write("note: %s re-dumps the value to different bytes (%d, not %d: interned strings as t/R)\n" % (sys.version.split()[0], len(redump), len(data)))
for name, stmt in (("loads", lambda: marshal.loads(data)), ("dumps", lambda: marshal.dumps(obj, 2))):
    t = timeit.Timer(stmt)
    n, _ = t.autorange() if hasattr(t, "autorange") else (200000, 0)
    best = min(t.repeat(5, n)) / n
    sys.stdout.write("%s %.1f\n" % (name, 1e9 * best))
'

{
	echo "message: CMD_UM_URI payload, $(wc -c <"$tmp/msg.bin") bytes"
	printf '%-44s %12s %14s %10s\n' implementation ns/msg messages/s allocs/msg
	awk '/^Benchmark/ {
		name=$1; sub(/-[0-9]+$/, "", name); ns=$3; allocs="";
		for (i=4; i<=NF; i++) if ($(i+1)=="allocs/op") allocs=$i;
		label["BenchmarkDecodeURIMessage"]="trawl Decode (to Value)";
		label["BenchmarkDecodeURIMessageReader"]="trawl Reader (to struct)";
		label["BenchmarkEncodeURIMessage"]="trawl Append (from struct)";
		label["BenchmarkEncodeURIMessageValue"]="trawl AppendValue (from Value)";
		printf "%-44s %12.1f %14.0f %10s\n", label[name], ns, 1e9/ns, allocs }' "$tmp/go.txt"
	for py in "$py3" "$py2"; do
		[ -n "$py" ] || continue
		v="$("$py" -c 'import sys; sys.stdout.write("%d.%d.%d" % sys.version_info[:3])')"
		"$py" -c "$pybench" "$tmp/msg.bin" | while read -r op ns; do
			printf '%-44s %12s %14.0f %10s\n' "CPython $v marshal.$op" "$ns" "$(awk -v ns="$ns" 'BEGIN { printf "%.0f", 1e9 / ns }')" "-"
		done
	done
	[ -n "$py2" ] || echo "(no python2.7 found: CPython 2.7 rows skipped)"
}
