#!/bin/bash
# run-node-asks.sh: requests per independent read of other nodes' logged bytes (issue 68,
# doc/scaling.md limit 6), on the emulated cluster at 2, 4 and 8 nodes of one rank.
#
# For each size it brings the cluster up (scripts/cluster.sh, the PFS a directory every node
# sees), runs test/mpi/t_nodeasks (its first file: every rank logs one 4 KiB block, then reads
# every other rank's block; its second: blocks written past the end in turn, each read at once
# by every rank) through test/mpi/run-diff.sh with bblog_stats, and prints, per file, the
# reads, the asks of other nodes, and the requests they sent, from the statistics of the bblog
# leg. A driver without the other_node_requests counter asked every other node at each ask:
# requests = asks x (N - 1).
#
# Usage: bench/run-node-asks.sh [--nodes "2 4 8"]   (root; takes the cluster down at the end)
# Environment: BBLOG_ENV_SCRIPT, the MPI (default /var/cache/bblog/current/bin/bblog-env.sh).
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
nodes="2 4 8"
[ "${1:-}" = --nodes ] && nodes=$2
cluster=$here/scripts/cluster.sh
work=$(mktemp -d /var/tmp/bblog-node-asks.XXXXXX)

printf '%-6s %-7s %6s %6s %9s %13s\n' nodes file reads asks requests requests/read
for n in $nodes; do
    hosts=$(seq -s, -f "n%g:1" 1 "$n")
    "$cluster" down >/dev/null 2>&1
    "$cluster" up "$n" >"$work/up.$n.log" 2>&1 || { echo "cluster up $n failed: $work/up.$n.log"; exit 1; }
    MPITEST_CLUSTER=$hosts MPITEST_KEEP=1 "$here/test/mpi/run-diff.sh" 't_nodeasks*' \
        >"$work/diff.$n.log" 2>&1
    rc=$?
    dir=$(grep -o '/[^ ]*bblog-mpitest[.][A-Za-z0-9]*' "$work/diff.$n.log" | tail -n 1)
    python3 - "$dir/t_nodeasks[stats].$n/bblog.stats" "$n" <<'PY'
import json, sys
text, dec, pos, n = open(sys.argv[1]).read(), json.JSONDecoder(), 0, int(sys.argv[2])
while pos < len(text):
    rest = text[pos:].lstrip()
    if not rest:
        break
    o, end = dec.raw_decode(rest)
    pos = len(text) - len(rest) + end
    if not o.get("other_node_asks"):
        continue
    asks = o["other_node_asks"]
    reqs = o.get("other_node_requests", asks * (n - 1))
    print("%-6d %-7s %6d %6d %9d %13.2f" % (n, o["file"].rsplit(".", 1)[1], o["read_calls"],
                                              asks, reqs, reqs / o["read_calls"]))
PY
    [ "$rc" = 0 ] || echo "run-diff failed at $n nodes: $work/diff.$n.log"
done
"$cluster" down >/dev/null 2>&1
echo "logs: $work"
