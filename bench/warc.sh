#!/usr/bin/env bash
# bench/warc.sh: trawl run --demo (20 sites x 100 pages, crawl only) with WARC
# writing off and on, alternating, three times each, fresh data directories;
# one line per run. TRAWL=path/to/trawl (default: trawl on PATH).
T=${TRAWL:-trawl}; B=${BENCH_DIR:-/tmp/bench-warc}
rm -rf "$B"; mkdir -p "$B"
for i in 1 2 3; do
  for mode in off on; do
    extra=(); [ $mode = on ] && extra=(--warc "$B/warc-$i")
    /usr/bin/time -f "%U %S %M" -o "$B/time" "$T" run --demo --demo-hosts 20 --demo-pages 100 --data "$B/data-$mode-$i" \
      --listen off --progress off --index=false "${extra[@]}" > "$B/out" 2>/dev/null
    s=$(grep '^crawl summary' "$B/out"); n=$(awk '/requests answered/{print $3}' "$B/out")
    w=$(grep '^  WARC' "$B/out" | sed 's/^  WARC *//'); read u sy m < "$B/time"
    sz=$( [ $mode = on ] && du -sb "$B/warc-$i" | cut -f1 || echo 0)
    echo "run $i warc=$mode: $s, $n requests, cpu ${u}s+${sy}s, maxrss ${m}KB, warc bytes $sz ${w:+($w)}"
  done
done
