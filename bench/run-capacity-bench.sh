#!/bin/bash
# run-capacity-bench.sh - a burst buffer smaller than the output (bblog(7), bblog_high_water).
#
# IOR's default layout (bench/ior.c -a contiguous: each rank one block, TOTAL bytes in all)
# written in TRANSFER-byte collective or independent calls, end to end (open to close, drain
# included) and the longest single write call, medians of --reps runs, through:
#   plain      plain ROMIO (ufs:), the same calls
#   big        bblog, the burst buffer in /dev/shm (holds everything)
#   today      bblog, the burst buffer on a SMALL tmpfs, bblog_high_water=0 (no early drain:
#              what bblog did before; the tmpfs fills and the rest goes straight to the PFS)
#   small      bblog, the same tmpfs, default hints (early drain, space given back)
#   reactive   as small, with bblog_drain=reactive (independent writers drain early too)
#   verify     as small, with bblog_verify=true; PFS bytes read back are reported
# Every run checks the file (ior -V: every byte read back through plain ROMIO against the
# pattern); a failed check fails the script. Ratios are plain's time over the mode's (above 1:
# bblog is faster). Plain ROMIO with 4 KiB collective calls takes minutes here: --no-plain-4k-coll
# skips that one (the table says so).
#
# Needs root (it mounts the tmpfs) and a PFS directory (default /mnt/pfs/bblog-cap: the
# GlusterFS stand-in of bench/pfs.sh). Stdout: a Markdown table; raw JSON lines in WORK/raw.
#
# Usage: bench/run-capacity-bench.sh [--np "2 4"] [--total 256m] [--transfers "4k 64k"]
#          [--kinds "coll indep"] [--modes "plain big today small reactive verify"] [--reps 3]
#          [--small 64m] [--pfs-dir DIR] [--work-dir DIR] [--no-plain-4k-coll]
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BBLOG_ENV=${BBLOG_ENV:-${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh}
NPS="2 4"
TOTAL=256m
TRANSFERS="4k 64k"
KINDS="coll indep"
MODES="plain big today small reactive verify"
REPS=3
SMALL=64m
PFS_DIR=/mnt/pfs/bblog-cap
WORK=/var/tmp/bblog-capbench
SKIP_PLAIN_4K_COLL=0

die() { echo "run-capacity-bench: $*" >&2; exit 1; }
say() { echo "run-capacity-bench: $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
    --np) NPS=$2; shift 2 ;;
    --total) TOTAL=$2; shift 2 ;;
    --transfers) TRANSFERS=$2; shift 2 ;;
    --kinds) KINDS=$2; shift 2 ;;
    --modes) MODES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --small) SMALL=$2; shift 2 ;;
    --pfs-dir) PFS_DIR=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --no-plain-4k-coll) SKIP_PLAIN_4K_COLL=1; shift ;;
    *) die "unknown option $1 (see the header of $0)" ;;
    esac
done

[ "$(id -u)" = 0 ] || die "needs root: it mounts a $SMALL tmpfs as the small burst buffer"
[ -r "$BBLOG_ENV" ] || die "no MPI environment $BBLOG_ENV (scripts/build-mpi.sh makes it)"
# shellcheck disable=SC1090
. "$BBLOG_ENV"
mkdir -p "$WORK/raw" "$PFS_DIR" || die "cannot make $WORK or $PFS_DIR"
touch "$PFS_DIR/.probe" 2>/dev/null && rm -f "$PFS_DIR/.probe" ||
    die "cannot write to $PFS_DIR (bench/pfs.sh setup mounts the GlusterFS stand-in)"
mpicc -O2 -o "$WORK/ior" "$SRC/bench/ior.c" || die "cannot build bench/ior.c"

bytes() {
    local v=${1%[kKmMgG]} u=${1##*[0-9]}
    case $u in k|K) echo $((v << 10)) ;; m|M) echo $((v << 20)) ;; g|G) echo $((v << 30)) ;;
    *) echo "$v" ;; esac
}

SMALL_DIR=$WORK/small-bb
BIG_DIR=/dev/shm/bblog-capbench
mkdir -p "$SMALL_DIR" "$BIG_DIR"
mountpoint -q "$SMALL_DIR" && umount "$SMALL_DIR"
mount -t tmpfs -o "size=$SMALL" tmpfs "$SMALL_DIR" || die "cannot mount a tmpfs on $SMALL_DIR"
trap 'umount "$SMALL_DIR" 2>/dev/null; rm -rf "$BIG_DIR"' EXIT

# run NP TRANSFER KIND MODE REP: one ior run; appends its JSON (and bblog's stats) to raw.
run() {
    local np=$1 t=$2 kind=$3 mode=$4 rep=$5 block file args=() hints=() out stats
    block=$(( $(bytes "$TOTAL") / np ))
    file=$PFS_DIR/cap.$np.$t.$kind.$mode
    stats=$WORK/raw/stats.$np.$t.$kind.$mode.$rep
    rm -f "$stats"
    args=(-a contiguous -b "$block" -t "$(bytes "$t")" -s 1 -V --json)
    [ "$kind" = coll ] && args+=(-c)
    case $mode in
    plain) file=ufs:$file ;;
    big) file=bblog:$file; hints=(bblog_dir=$BIG_DIR) ;;
    today) file=bblog:$file; hints=(bblog_dir=$SMALL_DIR bblog_high_water=0) ;;
    small) file=bblog:$file; hints=(bblog_dir=$SMALL_DIR) ;;
    reactive) file=bblog:$file; hints=(bblog_dir=$SMALL_DIR bblog_drain=reactive) ;;
    verify) file=bblog:$file; hints=(bblog_dir=$SMALL_DIR bblog_verify=true) ;;
    *) die "unknown mode $mode" ;;
    esac
    [ "$mode" != plain ] && hints+=(bblog_stats=$stats)
    for h in "${hints[@]}"; do args+=(-H "$h"); done
    if ! out=$(mpiexec -n "$np" "$WORK/ior" "${args[@]}" -o "$file" 2>"$WORK/raw/err.$$"); then
        cat "$WORK/raw/err.$$" >&2
        die "ior failed: np $np, $t $kind, $mode"
    fi
    echo "$out" | python3 -c '
import json, sys
o = json.loads(sys.stdin.read())
v = o.get("verify", {})
if not v.get("ok"):
    sys.exit("verification failed")' || die "the file is wrong: np $np, $t $kind, $mode"
    python3 - "$out" "$stats" "$np" "$t" "$kind" "$mode" "$rep" >>"$WORK/raw/runs.jsonl" <<'PY'
import json, os, sys
out, stats, np, t, kind, mode, rep = sys.argv[1:]
o = json.loads(out)
rec = {"np": int(np), "transfer": t, "kind": kind, "mode": mode, "rep": int(rep),
       "total_s": o["total_s"], "write_s": o["write_s"], "max_call_s": o["max_call_s"]}
if os.path.exists(stats):
    objs = [json.loads(l) for l in open(stats) if l.strip()]
    st = [x for x in objs if "bblog_stats" in x]
    bg = [x for x in objs if "bblog_bg" in x]
    if st:
        w = st[0]
        rec.update({k: w.get(k, 0) for k in ("bytes_through", "bytes_given_back",
                                             "capacity_waits", "max_capacity_wait_s",
                                             "bytes_drained", "drains", "bytes_verified")})
    rec["bg_bytes"] = sum(x.get("bytes", 0) for x in bg)
    rec["bg_verified"] = sum(x.get("bytes_verified", 0) for x in bg)
print(json.dumps(rec))
PY
    rm -f "$stats"
}

: >"$WORK/raw/runs.jsonl"
for np in $NPS; do
    for t in $TRANSFERS; do
        for kind in $KINDS; do
            for rep in $(seq 1 "$REPS"); do
                for mode in $MODES; do
                    if [ "$mode" = plain ] && [ "$t" = 4k ] && [ "$kind" = coll ] &&
                        [ "$SKIP_PLAIN_4K_COLL" = 1 ]; then
                        continue
                    fi
                    say "np $np, $t $kind, $mode, run $rep"
                    run "$np" "$t" "$kind" "$mode" "$rep"
                done
            done
        done
    done
done

python3 - "$WORK/raw/runs.jsonl" "$SMALL" "$TOTAL" <<'PY'
import json, statistics, sys
from collections import defaultdict
runs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
small, total = sys.argv[2], sys.argv[3]
g = defaultdict(list)
for r in runs:
    g[(r["np"], r["transfer"], r["kind"], r["mode"])].append(r)
def med(rs, k):
    return statistics.median(r.get(k, 0) for r in rs)
cases = sorted({k[:3] for k in g}, key=lambda c: (c[0], int(c[1][:-1]) * (1024 if c[1][-1] == "m" else 1), c[2]))
modes = [m for m in ["plain", "big", "today", "small", "reactive", "verify"] if any(k[3] == m for k in g)]
print("IOR segmented layout, %s in all, end to end (open to close, drain included), median of %d;"
      " burst buffer: big = /dev/shm, the others a %s tmpfs. Cells: seconds (longest single write"
      " call in seconds) [plain/mode]." % (total, max(len(v) for v in g.values()), small))
print()
print("| ranks | transfer | calls | " + " | ".join(modes) + " |")
print("|---|---|---|" + "---|" * len(modes))
for c in cases:
    plain = g.get(c + ("plain",))
    cells = []
    for m in modes:
        rs = g.get(c + (m,))
        if not rs:
            cells.append("(not run)")
            continue
        t = med(rs, "total_s")
        cell = "%.2f (%.3f)" % (t, med(rs, "max_call_s"))
        if plain and m != "plain":
            cell += " [%.2f]" % (med(plain, "total_s") / t)
        cells.append(cell)
    print("| %d | %s | %s | %s |" % (c[0], c[1], c[2], " | ".join(cells)))
print()
print("bblog statistics (medians): bytes written straight to the PFS, bytes given back while open,"
      " writes that waited for room and the longest wait; with verify, PFS bytes read back.")
print()
print("| ranks | transfer | calls | mode | through MiB | given back MiB | waits | longest wait s | read back MiB |")
print("|---|---|---|---|---|---|---|---|---|")
for c in cases:
    for m in modes:
        rs = g.get(c + (m,))
        if not rs or m == "plain":
            continue
        mib = 1 << 20
        print("| %d | %s | %s | %s | %.1f | %.1f | %d | %.3f | %.1f |" % (
            c[0], c[1], c[2], m, med(rs, "bytes_through") / mib, med(rs, "bytes_given_back") / mib,
            med(rs, "capacity_waits"), med(rs, "max_capacity_wait_s"),
            (med(rs, "bytes_verified") + med(rs, "bg_verified")) / mib))
PY
