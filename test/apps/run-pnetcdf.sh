#!/bin/bash
# Application tests of bblog: PnetCDF (DESIGN.md section 8, "Apps").
#
# Compiles test/apps/pnc_*.c with the mpicc of the bblog MPI against the PnetCDF that
# scripts/build-pnetcdf.sh built on that MPI, then runs every case three ways into a fresh
# directory:
#   ufs    ufs:$dir/ufs.nc      plain ROMIO, the reference
#   bblog  bblog:$dir/bb.nc     the driver, by prefix
#   force  $dir/force.nc        the driver, by ROMIO_FSTYPE_FORCE=bblog:
# each with BBLOG_DIR set to a fresh burst-buffer directory on /dev/shm. A leg passes when the
# program exits 0 (it reads back what it wrote: its own data at once, other ranks' after
# ncmpi_sync, everything after re-open; and it checks from the file's hints that bblog is, or
# is not, underneath), its file equals the ufs leg's for ncmpidiff and byte for byte (cmp), and
# the burst-buffer directories hold no file afterwards.
#
# Programs (argv[2] is the write mode: coll, indep or nb; see pnc_common.h):
#   pnc_record   record variables appended step by step with ncmpi_sync between steps, block
#                and strided (put_vars) writes, a restart that grows the header and adds a
#                variable (PnetCDF moves the data), more steps
#   pnc_btio     BT-IO's pattern: 3-D block decomposition of a 5-component grid, ghosted
#                buffers written through a subarray datatype (flexible API), one record a step;
#                nb: all steps as iput requests and one ncmpi_wait_all
# Variant, by case name suffix:
#   [bb]         PnetCDF's own burst-buffer driver stacked on top (PNETCDF_HINTS=nc_burst_buf=
#                enable, its nc_burst_buf_dirname a fresh directory on /dev/shm); the ufs leg is
#                then PnetCDF's burst buffer on plain ROMIO
#   [fill]       PNCT_FILL=fill: pnc_btio in NC_FILL mode. ncmpi_enddef writes fill values into
#                the fixed-size variable, each rank a share, and the ranks then write their
#                blocks over other ranks' fill without MPI_File_sync (PnetCDF syncs there only for
#                NC_SHARE files): bblog orders that write-after-write by the collective calls
#                between the two writes (ad_bblog_base_order.c).
#   [share]      PNCT_FILL=share: the same, in a file created NC_SHARE, so PnetCDF calls
#                MPI_File_sync after the fill; in the default run.
#
# Usage: run-pnetcdf.sh [PATTERN...]   only cases whose name matches one of the shell patterns
#        (names as printed: pnc_record, pnc_btio[bb], ...)
# Environment:
#   BBLOG_ENV_SCRIPT  the MPI's environment script (make check passes configure's
#                     --with-bblog-mpi value; "no": not configured, skip);
#                     default /var/cache/bblog/current/bin/bblog-env.sh
#   PNETCDF_DIR       the PnetCDF build of scripts/build-pnetcdf.sh (the directory it writes with
#                     --prefix-out, holding install/), or an install prefix (include/pnetcdf.h,
#                     lib/libpnetcdf.a, bin/ncmpidiff); make check passes configure's
#                     --with-pnetcdf value ("no": not configured, skip)
#   CI                when set, a missing MPI or PnetCDF is a failure instead of a skip
#   PNCTEST_BUILD     where the programs are compiled (default test/apps/build under $PWD when
#                     run by make check, else a temporary directory)
#   PNCTEST_KEEP=1    keep the work directory even when everything passed
#   PNCTEST_TIMEOUT   seconds per mpiexec (default 120)
# Exit: 0 all passed; 1 something failed; 77 skip: no bblog MPI or no PnetCDF and CI unset.
set -u

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
pnc_dir=${PNETCDF_DIR:-no}
tmo=${PNCTEST_TIMEOUT:-120}

skip_or_fail() {
    if [ -n "${CI:-}" ]; then
        echo "run-pnetcdf: $* (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-pnetcdf: $*; skipping"
    exit 77
}

if [ "$env_script" = no ]; then
    echo "run-pnetcdf: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
[ -r "$env_script" ] || skip_or_fail "no bblog MPI: $env_script not found"
[ "$pnc_dir" != no ] || skip_or_fail "no PnetCDF: configure --with-pnetcdf=DIR or set" \
    "PNETCDF_DIR (scripts/build-pnetcdf.sh --prefix-out FILE writes DIR)"
if [ -r "$pnc_dir/install/include/pnetcdf.h" ]; then
    pnc=$pnc_dir/install
elif [ -r "$pnc_dir/include/pnetcdf.h" ]; then
    pnc=$pnc_dir
else
    skip_or_fail "no PnetCDF in $pnc_dir: neither install/include/pnetcdf.h nor" \
        "include/pnetcdf.h there (scripts/build-pnetcdf.sh)"
fi
ncmpidiff=$pnc/bin/ncmpidiff
[ -x "$ncmpidiff" ] || skip_or_fail "$ncmpidiff not found (scripts/build-pnetcdf.sh)"
# shellcheck source=/dev/null
. "$env_script"
for tool in mpicc mpiexec; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run-pnetcdf: $tool not found after sourcing $env_script" >&2
        exit 1
    fi
done
if [ -z "${BBLOG_MPI_PREFIX:-}" ]; then
    echo "run-pnetcdf: $env_script did not set BBLOG_MPI_PREFIX" >&2
    exit 1
fi

if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/apps/pnc_common.h" ]; then
    src=$(cd "$srcdir/test/apps" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-pnctest.XXXXXX") || exit 1
if [ -n "${PNCTEST_BUILD:-}" ]; then
    bin=$PNCTEST_BUILD
elif [ -n "${srcdir:-}" ]; then
    bin=$PWD/test/apps/build
else
    bin=$work/bin
fi
mkdir -p "$bin" || exit 1

programs="pnc_record pnc_btio"
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
        -Werror"

echo "run-pnetcdf: MPI: $(command -v mpicc) ($env_script)"
echo "run-pnetcdf: PnetCDF: $pnc ($("$pnc/bin/pnetcdf-config" --version 2>/dev/null))"
echo "run-pnetcdf: sources $src, programs in $bin, work in $work"
t_start=$(date +%s%N)
# shellcheck disable=SC2086
if ! mpicc $cflags -I"$pnc/include" -I"$src" -c "$src/pnc_common.c" -o "$bin/pnc_common.o"; then
    echo "run-pnetcdf: cannot compile pnc_common.c" >&2
    exit 1
fi
for p in $programs; do
    # shellcheck disable=SC2086
    if ! mpicc $cflags -I"$pnc/include" -I"$src" "$src/$p.c" "$bin/pnc_common.o" \
        -L"$pnc/lib" -lpnetcdf -lm -o "$bin/$p"; then
        echo "run-pnetcdf: cannot compile $p.c" >&2
        exit 1
    fi
done

# shellcheck source=../runner-lib.sh
. "$src/../runner-lib.sh"

passed=0
failed=0
failures=
keep_work=${PNCTEST_KEEP:-}
patterns=("$@")

bbroot=/dev/shm
[ -d "$bbroot" ] && [ -w "$bbroot" ] || bbroot=$work

# run_case NAME PROG N MODE BB FILL   (BB: 1 stacks PnetCDF's burst-buffer driver on top; FILL:
# PNCT_FILL, - for none)
run_case() {
    local name=$1 prog=$2 n=$3 mode=$4 pbb_on=$5 fill=$6
    local dir=$work/$name.$n.$mode leg target file bb pbb log rc why left t0 ref_ok=0
    local -a envs
    mkdir -p "$dir"
    for leg in ufs bblog force; do
        bb=$(mktemp -d "$bbroot/bblog-bb.XXXXXX") || exit 1
        pbb=$(mktemp -d "$bbroot/bblog-pncbb.XXXXXX") || exit 1
        envs=(BBLOG_DIR="$bb" PNCT_EXPECT_BB="$pbb_on")
        case $leg in
        ufs) file=$dir/ufs.nc target=ufs:$dir/ufs.nc envs+=(PNCT_EXPECT_BBLOG=0) ;;
        bblog) file=$dir/bb.nc target=bblog:$dir/bb.nc envs+=(PNCT_EXPECT_BBLOG=1) ;;
        force)
            file=$dir/force.nc target=$dir/force.nc
            envs+=(PNCT_EXPECT_BBLOG=1 ROMIO_FSTYPE_FORCE=bblog:)
            ;;
        esac
        [ "$pbb_on" = 1 ] && envs+=(PNETCDF_HINTS="nc_burst_buf=enable;nc_burst_buf_dirname=$pbb")
        [ "$fill" != - ] && envs+=(PNCT_FILL="$fill")
        log=$dir/$leg.log
        t0=$(date +%s%N)
        (
            unset ROMIO_FSTYPE_FORCE PNETCDF_HINTS PNCT_FILL
            for e in "${envs[@]}"; do
                export "${e?}"
            done
            exec timeout -k 10 "$tmo" mpiexec -launcher fork -n "$n" "$bin/$prog" "$target" \
                "$mode"
        ) >"$log" 2>&1
        rc=$?
        echo "$(( ($(date +%s%N) - t0) / 1000000 )) $name.$n.$mode $leg" >>"$work/timings"
        why=
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            why="timeout after $tmo s"
        elif [ "$rc" != 0 ]; then
            why="exit status $rc"
        fi
        left=$(find "$bb" "$pbb" -type f 2>/dev/null | head -n 5)
        [ -n "$left" ] && why="${why:+$why; }files left in a burst-buffer directory: $(echo $left)"
        if [ "$leg" = ufs ]; then
            [ -z "$why" ] && ref_ok=1
        elif [ "$ref_ok" = 0 ]; then
            why="${why:+$why; }no reference (the ufs leg failed)"
        elif [ ! -f "$file" ]; then
            why="${why:+$why; }no file $file"
        else
            # ncmpidiff is an MPI program of the bblog MPI: run as a singleton, plain ROMIO.
            if ! (unset ROMIO_FSTYPE_FORCE PNETCDF_HINTS
                  exec timeout -k 10 "$tmo" "$ncmpidiff" "$dir/ufs.nc" "$file") \
                >"$dir/$leg.ncmpidiff" 2>&1; then
                why="${why:+$why; }ncmpidiff finds differences from ufs.nc"
            fi
            if ! cmp "$dir/ufs.nc" "$file" >"$dir/$leg.cmp" 2>&1; then
                why="${why:+$why; }not byte for byte equal to ufs.nc ($(cmp -l "$dir/ufs.nc" \
                    "$file" 2>/dev/null | wc -l) bytes differ; $(head -c 200 "$dir/$leg.cmp"))"
            fi
        fi
        if [ -z "$why" ]; then
            report PASS "$name" "$n" "$mode $leg"
        else
            report FAIL "$name" "$n" "$mode $leg" "$why"
            [ -s "$dir/$leg.ncmpidiff" ] && head -n 20 "$dir/$leg.ncmpidiff" |
                sed 's/^/    ncmpidiff: /'
            show_log "$log"
        fi
        rm -rf "$bb" "$pbb"
    done
}

# name              program      ranks     modes           PnetCDF bb  PNCT_FILL
cases=(
    "pnc_record      pnc_record   1 2 3 4   coll,indep,nb   0           -"
    "pnc_btio        pnc_btio     1 2 3 4   coll,indep,nb   0           -"
    "pnc_record[bb]  pnc_record   2 4       coll,nb         1           -"
    "pnc_btio[bb]    pnc_btio     2 3       coll,nb         1           -"
    "pnc_btio[share] pnc_btio     4         coll,indep      0           share"
    "pnc_btio[fill]  pnc_btio     2 3 4     coll,indep      0           fill"
)
for c in "${cases[@]}"; do
    read -r name prog rest <<<"$c"
    ranks=
    set -- $rest
    while [ $# -gt 3 ] && [[ $1 =~ ^[0-9]+$ ]]; do
        ranks="$ranks $1"
        shift
    done
    modes=$1
    pbb_on=$2
    fill=$3
    selected "$name" || named "$name" || continue
    for n in $ranks; do
        for m in ${modes//,/ }; do
            run_case "$name" "$prog" "$n" "$m" "$pbb_on" "$fill"
        done
    done
done

if [ -s "$work/timings" ]; then
    echo "run-pnetcdf: slowest runs (ms):"
    sort -rn "$work/timings" | head -n 5 | sed 's/^/  /'
    echo "run-pnetcdf: $(wc -l <"$work/timings") mpiexec runs in" \
        "$(( ($(date +%s%N) - t_start) / 1000000 )) ms, compilation included"
fi
if [ -n "$failures" ]; then
    echo "failed:$failures"
fi
if [ -z "$keep_work" ]; then
    rm -rf "$work"
else
    echo "run-pnetcdf: work directory kept: $work"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
