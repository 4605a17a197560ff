#!/bin/bash
# run-driver-bench.sh - plain ROMIO collective writes against bblog, same machine, same run.
#
# For each case, IOR-like runs (bench/ior.c, collective writes, file deleted between runs) go
# through plain ROMIO (ufs:DIR/file) and through bblog (bblog:DIR/file), alternating, --reps
# times each; the medians of the write-phase and end-to-end times are reported with the ratios.
# One more run of each under strace counts the write requests that reach the PFS file (calls of
# pwrite64/write/pwritev on a descriptor of that file; the burst-buffer logs are other files),
# and bblog's own statistics (hint bblog_stats) are attached when the driver writes them.
# It asserts nothing: stdout is JSON lines (one "env", one "run" per case and file system, one
# "compare" per case, one "bar" per project target); progress goes to stderr.
#
# Cases (--cases, space separated, PATTERN:TRANSFER[:SIZE], SIZE per rank, default --size):
#   strided:4k strided:64k   IOR strided: transfer i of rank r at (i*P + r)*t
#   contiguous:4m            IOR contiguous with block = transfer = 4m, SIZE/4m segments
# e.g. --cases "strided:4k:4m strided:64k contiguous:4m:64m" when 4 KiB collectives are slow
# (one case per PATTERN:TRANSFER: records are named after it).
# The project's targets: bblog's write phase >= 10x faster than plain on strided:4k, and
# bblog's end-to-end >= 0.95x of plain's speed on contiguous:4m.
#
# Usage: bench/run-driver-bench.sh [options]
#   --np N            ranks (default 4)
#   --size SIZE       bytes per rank per run, unless a case says (default 16m; k/m/g suffixes)
#   --cases "LIST"    default "strided:4k strided:64k contiguous:4m"
#   --reps N          timed runs per case and file system (default 3)
#   --pfs-dir DIR     where the files go (default /var/tmp/bblog-bench/pfs). For the GlusterFS
#                     stand-in of a parallel file system: --pfs-dir /mnt/pfs/bblog-bench
#   --bb-dir DIR      burst-buffer directory, BBLOG_DIR (default /dev/shm/bblog-bench; a disk
#                     directory such as /var/tmp/bblog-bench/bb works too)
#   --work-dir DIR    build directory and raw records (default /var/tmp/bblog-bench)
#   --hint KEY=VALUE  MPI_Info hint for both file systems (repeatable)
#   --bblog-hint KEY=VALUE  hint for the bblog runs only (repeatable)
#   --no-strace       skip the request counting runs
# Environment: BBLOG_ENV, the MPI environment script made by scripts/build-mpi.sh
# (default ${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh).
set -euo pipefail

SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BBLOG_ENV=${BBLOG_ENV:-${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh}
NP=4
SIZE=16m
CASES="strided:4k strided:64k contiguous:4m"
REPS=3
WORK=/var/tmp/bblog-bench
PFS_DIR=
BB_DIR=/dev/shm/bblog-bench
STRACE=1
WRAP=()
HINTS=()
BBLOG_HINTS=()

die() { echo "run-driver-bench: $*" >&2; exit 1; }
say() { echo "run-driver-bench: $*" >&2; }

while [ $# -gt 0 ]; do
    case $1 in
    --np) NP=$2; shift 2 ;;
    --size) SIZE=$2; shift 2 ;;
    --cases) CASES=$2; shift 2 ;;
    --reps) REPS=$2; shift 2 ;;
    --pfs-dir) PFS_DIR=$2; shift 2 ;;
    --bb-dir) BB_DIR=$2; shift 2 ;;
    --work-dir) WORK=$2; shift 2 ;;
    --hint) HINTS+=(-H "$2"); shift 2 ;;
    --bblog-hint) BBLOG_HINTS+=(-H "$2"); shift 2 ;;
    --no-strace) STRACE=0; shift ;;
    -h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown option '$1' (see --help)" ;;
    esac
done
PFS_DIR=${PFS_DIR:-$WORK/pfs}

# Sizes as bash integers (powers of 1024, as bench/ior.c reads them).
bytes() {
    local v=${1%[kKmMgG]} m=1
    case $1 in
    *[kK]) m=1024 ;;
    *[mM]) m=$((1024 * 1024)) ;;
    *[gG]) m=$((1024 * 1024 * 1024)) ;;
    esac
    [[ $v =~ ^[0-9]+$ ]] || die "bad size '$1'"
    echo $((v * m))
}

[ -r "$BBLOG_ENV" ] || die "no MPI environment script at $BBLOG_ENV: run scripts/build-mpi.sh"
# shellcheck source=/dev/null
. "$BBLOG_ENV"
MPICC=$(command -v mpicc) || die "mpicc not found after sourcing $BBLOG_ENV"
MPIEXEC=$(command -v mpiexec) || die "mpiexec not found after sourcing $BBLOG_ENV"
if [ "$STRACE" = 1 ] && ! command -v strace >/dev/null; then
    die "strace not found: install it (scripts/install-deps.sh) or pass --no-strace"
fi

mkdir -p "$WORK/build" "$PFS_DIR" "$BB_DIR"
RUNS=$WORK/runs-$(date +%Y%m%d-%H%M%S)
mkdir -p "$RUNS"
IOR=$WORK/build/ior
"$MPICC" -O2 -std=gnu11 -Wall -Wextra -o "$IOR" "$SRC/bench/ior.c"
PFS_REAL=$(realpath "$PFS_DIR")

# run_ior NAME FS IOR_ARGS...: one ior run under the command prefix WRAP (an array, may be
# empty), its JSON in $RUNS/NAME.json.
# The file is deleted by ior at the end; `sync` first so that the previous run's dirty pages
# are not written back inside this run's timing.
run_ior() {
    local name=$1 fs=$2 args=("${@:3}") file prefix extra=()
    file=$PFS_DIR/bench-$fs.dat
    if [ "$fs" = bblog ]; then
        prefix=bblog:
        extra=("${BBLOG_HINTS[@]}" -H "bblog_stats=$RUNS/$name.stats.json")
    else
        prefix=ufs:
    fi
    sync
    BBLOG_DIR=$BB_DIR "${WRAP[@]}" "$MPIEXEC" -n "$NP" "$IOR" "${args[@]}" \
        "${HINTS[@]}" "${extra[@]}" -c --json -o "$prefix$file" > "$RUNS/$name.json" ||
        die "run $name failed (exit $?): see $RUNS/$name.json and stderr above"
}

# case_args CASE: sets `args` (ior options) and `tag` for PATTERN:TRANSFER[:SIZE], or dies.
case_args() {
    local pattern xfer size xfer_b size_b
    IFS=: read -r pattern xfer size <<<"$1"
    [ -n "$xfer" ] || die "case '$1' is not PATTERN:TRANSFER[:SIZE]"
    size=${size:-$SIZE}
    xfer_b=$(bytes "$xfer")
    size_b=$(bytes "$size")
    [ $((size_b % xfer_b)) = 0 ] || die "size $size is not a multiple of the transfer in $1"
    case $pattern in
    strided) args=(-a strided -b "$size_b" -t "$xfer_b" -s 1) ;;
    contiguous) args=(-a contiguous -b "$xfer_b" -t "$xfer_b" -s $((size_b / xfer_b))) ;;
    *) die "unknown pattern in case '$1' (strided or contiguous)" ;;
    esac
    tag=$pattern-$xfer
}
for c in $CASES; do
    case_args "$c"
done

for c in $CASES; do
    case_args "$c"
    for rep in $(seq 1 "$REPS"); do
        for fs in plain bblog; do
            say "$tag $fs run $rep/$REPS"
            WRAP=()
            run_ior "$tag-$fs-$rep" "$fs" "${args[@]}"
        done
    done
    if [ "$STRACE" = 1 ]; then
        for fs in plain bblog; do
            say "$tag $fs under strace (request count)"
            WRAP=(strace -f --seccomp-bpf -qq -y -s 0
                  -e trace=pwrite64,write,pwritev,pwritev2,writev -o "$RUNS/$tag-$fs.strace")
            run_ior "$tag-$fs-strace" "$fs" "${args[@]}"
        done
    fi
done

say "raw records in $RUNS"
python3 - "$RUNS" "$CASES" "$REPS" "$PFS_REAL" "$PFS_DIR" "$BB_DIR" "$NP" "$STRACE" <<'EOF'
import json, os, platform, re, statistics, subprocess, sys

runs, cases, reps, pfs_real, pfs_dir, bb_dir, np_, use_strace = sys.argv[1:]
reps, use_strace = int(reps), use_strace == "1"


def fstype(path):
    try:
        return subprocess.run(["stat", "-f", "-c", "%T", path], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return None


def load(path):
    with open(path) as f:
        return json.load(f)


def stats_objects(path):
    """The bblog stats file: one JSON object per closed file, appended by rank 0."""
    try:
        text = open(path).read()
    except OSError:
        return []
    dec, out, pos = json.JSONDecoder(), [], 0
    while pos < len(text):
        if text[pos].isspace():
            pos += 1
            continue
        try:
            obj, pos = dec.raw_decode(text, pos)
        except ValueError:
            return out + [{"unparsed": text[pos:]}]
        out.append(obj)
    return out


CALL = re.compile(r'^\d+\s+(pwrite64|write|pwritev2?|writev)\(\d+<([^>]*)>, (.*)')
SIZE_ARG = re.compile(r'^""(?:\.\.\.)?, (\d+)')


def pfs_requests(path, target):
    """Write calls on descriptors of the file `target`, and their requested bytes."""
    n = nbytes = 0
    try:
        lines = open(path, errors="replace")
    except OSError:
        return None
    sizes = {}
    for line in lines:
        m = CALL.match(line)
        if not m or m.group(2) != target:
            continue
        call, rest = m.group(1), m.group(3)
        if call in ("pwrite64", "write"):
            s = SIZE_ARG.match(rest)
            size = int(s.group(1)) if s else 0
        else:
            size = sum(int(x) for x in re.findall(r'iov_len=(\d+)', rest))
        n += 1
        nbytes += size
        sizes[size] = sizes.get(size, 0) + 1
    top = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    return {"count": n, "bytes": nbytes, "mean_bytes": round(nbytes / n, 1) if n else None,
            "top_sizes": {str(k): v for k, v in top}}


def emit(obj):
    print(json.dumps(obj), flush=True)


first = None
results = {}
for c in cases.split():
    pattern, xfer = c.split(":")[:2]
    tag = f"{pattern}-{xfer}"
    for fs in ("plain", "bblog"):
        recs = [load(os.path.join(runs, f"{tag}-{fs}-{r}.json")) for r in range(1, reps + 1)]
        first = first or recs[0]
        med = {k: statistics.median(r[k] for r in recs)
               for k in ("open_s", "write_s", "close_s", "total_s")}
        total = recs[0]["bytes_total"]
        row = {"type": "run", "case": tag, "fs": fs, "file": recs[0]["file"],
               "nprocs": recs[0]["nprocs"], "access": recs[0]["access"],
               "transfer": recs[0]["transfer"], "block": recs[0]["block"],
               "segments": recs[0]["segments"], "bytes_per_rank": recs[0]["bytes_per_rank"],
               "bytes_total": total, "reps": reps, **med,
               "write_MiBps": round(total / 2**20 / med["write_s"], 2),
               "total_MiBps": round(total / 2**20 / med["total_s"], 2),
               "write_s_runs": [r["write_s"] for r in recs],
               "total_s_runs": [r["total_s"] for r in recs]}
        if use_strace:
            target = os.path.join(pfs_real, f"bench-{fs}.dat")
            row["pfs_write_requests"] = pfs_requests(os.path.join(runs, f"{tag}-{fs}.strace"),
                                                     target)
            row["pfs_write_requests_source"] = "strace"
        if fs == "bblog":
            # The stats of the median-time run (by end-to-end time).
            order = sorted(range(reps), key=lambda i: recs[i]["total_s"])
            st = stats_objects(os.path.join(runs, f"{tag}-bblog-{order[reps // 2] + 1}.stats.json"))
            row["bblog_stats"] = st[-1] if len(st) == 1 else (st or None)
        results[(tag, fs)] = row

emit({"type": "env", "host": platform.node(), "cpus": os.cpu_count(),
      "mpi_library": first["mpi_library"] if first else None, "nprocs": int(np_),
      "pfs_dir": pfs_dir, "pfs_fstype": fstype(pfs_dir), "bb_dir": bb_dir,
      "bb_fstype": fstype(bb_dir), "reps": reps, "statistic": "median", "records": runs})
for (tag, fs), row in results.items():
    emit(row)
for c in cases.split():
    tag = "-".join(c.split(":")[:2])
    p, b = results[(tag, "plain")], results[(tag, "bblog")]
    cmp = {"type": "compare", "case": tag,
           "write_speedup": round(p["write_s"] / b["write_s"], 3),
           "total_speedup": round(p["total_s"] / b["total_s"], 3),
           "write_time_ratio_bblog_over_plain": round(b["write_s"] / p["write_s"], 4),
           "total_time_ratio_bblog_over_plain": round(b["total_s"] / p["total_s"], 4)}
    if use_strace and p["pfs_write_requests"] and b["pfs_write_requests"]:
        cmp["pfs_requests_plain"] = p["pfs_write_requests"]["count"]
        cmp["pfs_requests_bblog"] = b["pfs_write_requests"]["count"]
        cmp["pfs_mean_request_plain"] = p["pfs_write_requests"]["mean_bytes"]
        cmp["pfs_mean_request_bblog"] = b["pfs_write_requests"]["mean_bytes"]
    emit(cmp)
bars = (("strided-4k", "write_speedup", 10.0,
         "bblog write phase >= 10x faster than plain collective, strided 4 KiB"),
        ("contiguous-4m", "total_speedup", 0.95,
         "bblog end-to-end >= 0.95x of plain, contiguous 4 MiB"))
for tag, key, target, text in bars:
    if (tag, "plain") in results:
        v = results[(tag, "plain")][key.replace("speedup", "s")] / \
            results[(tag, "bblog")][key.replace("speedup", "s")]
        emit({"type": "bar", "case": tag, "what": text, "metric": key, "target": target,
              "value": round(v, 3), "met": v >= target})
EOF
