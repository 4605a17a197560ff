#!/bin/bash
# run-soak.sh - the soak benchmark of issue 8 (bench/soak.c): 8 ranks, 64 files open at once
# through bblog:, about a million small writes (64 B to 4 KiB, strided and interleaved across
# ranks, rewrites of a rank's own bytes and of other ranks' bytes after a sync, one write in four
# collective), repeated open/close cycles, MPI_File_sync between phases.
#
# Builds soak.c with the bblog MPI's mpicc, runs it, prints its JSON to RESULT (--out) and a
# summary per rank: VmRSS (and its anon / shmem change), malloc's in-use and held bytes (glibc
# mallinfo2: uordblks, arena + hblkhd), VmHWM and open descriptors after MPI_Init, after the first
# cycle and at the end, then VmRSS / in use / held after every cycle. It FAILS (exit 1) when:
#   - soak.c fails: wrong file contents (it recomputes every file from the schedule and compares
#     byte for byte), logs left in bblog_dir/bblog-UID after the last close, an MPI-IO error;
#   - a rank's malloc in-use bytes (mallinfo2 uordblks, all arenas) grew by more than
#     --used-bound KiB (default 4096) from the end of the first cycle to the end of the last: a
#     leak proportional to opens, writes or drains shows up there, reachable or not, since the
#     later cycles repeat the first one's work (the first cycle includes what is allocated once:
#     MPI's and ROMIO's buffers, the first log and index structures);
#   - with --rss-bound KIB, a rank's VmRSS grew by more than KIB over the same span. VmRSS is
#     not judged by default: it also grows with memory the program freed and glibc kept
#     (measured: 16 files, 4 cycles, 245 writes per rank, file and phase, VmRSS +0.4 to +0.8 MiB
#     per rank while uordblks grew 9 to 17 KiB and arena + hblkhd stayed flat; see
#     bench/README.md), and a bound on it fails on the allocator, not on bblog;
#   - a rank has more open descriptors at the end than after the first cycle (a leaked log,
#     index or PFS descriptor per open would give at least one per cycle).
# The ranks run with MALLOC_MMAP_THRESHOLD_=131072 (unless --glibc-default): by default glibc
# raises its mmap threshold to the size of the first large block freed, so ROMIO's 16 MiB
# collective buffer (cb_buffer_size), mmapped and unmapped in the first drain, comes from the
# heap afterwards and its pages stay resident once touched: rank 0 (the aggregator) then shows
# up to 16 MiB of "growth" that is no leak (measured: +17.4 MiB over 3 cycles of 8 files). With
# the threshold fixed, freed large blocks go back to the kernel and VmRSS follows live memory.
#
# Usage: bench/run-soak.sh [--quick] [--np N] [--writes N | --per-phase N] [--files N] [--cycles N]
#            [--phases N] [--pfs-dir DIR] [--bb-dir DIR] [--used-bound KIB] [--rss-bound KIB]
#            [--out FILE]
#            [--plain] [--glibc-default] [--keep] [-- extra soak.c options]
#        bench/run-soak.sh [--used-bound KIB] [--rss-bound KIB] --report FILE
#                                        summary and verdict of a saved JSON
#   default: 8 ranks, 64 files, 4 cycles of 2 phases (one sync per file between them),
#            1,000,000 writes; --quick: 8 ranks, 8 files, 3 cycles of 2 phases, 8 writes per
#            rank, file and phase (3072 writes).
#   --writes N  total writes (sets writes per rank, file and phase); --per-phase N sets that
#               number directly
#   --pfs-dir   where the files go (default: a new directory under /var/tmp, the local disk)
#   --bb-dir    burst buffer, the bblog_dir hint (default: a new directory under /dev/shm)
#   --plain     the same workload through ufs: (plain ROMIO), for reference times
#   --glibc-default  do not set MALLOC_MMAP_THRESHOLD_ (see above)
# Environment: BBLOG_ENV (or BBLOG_ENV_SCRIPT), the MPI environment script written by
# scripts/build-mpi.sh --env-out (default ${BBLOG_CACHE:-/var/cache/bblog}/current/bin/
# bblog-env.sh).
# Exit: 0 pass, 1 fail, 2 usage.
set -u

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
env_script=${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh
env_script=${BBLOG_ENV:-${BBLOG_ENV_SCRIPT:-$env_script}}
np=8 files=64 cycles=4 phases=2 writes=1000000 per_phase=
pfs_dir= bb_dir= rss_bound=-1 used_bound=4096 out= plain= keep= mmap_env=1 report=
extra=()
# summarise JSON STATUS T0 T1: the table per rank and the verdict (exit 1: FAIL).
summarise() {
    python3 - "$1" "$2" "$rss_bound" "$3" "$4" "$used_bound" <<'EOF'
import json, sys
path, rc, rss_bound, used_bound = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[6])
wall = float(sys.argv[5]) - float(sys.argv[4])
with open(path) as f:
    r = json.load(f)
why = []
if rc != 0:
    why.append("soak exited with status %d (3: wrong file contents, 4: logs left, "
               "1: MPI-IO error)" % rc)
if not r["ok"]:
    why.append("soak reported a failure (see its messages)")
print("soak (%s): %d ranks, %d files, %d cycles x %d phases, %d writes (%d collective), "
      "%.1f MiB, %.1f s%s; first cycle %.1f s; rank 0: write %.1f s, sync %.1f s, close %.1f s"
      % (r.get("mode", "bblog"), r["nprocs"], r["files"], r["cycles"], r["phases"], r["writes"],
         r["collective_writes"], r["bytes"] / 2**20, r["time_s"],
         " (mpiexec %.1f s)" % wall if wall > 0 else "", r["cycle1_s"],
         r["rank0_write_s"], r["rank0_sync_s"], r["rank0_close_s"]))
print("rank  RSS KiB start / cycle1 / end  growth  (anon  shmem)  malloc used KiB cycle1 / end "
      "growth  held KiB cycle1 / end  HWM KiB end  fds start / cycle1 / open / end  logs")
for k in r["ranks"]:
    s, c, o, e = k["start"], k["cycle1"], k["open"], k["end"]
    growth = e["rss_kib"] - c["rss_kib"]
    if e.get("malloc_used_kib", -1) < 0 or c.get("malloc_used_kib", -1) < 0:
        why.append("rank %d: no malloc statistics (mallinfo2 needs glibc 2.33)" % k["rank"])
    used = e.get("malloc_used_kib", -1) - c.get("malloc_used_kib", -1)
    print("%4d  %8d %8d %8d %+7d (%+6d %+6d)  %8d %8d %+7d  %8d %8d  %8d   %5d %5d %5d %5d  %4d"
          % (k["rank"], s["rss_kib"], c["rss_kib"], e["rss_kib"], growth,
             e.get("rss_anon_kib", 0) - c.get("rss_anon_kib", 0),
             e.get("rss_shmem_kib", 0) - c.get("rss_shmem_kib", 0),
             c.get("malloc_used_kib", -1), e.get("malloc_used_kib", -1), used,
             c.get("malloc_held_kib", -1), e.get("malloc_held_kib", -1), e["hwm_kib"], s["fds"], c["fds"], o["fds"], e["fds"],
             k["logdir_entries_end"]))
    if used_bound >= 0 and used > used_bound:
        why.append("rank %d: malloc in-use bytes (uordblks) grew by %d KiB from the first cycle "
                   "to the end (bound %d KiB): memory the program still holds" % (k["rank"], used, used_bound))
    if rss_bound >= 0 and growth > rss_bound:
        why.append("rank %d: VmRSS grew by %d KiB from the first cycle to the end (bound %d KiB)"
                   % (k["rank"], growth, rss_bound))
    if e["fds"] > c["fds"]:
        why.append("rank %d: %d open descriptors at the end, %d after the first cycle (leak)"
                   % (k["rank"], e["fds"], c["fds"]))
    if k["bad_bytes"]:
        why.append("rank %d: %d wrong bytes in the files it checked"
                   % (k["rank"], k["bad_bytes"]))
    if k["logdir_entries_end"]:
        why.append("rank %d: %d entries left in its log directory"
                   % (k["rank"], k["logdir_entries_end"]))
print("after each cycle's close, KiB: VmRSS | malloc in use (uordblks) | malloc held (arena+hblkhd)")
for k in r["ranks"]:
    ce = k.get("cycle_end", [])
    print("%4d  %s | %s | %s" % (k["rank"], " ".join("%d" % x["rss_kib"] for x in ce),
                                " ".join("%d" % x.get("malloc_used_kib", -1) for x in ce),
                                " ".join("%d" % x.get("malloc_held_kib", -1) for x in ce)))
growth = max(k["end"]["rss_kib"] - k["cycle1"]["rss_kib"] for k in r["ranks"])
used = max(k["end"].get("malloc_used_kib", -1) - k["cycle1"].get("malloc_used_kib", -1)
           for k in r["ranks"])
print("max malloc in-use growth %+d KiB (bound %d KiB); max VmRSS growth %+d KiB (%s)"
      % (used, used_bound, growth,
         "bound %d KiB" % rss_bound if rss_bound >= 0 else "reported, not judged"))
if why:
    print("run-soak: FAIL:\n  " + "\n  ".join(why))
    sys.exit(1)
print("run-soak: PASS")
EOF
}
usage() {
    sed -n '/^# Usage:/,/^# Exit:/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}
num() { case $2 in ''|*[!0-9]*) echo "run-soak: $1 takes a number, not '$2'" >&2; exit 2 ;; esac; }
while [ $# -gt 0 ]; do
    case $1 in
    --quick) files=8 cycles=3 phases=2 writes= per_phase=8; shift ;;
    --np) num "$1" "${2:-}"; np=$2; shift 2 ;;
    --writes) num "$1" "${2:-}"; writes=$2 per_phase=; shift 2 ;;
    --per-phase) num "$1" "${2:-}"; per_phase=$2 writes=; shift 2 ;;
    --files) num "$1" "${2:-}"; files=$2; shift 2 ;;
    --cycles) num "$1" "${2:-}"; cycles=$2; shift 2 ;;
    --phases) num "$1" "${2:-}"; phases=$2; shift 2 ;;
    --rss-bound) num "$1" "${2:-}"; rss_bound=$2; shift 2 ;;
    --used-bound) num "$1" "${2:-}"; used_bound=$2; shift 2 ;;
    --pfs-dir) pfs_dir=${2:?}; shift 2 ;;
    --bb-dir) bb_dir=${2:?}; shift 2 ;;
    --out) out=${2:?}; shift 2 ;;
    --plain) plain=--plain; shift ;;
    --glibc-default) mmap_env=; shift ;;
    --keep) keep=1; shift ;;
    --report) report=${2:?}; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -h|--help) usage ;;
    *) echo "run-soak: unknown argument $1" >&2; usage ;;
    esac
done
if [ -n "$report" ]; then
    summarise "$report" 0 0 0
    exit
fi
if [ "$cycles" -lt 2 ]; then
    echo "run-soak: --cycles must be at least 2 (growth is measured from cycle 1 to the last)" >&2
    exit 2
fi

if [ ! -r "$env_script" ]; then
    echo "run-soak: no bblog MPI: $env_script not found (scripts/build-mpi.sh --env-out FILE," \
         "then BBLOG_ENV=\$(cat FILE))" >&2
    exit 1
fi
# shellcheck source=/dev/null
. "$env_script"
for t in mpicc mpiexec python3; do
    command -v "$t" >/dev/null 2>&1 || { echo "run-soak: $t not found" >&2; exit 1; }
done

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-soak.XXXXXX") || exit 1
made_pfs= made_bb=
if [ -z "$pfs_dir" ]; then
    pfs_dir=$(mktemp -d /var/tmp/bblog-soak-pfs.XXXXXX) || exit 1
    made_pfs=1
fi
if [ -z "$bb_dir" ]; then
    bb_dir=$(mktemp -d /dev/shm/bblog-soak-bb.XXXXXX) || exit 1
    made_bb=1
fi
cleanup() {
    if [ -n "$keep" ]; then
        echo "run-soak: kept $work $pfs_dir $bb_dir" >&2
        return
    fi
    rm -rf "$work"
    [ -n "$made_pfs" ] && rm -rf "$pfs_dir"
    [ -n "$made_bb" ] && rm -rf "$bb_dir"
    # Our own files in directories we were given.
    [ -z "$made_pfs" ] && rm -f "$pfs_dir"/soak-[0-9][0-9][0-9].dat
}
trap cleanup EXIT
mkdir -p "$pfs_dir" "$bb_dir" || exit 1

cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
# shellcheck disable=SC2086
if ! mpicc $cflags -I"$SRC" "$SRC/soak.c" -o "$work/soak"; then
    echo "run-soak: cannot compile $SRC/soak.c" >&2
    exit 1
fi

args=(--pfs-dir "$pfs_dir" --bb-dir "$bb_dir" --files "$files" --cycles "$cycles"
      --phases "$phases")
if [ -n "$per_phase" ]; then
    args+=(--per-phase "$per_phase")
else
    args+=(--writes "$writes")
fi
[ -n "$plain" ] && args+=(--plain)
[ -n "$mmap_env" ] && export MALLOC_MMAP_THRESHOLD_=131072
echo "run-soak: $np ranks${mmap_env:+ (MALLOC_MMAP_THRESHOLD_=131072)}:" \
     "soak ${args[*]} ${extra[*]}" >&2
echo "run-soak: MPI $(command -v mpiexec); load: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
t0=$(date +%s.%N)
mpiexec -launcher fork -n "$np" "$work/soak" "${args[@]}" "${extra[@]}" >"$work/soak.json" \
    2>"$work/soak.err"
rc=$?
t1=$(date +%s.%N)
cat "$work/soak.err" >&2
[ -n "$out" ] && cp "$work/soak.json" "$out"
if [ ! -s "$work/soak.json" ]; then
    echo "run-soak: FAIL: soak exited with status $rc and printed no result" >&2
    exit 1
fi

summarise "$work/soak.json" "$rc" "$t0" "$t1"
