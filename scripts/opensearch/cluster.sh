#!/usr/bin/env bash
# cluster.sh: a two-node OpenSearch 2.19 cluster on loopback from the test
# launcher in testdata/opensearch (Maven Central artifacts only), for
# benchmarks and trying `trawl run --index opensearch://...` by hand.
#
#   scripts/opensearch/cluster.sh start DIR [HTTP_PORT]   nodes n1 (HTTP_PORT, default 19200)
#                                                        and n2 (HTTP_PORT+1); transport +100
#   scripts/opensearch/cluster.sh stop DIR
#
# Then: trawl run --index opensearch://127.0.0.1:19200,127.0.0.1:19201/crawl ...
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { sed -n 2,10p "$0" >&2; exit 2; }
case "$cmd" in
start)
	port=${3:-19200}
	pom=$root/testdata/opensearch/pom.xml
	cpfile=$root/testdata/opensearch/target/classpath.txt
	[ -s "$cpfile" ] || mvn -q -B -f "$pom" dependency:go-offline
	mvn -q -o -B -f "$pom" compile dependency:build-classpath -Dmdep.outputFile="$cpfile"
	cp=$root/testdata/opensearch/target/classes:$(cat "$cpfile")
	seeds=127.0.0.1:$((port + 100)),127.0.0.1:$((port + 101))
	mkdir -p "$dir"
	for i in 1 2; do
		roles=()
		[ $i = 2 ] && roles=(node.roles=data,ingest)
		setsid java -Xms512m -Xmx512m -XX:+UseSerialGC -Xss1m -cp "$cp" trawl.opensearch.TestNode \
			path.home="$dir/n$i" cluster.name=trawl node.name=n$i network.host=127.0.0.1 \
			http.port=$((port + i - 1)) transport.port=$((port + 99 + i)) discovery.seed_hosts="$seeds" \
			cluster.initial_cluster_manager_nodes=n1 node.processors=1 \
			cluster.routing.allocation.disk.threshold_enabled=false "${roles[@]}" \
			>"$dir/n$i.log" 2>&1 </dev/null &
		echo $! >"$dir/n$i.pid"
	done
	for _ in $(seq 180); do
		if curl -fs "http://127.0.0.1:$port/_cluster/health?wait_for_nodes=2&timeout=1s" >/dev/null 2>&1; then
			echo "cluster up: opensearch://127.0.0.1:$port,127.0.0.1:$((port + 1))/INDEX"
			exit 0
		fi
		sleep 1
	done
	echo "cluster.sh: the cluster did not come up; see $dir/n1.log and $dir/n2.log" >&2
	exit 1
	;;
stop)
	for i in 1 2; do
		[ -f "$dir/n$i.pid" ] && kill "$(cat "$dir/n$i.pid")" 2>/dev/null || true
		rm -f "$dir/n$i.pid"
	done
	;;
*)
	sed -n 2,10p "$0" >&2
	exit 2
	;;
esac
