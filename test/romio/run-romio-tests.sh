#!/bin/bash
# ROMIO's own test programs through bblog (issue 22, part 1).
#
# Compiles, unchanged, every C program of src/mpi/romio/test/ of the MPICH source that the bblog
# MPI was built from (scripts/build-mpi.sh keeps it beside the install: <cache>/mpich-*/src),
# with that MPI's mpicc, and runs each one, with the rank count and arguments of ROMIO's
# runtests, three ways:
#   ufs    the file named ufs:<leg>/out/testfile     plain ROMIO, the reference
#   bblog  the file named bblog:<leg>/out/testfile   the driver, by prefix
#   force  the file named <leg>/out/testfile         the driver, by ROMIO_FSTYPE_FORCE=bblog:
# Each leg runs in a fresh directory <leg> (under --work), with BBLOG_DIR=<leg>/bb and
# BBLOG_STATS=<leg>/stats.json, the programs' current directory <leg>/run.
#
# A leg passes as runtests would have it: the program exits 0 and prints " No Errors" (the
# programs that print no such line: perf and coll_perf exit 0; large_array and large_file say
# their data read back is correct; external32 finds native little-endian and external32
# big-endian). A bblog or force leg must also leave no file in BBLOG_DIR (bblog removes its logs
# at close) and print no "bblog:" diagnostic. Harness errors (counted as failures, and the exit
# status says so): a bblog or force leg whose stats file names no file under <leg>/out (the file
# did not go through bblog), a ufs leg that wrote bblog stats, any file left in <leg>/run (a
# program given the wrong arguments writes a file named after them, "-fname", in its current
# directory), a program that does not build, a program this runner has no invocation for.
#
# Programs and invocations (MPICH 4.0.2: runtests' 24, then the 7 it leaves out):
#   -fname F, 4 ranks: simple async async-multiple atomicity coll_test excl file_info misc
#       noncontig_coll2 shared_fp ordered_fp split_coll psimple, and creat_excl perf large_array
#   -fname F, 2 ranks: i_noncontig noncontig noncontig_coll;  1 rank: error status large_file
#   F, 4 ranks: aggregation2 hindexed darray_read big_extents;  2 ranks: types_with_zeros
#   -h -f F, 4 ranks: aggregation1
#   syshints, 1 rank: its argument is both ROMIO_HINTS (a file ROMIO reads with open(2)) and the
#       file it opens, so it cannot take a prefixed name: the ufs leg names the copy of
#       test_hintfile plainly (ROMIO's default driver, ufs), the bblog leg is n/a, the force leg
#       runs;
#   external32, 4 ranks: opens "test.datarep" in its current directory, so it takes no name:
#       runs in <leg>/out, bblog leg n/a;
#   coll_perf, 4 ranks: its global array is fixed at 2176 x 1152 x 1408 ints (14 GB, and 3.5 GB
#       of buffer per rank): built from a copy with 128 replaced by --coll-perf-base (default
#       16: 272 x 144 x 176 ints, 27 MB), and shown as coll_perf[16]; 128 runs it as it is.
#   large_array (4 ranks) and large_file (1 rank) write and read back 4 GiB, fixed in their
#       source; run as they are by default (disk-bound: on this project's 2-core VM, loaded,
#       large_array took 170 to 320 s per leg, so give it --timeout 900; large_file 1 minute),
#       with --quick from copies shrunk to 256 MiB (large_array: 64 x 1024 x 1024 ints instead of
#       1024 x ...; large_file: 8 writes of 32 MiB instead of 128), shown as large_array[256M]
#       and large_file[256M]; offsets beyond 4 GiB are still covered then by big_extents.
#   misc.c and large_file.c come from ROMIO's configured build tree (<cache>/mpich-*/build; the
#   layer's: <cache>/layer-*/build, its ROMIO in <cache>/layer-*/src/romio), or
#   from the .c.in with @LL@ -> lld. Fortran programs are not run.
# A program found in the test directory that is not in this list is a harness error: add it.
#
# Usage: run-romio-tests.sh [--mpi-env FILE] [--mpich-src DIR] [--programs "P..."]
#                           [--modes "ufs bblog force"] [--timeout S] [--coll-perf-base N]
#                           [--quick] [--work DIR] [--keep] [--exclude "P: REASON"]
#   --mpi-env FILE    the MPI's environment script (bblog-env.sh), or a file holding its path
#                     (scripts/build-mpi.sh --env-out FILE). Default: ${BBLOG_BUILD}/mpi-env
#                     (BBLOG_BUILD defaults to /var/tmp/bblog-build) if it exists, else
#                     ${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh
#   --mpich-src DIR   the MPICH source tree (or its src/mpi/romio/test directory). Default: the
#                     tree the MPI was built from, <install>/../src
#   --programs "..."  only these programs (default: every C program of the test directory)
#   --exclude "P: R"  not program P, for the reason R (which fails without bblog on that MPI);
#                     the summary names it and the reason. Repeatable.
#   --modes "..."     only these legs (default "ufs bblog force")
#   --timeout S       seconds per mpiexec (default 300; ROMIO_TESTS_TIMEOUT)
#   --quick           large_array and large_file at 256 MiB instead of 4 GiB (for CI)
#   --work DIR        where the leg directories go (default a new directory under
#                     ${TMPDIR:-/var/tmp}; large_array and large_file write 4 GiB per leg)
#   --keep            keep every leg directory (default: only those of failed legs)
# With MPITEST_CLUSTER=HOSTS (test/cluster-lib.sh) the programs run across the emulated cluster's
# nodes: the legs on its PFS (unless --work), each leg's BBLOG_DIR on every node's own burst
# buffer, checked for files left on every node.
# Prints one table row per program as it finishes, the first lines of the output of each
# failed leg, the wall time of each mode, and last "romio-tests: N passed, M failed" (legs).
# Across the cluster's nodes a failed ufs leg runs once more, and the row and a list at the end
# say so: GlusterFS's FUSE clients answer an open(O_CREAT) without O_EXCL with EEXIST when
# another node creates the same name at the same moment (not POSIX), and plain ROMIO's shared
# file pointer file is created that way by every process at its first use (shared_fp failed so
# in about 1 run of 10 at 4 nodes x 1 rank: "Could not access shared file pointer"). bblog
# retries that open itself; its legs run once.
# Exit: 0 all passed; 1 a bblog or force leg failed where the ufs leg passed, or a harness
# error; 2 usage or a missing prerequisite. A program failing through ufs too is counted and
# shown, but does not make the exit status non-zero (it says nothing about bblog).
set -u
# shellcheck source=../cluster-lib.sh
. "$(dirname "$0")/../cluster-lib.sh"

prog=run-romio-tests
build_dir=${BBLOG_BUILD:-/var/tmp/bblog-build}
cache=${BBLOG_CACHE:-/var/cache/bblog}
mpi_env=
mpich_src=
only_programs=
excluded=
modes="ufs bblog force"
tmo=${ROMIO_TESTS_TIMEOUT:-300}
coll_perf_base=16
work=
keep=0
quick=0

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
    --mpich-src) [ $# -ge 2 ] || usage; mpich_src=$2; shift 2 ;;
    --mpich-src=*) mpich_src=${1#*=}; shift ;;
    --programs) [ $# -ge 2 ] || usage; only_programs=$2; shift 2 ;;
    --programs=*) only_programs=${1#*=}; shift ;;
    --exclude) [ $# -ge 2 ] || usage; excluded="$excluded$2"$'\n'; shift 2 ;;
    --modes) [ $# -ge 2 ] || usage; modes=$2; shift 2 ;;
    --modes=*) modes=${1#*=}; shift ;;
    --timeout) [ $# -ge 2 ] || usage; tmo=$2; shift 2 ;;
    --timeout=*) tmo=${1#*=}; shift ;;
    --coll-perf-base) [ $# -ge 2 ] || usage; coll_perf_base=$2; shift 2 ;;
    --coll-perf-base=*) coll_perf_base=${1#*=}; shift ;;
    --work) [ $# -ge 2 ] || usage; work=$2; shift 2 ;;
    --work=*) work=${1#*=}; shift ;;
    --keep) keep=1; shift ;;
    --quick) quick=1; shift ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown argument $1" >&2; usage ;;
    esac
done
for m in $modes; do
    case $m in ufs|bblog|force) ;; *) die "--modes: unknown mode '$m' (ufs, bblog, force)" ;; esac
done
[ -n "$modes" ] || die "--modes: nothing to run"
case $tmo in ''|*[!0-9]*) die "--timeout: seconds expected, got '$tmo'" ;; esac
case $coll_perf_base in ''|*[!0-9]*|0) die "--coll-perf-base: a positive integer expected" ;; esac

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
# shellcheck source=/dev/null
. "$env_script"
cl_mpi
for tool in mpicc mpiexec timeout; do
    command -v "$tool" >/dev/null 2>&1 || die "$tool not found (after sourcing $env_script)"
done
[ -n "${BBLOG_MPI_PREFIX:-}" ] || die "$env_script does not set BBLOG_MPI_PREFIX"

# ROMIO's test directory, and the configured copy of its .c.in files if there is one.
build_root=$(cd "$BBLOG_MPI_PREFIX/.." 2>/dev/null && pwd -P) || build_root=
if [ -z "$mpich_src" ]; then
    mpich_src=$build_root/src
    [ -d "$mpich_src" ] || die "no MPICH source beside $BBLOG_MPI_PREFIX: give --mpich-src"
fi
if [ -d "$mpich_src/src/mpi/romio/test" ]; then
    tdir=$mpich_src/src/mpi/romio/test
elif [ -d "$mpich_src/romio/test" ]; then      # the standalone layer's ROMIO (build-layer.sh)
    tdir=$mpich_src/romio/test
elif [ -f "$mpich_src/runtests.in" ]; then
    tdir=$mpich_src
else
    die "$mpich_src: no src/mpi/romio/test/ (give the MPICH source tree)"
fi
tdir=$(cd "$tdir" && pwd -P)
configured=
if [ -n "$build_root" ] && [ -d "$build_root/build/src/mpi/romio/test" ] &&
    [ "$(cd "$build_root/src/src/mpi/romio/test" 2>/dev/null && pwd -P)" = "$tdir" ]; then
    configured=$build_root/build/src/mpi/romio/test
elif [ -n "$build_root" ] && [ -f "$build_root/build/test/misc.c" ] &&
    [ "$(cd "$build_root/src/romio/test" 2>/dev/null && pwd -P)" = "$tdir" ]; then
    configured=$build_root/build/test
fi

# program: ranks, argument style, check. Argument styles: fname (-fname F), pos (F), agg1
# (-h -f F), hint (the hints file), none (no name: the program's own, in its current directory).
# Checks: noerr (" No Errors"), exit (exit status 0 only), large_array, large_file, external32.
declare -A ranks=() style=() check=()
spec() { ranks[$1]=$2 style[$1]=$3 check[$1]=$4; }
spec simple 4 fname noerr
spec async 4 fname noerr
spec async-multiple 4 fname noerr
spec atomicity 4 fname noerr
spec coll_test 4 fname noerr
spec excl 4 fname noerr
spec file_info 4 fname noerr
spec i_noncontig 2 fname noerr
spec noncontig 2 fname noerr
spec noncontig_coll 2 fname noerr
spec noncontig_coll2 4 fname noerr
spec aggregation1 4 agg1 noerr
spec aggregation2 4 pos noerr
spec hindexed 4 pos noerr
spec misc 4 fname noerr
spec shared_fp 4 fname noerr
spec ordered_fp 4 fname noerr
spec split_coll 4 fname noerr
spec psimple 4 fname noerr
spec error 1 fname noerr
spec status 1 fname noerr
spec types_with_zeros 2 pos noerr
spec darray_read 4 pos noerr
spec syshints 1 hint noerr
# Not in runtests: rank counts chosen here (large_file must run alone).
spec creat_excl 4 fname noerr
spec big_extents 4 pos noerr
spec large_array 4 fname large_array
spec large_file 1 fname large_file
spec perf 4 fname exit
spec external32 4 none external32
spec coll_perf 4 fname exit
runtests_order="simple async async-multiple atomicity coll_test excl file_info i_noncontig
    noncontig noncontig_coll noncontig_coll2 aggregation1 aggregation2 hindexed misc shared_fp
    ordered_fp split_coll psimple error status types_with_zeros darray_read syshints
    creat_excl big_extents large_array large_file perf external32 coll_perf"

# Every C program of the directory, runtests' order first.
found=$(cd "$tdir" && ls ./*.c ./*.c.in 2>/dev/null | sed 's|^\./||; s/\.c\.in$//; s/\.c$//' |
    sort -u)
programs=
for p in $runtests_order; do
    echo "$found" | grep -qx -- "$p" && programs="$programs $p"
done
for p in $found; do
    case " $programs " in *" $p "*) ;; *) programs="$programs $p" ;; esac
done
if [ -n "$only_programs" ]; then
    for p in $only_programs; do
        echo "$found" | grep -qx -- "$p" || die "--programs: no $p.c in $tdir"
    done
    programs=$only_programs
fi
while IFS= read -r x; do
    [ -n "$x" ] || continue
    p=${x%%:*}
    case " $programs " in
    *" $p "*) programs=$(echo " $programs " | sed "s/ $p / /") ;;
    *) die "--exclude: no program $p among those to run" ;;
    esac
    echo "romio-tests: not run: $x"
done <<<"$excluded"

if [ -z "$work" ]; then
    wroot=${TMPDIR:-/var/tmp}
    [ -z "$cl_nodes" ] || wroot=$CLUSTER_PFS
    work=$(mktemp -d "$wroot/romio-tests.XXXXXX") || die "cannot make a work directory"
else
    mkdir -p "$work" || die "cannot create $work"
fi
work=$(cd "$work" && pwd -P)
bin=$work/bin
mkdir -p "$bin"
ompi_sessions "$work/ompi" || die "cannot create $work/ompi"

passed=0 failed=0 bad=0 harness=0
failures=
rerun=
declare -A mode_ms=()
for m in $modes; do mode_ms[$m]=0; done

# build P: compiles P into $bin (sets build_err on failure).
# MPICH 5's mpi.h no longer includes ROMIO's mpio.h, whose MPIO_Request (MPI_Request, with
# MPIO_USES_MPI_REQUEST defined) async and i_noncontig use: under such an mpi.h (the layer's
# binary MPICH) they get the two definitions MPICH 4's mpio.h made. Open MPI 5's mpi.h
# declares the MPI-1 types the noncontig programs use (MPI_LB, MPI_UB) only when asked, though
# its library still has them: over it (the layer's binary Open MPI) they are asked for.
compat=
compat_probe() {
    printf '#include <mpi.h>\nMPIO_Request r;\n' >"$bin/mpio_request.c"
    mpicc -c -o "$bin/mpio_request.o" "$bin/mpio_request.c" >/dev/null 2>&1 ||
        compat="-DMPIO_Request=MPI_Request -DMPIO_USES_MPI_REQUEST"
    printf '#include <mpi.h>\nMPI_Datatype t;\nvoid f(void) { t = MPI_LB; }\n' >"$bin/mpi_lb.c"
    if ! mpicc -c -o "$bin/mpi_lb.o" "$bin/mpi_lb.c" >/dev/null 2>&1 &&
        mpicc -DOMPI_OMIT_MPI1_COMPAT_DECLS=0 -c -o "$bin/mpi_lb.o" "$bin/mpi_lb.c" \
            >/dev/null 2>&1; then
        compat="$compat -DOMPI_OMIT_MPI1_COMPAT_DECLS=0"
    fi
}

build() {
    local p=$1 src
    build_err=
    case $p in
    misc|large_file)
        if [ -n "$configured" ] && [ -f "$configured/$p.c" ]; then
            src=$configured/$p.c
        elif [ -f "$tdir/$p.c" ]; then
            src=$tdir/$p.c
        else
            src=$bin/$p.c
            sed 's/@LL@/lld/g' "$tdir/$p.c.in" >"$src"
        fi
        if [ "$p" = large_file ] && [ "$quick" = 1 ]; then
            sed 's/^#define NTIMES 128 /#define NTIMES 8 /' "$src" >"$bin/$p.quick.c"
            src=$bin/$p.quick.c
            grep -q '^#define NTIMES 8 ' "$src" ||
                { build_err="large_file.c: '#define NTIMES 128' not found"; return; }
        fi
        ;;
    large_array)
        src=$tdir/$p.c
        if [ "$quick" = 1 ]; then
            src=$bin/$p.c
            sed 's/array_of_gsizes\[0\] = 1024;/array_of_gsizes[0] = 64;/' "$tdir/$p.c" >"$src"
            grep -q 'array_of_gsizes\[0\] = 64;' "$src" ||
                { build_err="large_array.c: 'array_of_gsizes[0] = 1024;' not found"; return; }
        fi
        ;;
    coll_perf)
        src=$tdir/$p.c
        if [ "$coll_perf_base" != 128 ]; then
            src=$bin/coll_perf.c
            sed "s/array_of_gsizes\[\([012]\)\] = 128 \*/array_of_gsizes[\1] = $coll_perf_base */" \
                "$tdir/coll_perf.c" >"$src"
            [ "$(grep -c "= $coll_perf_base \*" "$src")" = 3 ] ||
                { build_err="coll_perf.c: the three '128 *' array sizes not found"; return; }
        fi
        ;;
    *)
        src=$tdir/$p.c
        [ -f "$src" ] || src=$tdir/$p.c.in
        ;;
    esac
    # As ROMIO's test Makefile: mpicc, -DHAVE_ROMIOCONF_H (its CFLAGS), -lm for big_extents.
    # A failure is retried once after 10 s: a rebuild of the MPI may be relinking libmpi.
    # shellcheck disable=SC2086 # $compat is a list of options
    if ! mpicc -DHAVE_ROMIOCONF_H $compat -o "$bin/$p" "$src" -lm >"$bin/$p.build.log" 2>&1 &&
        ! { sleep 10; mpicc -DHAVE_ROMIOCONF_H $compat -o "$bin/$p" "$src" -lm \
            >"$bin/$p.build.log" 2>&1; }
    then
        build_err="does not build: $(head -n 3 "$bin/$p.build.log" | tr '\n' ' ')"
    fi
}

# leg P MODE: runs P one way; sets leg_status (PASS, FAIL, TIMEOUT, ERROR), leg_why, leg_dir,
# leg_ms.
leg() {
    local p=$1 mode=$2 d name n_ok want attempt=0 cwd left outf stats bbd
    local -a args=() envs=()
    while :; do
        d=$work/$p.$mode
        rm -rf "$d"
        mkdir -p "$d/out" "$d/run"
        bbd=$d/bb
        [ -z "$cl_nodes" ] || bbd=$CLUSTER_BB/${work##*/}.$p.$mode
        all_nodes rm -rf "$bbd"
        all_nodes mkdir -p "$bbd"
        leg_dir=$d
        stats=$d/stats.json
        case $mode in
        ufs) name=ufs:$d/out/testfile ;;
        bblog) name=bblog:$d/out/testfile ;;
        force) name=$d/out/testfile; envs=(ROMIO_FSTYPE_FORCE=bblog:) ;;
        esac
        cwd=$d/run
        case ${style[$p]} in
        fname) args=(-fname "$name") ;;
        pos) args=("$name") ;;
        agg1) args=(-h -f "$name") ;;
        hint)
            cp "$tdir/test_hintfile" "$d/out/test_hintfile"
            args=("$d/out/test_hintfile")
            ;;
        none) args=(); cwd=$d/out ;;
        esac
        outf=$d/output
        local t0
        t0=$(date +%s%N)
        (
            cd "$cwd" || exit 1
            unset ROMIO_FSTYPE_FORCE ROMIO_HINTS
            export BBLOG_DIR="$bbd" BBLOG_STATS="$stats"
            for e in "${envs[@]}"; do export "${e?}"; done
            exec timeout -k 10 "$tmo" mpiexec "${cl_launch[@]}" -n "${ranks[$p]}" "$bin/$p" \
                "${args[@]}"
        ) >"$outf" 2>&1
        leg_rc=$?
        leg_ms=$((($(date +%s%N) - t0) / 1000000))
        # The MPI may be relinked by a rebuild under way: one retry after a loader error.
        if [ $attempt = 0 ] && [ "$leg_rc" != 0 ] &&
            grep -qE 'error while loading shared libraries|symbol lookup error|undefined symbol' \
                "$outf"; then
            attempt=1
            sleep 10
            continue
        fi
        break
    done
    mode_ms[$mode]=$((mode_ms[$mode] + leg_ms))

    leg_status=PASS leg_why=
    fail() { [ "$leg_status" = PASS ] && leg_status=FAIL; leg_why="${leg_why:+$leg_why; }$*"; }
    harness_error() { leg_status=ERROR; leg_why="${leg_why:+$leg_why; }harness: $*"; }
    if [ "$leg_rc" = 124 ] || [ "$leg_rc" = 137 ]; then
        leg_status=TIMEOUT leg_why="timeout after $tmo s"
    elif [ "$leg_rc" != 0 ]; then
        fail "exit status $leg_rc"
    fi
    case ${check[$p]} in
    noerr)
        grep -q 'No Errors' "$outf" || fail "no ' No Errors' line"
        ;;
    large_array)
        n_ok=$(grep -c 'data read back is correct' "$outf")
        [ "$n_ok" = "${ranks[$p]}" ] ||
            fail "'data read back is correct' from $n_ok of ${ranks[$p]} ranks"
        grep -q 'file deleted' "$outf" || fail "no 'file deleted'"
        ;;
    large_file)
        grep -q 'Data read back is correct' "$outf" || fail "no 'Data read back is correct'"
        ;;
    external32)
        for want in 'native datarep is LITTLE ENDIAN' 'external32 datarep is BIG ENDIAN'; do
            grep -q "$want" "$outf" || fail "no '$want'"
        done
        ;;
    exit) ;;
    esac
    if [ "$mode" != ufs ]; then
        grep -q '^bblog:' "$outf" && fail "bblog diagnostic: $(grep -m1 '^bblog:' "$outf")"
        left=$(all_nodes find "$bbd" -type f | head -n 5)
        [ -z "$left" ] || fail "files left in BBLOG_DIR: $(echo $left)"
        grep -q "\"file\": \"$d/out/" "$stats" 2>/dev/null ||
            harness_error "no bblog stats line for a file under $d/out: the file did not go through bblog"
    elif [ -s "$stats" ]; then
        harness_error "the ufs leg wrote bblog stats ($(head -c 120 "$stats"))"
    fi
    left=$(cd "$d/run" && find . -mindepth 1 | head -n 5)
    [ -z "$left" ] || harness_error "files in the program's current directory (wrong arguments?): $(echo $left)"
    [ -z "$cl_nodes" ] || all_nodes rm -rf "$bbd"
}

na_reason() { # P MODE: why a leg cannot run, or nothing
    if [ "$2" = bblog ]; then
        case ${style[$1]} in
        hint) echo "its one argument is the hints file too" ;;
        none) echo "it names its file itself" ;;
        esac
    fi
}

header="| program | ranks |"
rule="| --- | --- |"
for m in $modes; do header="$header $m |"; rule="$rule --- |"; done
echo "ROMIO tests of $tdir"
echo "MPI: $BBLOG_MPI_PREFIX; legs in $work; timeout ${tmo} s per run"
echo
echo "$header"
echo "$rule"
t_all=$(date +%s)
compat_probe
for p in $programs; do
    label=$p
    [ "$p" = coll_perf ] && [ "$coll_perf_base" != 128 ] && label="coll_perf[$coll_perf_base]"
    case $p in large_array|large_file) [ "$quick" = 1 ] && label="$p[256M]" ;; esac
    row="| $label | ${ranks[$p]:-?} |"
    status_ufs=
    if [ -z "${ranks[$p]:-}" ]; then
        for m in $modes; do
            failed=$((failed + 1)) harness=1
            row="$row ERROR |"
        done
        failures="$failures
$p: harness: no invocation known for this program (add it from runtests)"
        echo "$row"
        continue
    fi
    build "$p"
    for m in $modes; do
        why=$(na_reason "$p" "$m")
        if [ -n "$why" ]; then
            row="$row n/a |"
            continue
        fi
        if [ -n "$build_err" ]; then
            failed=$((failed + 1)) harness=1
            row="$row ERROR |"
            failures="$failures
$p $m: harness: $build_err"
            continue
        fi
        leg "$p" "$m"
        again=
        if [ "$m" = ufs ] && [ -n "$cl_nodes" ] && [ "$leg_status" = FAIL ]; then
            first="$leg_why: $(head -n 3 "$leg_dir/output" | tr "\n" " " | cut -c1-200)"
            leg "$p" "$m"
            rerun="$rerun
$label ufs: run again after: $first; again: $leg_status"
            leg_why="${leg_why:+$leg_why; }the first run failed too ($first)"
            again=" (2nd run)"
        fi
        secs=$(awk -v ms="$leg_ms" 'BEGIN { printf "%.1f", ms / 1000 }')
        row="$row $leg_status ${secs}s$again |"
        [ "$m" = ufs ] && status_ufs=$leg_status
        if [ "$leg_status" = PASS ]; then
            passed=$((passed + 1))
            [ "$keep" = 1 ] || rm -rf "$leg_dir"
        else
            failed=$((failed + 1))
            [ "$leg_status" = ERROR ] && harness=1
            if [ "$m" != ufs ] && [ "$status_ufs" != FAIL ] && [ "$status_ufs" != TIMEOUT ]; then
                bad=1
            fi
            failures="$failures
$label $m (${ranks[$p]} ranks, $leg_status): $leg_why
  kept: $leg_dir; first lines of its output:
$(head -n 12 "$leg_dir/output" | cut -c1-200 | sed 's/^/  | /')"
        fi
    done
    echo "$row"
done
t_all=$(($(date +%s) - t_all))

if [ -n "$rerun" ]; then
    echo
    echo "ufs legs run twice (GlusterFS's EEXIST across nodes, see the top of this script):"
    echo "$rerun" | sed '/^$/d'
fi
if [ -n "$failures" ]; then
    echo
    echo "Failed legs:"
    echo "$failures" | sed '/^$/d'
fi
echo
times=
for m in $modes; do
    times="$times, $m $(awk -v ms="${mode_ms[$m]}" 'BEGIN { printf "%.0f", ms / 1000 }') s"
done
echo "Wall time: ${t_all} s in all (builds included)${times}"
[ "$keep" = 1 ] || rm -rf "$bin"
if [ "$keep" = 0 ] && [ -z "$(ls -A "$work")" ]; then
    rmdir "$work"
else
    echo "Leg directories kept in $work"
fi
echo "romio-tests: $passed passed, $failed failed"
[ "$bad" = 0 ] && [ "$harness" = 0 ] && exit 0
exit 1
