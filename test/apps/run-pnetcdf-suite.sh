#!/bin/bash
# PnetCDF's own test suites rerun through bblog (DESIGN.md section 8, "Apps"; issue 4).
#
# Takes the PnetCDF build tree of scripts/build-pnetcdf.sh (test programs built) and runs, in a
# separate copy of that tree for each run so that no run sees another's files:
#   check   PnetCDF's `make check` (its sequential tests; TESTSEQRUN runs them as singletons)
#   ptest   PnetCDF's `make ptest` (its parallel tests, 4 processes each), one directory at a
#           time, so that a failure in one directory does not hide the others
# each twice:
#   plain   plain ROMIO
#   bblog   ROMIO_FSTYPE_FORCE=bblog:, BBLOG_DIR a fresh directory on /dev/shm, BBLOG_STATS
#           <work>/SUITE-bblog.stats: a bblog run with no stats line fails (no file went
#           through bblog)
# Over a binary MPI with bblog's preloadable layer (the layer-env.sh of scripts/build-layer.sh),
# the layer's bin/bblog-run goes in front of the sequential tests too: they run as singletons,
# without the layer's mpiexec that preloads it, so both runs would otherwise use the binary
# MPI's own ROMIO, which ignores ROMIO_FSTYPE_FORCE=bblog:.
# It prints the pass counts of both runs (check: the automake results of every test, PASS /
# XFAIL / FAIL ...; ptest: one result per directory), every test whose result differs, and
# then compares the files both runs left in the tree (netCDF files: *.nc*, and everything else
# the tests wrote): cmp, and ncmpidiff where bytes differ. After each bblog run the
# burst-buffer directory must hold no file.
# Passes when both runs of a suite have the same results and no output file differs for
# ncmpidiff, except the known differences listed in known_diff below (files that differ in
# bytes but not for ncmpidiff, files that are not netCDF, and files only one run left are
# listed, and do not fail the run).
#
# Usage: run-pnetcdf-suite.sh [check] [ptest]   (default: both)
# Environment:
#   BBLOG_ENV_SCRIPT  the MPI's environment script (default
#                     /var/cache/bblog/current/bin/bblog-env.sh)
#   PNETCDF_DIR       the PnetCDF build of scripts/build-pnetcdf.sh (the directory it writes with
#                     --prefix-out: src/ build/ install/); required
#   PNCSUITE_WORK     where the copies of the tree go (default a new directory under /var/tmp;
#                     about 0.5 GB per run)
#   PNCSUITE_KEEP=1   keep the copies even when everything passed
#   PNCSUITE_TIMEOUT  seconds per PnetCDF test program (default 600)
# Exit: 0 all passed; 1 a difference or a failure; 2 usage or missing prerequisite.
set -u

prog=run-pnetcdf-suite
env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
tmo=${PNCSUITE_TIMEOUT:-600}

die() {
    echo "$prog: $*" >&2
    exit 2
}

suites=()
for a in "$@"; do
    case $a in
    check|ptest) suites+=("$a") ;;
    -h|--help) sed -n '2,38p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) die "unknown argument '$a' (expected check and/or ptest)" ;;
    esac
done
[ ${#suites[@]} -gt 0 ] || suites=(check ptest)

[ -r "$env_script" ] || die "no bblog MPI: $env_script not found (scripts/build-mpi.sh)"
[ -n "${PNETCDF_DIR:-}" ] ||
    die "PNETCDF_DIR not set (scripts/build-pnetcdf.sh --prefix-out FILE writes it to FILE)"
tree=$PNETCDF_DIR/build
[ -f "$tree/Makefile" ] || die "no PnetCDF build tree $tree (scripts/build-pnetcdf.sh)"
[ -f "$PNETCDF_DIR/.tests-done" ] ||
    die "PnetCDF's test programs are not built in $tree (rerun scripts/build-pnetcdf.sh)"
ncmpidiff=$PNETCDF_DIR/install/bin/ncmpidiff
[ -x "$ncmpidiff" ] || die "$ncmpidiff not found"
# shellcheck source=../runner-lib.sh
. "$(dirname "$0")/../runner-lib.sh"
# Set by the layer's layer-env.sh only: not inherited from a layer environment sourced before.
unset BBLOG_LAYER_MPI
# shellcheck source=/dev/null
. "$env_script"
[ -n "${BBLOG_MPI_PREFIX:-}" ] || die "$env_script did not set BBLOG_MPI_PREFIX"
mpiexec=$(command -v mpiexec) || die "no mpiexec after sourcing $env_script"
# hydra's fork launcher; Open MPI's mpiexec starts local processes itself, with no -launcher.
launch=" -launcher fork"
is_ompi && launch=
# What runs a singleton: the program itself, or, over the layer, the program with the layer
# preloaded (the layer's mpiexec preloads it into the processes it starts).
seqrun=
if [ -n "${BBLOG_LAYER_MPI:-}" ]; then
    seqrun=$BBLOG_MPI_PREFIX/bin/bblog-run
    [ -x "$seqrun" ] || die "$env_script is a layer's, but $seqrun is missing"
fi

work=${PNCSUITE_WORK:-$(mktemp -d /var/tmp/bblog-pncsuite.XXXXXX)} || exit 2
mkdir -p "$work" || exit 2
ompi_sessions "$work/ompi" || exit 2
bbroot=/dev/shm
[ -d "$bbroot" ] && [ -w "$bbroot" ] || bbroot=$work
status=0
keep=${PNCSUITE_KEEP:-}

echo "$prog: MPI $mpiexec; PnetCDF tree $tree; work in $work"

# The directories `make ptest` visits, in its order: PTEST_SUBDIRS, recursively, from the top.
ptest_dirs() { # DIR
    local subs d
    subs=$(make -s -C "$1" -f Makefile -f - print-PTEST_SUBDIRS 2>/dev/null <<'EOF'
print-%:
	@echo $($*)
EOF
    )
    if [ -n "$subs" ]; then
        for d in $subs; do
            ptest_dirs "$1/$d"
        done
    elif make -s -C "$1" -n ptest >/dev/null 2>&1; then
        echo "${1#./}"
    fi
}

# run SUITE LEG: copies the tree to $work/SUITE-LEG and runs the suite there; results go to
# $work/SUITE-LEG.results, one "NAME RESULT" line per test.
run() {
    local suite=$1 leg=$2 dir=$work/$1-$2 bb= t0 d rc
    local -a envs=(-u ROMIO_FSTYPE_FORCE -u PNETCDF_HINTS -u BBLOG_STATS)
    rm -rf "$dir"
    cp -a "$tree" "$dir" || exit 2
    touch "$dir/.stamp"
    if [ "$leg" = bblog ]; then
        bb=$(mktemp -d "$bbroot/bblog-pncsuite.XXXXXX") || exit 2
        envs=(-u PNETCDF_HINTS ROMIO_FSTYPE_FORCE=bblog: BBLOG_DIR="$bb"
              BBLOG_STATS="$work/$suite-$leg.stats")
        rm -f "$work/$suite-$leg.stats"
    fi
    # PnetCDF's scripts put $TESTMPIRUN (NP replaced by the process count) and $TESTSEQRUN in
    # front of every program; a timeout there turns a hang into a failure.
    local -a mk=(TESTMPIRUN="timeout -k 10 $tmo $mpiexec$launch -n NP"
                 TESTSEQRUN="timeout -k 10 $tmo${seqrun:+ $seqrun}")
    t0=$(date +%s)
    : >"$work/$suite-$leg.results"
    case $suite in
    check)
        env "${envs[@]}" make -k -C "$dir" check "${mk[@]}" >"$work/$suite-$leg.log" 2>&1
        # The automake result of every test of every directory.
        (cd "$dir" && find . -name '*.trs' -newer .stamp -print0 | sort -z |
            xargs -0 -r grep -H '^:test-result:' |
            sed 's|^\./\(.*\)\.trs::test-result: *\(.*\)|\1 \2|') >>"$work/$suite-$leg.results"
        ;;
    ptest)
        for d in $(cd "$dir" && ptest_dirs .); do
            env "${envs[@]}" make -C "$dir/$d" ptest "${mk[@]}" >>"$work/$suite-$leg.log" 2>&1
            rc=$?
            echo "$d $([ $rc = 0 ] && echo PASS || echo "FAIL")" >>"$work/$suite-$leg.results"
        done
        ;;
    esac
    echo "$(($(date +%s) - t0))" >"$work/$suite-$leg.seconds"
    if [ -n "$bb" ]; then
        if [ ! -s "$work/$suite-$leg.stats" ]; then
            echo "FAIL $suite $leg: no bblog stats line: no file went through bblog"
            status=1
        fi
        if [ -n "$(find "$bb" -type f | head -n 1)" ]; then
            echo "FAIL $suite $leg: files left in the burst buffer $bb:"
            find "$bb" -type f | head -n 10 | sed 's/^/    /'
            status=1
        fi
        rm -rf "$bb"
    fi
}

counts() { # RESULTS-FILE
    awk '{ n[$2]++ } END { for (r in n) printf "%s %d  ", r, n[r] }' "$1" | sed 's/  $//'
}

# Output files known to differ for ncmpidiff, and why. Only bytes the test never wrote differ:
#   i_varn_indef.bb.nc  with PnetCDF's burst buffer on, the test skips clearing the variables
#       (clear_file_contents), so most elements are never written. Plain ROMIO flushes the
#       burst buffer's noncontiguous write with data sieving: it reads the region, which lies
#       past the end of the just-truncated file, and writes back the whole sieve buffer, holes
#       included, holding stale heap bytes (-1 from the test's earlier read buffers). bblog
#       writes only the extents, so the holes read as 0. With romio_ds_write=disable plain ROMIO
#       gives bblog's file byte for byte.
known_diff() { # PATH
    case $1 in
    ./test/nonblocking/i_varn_indef.bb.nc)
        echo "never-written elements: stale bytes of plain ROMIO's data sieving buffer" ;;
    ./test/burst_buffer/bb_nonblocking.nc)
        # bb_nonblocking.c: every rank writes rank+1 into the same elements M[0][0..3] with no
        # synchronisation between the ranks: MPI-IO leaves overlapping writes of different
        # processes undefined outside atomic mode (plain gave 2 every time, bblog 3 or 4).
        echo "all ranks write the same elements concurrently: undefined which rank wins" ;;
    *) return 1 ;;
    esac
}

# compare SUITE: the files both runs wrote (newer than the copy), cmp then ncmpidiff.
compare() {
    local suite=$1 a=$work/$1-plain b=$work/$1-bblog f why same=0 bytes=0 nc=0 only=0 known=0
    (cd "$a" && find . -type f -newer .stamp ! -name '*.log' ! -name '*.trs' \
        ! -name '*.o' ! -name 'Makefile' | sort) >"$work/$suite.files-plain"
    (cd "$b" && find . -type f -newer .stamp ! -name '*.log' ! -name '*.trs' \
        ! -name '*.o' ! -name 'Makefile' | sort) >"$work/$suite.files-bblog"
    : >"$work/$suite.diffs"
    while read -r f; do
        if [ ! -f "$b/$f" ]; then
            echo "only in plain: $f" >>"$work/$suite.diffs"
            only=$((only + 1))
        elif cmp -s "$a/$f" "$b/$f"; then
            same=$((same + 1))
        elif [ "$(head -c 3 "$a/$f")" != CDF ]; then
            echo "bytes differ, not a netCDF file: $f" >>"$work/$suite.diffs"
            bytes=$((bytes + 1))
        elif (unset ROMIO_FSTYPE_FORCE PNETCDF_HINTS
              timeout -k 10 "$tmo" "$ncmpidiff" -q "$a/$f" "$b/$f") >/dev/null 2>&1; then
            echo "bytes differ, ncmpidiff equal: $f ($(cmp -l "$a/$f" "$b/$f" 2>/dev/null |
                wc -l) bytes)" >>"$work/$suite.diffs"
            bytes=$((bytes + 1))
        elif why=$(known_diff "$f"); then
            echo "known difference: $f: $why" >>"$work/$suite.diffs"
            known=$((known + 1))
        else
            echo "DIFFERENT: $f ($(cmp "$a/$f" "$b/$f" 2>&1 | head -c 160))" \
                >>"$work/$suite.diffs"
            (unset ROMIO_FSTYPE_FORCE PNETCDF_HINTS
             timeout -k 10 "$tmo" "$ncmpidiff" "$a/$f" "$b/$f") 2>&1 | head -n 8 |
                sed 's/^/    ncmpidiff: /' >>"$work/$suite.diffs"
            nc=$((nc + 1))
        fi
    done <"$work/$suite.files-plain"
    comm -13 "$work/$suite.files-plain" "$work/$suite.files-bblog" |
        sed 's/^/only in bblog: /' >>"$work/$suite.diffs"
    only=$((only + $(comm -13 "$work/$suite.files-plain" "$work/$suite.files-bblog" | wc -l)))
    echo "$suite: output files: $same equal byte for byte, $bytes equal for ncmpidiff only" \
        "(or not netCDF), $known known differences, $nc different, $only in one run only"
    if [ -s "$work/$suite.diffs" ]; then
        sed 's/^/  /' "$work/$suite.diffs"
    fi
    [ "$nc" = 0 ] || status=1
}

for suite in "${suites[@]}"; do
    for leg in plain bblog; do
        echo "$prog: $suite, $leg ..."
        run "$suite" "$leg"
    done
    pl=$work/$suite-plain.results bl=$work/$suite-bblog.results
    echo "$suite plain: $(counts "$pl") ($(cat "$work/$suite-plain.seconds") s)"
    echo "$suite bblog: $(counts "$bl") ($(cat "$work/$suite-bblog.seconds") s;" \
        "$(cat "$work/$suite-bblog.stats" 2>/dev/null | grep -c .) files closed by bblog)"
    if [ ! -s "$pl" ]; then
        echo "FAIL $suite: the plain run gave no results (log $work/$suite-plain.log)"
        status=1
    fi
    if ! diff <(sort "$pl") <(sort "$bl") >"$work/$suite.resdiff"; then
        echo "FAIL $suite: results differ (< plain, > bblog):"
        grep '^[<>]' "$work/$suite.resdiff" | sed 's/^/  /'
        status=1
    fi
    grep -v ' PASS$\| XFAIL$' "$pl" | sed "s/^/  $suite plain, not passed: /"
    compare "$suite"
done

if [ "$status" = 0 ] && [ -z "$keep" ]; then
    for suite in "${suites[@]}"; do
        rm -rf "$work/$suite-plain" "$work/$suite-bblog"
    done
    echo "$prog: logs and results in $work"
else
    echo "$prog: work directory kept: $work"
fi
if [ "$status" = 0 ]; then
    echo "$prog: PASS: plain and bblog agree"
else
    echo "$prog: FAIL"
fi
exit "$status"
