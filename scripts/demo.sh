#!/bin/bash
# demo.sh - bblog from nothing to a measured result, in one command.
#
#   1. scripts/build-mpi.sh builds MPICH with the bblog driver grafted into ROMIO (cached, so a
#      second run costs seconds), and its environment script is sourced (mpicc, mpiexec);
#   2. bench/ior.c, an IOR-like MPI-IO benchmark, is built with that mpicc;
#   3. the same IOR "strided" workload (every rank writes 4 KiB transfers that interleave with
#      the other ranks', collective writes) runs twice: through plain ROMIO (ufs:) and through
#      bblog (bblog:), the burst buffer on /dev/shm and the "PFS" a directory on local disk;
#   4. the two files are compared byte for byte (a difference is a failure);
#   5. a summary: write-phase and end-to-end times of both runs, the speedups, bblog's statistics.
#
# Usage: scripts/demo.sh [options]
#   --size SIZE        bytes written per rank (default 4m; k/m/g suffixes). The IOR setting of the
#                      seed paper is 64m per rank; on the 2-core machine this was written on, plain
#                      ROMIO needs ~8 ms per 4 KiB collective with 4 ranks, so 4m (1024
#                      collectives per rank) keeps the demo well under a minute. Scale it up on a
#                      real node.
#   --transfer SIZE    transfer size (default 4k)
#   --np N             MPI ranks (default 4)
#   --pfs-dir DIR      directory standing for the PFS (default /var/tmp/bblog-demo/pfs)
#   --bb-dir DIR       burst-buffer directory, exported as BBLOG_DIR (default /dev/shm/bblog-demo)
#   --work-dir DIR     build directory and run records (default /var/tmp/bblog-demo)
#   --no-build         skip step 1 (the MPI must already be built)
#   --keep             keep the two output files
# Environment: BBLOG_ENV overrides the environment script (default under BBLOG_CACHE if set,
# else /var/cache/bblog/current/bin/bblog-env.sh, as build-mpi.sh makes it).
# Exit status: 0 when both runs succeed and the files are identical, non-zero otherwise.
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BBLOG_ENV=${BBLOG_ENV:-${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh}
SIZE=4m
XFER=4k
NP=4
WORK=/var/tmp/bblog-demo
PFS_DIR=
BB_DIR=/dev/shm/bblog-demo
BUILD=1
KEEP=0

die() { echo "demo: $*" >&2; exit 1; }
step() { printf '\n== %s\n' "$*"; }

while [ $# -gt 0 ]; do
    case $1 in
    --size) SIZE=$2; shift 2 ;;
    --transfer) XFER=$2; shift 2 ;;
    --np) NP=$2; shift 2 ;;
    --pfs-dir) PFS_DIR=$2; shift 2 ;;
    --bb-dir) BB_DIR=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    --keep) KEEP=1; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
PFS_DIR=${PFS_DIR:-$WORK/pfs}

step "1. MPICH with the bblog driver"
if [ "$BUILD" = 1 ]; then
    [ -x "$SRC/scripts/build-mpi.sh" ] || die "$SRC/scripts/build-mpi.sh is missing"
    "$SRC/scripts/build-mpi.sh"
fi
[ -r "$BBLOG_ENV" ] || die "no MPI environment script at $BBLOG_ENV: run scripts/build-mpi.sh"
# shellcheck source=/dev/null
. "$BBLOG_ENV"
MPICC=$(command -v mpicc) || die "mpicc not found after sourcing $BBLOG_ENV"
MPIEXEC=$(command -v mpiexec) || die "mpiexec not found after sourcing $BBLOG_ENV"
echo "mpicc:   $MPICC"
echo "mpiexec: $MPIEXEC"

step "2. bench/ior.c"
mkdir -p "$WORK/build"
IOR=$WORK/build/ior
"$MPICC" -O2 -std=gnu11 -Wall -Wextra -o "$IOR" "$SRC/bench/ior.c"
echo "built $IOR"

step "3. IOR strided, $NP ranks, $SIZE per rank in $XFER collective writes"
mkdir -p "$PFS_DIR" "$BB_DIR"
PLAIN_FILE=$PFS_DIR/ior-plain.dat
BBLOG_FILE=$PFS_DIR/ior-bblog.dat
STATS=$WORK/bblog-stats.json
rm -f "$PLAIN_FILE" "$BBLOG_FILE" "$STATS"
IOR_ARGS=(-a strided -b "$SIZE" -t "$XFER" -s 1 -c -k -V --json)

echo "plain ROMIO: ufs:$PLAIN_FILE"
"$MPIEXEC" -n "$NP" "$IOR" "${IOR_ARGS[@]}" -o "ufs:$PLAIN_FILE" > "$WORK/plain.json" ||
    die "the plain ROMIO run failed (exit $?; ior: 1 MPI-IO error, 3 verification)"
echo "bblog:       bblog:$BBLOG_FILE (burst buffer $BB_DIR)"
BBLOG_DIR=$BB_DIR "$MPIEXEC" -n "$NP" "$IOR" "${IOR_ARGS[@]}" -o "bblog:$BBLOG_FILE" \
    -H "bblog_stats=$STATS" > "$WORK/bblog.json" ||
    die "the bblog run failed (exit $?; ior: 1 MPI-IO error, 3 verification)"

step "4. byte-for-byte comparison"
if ! cmp "$PLAIN_FILE" "$BBLOG_FILE"; then
    echo "demo: FAILED: $BBLOG_FILE (bblog) differs from $PLAIN_FILE (plain ROMIO)" >&2
    exit 1
fi
echo "identical: $(stat -c %s "$PLAIN_FILE") bytes"
LEFT=$(find "$BB_DIR" -mindepth 1 -type f 2>/dev/null | wc -l)
echo "log files left in $BB_DIR after close: $LEFT"

step "5. summary"
python3 - "$WORK/plain.json" "$WORK/bblog.json" "$STATS" <<'EOF'
import json, re, sys

plain = json.load(open(sys.argv[1]))
bblog = json.load(open(sys.argv[2]))
mib = 1024.0 * 1024.0


def human(n):
    n = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024


print(f"workload: IOR strided, {plain['nprocs']} ranks x {human(plain['bytes_per_rank'])}, "
      f"{human(plain['transfer'])} collective writes ({plain['writes_per_rank']} per rank), "
      f"{human(plain['bytes_total'])} in all")
print(f"{'':14}{'write phase':>14}{'end-to-end':>14}{'open':>10}{'close':>10}")
for name, r in (("plain ROMIO", plain), ("bblog", bblog)):
    print(f"{name:14}{r['write_s']:>12.3f} s{r['total_s']:>12.3f} s"
          f"{r['open_s']:>8.3f} s{r['close_s']:>8.3f} s")
print(f"{'bandwidth':14}{plain['write_MiBps']:>9.1f} MiB/s -> {bblog['write_MiBps']:.1f} MiB/s "
      f"(write phase), {plain['total_MiBps']:.1f} -> {bblog['total_MiBps']:.1f} MiB/s "
      f"(end-to-end)")
print(f"speedup of bblog over plain ROMIO: write phase {plain['write_s'] / bblog['write_s']:.1f}x, "
      f"end-to-end {plain['total_s'] / bblog['total_s']:.2f}x")
for name, r in (("plain", plain), ("bblog", bblog)):
    v = r.get("verify") or {}
    print(f"verification after re-open ({name}): {'OK' if v.get('ok') else 'FAILED'}")

# The stats file holds one JSON object per closed file (rank 0 appends at close).
try:
    text = open(sys.argv[3]).read()
except OSError as e:
    print(f"\nbblog statistics: none ({e})")
    sys.exit(0)
dec, objs, pos = json.JSONDecoder(), [], 0
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    try:
        obj, pos = dec.raw_decode(text, pos)
    except ValueError:
        print("\nbblog statistics (not JSON, shown raw):\n" + text[pos:])
        sys.exit(0)
    objs.append(obj)


def show(prefix, v, out):
    if isinstance(v, dict):
        for k, x in v.items():
            show(f"{prefix}.{k}" if prefix else k, x, out)
    elif isinstance(v, list) and len(v) > 8:
        out.append((prefix, f"[{len(v)} entries]"))
    elif (isinstance(v, (int, float)) and not isinstance(v, bool)
          and "bytes" in prefix.split(".")[-1]):
        out.append((prefix, f"{v} ({human(v)})"))
    elif isinstance(v, float):
        out.append((prefix, f"{v:.6g}"))
    else:
        out.append((prefix, json.dumps(v)))


# Lines for the driver's known counters (ADIOI_BBLOG_STATS in adio/ad_bblog/ad_bblog.h, bblog(7)
# STATISTICS); every other key is listed as it comes, so that a counter added later still shows.
KNOWN = [
    ("logged", "{write_calls} write calls, {bytes_logged:h} in {records} log records"),
    ("drained", "{bytes_drained:h} as {extents_drained} extents after coalescing, in {drains}"
                " drain(s) of {rounds} round(s) (flush buffer {flush_buffer_size:h} per rank)"),
    ("node exchange", "{bytes_from_peers:h} read straight from other ranks' logs on the burst"
                      " buffer (bblog_node_exchange=bb)"),
    ("independent", "{indep_writes} writes without ROMIO's collective call (node shares on one"
                    " node, or extents of mean size >= bblog_indep_threshold)"),
    ("write-through", "{bytes_through:h} in {writes_through} writes"),
    ("reads", "{read_calls} read calls, {bytes_overlaid:h} served from the log"),
    ("log I/O", "{aio_submits} libaio submits, {pwrite_flushes} pwrite flushes,"
                " {straight_writes} straight writes,"
                " {staging_waits} staging waits (libaio {libaio}, O_DIRECT {direct_io})"),
    ("time (max/rank)", "append {max_time_append_s:.3f} s, drain {max_time_drain_s:.3f} s,"
                        " sync {max_time_sync_s:.3f} s, log fsync {max_time_log_fsync_s:.3f} s"),
    ("log directory", "{log_dir}"),
]
FIELD = re.compile(r"{(\w+)(?::([^}]*))?}")


def curated(obj):
    """The KNOWN lines whose keys are all present, and the set of keys they used."""
    lines, used = [], {"bblog_stats", "file", "nprocs"}
    for label, fmt in KNOWN:
        keys = [m.group(1) for m in FIELD.finditer(fmt)]
        if not all(k in obj for k in keys):
            continue

        def sub(m):
            v = obj[m.group(1)]
            spec = m.group(2)
            if spec == "h":
                return human(v)
            return format(v, spec) if spec else str(v)

        lines.append((label, FIELD.sub(sub, fmt)))
        used.update(keys)
    return lines, used


for i, obj in enumerate(objs):
    if not isinstance(obj, dict):
        print(f"\nbblog statistics: {json.dumps(obj)}")
        continue
    what = "write open" if i == 0 else "re-open for verification" if i == 1 else f"open {i + 1}"
    if i > 0 and not obj.get("write_calls") and "read_calls" in obj:
        print(f"\nbblog statistics, {what}: {obj['read_calls']} read calls,"
              f" {human(obj.get('bytes_overlaid', 0))} served from the log")
        continue
    print(f"\nbblog statistics, {what} of {obj.get('file', '?')}"
          f"{', summed over ' + str(obj['nprocs']) + ' ranks' if 'nprocs' in obj else ''}:")
    lines, used = curated(obj)
    rows = []
    show("", {k: v for k, v in obj.items() if k not in used}, rows)
    width = max([len(k) for k, _ in lines + rows] or [0])
    for k, v in lines + rows:
        print(f"  {k:<{width}}  {v}")
EOF

if [ "$KEEP" = 0 ]; then
    rm -f "$PLAIN_FILE" "$BBLOG_FILE"
fi
echo
echo "demo: OK"
