#!/bin/bash
# run-mpi4py.sh: mpi4py's own MPI-IO tests through bblog (issue 22, part 2).
#
# Runs, unchanged, the file tests of mpi4py's test suite (test_io.py and test_file.py of the
# sdist that scripts/build-mpi4py.sh unpacked) with mpi4py's own runner,
#   mpiexec -n N <venv>/bin/python <src>/test/main.py -v test_io test_file
# at 1, 2 and 4 processes, in each mode:
#   ufs     ROMIO_FSTYPE_FORCE=ufs:     plain ROMIO, the reference
#   bblog   ROMIO_FSTYPE_FORCE=bblog:   every file through the driver
# Every run has fresh directories: the tests create their files with tempfile.mkstemp, so
# TMPDIR=<run>/tmp is where their files go (the "PFS"); the runner's current directory is
# <run>/cwd; BBLOG_DIR is a fresh burst-buffer directory (under --bb-root, default /dev/shm:
# node-local memory, as the demo and the benchmarks use it); BBLOG_STATS=<run>/stats.json (bblog
# appends one JSON line per file it closes), in both modes. Each rank's unittest output goes to
# <run>/err.<rank> (mpiexec -errfile-pattern).
#
# Per run, from every rank's "Ran N tests" and "OK (skipped=K)" / "FAILED (failures=F,
# errors=E, skipped=K)": ran, passed, skipped, failed (tests that failed or raised on any rank).
# A ufs run passes when it exits 0 and every rank says OK. A bblog run passes when it exits 0
# within the timeout, every rank reported, its counts and its list of skipped tests equal the
# ufs run's at that process count, it printed no "bblog:" diagnostic, left nothing in its
# burst-buffer directory but the empty per-user directory bblog-<uid>, and left no file in
# TMPDIR that the ufs run did not leave.
# Harness errors (counted as failures, exit status 1): a bblog run with no stats line for a
# file under its TMPDIR (its files did not go through bblog), a ufs run that wrote bblog stats,
# a file in the runner's current directory, a ufs run that ran no test, mpi4py not loading this
# MPI's libmpi.
# mpi4py skips some I/O tests on MPICH 4.0 itself (its test/mpiunittest.py skipMPI): the runner
# lists the skipped tests by skip message. In mpi4py 4.1.2 these are the 26 tests of
# TestIOViewSelf and TestIOViewWorld (file views with derived datatypes), skipped for
# "mpich(>=4.0.0,<4.1.0)": mpi4py 4 builds datatypes with the MPI-4 large-count constructors,
# which ROMIO's datatype flattening in MPICH 4.0 cannot decode (pmodels/mpich#6121, fixed for
# 4.1 by pmodels/mpich#6137); run with --no-skip-mpi, 8 of the 13 abort in MPI_File_set_view
# through ufs as through bblog ("Out of memory in file .../romio/adio/common/flatten.c" or
# "Assertion failed in file .../datatype/typeutil.c: dtp_ != NULL").
#
# Prints a table (processes | ufs and bblog: ran/passed/skipped/failed and seconds | files
# bblog closed | result), the skipped tests by reason, for each failed run its failing tests
# and the first lines of their failure output (or the tail of its output), the time of each
# mode, and closes with
#   mpi4py-io: N passed, M failed
# counting the bblog runs (one per process count) whose ufs run passed; a process count where
# ufs fails too is named on the line before and not counted.
#
# Usage: run-mpi4py.sh [--mpi-env FILE] [--prefix FILE-or-DIR] [--np "1 2 4"] [--timeout S]
#                      [--work DIR] [--bb-root DIR] [--keep]
#   --mpi-env FILE   the MPI: the file of `build-mpi.sh --env-out`, or its bblog-env.sh; default
#                    ${BBLOG_BUILD:-/var/tmp/bblog-build}/mpi-env if it exists, else
#                    ${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh
#   --prefix P       the build of scripts/build-mpi4py.sh: its directory (venv/ and src/ below
#                    it) or the file its --prefix-out wrote; default
#                    ${BBLOG_CACHE:-/var/cache/bblog}/mpi4py-current
#   --np LIST        process counts (default "1 2 4")
#   --timeout S      seconds per mpiexec (default 600)
#   --work DIR       logs and scratch directories (default a new directory under /var/tmp); the
#                    run directories are removed when nothing failed, unless --keep
#   --bb-root DIR    where the burst-buffer directories go (default /dev/shm, else DIR/bb of
#                    --work); removed at the end
#   --keep           keep every run directory
# Exit: 0 when no bblog run fails where ufs passes and there is no harness error; 1 otherwise;
# 2 usage or a missing prerequisite.
set -u

prog=mpi4py-io
build_dir=${BBLOG_BUILD:-/var/tmp/bblog-build}
cache=${BBLOG_CACHE:-/var/cache/bblog}
mpi_env=
prefix=
nps="1 2 4"
tmo=600
work=
bb_root=
keep=0

die() {
    echo "$prog: $*" >&2
    exit 2
}

usage() {
    sed -n '/^# Usage:/,/^#   --keep/p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --mpi-env) [ $# -ge 2 ] || usage; mpi_env=$2; shift 2 ;;
    --mpi-env=*) mpi_env=${1#*=}; shift ;;
    --prefix) [ $# -ge 2 ] || usage; prefix=$2; shift 2 ;;
    --prefix=*) prefix=${1#*=}; shift ;;
    --np) [ $# -ge 2 ] || usage; nps=$2; shift 2 ;;
    --np=*) nps=${1#*=}; shift ;;
    --timeout) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
    --timeout=*) tmo=${1#*=}; shift ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
    --work=*) work=${1#*=}; shift ;;
    --bb-root) [ $# -ge 2 ] || usage; bb_root=$2; shift 2 ;;
    --bb-root=*) bb_root=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown argument $1" >&2; usage ;;
    esac
done
case $tmo in ''|*[!0-9]*) die "--timeout: seconds expected, got '$tmo'" ;; esac
[ -n "$nps" ] || die "--np: no process count"
for n in $nps; do
    case $n in ''|*[!0-9]*|0) die "--np: positive integers expected, got '$n'" ;; esac
done

# The MPI: an env script, or a file naming one (build-mpi.sh --env-out).
if [ -z "$mpi_env" ]; then
    if [ -r "$build_dir/mpi-env" ]; then
        mpi_env=$build_dir/mpi-env
    else
        mpi_env=$cache/current/bin/bblog-env.sh
    fi
fi
[ -r "$mpi_env" ] || die "no bblog MPI: $mpi_env not found (scripts/build-mpi.sh --env-out FILE)"
if ! grep -q 'BBLOG_MPI_PREFIX' "$mpi_env"; then
    env_script=$(head -n 1 "$mpi_env")
    [ -r "$env_script" ] || die "$mpi_env names $env_script, which is not there"
else
    env_script=$mpi_env
fi
# shellcheck source=../runner-lib.sh
. "$(dirname "$0")/../runner-lib.sh"
# Set by the layer's layer-env.sh only (scripts/build-layer.sh): not inherited from before.
unset BBLOG_LAYER_MPI
# shellcheck source=/dev/null
. "$env_script"
[ -n "${BBLOG_MPI_PREFIX:-}" ] || die "$env_script did not set BBLOG_MPI_PREFIX"
# Where this MPI's libmpi is: BBLOG_MPI_PREFIX/lib, or, over a binary MPI with bblog's
# preloadable layer, the binary MPI's lib/ (BBLOG_MPI_PREFIX holds only the layer, which the
# layer's mpiexec preloads).
mpi_libdir=${BBLOG_LAYER_MPI:-$BBLOG_MPI_PREFIX}/lib
command -v mpiexec >/dev/null || die "no mpiexec after sourcing $env_script"
# Each rank's output in its own files: hydra's -outfile-pattern/-errfile-pattern; Open MPI's
# mpiexec has neither (nor -launcher), so there each rank redirects itself, by its rank.
ompi=no
is_ompi && ompi=yes

# mpi4py: the build directory, or a file naming it (build-mpi4py.sh --prefix-out).
[ -n "$prefix" ] || prefix=$cache/mpi4py-current
if [ -f "$prefix" ]; then
    pfx=$(head -n 1 "$prefix")
else
    pfx=$prefix
fi
python=$pfx/venv/bin/python
testdir=$pfx/src/test
[ -x "$python" ] && [ -f "$testdir/main.py" ] && [ -f "$testdir/test_io.py" ] &&
    [ -f "$testdir/test_file.py" ] ||
    die "no mpi4py build with its tests in '$pfx' (scripts/build-mpi4py.sh)"

if [ -z "$work" ]; then
    work=$(mktemp -d /var/tmp/bblog-mpi4py.XXXXXX) || die "cannot make a work directory"
fi
mkdir -p "$work" || die "cannot make $work"
work=$(cd "$work" && pwd -P)
ompi_sessions "$work/ompi" || die "cannot make $work/ompi"
if [ -z "$bb_root" ]; then
    if [ -d /dev/shm ] && [ -w /dev/shm ]; then
        bb_root=$(mktemp -d /dev/shm/bblog-mpi4py.XXXXXX) ||
            die "cannot make a directory in /dev/shm"
    else
        bb_root=$work/bb
    fi
else
    mkdir -p "$bb_root" || die "cannot make $bb_root"
    bb_root=$(mktemp -d "$bb_root/bblog-mpi4py.XXXXXX") || die "cannot make a directory in $bb_root"
fi
trap 'rm -rf "$bb_root"' EXIT

echo "mpi4py's I/O tests (test_io, test_file) through ufs: and bblog:"
echo "mpi4py: $python ($testdir)"
echo "MPI: $BBLOG_MPI_PREFIX; runs in $work, burst buffers in $bb_root; timeout ${tmo} s per run"

harness=0
# mpi4py must load this MPI's libmpi (LD_LIBRARY_PATH of the env script, or its RUNPATH).
if ! info=$("$python" -c '
import sys
from mpi4py import MPI
import mpi4py
libs = sorted({l.split()[-1] for l in open("/proc/self/maps") if "/libmpi" in l})
bad = [l for l in libs if not l.startswith(sys.argv[1] + "/")]
if bad or not libs:
    sys.exit("mpi4py loads " + (" ".join(bad) or "no libmpi") + ", not " + sys.argv[1])
v = MPI.Get_library_version().splitlines()[0].split()
print("mpi4py", mpi4py.__version__, "on", *v[:3], "(" + libs[0] + ")")
' "$mpi_libdir" 2>&1); then
    echo "$prog: harness: $info" >&2
    echo "$prog: 0 passed, 1 failed"
    exit 1
fi
echo "$info"
echo

# The unittest outputs of one run, one file per rank: counts, failing tests, skip reasons.
# Prints "ranks ran skipped nfailed": ranks = how many ranks printed their "Ran" line; writes
# <run>/failed (test ids), <run>/skipped (test id TAB reason, rank 0), <run>/excerpt.
parse() { # RUNDIR
    "$python" - "$1" <<'EOF'
import glob, os, re, sys

d = sys.argv[1]
ranks, ran, skipped, failed, excerpt = 0, None, None, set(), []
skips = {}
for f in sorted(glob.glob(os.path.join(d, "err.*")), key=lambda p: int(p.rsplit(".", 1)[1])):
    rank = f.rsplit(".", 1)[1]
    lines = open(f, errors="replace").read().splitlines()
    r = k = None
    for i, l in enumerate(lines):
        m = re.match(r"Ran (\d+) tests? in ", l)
        if m:
            r = int(m.group(1))
        m = re.match(r"(OK|FAILED)( \((.*)\))?$", l)
        if m and r is not None:
            kv = dict(x.split("=") for x in (m.group(3) or "").split(", ") if "=" in x)
            k = int(kv.get("skipped", 0))
        m = re.match(r"(\S+) \((\S+)\)\s*\.\.\. skipped '(.*)'$", l)
        if m and rank == "0":
            skips[m.group(2)] = m.group(3)
        m = re.match(r"(FAIL|ERROR): (\S+) \((\S+)\)", l)
        if m:
            if m.group(3) not in failed and len(excerpt) < 40:
                excerpt.append(f"[rank {rank}] {l}")
                body = []
                for b in lines[i + 2:]:
                    if b.startswith("=" * 20) or b.startswith("-" * 20):
                        break
                    body.append(b)
                while body and not body[-1].strip():
                    body.pop()
                # Its first lines (where), and its last lines (what failed).
                if len(body) > 8:
                    body = body[:2] + ["..."] + body[-5:]
                excerpt += ["    " + b for b in body]
            failed.add(m.group(3))
    if r is not None:
        ranks += 1
        if rank == "0" or ran is None:
            ran, skipped = r, k if k is not None else 0
with open(os.path.join(d, "failed"), "w") as o:
    o.writelines(t + "\n" for t in sorted(failed))
with open(os.path.join(d, "skipped"), "w") as o:
    o.writelines(f"{t}\t{w}\n" for t, w in sorted(skips.items()))
with open(os.path.join(d, "excerpt"), "w") as o:
    o.writelines(l + "\n" for l in excerpt)
print(ranks, ran if ran is not None else 0, skipped if skipped is not None else 0, len(failed))
EOF
}

declare -A res why counts secs nfiles
mode_ms_ufs=0 mode_ms_bblog=0

# run_one N MODE: one mpiexec; sets res[N.MODE] (PASS, FAIL, TIMEOUT, ERROR), why[], counts[]
# ("ran passed skipped failed"), secs[], nfiles[].
run_one() {
    local n=$1 mode=$2 d bb rc t0 ms out nr ran sk nf left id
    id=$n.$mode
    d=$work/n$n.$mode
    bb=$bb_root/n$n.$mode
    rm -rf "$d" "$bb"
    mkdir -p "$d/tmp" "$d/cwd" "$bb"
    t0=$(date +%s%N)
    (
        cd "$d/cwd" || exit 1
        unset ROMIO_HINTS
        export ROMIO_FSTYPE_FORCE=$mode: TMPDIR=$d/tmp BBLOG_DIR=$bb BBLOG_STATS=$d/stats.json
        export PYTHONUNBUFFERED=1
        if [ "$ompi" = yes ]; then
            export RUN_DIR=$d
            # shellcheck disable=SC2016 # expanded by each rank's shell
            exec timeout -k 10 "$tmo" mpiexec -n "$n" sh -c 'exec "$@" \
                >"$RUN_DIR/out.$OMPI_COMM_WORLD_RANK" 2>"$RUN_DIR/err.$OMPI_COMM_WORLD_RANK"' \
                rank-output "$python" "$testdir/main.py" -v test_io test_file
        fi
        exec timeout -k 10 "$tmo" mpiexec -launcher fork -n "$n" \
            -outfile-pattern "$d/out.%r" -errfile-pattern "$d/err.%r" \
            "$python" "$testdir/main.py" -v test_io test_file
    ) >"$d/mpiexec.out" 2>&1
    rc=$?
    ms=$((($(date +%s%N) - t0) / 1000000))
    secs[$id]=$(printf '%d.%d' $((ms / 1000)) $((ms % 1000 / 100)))
    eval "mode_ms_$mode=\$((mode_ms_$mode + ms))"

    res[$id]=PASS why[$id]=
    fail() { [ "${res[$id]}" = PASS ] && res[$id]=FAIL; why[$id]="${why[$id]:+${why[$id]}; }$*"; }
    harness_error() { res[$id]=ERROR; why[$id]="${why[$id]:+${why[$id]}; }harness: $*"; harness=1; }

    read -r nr ran sk nf < <(parse "$d")
    counts[$id]="$ran $((ran - sk - nf)) $sk $nf"
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        res[$id]=TIMEOUT why[$id]="timeout after $tmo s"
    elif [ "$rc" != 0 ]; then
        fail "exit status $rc"
    fi
    [ "$nr" = "$n" ] || fail "$nr of $n ranks reported their tests (crash or abort?)"
    [ "$nf" = 0 ] || fail "$nf tests failed"
    nfiles[$id]=0
    [ -f "$d/stats.json" ] && nfiles[$id]=$(grep -c . "$d/stats.json")
    if [ "$mode" = bblog ]; then
        grep -hq '^bblog:' "$d"/err.* "$d"/out.* 2>/dev/null &&
            fail "bblog diagnostic: $(grep -h -m1 '^bblog:' "$d"/err.* "$d"/out.* | head -n 1)"
        left=$(cd "$bb" && find . -mindepth 1 ! -regex '\./bblog-[0-9]+' | head -n 5)
        [ -z "$left" ] && left=$(cd "$bb" && find . -regex '\./bblog-[0-9]+' ! -empty | head -n 3)
        [ -z "$left" ] || fail "left in BBLOG_DIR: $(echo $left)"
        grep -q "\"file\": \"$d/tmp/" "$d/stats.json" 2>/dev/null ||
            harness_error "no bblog stats line for a file under $d/tmp:" \
                "the files did not go through bblog"
    else
        [ "$ran" -gt 0 ] || harness_error "the ufs run ran no test"
        [ ! -s "$d/stats.json" ] ||
            harness_error "the ufs run wrote bblog stats ($(head -c 120 "$d/stats.json"))"
    fi
    left=$(cd "$d/cwd" && find . -mindepth 1 | head -n 5)
    [ -z "$left" ] || harness_error "files in the runner's current directory: $(echo $left)"
    (cd "$d/tmp" && find . -mindepth 1 | sort) >"$d/tmp-left"
}

row() { printf '| %-9s | %-28s | %-6s | %-28s | %-6s | %-11s | %-6s |\n' "$@"; }
ufs_fail= passed=0 failed=0
row processes "ufs: ran/passed/skipped/failed" s "bblog: ran/passed/skipped/failed" s \
    "bblog files" result
row --------- ---------------------------- ------ ---------------------------- ------ \
    ----------- ------
for n in $nps; do
    run_one "$n" ufs
    run_one "$n" bblog
    u=$n.ufs b=$n.bblog
    if [ "${res[$b]}" = PASS ]; then
        if [ "${counts[$b]}" != "${counts[$u]}" ]; then
            res[$b]=FAIL why[$b]="counts ${counts[$b]} differ from ufs's ${counts[$u]}"
        elif ! cmp -s "$work/n$n.ufs/skipped" "$work/n$n.bblog/skipped"; then
            res[$b]=FAIL why[$b]="not the tests ufs skipped"
        fi
        extra=$(comm -13 "$work/n$n.ufs/tmp-left" "$work/n$n.bblog/tmp-left" | head -n 5)
        [ -z "$extra" ] || { res[$b]=FAIL why[$b]="left in TMPDIR (ufs did not): $(echo $extra)"; }
    fi
    result=${res[$b]}
    if [ "${res[$u]}" = ERROR ] || [ "${res[$b]}" = ERROR ]; then
        failed=$((failed + 1)) result=ERROR
    elif [ "${res[$u]}" != PASS ]; then
        ufs_fail="$ufs_fail $n" result="ufs ${res[$u]}"
    elif [ "${res[$b]}" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
    row "$n" "$(echo "${counts[$u]}" | tr ' ' /) ${res[$u]}" "${secs[$u]}" \
        "$(echo "${counts[$b]}" | tr ' ' /) ${res[$b]}" "${secs[$b]}" "${nfiles[$b]}" "$result"
done
echo

# What mpi4py skipped (rank 0 of the ufs runs; the bblog runs skipped the same, or failed).
echo "Skipped by mpi4py's own test suite on this MPI (skip message: tests):"
cat "$work"/n*.ufs/skipped | sort -u | awk -F '\t' '
    { n[$2]++; split($1, p, "."); c = p[1] "." p[2]
      if (!(($2 SUBSEP c) in seen)) { seen[$2, c] = 1; cls[$2] = cls[$2] (cls[$2] ? ", " : "") c } }
    END { for (r in n) printf "  \047%s\047: %d tests, of %s\n", r, n[r], cls[r] }'
echo

# The failed runs: reason, failing tests, the first lines of each failure (or the output's tail).
for n in $nps; do
    for mode in ufs bblog; do
        id=$n.$mode d=$work/n$n.$mode
        [ "${res[$id]}" = PASS ] && continue
        echo "$n processes through $mode: ${res[$id]}: ${why[$id]} ($d)"
        if [ -s "$d/failed" ]; then
            echo "  failing tests: $(echo $(cat "$d/failed"))"
            head -n 30 "$d/excerpt" | sed 's/^/  /'
        else
            for f in "$d"/err.* "$d/mpiexec.out"; do
                [ -s "$f" ] || continue
                echo "  tail of $(basename "$f"):"
                grep -v '^ *$' "$f" | tail -n 8 | sed 's/^/    /'
            done
        fi
    done
done

printf 'time: ufs %d s, bblog %d s\n' $(((mode_ms_ufs + 500) / 1000)) \
    $(((mode_ms_bblog + 500) / 1000))
[ -z "$ufs_fail" ] || echo "$prog: not counted, failing through ufs too, at processes:$ufs_fail"
if [ "$failed" = 0 ] && [ "$keep" = 0 ]; then
    rm -rf "$work"/n*.ufs/tmp "$work"/n*.bblog/tmp "$work"/n*.ufs/cwd "$work"/n*.bblog/cwd
    echo "$prog: logs in $work"
else
    echo "$prog: logs and scratch directories kept in $work"
fi
echo "$prog: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$harness" = 0 ]
