#!/bin/sh
# run-hdf5-testpar.sh: HDF5's own parallel tests (testpar/) through bblog (issue 18; DESIGN.md
# section 8, "Apps").
#
# Runs the testpar programs built by scripts/build-hdf5.sh, unchanged, at HDF5's default 6
# processes, in each mode:
#   ufs     ROMIO_FSTYPE_FORCE=ufs:     plain ROMIO, the reference
#   bblog   ROMIO_FSTYPE_FORCE=bblog:   BBLOG_DIR a fresh burst-buffer directory
# Every run has a fresh scratch directory S: HDF5_PARAPREFIX=S/pfs (unprefixed: some programs
# also open their files with HDF5's POSIX driver), the program runs in S/cwd (some write files
# there), BBLOG_DIR=S/bb. t_pflush2 reads the files t_pflush1 left, t_prestart those of
# t_pshutdown: each pair shares a scratch directory and runs in that order (asking for the
# second program runs the first too).
# A run passes when the program exits 0 within the timeout and prints no failure (*FAILED*,
# ***FAILED, "detected N errors", "N TEST ERRORS OCCURRED", "N errors found", "N Error(s) were
# detected", *** ERROR, *** Parallel ERROR). As in HDF5's testpflush.sh and CMake tests,
# t_pflush1's exit status is not looked at (it _exit()s with 1, without MPI_Finalize, by
# design): it passes when rank 0 printed PASSED and no failure.
# A bblog run that passed fails if it left any file in its burst-buffer directory.
# Prints a table (program | ufs | bblog: result and seconds), the failure lines of every failed
# run, and closes with
#   hdf5-testpar: N passed, M failed
# counting the bblog results of the programs that pass through ufs (a program that fails through
# ufs too is named on the line before, and not counted); with one mode, that mode's results.
#
# Without --programs or --all it runs the CI subset: every program but t_bigio (a minute a
# run), t_cache (over 10 minutes) and t_cache_image (fails through ufs too; HDF5's CMake tests
# leave it out), at HDF5's smoke-test level (HDF5TestExpress=3), testphdf5 and t_shapesame
# without their slowest subtests ($ci_args below, HDF5's own -x option): about 3 minutes a mode
# on 2 cores. `run-hdf5-testpar.sh --all --timeout 2400` runs every program, all of it, at
# HDF5's default level (over 40 minutes a mode).
# Each rank's stdout is line-buffered (stdbuf -oL), so that what a rank printed before
# MPI_Abort reaches the log.
#
# Usage: run-hdf5-testpar.sh [--build-dir DIR] [--mpi-env FILE] [--programs "P ..." | --all]
#                            [--modes "ufs bblog"] [--express N] [--args "PROG ARGS"]...
#                            [--np N] [--timeout S] [--work DIR] [--bb-root DIR] [--keep]
#                            [--ufs-if-failed]
#   --build-dir DIR  the build of scripts/build-hdf5.sh (what its --prefix-out writes); default
#                    ${BBLOG_CACHE:-/var/cache/bblog}/hdf5-current
#   --mpi-env FILE   the MPI: the file of `build-mpi.sh --env-out`, or its bblog-env.sh; default
#                    ${BBLOG_CACHE:-/var/cache/bblog}/current/bin/bblog-env.sh
#   --programs LIST  the programs to run (all of each, HDF5's default level); default the CI
#                    subset
#   --all            every testpar program
#   --express N      HDF5TestExpress for every program (0 exhaustive ... 3 smoke test)
#   --args "PROG ARGS"  command-line arguments of PROG, e.g. --args "testphdf5 -o split" (runs
#                    that subtest alone); repeatable; replaces the CI subset's arguments
#   --np N           processes per program (default 6, HDF5's default)
#   --timeout S      seconds per program run (default 600)
#   --work DIR       logs and scratch directories (default a new directory under /var/tmp); the
#                    scratch directories are removed when nothing failed, unless --keep
#   --bb-root DIR    the bblog runs' burst-buffer directories in a new directory under DIR (e.g.
#                    /dev/shm) instead of each scratch directory's bb/; removed with them
#   --ufs-if-failed  with both modes: every program through bblog first, and through ufs only
#                    when one failed through bblog (then all of them, since pairs share files),
#                    to tell whether the failure is bblog's; the programs check their own
#                    results, so a run where all pass through bblog needs no reference (CI)
# With MPITEST_CLUSTER=HOSTS (e.g. n1:3,n2:3; scripts/cluster.sh up first) the programs run
# across the emulated cluster's nodes: the script re-runs itself in node n1, mpiexec goes through
# the cluster (hydra's ssh), the work directory is on the cluster's PFS (unless --work) and each
# run's BBLOG_DIR on every node's own burst buffer, checked for logs left on every node.
# Exit: 0 when no program fails through bblog that passes through ufs (one mode: none fails);
# 1 otherwise; 2 usage or missing prerequisite.
set -eu

cluster_sh=$(cd "$(dirname "$0")/../../scripts" && pwd)/cluster.sh
if [ -n "${MPITEST_CLUSTER:-}" ] && [ "$(ip netns identify $$ 2>/dev/null)" != "${CLUSTER_PFX:-bbc}-n1" ]; then
    exec "$cluster_sh" exec n1 "$0" "$@"
fi
CLUSTER_NODES= CLUSTER_BB= CLUSTER_PFS=
launch="-launcher fork"
if [ -n "${MPITEST_CLUSTER:-}" ]; then
    eval "$("$cluster_sh" env)"
    launch="-launcher ssh -launcher-exec $cluster_sh -hosts $MPITEST_CLUSTER"
fi
on_all() { # CMD...: here and, on the cluster, on every other node
    "$@" || return 1
    for n in $CLUSTER_NODES; do
        [ "$n" = n1 ] || "$cluster_sh" exec "$n" "$@" || return 1
    done
}

prog=hdf5-testpar
cache=${BBLOG_CACHE:-/var/cache/bblog}
# The CI subset (see above). Seconds a run through ufs, 6 processes on 2 cores, of the
# subtests it leaves out: testphdf5 cngrpw-ingrpr 90, cchunk1 to cchunk10 13-21 each, actualio
# 22; t_shapesame (at HDF5TestExpress=3) sscontig4 28, sschecker3 19, sschecker4 28.
ci_programs="t_mpi testphdf5 t_filters_parallel t_shapesame t_pread t_pshutdown t_prestart
    t_init_term t_pflush1 t_pflush2"
ci_args="testphdf5 -x cngrpw-ingrpr -x cchunk1 -x cchunk2 -x cchunk3 -x cchunk4 -x cchunk5
    -x cchunk6 -x cchunk7 -x cchunk8 -x cchunk9 -x cchunk10 -x actualio
t_shapesame -x sscontig4 -x sschecker3 -x sschecker4"
ci_express=3
build_dir=$cache/hdf5-current
mpi_env=
programs=ci
express=
args=
modes="ufs bblog"
np=6
tmo=600
work=
bb_root=
keep=
ufs_if_failed=

die() {
    echo "$prog: $*" >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --build-dir) [ $# -ge 2 ] || die "--build-dir needs a directory"; build_dir=$2; shift 2 ;;
    --mpi-env) [ $# -ge 2 ] || die "--mpi-env needs a file"; mpi_env=$2; shift 2 ;;
    --programs) [ $# -ge 2 ] || die "--programs needs a list"; programs=$2; shift 2 ;;
    --all) programs=all; shift ;;
    --modes) [ $# -ge 2 ] || die "--modes needs a list"; modes=$2; shift 2 ;;
    --express) [ $# -ge 2 ] || die "--express needs a level"; express=$2; shift 2 ;;
    --args) [ $# -ge 2 ] || die "--args needs \"PROG ARGS\""; args="$args
$2"; shift 2 ;;
    --np) [ $# -ge 2 ] || die "--np needs a number"; np=$2; shift 2 ;;
    --timeout) [ $# -ge 2 ] || die "--timeout needs seconds"; tmo=$2; shift 2 ;;
    --work) [ $# -ge 2 ] || die "--work needs a directory"; work=$2; shift 2 ;;
    --bb-root) [ $# -ge 2 ] || die "--bb-root needs a directory"; bb_root=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    --ufs-if-failed) ufs_if_failed=1; shift ;;
    -h|--help) sed -n '2,64p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument $1" ;;
    esac
done
for m in $modes; do
    case $m in ufs|bblog) ;; *) die "unknown mode '$m' (expected ufs and/or bblog)" ;; esac
done
[ -n "$modes" ] || die "--modes is empty"

# The MPI, as scripts/build-hdf5.sh finds it.
if [ -z "$mpi_env" ]; then
    env_script=$cache/current/bin/bblog-env.sh
elif grep -q BBLOG_MPI_PREFIX "$mpi_env" 2>/dev/null; then
    env_script=$mpi_env
else
    [ -r "$mpi_env" ] || die "--mpi-env: cannot read $mpi_env"
    env_script=$(head -n 1 "$mpi_env")
fi
[ -r "$env_script" ] || die "no bblog MPI: $env_script not found (scripts/build-mpi.sh)"
# shellcheck source=/dev/null
. "$env_script"
# shellcheck source=../runner-lib.sh
. "$(dirname "$0")/../runner-lib.sh"
# Open MPI's mpiexec starts local processes itself and has no -launcher.
if [ -z "${MPITEST_CLUSTER:-}" ] && is_ompi; then
    launch=
fi
[ -n "${BBLOG_MPI_PREFIX:-}" ] || die "$env_script did not set BBLOG_MPI_PREFIX"
mpiexec=$(command -v mpiexec) || die "no mpiexec after sourcing $env_script"

bin=$build_dir/build/testpar
[ -f "$build_dir/.done" ] && [ -r "$build_dir/testpar-programs" ] ||
    die "no HDF5 testpar build in $build_dir (scripts/build-hdf5.sh)"
known=$(cat "$build_dir/testpar-programs")
case $programs in
all) programs=$known ;;
ci)
    programs=$ci_programs
    express=${express:-$ci_express}
    args="$ci_args$args"
    ;;
esac
# One line, single spaces (the lists above span lines).
programs=$(echo $programs)
for p in $programs; do
    case " $known " in *" $p "*) ;; *) die "no testpar program '$p' (known: $known)" ;; esac
done
# The first of each pair runs too, before the second: HDF5's order (testpar-programs) has it so.
case " $programs " in *" t_pflush2 "*) programs="$programs t_pflush1" ;; esac
case " $programs " in *" t_prestart "*) programs="$programs t_pshutdown" ;; esac
list=
for p in $known; do
    case " $programs " in *" $p "*) list="$list $p" ;; esac
done

work=${work:-$(mktemp -d "${CLUSTER_PFS:-/var/tmp}/bblog-h5testpar.XXXXXX")}
mkdir -p "$work"
ompi_sessions "$work/ompi" || die "cannot make $work/ompi"
if [ -n "$bb_root" ]; then
    mkdir -p "$bb_root" && bb_root=$(mktemp -d "$bb_root/bblog-h5testpar.XXXXXX") ||
        die "cannot make a directory under $bb_root"
fi
: >"$work/results"
unset HDF5_DRIVER HDF5_NOCLEANUP HDF5_PARAPREFIX BBLOG_DIR HDF5TestExpress
if [ -n "$express" ]; then
    HDF5TestExpress=$express
    export HDF5TestExpress
fi
echo "$prog: $mpiexec -n $np; programs in $bin; modes $modes; work in $work${bb_root:+; burst buffers in $bb_root}"
echo "$prog: HDF5TestExpress=${express:-unset (HDF5's default)}"

# The arguments of PROG: the last "PROG ARGS" line of $args (continuation lines join the line
# before: they start with a blank).
args_of() { # PROG
    printf '%s\n' "$args" | awk -v p="$1" '
        /^[ \t]/ { if (cur) a = a " " $0; next }
        { cur = ($1 == p) } cur { a = ""; for (i = 2; i <= NF; i++) a = a " " $i }
        END { $0 = a; $1 = $1; print }'
}
for p in $list; do
    a=$(args_of "$p")
    [ -z "$a" ] || echo "$prog: $p $a"
done

# Failure lines of the testpar programs (testpar.h, h5test.h and each program's summary).
fail_re='FAILED|detected [1-9][0-9]* errors|[1-9][0-9]* TEST ERRORS? OCCURRED'
fail_re="$fail_re|[1-9][0-9]* (data )?errors (found|detected)"
fail_re="$fail_re|[1-9][0-9]* Error\(s\) were detected|\*\*\* ?(Parallel )?ERROR"

now_ms() { date +%s%N | cut -c1-13; }

# run_one PROG MODE: one run; appends "PROG MODE RESULT SECONDS" to $work/results.
run_one() {
    p=$1 mode=$2
    case $p in t_pflush2) group=t_pflush1 ;; t_prestart) group=t_pshutdown ;; *) group=$p ;; esac
    s=$work/$mode/$group
    bbd=$s/bb
    [ -z "$bb_root" ] || bbd=$bb_root/$mode.$group
    [ -z "$CLUSTER_BB" ] || bbd=$CLUSTER_BB/${work##*/}.$mode.$group
    if [ "$group" = "$p" ]; then
        rm -rf "$s"
        mkdir -p "$s/cwd" "$s/pfs"
        on_all rm -rf "$bbd"
        on_all mkdir -p "$bbd"
    fi
    log=$work/$mode-$p.log
    a=$(args_of "$p")
    t=$(now_ms)
    rc=0
    (cd "$s/cwd" && HDF5_PARAPREFIX=$s/pfs ROMIO_FSTYPE_FORCE=$mode: BBLOG_DIR=$bbd \
        srcdir=$bin timeout -k 10 "$tmo" "$mpiexec" $launch -n "$np" \
        stdbuf -oL "$bin/$p" $a) \
        >"$log" 2>&1 || rc=$?
    t=$(($(now_ms) - t))
    secs=$((t / 1000)).$((t % 1000 / 100))
    if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
        res=TIMEOUT
    elif grep -Eq "$fail_re" "$log"; then
        res=FAIL
    elif [ "$p" = t_pflush1 ]; then
        if grep -q PASSED "$log"; then res=PASS; else res=FAIL; fi
    elif [ "$rc" = 0 ]; then
        res=PASS
    else
        res=FAIL
    fi
    if [ "$mode" = bblog ] && [ "$res" = PASS ] &&
        [ -n "$(on_all find "$bbd" -type f | head -n 1)" ]; then
        res=LEFT-LOGS
        on_all find "$bbd" -type f | head -n 10 | sed 's/^/    left in the burst buffer: /' >>"$log"
    fi
    echo "$p $mode $res $secs" >>"$work/results"
    printf '%s: %-20s %-6s %-9s %6s s (exit %s)\n' "$prog" "$p" "$mode" "$res" "$secs" "$rc"
}

run_modes=$modes
[ -n "$ufs_if_failed" ] && [ "$modes" != bblog ] && [ "$modes" != ufs ] && run_modes=bblog
for p in $list; do
    for mode in $run_modes; do
        run_one "$p" "$mode"
    done
done
if [ "$run_modes" != "$modes" ] && grep -qv ' PASS ' "$work/results"; then
    echo "$prog: a program failed through bblog: every program through ufs, for reference"
    for p in $list; do
        run_one "$p" ufs
    done
fi

result() { # PROG MODE -> "RESULT SECONDS", or "-" when not run
    awk -v p="$1" -v m="$2" '$1 == p && $2 == m { r = $3 " " $4 } END { print r ? r : "-" }' \
        "$work/results"
}

cell() { # "RESULT SECONDS" or "-"
    if [ "$1" = - ]; then echo -; else echo "${1%% *} (${1#* } s)"; fi
}
echo
printf '%-20s | %-18s | %-18s\n' program ufs bblog
printf '%-20s | %-18s | %-18s\n' -------------------- ------------------ ------------------
for p in $list; do
    printf '%-20s | %-18s | %-18s\n' "$p" "$(cell "$(result "$p" ufs)")" \
        "$(cell "$(result "$p" bblog)")"
done
echo

# Failure lines of every failed run (the first ones; the whole output is in the log).
while read -r p mode res secs; do
    [ "$res" = PASS ] && continue
    echo "$p through $mode: $res ($work/$mode-$p.log):"
    { grep -E "$fail_re|[Ee]rror|failed|[Aa]bort|drained|left in the burst" "$work/$mode-$p.log" ||
        tail -n 8 "$work/$mode-$p.log"; } | awk '!seen[$0]++' | head -n 12 | sed 's/^/    /'
done <"$work/results"

# The count: bblog against the ufs pass list; with one mode, that mode.
set -- $modes
ref=ufs
[ $# = 1 ] && ref=$1
counted=bblog
case " $modes " in *" bblog "*) ;; *) counted=$ref ;; esac
passed=0 failed=0 ufs_fail=
for p in $list; do
    r=$(result "$p" "$ref") c=$(result "$p" "$counted")
    if [ "$r" != - ] && [ "${r%% *}" != PASS ] && [ "$ref" != "$counted" ]; then
        ufs_fail="$ufs_fail $p"
    elif [ "${c%% *}" = PASS ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
    fi
done
[ -z "$ufs_fail" ] ||
    echo "$prog: not counted, failing through ufs too:$ufs_fail"
if [ "$failed" = 0 ] && [ -z "$keep" ]; then
    rm -rf "$work/ufs" "$work/bblog"
    [ -z "$bb_root" ] || rm -rf "$bb_root"
    echo "$prog: logs in $work"
else
    echo "$prog: logs and scratch directories kept in $work${bb_root:+ and $bb_root}"
fi
echo "$prog: $passed passed, $failed failed"
[ "$failed" = 0 ] && [ "$passed" -gt 0 ]
