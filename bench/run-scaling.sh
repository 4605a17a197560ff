#!/bin/bash
# run-scaling.sh - the figures behind the scaling notes (bench/results/cluster.md): bench/scaling.c
# on the emulated cluster (scripts/cluster.sh) at 1, 2 and 4 nodes, with bblog_stats, one
# Markdown row per run: burst-buffer files per node while the file is open, and the largest
# per-process index, drain piece list and piece exchange (one round, and in all), drains,
# rounds, and the sync's time. Then, per shape, the recovery of a job that died after a
# bblog_sync=bb sync (scaling --crash), both ways tools/bblog-slurm-epilog can take: each
# node's logs copied to the PFS and one `bblog replay` there (into a copy of the file), both
# timed; then in parts (`bblog replay --parts`, every node its own logs in place, all nodes at
# once, --min-run 0: in parts whatever the runs), timed from start to the last node's end, with
# the bytes of the parts, the records of the other nodes' parts each node read (the blocks near
# its own bytes) against all their records, and whether the file equals the gathered replay's.
# --recovery: only the recovery. --segmented: each rank's pieces one after the other instead.
# With --coord instead: a rank's coordination from open to close (bench/coord.c under the
# counter test/apps/bbcount.c, as bench/run-coord.sh counts it on one machine: 32 strided
# collective writes of 4 KiB per rank) through ufs: and bblog: at each shape (default 2x4 4x4
# 8x4), one Markdown row per run.
#
# Usage: bench/run-scaling.sh [--shapes "1x4 2x2 4x1 1x8 2x4 4x2"] [--pieces N] [--size BYTES]
#                             [--shared-bb] [--coord] [--recovery] [--segmented]
#   every rank writes N pieces (default 1024) of BYTES (default 4096), strided across ranks,
#   collectively and, in a second run, independently; --shared-bb: one burst buffer for all
#   nodes (its files are then counted once, for all nodes)
# Environment: BBLOG_ENV_SCRIPT (default /var/cache/bblog/current/bin/bblog-env.sh), BBLOG_TOOL
# (the bblog command; default tools/bblog of the build directory, $PWD),
# CLUSTER_ROOT and CLUSTER_PFX as for scripts/cluster.sh.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
cluster=$here/scripts/cluster.sh
shapes="1x4 2x2 4x1 1x8 2x4 4x2"
pieces=1024
size=4096
shared=
coord=
recovery_only=
layout=
while [ $# -gt 0 ]; do
    case $1 in
    --shapes) shapes=$2; shift 2 ;;
    --pieces) pieces=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --shared-bb) shared=--shared-bb; shift ;;
    --coord) coord=1; [ "$shapes" = "1x4 2x2 4x1 1x8 2x4 4x2" ] && shapes="2x4 4x4 8x4"; shift ;;
    --recovery) recovery_only=1; shift ;;
    --segmented) layout=--segmented; shift ;;
    *) echo "run-scaling: unknown argument $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=/dev/null
. "${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}"
BBLOG_TOOL=${BBLOG_TOOL:-$PWD/tools/bblog}
[ -x "$BBLOG_TOOL" ] || { echo "run-scaling: no bblog tool: $BBLOG_TOOL (set BBLOG_TOOL)" >&2; exit 1; }
bin=$(mktemp -d /var/tmp/bblog-scaling.XXXXXX)
mpicc -O2 -o "$bin/scaling" "$here/bench/scaling.c"
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$bin"' EXIT
if [ -n "$coord" ]; then
    mpicc -O2 -o "$bin/coord" "$here/bench/coord.c"
    mpicc -O2 -shared -fPIC -o "$bin/bbcount.so" "$here/test/apps/bbcount.c" -ldl
    echo "| nodes x ranks | fs | coord. bytes, median rank | largest | coll. calls, median | bblog's messages, median |"
    echo "| --- | --- | --- | --- | --- | --- |"
    for shape in $shapes; do
        nodes=${shape%x*} per=${shape#*x}
        hosts=
        for ((i = 1; i <= nodes; i++)); do hosts=${hosts:+$hosts,}n$i:$per; done
        "$cluster" down >/dev/null 2>&1 || true
        "$cluster" up "$nodes" $shared >/dev/null
        eval "$("$cluster" env)"
        for fs in ufs bblog; do
            for n in $CLUSTER_NODES; do "$cluster" exec "$n" mkdir -p "$CLUSTER_BB/coord"; done
            BBLOG_DIR=$CLUSTER_BB/coord "$cluster" mpiexec -hosts "$hosts" -n $((nodes * per)) \
                -genv LD_PRELOAD "$bin/bbcount.so" "$bin/coord" 32 4096 \
                "$fs:$CLUSTER_PFS/coord.dat" >"$bin/log" 2>&1 ||
                { tail -n 5 "$bin/log" >&2; exit 1; }
            "$cluster" exec n1 rm -f "$CLUSTER_PFS/coord.dat"
            python3 - "$bin/log" $((nodes * per)) "$shape" "$fs" <<'PYEOF'
import re, statistics, sys
rows = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in open(sys.argv[1]) if l.startswith("bbcount ")]
if len(rows) != int(sys.argv[2]):
    sys.exit("run-scaling: %d lines of counts for %s processes" % (len(rows), sys.argv[2]))
for r in rows:
    r["coord"] = int(r["bytes"]) + int(r["ctlbytes"])
med = lambda k: int(statistics.median(int(r[k]) for r in rows))
print("| %s | %s | %d | %d | %d | %d |" % (sys.argv[3], sys.argv[4], med("coord"),
      max(r["coord"] for r in rows), med("coll"), med("ctl")))
PYEOF
        done
    done
    exit 0
fi
[ -n "$recovery_only" ] || {
    echo "| nodes x ranks | writes | BB files per node | index B | piece list B | exchange B (round) | exchange B (all) | drains | rounds | sync s |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
}
up=
for shape in $shapes; do
    nodes=${shape%x*} per=${shape#*x}
    hosts=
    for ((i = 1; i <= nodes; i++)); do hosts=${hosts:+$hosts,}n$i:$per; done
    if [ "$up" != "$nodes" ]; then
        "$cluster" down >/dev/null 2>&1 || true
        "$cluster" up "$nodes" --pfs gluster $shared >/dev/null
        up=$nodes
    fi
    eval "$("$cluster" env)"
    for mode in ${recovery_only:+none} coll indep; do
        [ "$mode" = none ] && break
        bbdir=$CLUSTER_BB/scaling
        for n in $CLUSTER_NODES; do "$cluster" exec "$n" mkdir -p "$bbdir"; done
        stats=$bin/stats.json
        rm -f "$stats"
        out=$(BBLOG_DIR=$bbdir BBLOG_STATS=$stats "$cluster" mpiexec -hosts "$hosts" \
            -n $((nodes * per)) "$bin/scaling" $([ $mode = indep ] && echo --indep) $layout \
            "$pieces" "$size" "bblog:$CLUSTER_PFS/scaling.dat" "$bbdir" | grep '^{')
        "$cluster" exec n1 rm -f "$CLUSTER_PFS/scaling.dat"
        python3 - "$out" "$stats" "$shape" "$mode" <<'PYEOF'
import json, sys
o = json.loads(sys.argv[1])
s = json.loads(open(sys.argv[2]).read().splitlines()[-1])
files = o["bb_files_per_node_min"], o["bb_files_per_node_max"]
print("| %s | %s | %s | %d | %d | %d | %d | %d | %d | %.3f |" % (
    sys.argv[3], "collective" if sys.argv[4] == "coll" else "independent",
    files[0] if files[0] == files[1] else "%d-%d" % files,
    s["max_index_bytes"], s["max_plan_bytes"], s["max_exchange_buffer_bytes"],
    s["max_exchange_bytes"], s["drains"], s["rounds"], o["sync_s"]))
PYEOF
    done
    # Recovery: the logs of a killed job, gathered on the PFS and replayed once.
    bbdir=$CLUSTER_BB/scaling-crash
    for n in $CLUSTER_NODES; do "$cluster" exec "$n" sh -c "rm -rf $bbdir && mkdir -p $bbdir"; done
    BBLOG_DIR=$bbdir BBLOG_SYNC=bb "$cluster" mpiexec -hosts "$hosts" -n $((nodes * per)) \
        "$bin/scaling" --crash $layout "$pieces" "$size" "bblog:$CLUSTER_PFS/scaling.dat" "$bbdir" \
        >/dev/null 2>&1 || true
    g=$CLUSTER_PFS/scaling-gather
    f=$CLUSTER_PFS/scaling.dat
    t0=$(date +%s.%N)
    "$cluster" exec n1 mkdir -p "$g"
    for n in $CLUSTER_NODES; do "$cluster" exec "$n" cp -a "$bbdir/." "$g/"; done
    t1=$(date +%s.%N)
    "$cluster" exec n1 sh -c "rm -f $f.ref; [ ! -e $f ] || cp $f $f.ref"
    rep=$("$cluster" exec n1 "$BBLOG_TOOL" replay "$g" --file "$f" --output "$f.ref" 2>&1 |
        grep ' records (' | tail -n 1)
    t2=$(date +%s.%N)
    # In parts: the job id the logs carry (bblog ls), every node at once.
    job=$("$BBLOG_TOOL" ls "$g" | sed -n 's/^file .* job \([^ ]*\) set .*/\1/p' | head -n 1)
    pids=()
    for n in $CLUSTER_NODES; do
        "$cluster" exec "$n" "$BBLOG_TOOL" replay "$bbdir" --job "$job" --file "$f" \
            --parts "$g/parts" --node "$n" --wait 600 --min-run 0 >"$bin/parts.$n" 2>&1 &
        pids+=($!)
    done
    for p in "${pids[@]}"; do wait "$p" || { cat "$bin"/parts.* >&2; exit 1; }; done
    t3=$(date +%s.%N)
    same=no
    cmp -s "$f" "$f.ref" && same=yes
    pbytes=$(cat "$g"/parts/*.part | wc -c)
    # "the other nodes' parts: X of their Y records read", summed over the nodes
    pread=$(cat "$bin"/parts.* | sed -n "s/.*other nodes' parts: \([0-9]*\) of their \([0-9]*\) .*/\1 \2/p" |
        awk '{r += $1; a += $2} END {printf "%d of %d", r, a}')
    "$cluster" exec n1 rm -rf "$g" "$f" "$f.ref"
    recovery="${recovery:-}
| $shape | $(echo "$rep" | sed -n 's/.*replayed \([0-9]*\) records (\([0-9]*\) bytes).*/\1 | \2/p') | $(python3 -c "print('%.2f | %.2f | %.2f' % ($t1 - $t0, $t2 - $t1, $t3 - $t2))") | $pbytes | $pread | $same |"
done
echo
echo "| nodes x ranks | records | bytes | gather s | replay s | in parts s | part bytes | others' records read | same file |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- | --- |$recovery"
