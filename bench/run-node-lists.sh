#!/bin/bash
# run-node-lists.sh - what the drain's node exchange reads per round as a node's process count R
# grows (doc/scaling.md, node exchange): bench/scaling.c on one node of R processes, every rank
# N pieces of 4 KiB strided across the ranks, collective writes, one MPI_File_sync (one drain),
# burst buffer and PFS file in /dev/shm. Per R one Markdown row: the bytes of piece lists and
# shares read per round (pread64 on .list files, every rank under strace) by the node's ranks
# together, by the largest and by the median rank; then, from a second run without strace, the
# sync's time and the job's processor seconds (user + system, all ranks, open to close).
# --batches: the same under bblog_mode=bb, where the background drain's node batches
# (ad_bblog_bg_batch.c) write the node's small pieces: the bytes of the batches' lists and cuts
# (files TOKEN.rRANK.bN) read per batch (the traced run's reads over the batches of the run
# without strace, which vary with timing), and over the bytes of the lists published.
#
# Usage: bench/run-node-lists.sh [--procs "4 8 16 32 64"] [--pieces N] [--reps K]
#                                [--lib DIR] [--batches]
#   --lib DIR: run with DIR first in LD_LIBRARY_PATH (another build's libmpi.so, for a
#   before/after in the same run)
# Environment: BBLOG_ENV_SCRIPT (default /var/cache/bblog/current/bin/bblog-env.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
procs="4 8 16 32 64"
pieces=1024
reps=1
lib=
batches=
while [ $# -gt 0 ]; do
    case $1 in
    --batches) batches=1; shift ;;
    --procs) procs=$2; shift 2 ;;
    --pieces) pieces=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --lib) lib=$2; shift 2 ;;
    *) echo "run-node-lists: unknown argument $1" >&2; exit 2 ;;
    esac
done
command -v strace >/dev/null || { echo "run-node-lists: strace is needed" >&2; exit 1; }
# shellcheck source=/dev/null
. "${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}"
[ -n "$lib" ] && export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
work=$(mktemp -d /dev/shm/bblog-nodelists.XXXXXX)
trap 'rm -rf "$work"' EXIT
mpicc -O2 -o "$work/scaling" "$here/bench/scaling.c"
# Every rank under strace (the bytes run): its pread64 calls with the file each read (-y).
# Batches are read by the drain threads: those too (-f).
printf '#!/bin/sh\nexec strace %s-y -e trace=%s -o "%s/trace.${PMI_RANK:-$OMPI_COMM_WORLD_RANK}" "$@"\n' \
    "${batches:+-f }" "pread64${batches:+,pwrite64}" "$work" >"$work/wrap.sh"
chmod +x "$work/wrap.sh"
# run P STATS [WRAP]: one job; prints scaling's JSON line and time's "cpu USER SYS".
run() {
    mkdir -p "$work/bb"
    rm -f "$2" "$work/target.dat"
    { /usr/bin/time -f "cpu %U %S" env BBLOG_DIR="$work/bb" BBLOG_STATS="$2" \
        ${batches:+BBLOG_MODE=bb} \
        mpiexec -n "$1" ${3:+"$3"} "$work/scaling" "$pieces" 4096 "bblog:$work/target.dat" \
        "$work/bb"; } 2>&1
}
if [ -n "$batches" ]; then
    echo "| R | node reads B/batch | largest rank | median rank | batches | sync s | CPU s | reads / lists published |"
    echo "| --- | --- | --- | --- | --- | --- | --- | --- |"
else
    echo "| R | node reads B/round | largest rank | median rank | rounds | sync s | CPU s |"
    echo "| --- | --- | --- | --- | --- | --- | --- |"
fi
for p in $procs; do
    for _ in $(seq 1 "$reps"); do
        rm -f "$work"/trace.*
        run "$p" "$work/stats-traced.json" "$work/wrap.sh" >/dev/null
        out=$(run "$p" "$work/stats.json")
        python3 - "$out" "$work/stats.json" "$work" "$p" "$batches" <<'PYEOF'
import glob, json, re, statistics, sys
out, stats, work, p = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
batches = sys.argv[5] == "1"
files = r"\.r\d+\.b\d+" if batches else r"\.list"
o = json.loads(next(l for l in out.splitlines() if l.startswith("{")))
cpu = re.search(r"cpu ([\d.]+) ([\d.]+)", out)
lines = [json.loads(l) for l in open(stats).read().splitlines() if l.startswith("{")]
s = next(l for l in lines if "bblog_stats" in l)
nb = max([l.get("batches", 0) for l in lines if "bblog_bg" in l] + [1])
per = [sum(int(m.group(1)) for m in re.finditer(r"pread64\(\d+<[^>]*" + files + r">.*= (\d+)$",
                                                open(f).read(), re.M))
       for f in glob.glob(work + "/trace.*")]
if len(per) != p:
    sys.exit("run-node-lists: %d traces for %d ranks" % (len(per), p))
r = nb if batches else max(s["rounds"], 1)
extra = ""
if batches:     # the lists the processes published (each written once, at offset 0)
    pub = sum(int(m.group(1)) for f in glob.glob(work + "/trace.*") for m in re.finditer(
        r"pwrite64\(\d+<[^>]*" + files + r">, .*, 0\) = (\d+)$", open(f).read(), re.M))
    extra = " %.1f |" % (sum(per) / max(pub, 1))
print("| %d | %d | %d | %d | %d | %.3f | %.2f |%s" % (p, sum(per) // r, max(per) // r,
      statistics.median(per) // r, r if batches else s["rounds"], o["sync_s"],
      float(cpu.group(1)) + float(cpu.group(2)), extra))
PYEOF
    done
done
