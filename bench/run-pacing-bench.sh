#!/bin/bash
# run-pacing-bench.sh - the periodic-checkpoint benchmark of issue 5 (seed paper 003).
#
# For each drain mode, one run of bench/ckpt.c (--count checkpoints: a compute phase of
# --period seconds, then a burst of --size bytes per rank in small strided collective writes,
# then MPI_File_sync) on bblog:PFS_DIR/ckpt-MODE.dat with the hint bblog_drain=MODE, while
#   - bench/pfs-sampler.py samples the bytes the PFS has taken, 10 times a second
#     (proc:glusterfsd when PFS_DIR is on GlusterFS, else the allocated size of the files), and
#   - bench/probe.c writes and fsyncs 4 KiB to PFS_DIR every 100 ms and records the latency.
# The mode "plain" runs the same workload on ufs: (plain ROMIO, no bblog) for reference.
# A mode the driver refuses is reported as not accepted, with
# the driver's message, and skipped; the other modes still run.
# Then bench/pacing-report.py prints JSON lines (one "env", one "run" per mode with the peak
# write rate over any 1-second window, over the whole run and while the application computes
# (before the last burst: what is left after it drains at full speed at close or MPI_Finalize),
# the phases drained before the next began, the probe's p50/p99, one "bar" per target of
# issue 5) and draws PNGs into the records directory.
# It asserts nothing; progress goes to stderr.
#
# Usage: bench/run-pacing-bench.sh [options]
#   --modes "LIST"    default "on_demand reactive proactive" (also: plain)
#   --np N            ranks (default 4)
#   --period T        compute seconds between bursts (default 5)
#   --size S          bytes per rank per burst (default 16m; k/m/g suffixes)
#   --transfer t      bytes per collective write (default 64k)
#   --count N         checkpoints (default 6)
#   --busy            busy compute phases instead of sleeping ones (they compete for the CPUs
#                     with the background drain and the probe)
#   --pfs-dir DIR     where the files go (default WORK/pfs). The GlusterFS stand-in:
#                     --pfs-dir /mnt/pfs/bblog-pacing
#   --bb-dir DIR      burst buffer, BBLOG_DIR (default /dev/shm/bblog-pacing)
#   --work-dir DIR    builds and records (default /var/tmp/bblog-pacing)
#   --hint KEY=VALUE  extra MPI_Info hint for the bblog runs (repeatable), e.g.
#                     --hint bblog_drain_interval=5
#   --bg-sync V       bblog_sync for the reactive and proactive runs (default bb). With pfs,
#                     each MPI_File_sync after a burst drains everything at once, as on_demand
#                     does, and leaves the background drain nothing to pace. on_demand runs
#                     keep the default bblog_sync=pfs: there the sync is the drain.
#   --no-plot         skip the PNGs (no matplotlib needed)
# Environment: BBLOG_ENV, the MPI environment script made by scripts/build-mpi.sh --env-out
# (default ${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh); PYTHON, the interpreter
# with Debian's python3-matplotlib (default /usr/bin/python3, not whatever python3 is first in
# PATH).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BBLOG_ENV=${BBLOG_ENV:-${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh}
MODES="on_demand reactive proactive"
NP=4
PERIOD=5
SIZE=16m
TRANSFER=64k
COUNT=6
BUSY=()
WORK=/var/tmp/bblog-pacing
PFS_DIR=
BB_DIR=/dev/shm/bblog-pacing
HINTS=()
BG_SYNC=bb
PLOT=1
PYTHON=${PYTHON:-/usr/bin/python3}

die() { echo "run-pacing-bench: $*" >&2; exit 1; }
say() { echo "run-pacing-bench: $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
    --modes) MODES=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --period) PERIOD=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --transfer) TRANSFER=$2; shift 2 ;;
    --count) COUNT=$2; shift 2 ;;
    --busy) BUSY=(--busy); shift ;;
    --pfs-dir) PFS_DIR=$2; shift 2 ;;
    --bb-dir) BB_DIR=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --hint) HINTS+=(-H "$2"); shift 2 ;;
    --bg-sync) BG_SYNC=$2; shift 2 ;;
    --no-plot) PLOT=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
PFS_DIR=${PFS_DIR:-$WORK/pfs}
for m in $MODES; do
    case $m in
    plain | on_demand | reactive | proactive) ;;
    *) die "unknown mode '$m' in --modes (on_demand, reactive, proactive, plain)" ;;
    esac
done
[ -n "$MODES" ] || die "--modes is empty"
case $BG_SYNC in pfs | bb) ;; *) die "bad --bg-sync '$BG_SYNC' (pfs or bb)" ;; esac

[ -r "$BBLOG_ENV" ] || die "no MPI environment script at $BBLOG_ENV: run scripts/build-mpi.sh"
# shellcheck source=/dev/null
. "$BBLOG_ENV"
MPICC=$(command -v mpicc) || die "mpicc not found after sourcing $BBLOG_ENV"
MPIEXEC=$(command -v mpiexec) || die "mpiexec not found after sourcing $BBLOG_ENV"
[ -x "$PYTHON" ] || die "no Python interpreter at $PYTHON (set PYTHON)"
if [ "$PLOT" = 1 ] && ! "$PYTHON" -c 'import matplotlib' 2>/dev/null; then
    die "python3-matplotlib is missing for $PYTHON: run scripts/install-deps.sh, or pass --no-plot"
fi

mkdir -p "$WORK/build" "$PFS_DIR" "$BB_DIR"
RUNS=$WORK/runs-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUNS"
CKPT=$WORK/build/ckpt
PROBE=$WORK/build/probe
"$MPICC" -O2 -std=gnu11 -Wall -Wextra -o "$CKPT" "$SRC/bench/ckpt.c"
cc -O2 -std=gnu11 -Wall -Wextra -o "$PROBE" "$SRC/bench/probe.c"

if [ "$(stat -f -c %T "$PFS_DIR")" = fuse.glusterfs ] || findmnt -n -T "$PFS_DIR" -o FSTYPE |
    grep -q glusterfs; then
    SOURCE=proc:glusterfsd
else
    SOURCE=dir:$PFS_DIR
fi

# Background helpers of the current run, stopped by stop_helpers (and on exit).
SAMPLER_PID=
PROBE_PID=
stop_helpers() {
    local p
    for p in $PROBE_PID $SAMPLER_PID; do
        kill -TERM "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    PROBE_PID= SAMPLER_PID=
}
trap 'stop_helpers' EXIT

# prefix_for MODE, hints_for MODE: the file name prefix and the hints of a mode.
prefix_for() { [ "$1" = plain ] && echo ufs: || echo bblog:; }
mode_hints() {
    case $1 in
    plain) ;;
    on_demand) echo "-H bblog_drain=$1" ;;
    *) echo "-H bblog_drain=$1 -H bblog_sync=$BG_SYNC" ;;
    esac
}

# Is the mode accepted? One tiny checkpoint; the driver refuses an unknown bblog_drain at open.
accepted() {
    local m=$1 f out
    f=$PFS_DIR/accept-$m.dat
    # shellcheck disable=SC2046
    if BBLOG_DIR=$BB_DIR "$MPIEXEC" -n 2 "$CKPT" -T 0 -S 4k -t 4k -N 1 $(mode_hints "$m") \
        "${HINTS[@]}" "$(prefix_for "$m")$f" > "$RUNS/$m.accept.json" 2> "$RUNS/$m.accept.err"
    then
        return 0
    fi
    out=$(grep -m1 -o 'bblog: .*' "$RUNS/$m.accept.err" || head -n1 "$RUNS/$m.accept.err")
    say "mode $m not accepted by the driver: $out"
    printf '%s\n' "$out" > "$RUNS/$m.refused"
    rm -f "$f"
    return 1
}

for m in $MODES; do
    accepted "$m" || continue
    f=$PFS_DIR/ckpt-$m.dat
    rm -f "$f"
    sync
    say "mode $m: $COUNT checkpoints of $SIZE per rank every ${PERIOD}s on $NP ranks ($SOURCE)"
    "$PYTHON" "$SRC/bench/pfs-sampler.py" --source "$SOURCE" --exclude 'probe-*' --hz 10 \
        --out "$RUNS/$m.rate.txt" &
    SAMPLER_PID=$!
    "$PROBE" --series "$RUNS/$m.probe.txt" "$PFS_DIR/probe-$m.dat" > "$RUNS/$m.probe.json" &
    PROBE_PID=$!
    # shellcheck disable=SC2046
    BBLOG_DIR=$BB_DIR "$MPIEXEC" -n "$NP" "$CKPT" -T "$PERIOD" -S "$SIZE" -t "$TRANSFER" \
        -N "$COUNT" "${BUSY[@]}" --keep $(mode_hints "$m") "${HINTS[@]}" \
        -H "bblog_stats=$RUNS/$m.stats.json" "$(prefix_for "$m")$f" > "$RUNS/$m.ckpt.json" ||
        { stop_helpers; die "mode $m: ckpt failed (exit $?): see $RUNS/$m.ckpt.json"; }
    # One more second of samples: what a background drain writes after close shows too.
    sleep 1
    stop_helpers
    rm -f "$f"
done

say "raw records in $RUNS"
plot=()
[ "$PLOT" = 1 ] && plot=(--png-dir "$RUNS")
"$PYTHON" "$SRC/bench/pacing-report.py" "${plot[@]}" --source "$SOURCE" --pfs-dir "$PFS_DIR" \
    --bb-dir "$BB_DIR" "$RUNS" $MODES
