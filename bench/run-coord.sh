#!/bin/bash
# run-coord.sh - how a rank's coordination grows with the job (bench/coord.c under the counter
# test/apps/bbcount.c): each rank writes COUNT strided pieces of SIZE bytes collectively (fixed
# work per rank), from MPI_File_open to MPI_File_close, through ufs: and bblog:, at each
# process count, all on this machine (oversubscribed), bblog's nodes cut into pseudo-nodes of
# NODE ranks (BBLOG_DEBUG_NODE_SIZE). One Markdown row per run: the median and largest
# coordination bytes a rank received (what its collective calls delivered to it, and bblog's own
# point-to-point messages: its sparse exchanges and sync notes), its collective calls, bblog's
# messages and their bytes, and the median bytes of the other point-to-point calls (the
# two-phase write's data, not coordination); then, per file system, the median's growth from
# the fewest to the most processes.
#
# Usage: bench/run-coord.sh [--procs "4 8 16 32 64"] [--node 4] [--count 32] [--size 4096]
#                           [--indep] [--fs "ufs bblog"]
# Environment: BBLOG_ENV_SCRIPT (default /var/cache/bblog/current/bin/bblog-env.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
procs="4 8 16 32 64"
node=4
count=32
size=4096
indep=
fss="ufs bblog"
while [ $# -gt 0 ]; do
    case $1 in
    --procs) procs=$2; shift 2 ;;
    --node) node=$2; shift 2 ;;
    --count) count=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --indep) indep=--indep; shift ;;
    --fs) fss=$2; shift 2 ;;
    *) echo "run-coord: unknown argument $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=/dev/null
. "${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}"
work=$(mktemp -d /var/tmp/bblog-coord.XXXXXX)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/coord" "$here/bench/coord.c"
mpicc -O2 -shared -fPIC -o "$work/bbcount.so" "$here/test/apps/bbcount.c" -ldl

echo "Each rank: $count pieces of $size B, ${indep:+independent, }strided; pseudo-nodes of $node"
echo
echo "| procs | fs | coord. bytes, median rank | largest | coll. calls, median | bblog's messages, median | their bytes, median | p2p data bytes, median |"
echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
for p in $procs; do
    for fs in $fss; do
        rm -rf "$work/bb" "$work/out"
        mkdir -p "$work/bb"
        if ! timeout 600 mpiexec -launcher fork -n "$p" -genv LD_PRELOAD "$work/bbcount.so" \
            -genv BBLOG_DIR "$work/bb" -genv BBLOG_DEBUG_NODE_SIZE "$node" \
            "$work/coord" $indep "$count" "$size" "$fs:$work/out" >"$work/log" 2>&1; then
            echo "run-coord: $p processes through $fs: failed" >&2
            tail -n 5 "$work/log" >&2
            exit 1
        fi
        python3 - "$work/log" "$p" "$fs" <<'PY' | tee -a "$work/rows"
import re, statistics, sys
rows = [dict(re.findall(r"(\w+)=(\d+)", l)) for l in open(sys.argv[1]) if l.startswith("bbcount ")]
if len(rows) != int(sys.argv[2]):
    sys.exit("run-coord: %d lines of counts for %s processes" % (len(rows), sys.argv[2]))
for r in rows:
    r["coord"] = int(r["bytes"]) + int(r["ctlbytes"])
    r["data"] = int(r["p2pbytes"]) - int(r["ctlbytes"])
med = lambda k: int(statistics.median(int(r[k]) for r in rows))
print("| %s | %s | %d | %d | %d | %d | %d | %d |" % (sys.argv[2], sys.argv[3], med("coord"),
      max(r["coord"] for r in rows), med("coll"), med("ctl"), med("ctlbytes"), med("data")))
PY
    done
done
echo
python3 - "$work/rows" $fss <<'PY'
import sys
rows = [l.strip("|\n ").split(" | ") for l in open(sys.argv[1])]
for fs in sys.argv[2:]:
    r = [(int(x[0]), int(x[2])) for x in rows if x[1] == fs]
    lo, hi = min(r), max(r)
    print("%s: median rank's coordination bytes grow %.1fx from %d to %d processes"
          % (fs, hi[1] / lo[1], lo[0], hi[0]))
PY
