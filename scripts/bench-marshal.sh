#!/bin/sh
# bench-marshal.sh: messages/s of trawl's marshal codec and MS-FSCMT message
# codec against CPython's C marshal module on the same bytes, measured in
# one run and printed as one table.
#
# Two messages, both a CMD_UM_URI frame body ({'cm': 25, 'dn': ..., 'pd':
# crawl queue entry}, priority):
#   A  the 515-byte message of internal/marshal/bench_test.go (an empty
#      referrer), timed as Decode (to a Value tree), Reader (to a struct),
#      Append (from a struct) and AppendValue (from a Value);
#   B  the 572-byte body that internal/cmt encodes for its benchmark entry
#      (conn_bench_test.go), timed as cmt.Decoder.Decode (one Decoder
#      reused), cmt.DecodeMessage (a new Decoder per call) and
#      cmt.AppendPayload (into a reused buffer).
# CPython's marshal.loads and marshal.dumps(obj, 2) run on the same bytes in
# python3 and, when found, python2.7 (TRAWL_PYTHON2, python2.7, python2 or
# ~/.pyenv/versions/2.7*).
#
# The machine may be shared: every implementation is timed in each of
# `rounds` rounds, the Go benchmarks and the CPython timings taking turns,
# and the table shows the best round of each (CPython's timeit
# convention) and the median. Only the relative numbers of one run mean
# much on a loaded machine; the load average is printed.
#
# usage: scripts/bench-marshal.sh [benchtime [rounds]]   (default 1s 5)
set -eu
cd "$(dirname "$0")/.."
export PATH="$PATH:/usr/local/go/bin"
benchtime="${1:-1s}"
rounds="${2:-5}"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

TRAWL_MARSHAL_BENCH_OUT="$tmp/a.bin" go test -count=1 -run '^TestURIMessage$' ./internal/marshal >/dev/null
TRAWL_CMT_BENCH_OUT="$tmp/b.bin" go test -count=1 -run '^TestURIFrameBody$' ./internal/cmt >/dev/null
go test -c -o "$tmp/marshal.test" ./internal/marshal
go test -c -o "$tmp/cmt.test" ./internal/cmt

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

# pybench FILE LABEL: one round of marshal.loads / dumps(obj, 2) on FILE,
# each timed over about 0.5 s; prints "label op ns".
pybench='
import sys, timeit, marshal
data = open(sys.argv[1], "rb").read()
label = sys.argv[2]
obj = marshal.loads(data)
for name, stmt in (("loads", lambda: marshal.loads(data)), ("dumps", lambda: marshal.dumps(obj, 2))):
    t = timeit.Timer(stmt)
    n = 1000
    while t.timeit(n) < 0.05:
        n *= 4
    n *= 10
    sys.stdout.write("%s.%s %.1f\n" % (label, name, 1e9 * t.timeit(n) / n))
'

# gobench BINARY PATTERN: one round of the Go benchmarks; prints "name ns allocs".
gobench() {
	"$1" -test.run '^$' -test.bench "$2" -test.benchmem -test.benchtime "$benchtime" -test.count 1 |
		awk '/^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); allocs="";
			for (i=4; i<=NF; i++) if ($(i+1)=="allocs/op") allocs=$i;
			print name, $3, allocs }'
}

load_before="$(uptime)"
r=1
while [ "$r" -le "$rounds" ]; do
	gobench "$tmp/marshal.test" 'URIMessage' >>"$tmp/results.txt"
	gobench "$tmp/cmt.test" '^(BenchmarkDecodeURI|BenchmarkDecodeMessageURI|BenchmarkEncodePayloadURI)$' >>"$tmp/results.txt"
	for py in "$py3" "$py2"; do
		[ -n "$py" ] || continue
		v="$("$py" -c 'import sys; sys.stdout.write("%d.%d.%d" % sys.version_info[:3])')"
		for m in a b; do
			"$py" -c "$pybench" "$tmp/$m.bin" "$m" | while read -r op ns; do
				echo "py$v.$op $ns -"
			done
		done >>"$tmp/results.txt"
	done
	r=$((r + 1))
done
load_after="$(uptime)"

# Rows in table order: key, label.
cat >"$tmp/rows.txt" <<'EOF'
A BenchmarkDecodeURIMessage|trawl marshal.Decode (to Value)
A BenchmarkDecodeURIMessageReader|trawl marshal.Reader (to struct)
A BenchmarkEncodeURIMessage|trawl marshal Append (from struct)
A BenchmarkEncodeURIMessageValue|trawl marshal.AppendValue (from Value)
A PY.a.loads|CPython VER marshal.loads
A PY.a.dumps|CPython VER marshal.dumps
B BenchmarkDecodeURI|trawl cmt Decoder.Decode (reused)
B BenchmarkDecodeMessageURI|trawl cmt.DecodeMessage
B BenchmarkEncodePayloadURI|trawl cmt.AppendPayload
B PY.b.loads|CPython VER marshal.loads
B PY.b.dumps|CPython VER marshal.dumps
EOF

{
	echo "A: marshal bench message (internal/marshal), $(wc -c <"$tmp/a.bin") bytes"
	echo "B: cmt CMD_UM_URI frame body (internal/cmt), $(wc -c <"$tmp/b.bin") bytes"
	echo "$rounds rounds, Go benchtime $benchtime; best and median of the rounds"
	printf '%-3s %-42s %10s %12s %10s %10s\n' msg implementation 'best ns' 'best msgs/s' 'median ns' allocs
	pyvers=""
	for py in "$py3" "$py2"; do
		[ -n "$py" ] || continue
		pyvers="$pyvers $("$py" -c 'import sys; sys.stdout.write("%d.%d.%d" % sys.version_info[:3])')"
	done
	while IFS='|' read -r key label; do
		msg="${key%% *}"
		name="${key#* }"
		case "$name" in
		PY.*)
			for v in $pyvers; do
				echo "$msg|py$v.${name#PY.}|$(echo "$label" | sed "s/VER/$v/")"
			done
			;;
		*) echo "$msg|$name|$label" ;;
		esac
	done <"$tmp/rows.txt" | while IFS='|' read -r msg name label; do
		awk -v name="$name" -v msg="$msg" -v label="$label" '
			$1 == name { ns[n++] = $2; allocs = $3 }
			END {
				if (n == 0) exit
				for (i = 0; i < n; i++) for (j = i + 1; j < n; j++) if (ns[j] < ns[i]) { t = ns[i]; ns[i] = ns[j]; ns[j] = t }
				med = (n % 2) ? ns[int(n/2)] : (ns[n/2-1] + ns[n/2]) / 2
				printf "%-3s %-42s %10.1f %12.0f %10.1f %10s\n", msg, label, ns[0], 1e9/ns[0], med, allocs
			}' "$tmp/results.txt"
	done
	[ -n "$py2" ] || echo "(no python2.7 found: CPython 2.7 rows skipped)"
	echo "load before: $load_before"
	echo "load after:  $load_after"
}
