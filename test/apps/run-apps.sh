#!/bin/bash
# Application tests of bblog: HDF5 (DESIGN.md section 8, "Apps").
#
# Compiles test/apps/h5_*.c with the mpicc of the bblog MPI against Debian's parallel HDF5
# (libhdf5-mpich-dev, HDF5 1.10, linked to libmpich.so.12, which the bblog MPI provides), checks
# with ldd that every program resolves libmpi.so.12 and libmpich.so.12 to the bblog MPI (the
# programs check it again at run time, from the libraries actually loaded), then runs every
# case three ways into a fresh directory:
#   ufs    ufs:$dir/ufs.h5      plain ROMIO, the reference
#   bblog  bblog:$dir/bb.h5     the driver, by prefix
#   force  $dir/force.h5        the driver, by ROMIO_FSTYPE_FORCE=bblog:
# each with BBLOG_DIR set to a fresh burst-buffer directory on /dev/shm. A leg passes when the
# program exits 0 (it reads back everything it wrote, before close and after re-open), h5diff
# finds no difference between its file and the ufs leg's, and the burst-buffer directory is
# empty afterwards. Byte equality is not required (HDF5 leaves bytes outside any object
# undefined); legs whose file differs from ufs in bytes only are counted in a NOTE.
#
# Variants, by case name suffix:
#   [mdc]        APPS_MDC=small: a 16 KiB metadata cache without resizing, no metadata block
#                aggregation, distributed collective metadata writes (many small metadata
#                writes from every rank, all through the run)
#   [filesync]   HDF5_DO_MPI_FILE_SYNC=1; only if the HDF5 library knows the variable (1.10.8
#                does not: a NOTE says so)
#   [fill]       APPS_FILL=default: chunks keep HDF5's default fill, written at creation by all
#                ranks and then overwritten by other ranks without MPI_File_sync (bblog orders
#                that write-after-write by the collective calls between, ad_bblog_base_order.c)
#
# Usage: run-apps.sh [PATTERN...]   only cases whose name matches one of the shell patterns
#        (names as printed: h5_blocks, h5_extend[mdc], ldd, ...)
# Environment:
#   BBLOG_ENV_SCRIPT  the MPI's environment script (make check passes configure's
#                     --with-bblog-mpi value; "no": not configured, skip);
#                     default /var/cache/bblog/current/bin/bblog-env.sh
#   CI                when set, a missing MPI or HDF5 is a failure instead of a skip
#   HDF5_CFLAGS, HDF5_LIBS   how to compile and link against parallel HDF5 (default Debian's
#                     hdf5-mpich: -I/usr/include/hdf5/mpich, -L$libdir/hdf5/mpich -lhdf5)
#   APPTEST_BUILD     where the programs are compiled (default test/apps/build under $PWD when
#                     run by make check, else a temporary directory)
#   APPTEST_KEEP=1    keep the work directory even when everything passed
#   APPTEST_TIMEOUT   seconds per mpiexec (default 120)
# Exit: 0 all passed; 1 something failed; 77 skip: no bblog MPI or no HDF5 and CI unset, or make
# check in a tree configured without --with-bblog-mpi.
set -u

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
tmo=${APPTEST_TIMEOUT:-120}

skip_or_fail() {
    if [ -n "${CI:-}" ]; then
        echo "run-apps: $* (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-apps: $*; skipping"
    exit 77
}

if [ "$env_script" = no ]; then
    echo "run-apps: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
[ -r "$env_script" ] || skip_or_fail "no bblog MPI: $env_script not found"
# shellcheck source=/dev/null
. "$env_script"
for tool in mpicc mpiexec; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run-apps: $tool not found after sourcing $env_script" >&2
        exit 1
    fi
done
if [ -z "${BBLOG_MPI_PREFIX:-}" ]; then
    echo "run-apps: $env_script did not set BBLOG_MPI_PREFIX" >&2
    exit 1
fi

multiarch=$(gcc -print-multiarch 2>/dev/null)
hdf5_libdir=/usr/lib/${multiarch:-x86_64-linux-gnu}/hdf5/mpich
hdf5_cflags=${HDF5_CFLAGS:--I/usr/include/hdf5/mpich}
hdf5_libs=${HDF5_LIBS:--L$hdf5_libdir -lhdf5}
if [ -z "${HDF5_CFLAGS:-}" ] && [ ! -r /usr/include/hdf5/mpich/hdf5.h ]; then
    skip_or_fail "no parallel HDF5: /usr/include/hdf5/mpich/hdf5.h not found" \
        "(libhdf5-mpich-dev, scripts/install-deps.sh)"
fi
command -v h5diff >/dev/null 2>&1 || skip_or_fail "h5diff not found (hdf5-tools)"

if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/apps/h5common.h" ]; then
    src=$(cd "$srcdir/test/apps" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-apptest.XXXXXX") || exit 1
if [ -n "${APPTEST_BUILD:-}" ]; then
    bin=$APPTEST_BUILD
elif [ -n "${srcdir:-}" ]; then
    bin=$PWD/test/apps/build
else
    bin=$work/bin
fi
mkdir -p "$bin" || exit 1

programs="h5_blocks h5_extend"
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
        -Werror"

echo "run-apps: MPI: $(command -v mpicc) ($env_script)"
echo "run-apps: HDF5: $hdf5_cflags $hdf5_libs; h5diff: $(command -v h5diff)"
echo "run-apps: sources $src, programs in $bin, work in $work"
t_start=$(date +%s%N)
# shellcheck disable=SC2086
if ! mpicc $cflags $hdf5_cflags -I"$src" -c "$src/h5common.c" -o "$bin/h5common.o"; then
    echo "run-apps: cannot compile h5common.c" >&2
    exit 1
fi
for p in $programs; do
    # shellcheck disable=SC2086
    if ! mpicc $cflags $hdf5_cflags -I"$src" "$src/$p.c" "$bin/h5common.o" $hdf5_libs \
        -o "$bin/$p"; then
        echo "run-apps: cannot compile $p.c" >&2
        exit 1
    fi
done

# shellcheck source=../runner-lib.sh
. "$src/../runner-lib.sh"

passed=0
failed=0
failures=
bytes_differ=0
bytes_same=0
keep_work=${APPTEST_KEEP:-}

patterns=("$@")

# The programs must run on the bblog MPI, not on Debian's libmpich12 that libhdf5-mpich pulls in.
if selected ldd; then
    for p in $programs; do
        why=
        for lib in libmpi.so.12 libmpich.so.12; do
            path=$(ldd "$bin/$p" | awk -v l="$lib" '$1 == l { print $3 }')
            if [ -z "$path" ]; then
                [ "$lib" = libmpi.so.12 ] && why="${why:+$why; }$lib not linked"
            else
                case $(readlink -f "$path") in
                "$(readlink -f "$BBLOG_MPI_PREFIX")"/lib/*) ;;
                *) why="${why:+$why; }$lib resolves to $path, not under $BBLOG_MPI_PREFIX" ;;
                esac
            fi
        done
        if ldd "$bin/$p" | grep -q 'libhdf5_mpich\|hdf5/mpich/libhdf5'; then
            :
        else
            why="${why:+$why; }not linked to Debian's libhdf5_mpich"
        fi
        if [ -z "$why" ]; then
            report PASS ldd 1 "$p"
        else
            report FAIL ldd 1 "$p" "$why"
            ldd "$bin/$p" | sed 's/^/    | /'
        fi
    done
fi

bbroot=/dev/shm
[ -d "$bbroot" ] && [ -w "$bbroot" ] || bbroot=$work

# run_case NAME PROG N XFER [ENV=VAL...]
run_case() {
    local name=$1 prog=$2 n=$3 xfer=$4
    shift 4
    local dir=$work/$name.$n.$xfer mode target file bb log rc why left t0 ref_ok=0
    local -a envs
    mkdir -p "$dir"
    for mode in ufs bblog force; do
        envs=("$@")
        case $mode in
        ufs) file=$dir/ufs.h5 target=ufs:$dir/ufs.h5 ;;
        bblog) file=$dir/bb.h5 target=bblog:$dir/bb.h5 ;;
        force) file=$dir/force.h5 target=$dir/force.h5 envs+=(ROMIO_FSTYPE_FORCE=bblog:) ;;
        esac
        bb=$(mktemp -d "$bbroot/bblog-bb.XXXXXX") || exit 1
        log=$dir/$mode.log
        t0=$(date +%s%N)
        (
            unset ROMIO_FSTYPE_FORCE APPS_MDC APPS_FILL HDF5_DO_MPI_FILE_SYNC
            export BBLOG_DIR="$bb"
            for e in "${envs[@]}"; do
                export "${e?}"
            done
            exec timeout -k 10 "$tmo" mpiexec -launcher fork -n "$n" "$bin/$prog" "$target" \
                "$xfer"
        ) >"$log" 2>&1
        rc=$?
        echo "$(( ($(date +%s%N) - t0) / 1000000 )) $name.$n.$xfer $mode" >>"$work/timings"
        why=
        if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
            why="timeout after $tmo s"
        elif [ "$rc" != 0 ]; then
            why="exit status $rc"
        fi
        left=$(find "$bb" -type f 2>/dev/null | head -n 5)
        [ -n "$left" ] && why="${why:+$why; }log files left in the burst buffer: $(echo $left)"
        if [ "$mode" = ufs ]; then
            [ -z "$why" ] && ref_ok=1
        elif [ "$ref_ok" = 0 ]; then
            why="${why:+$why; }no reference (the ufs leg failed)"
        elif [ ! -f "$file" ]; then
            why="${why:+$why; }no file $file"
        elif ! h5diff "$dir/ufs.h5" "$file" >"$dir/$mode.h5diff" 2>&1; then
            why="${why:+$why; }h5diff finds differences from ufs.h5"
        elif cmp -s "$dir/ufs.h5" "$file"; then
            bytes_same=$((bytes_same + 1))
        else
            bytes_differ=$((bytes_differ + 1))
            echo "$name $n $xfer $mode: $(cmp -l "$dir/ufs.h5" "$file" 2>/dev/null | wc -l)" \
                "bytes differ" >>"$work/bytediffs"
        fi
        if [ -z "$why" ]; then
            report PASS "$name" "$n" "$xfer $mode"
        else
            report FAIL "$name" "$n" "$xfer $mode" "$why"
            [ -s "$dir/$mode.h5diff" ] && head -n 30 "$dir/$mode.h5diff" | sed 's/^/    h5diff: /'
            show_log "$log"
        fi
        rm -rf "$bb"
    done
}

# name            program     ranks   transfers     environment
cases=(
    "h5_blocks        h5_blocks   1 2 4   coll,indep"
    "h5_blocks[mdc]   h5_blocks   3       coll,indep    APPS_MDC=small"
    "h5_extend        h5_extend   1 2 3   coll,indep"
    "h5_extend[mdc]   h5_extend   2 4     coll          APPS_MDC=small"
    "h5_blocks[fill]  h5_blocks   2 3 4   coll,indep    APPS_FILL=default"
)
if grep -qa HDF5_DO_MPI_FILE_SYNC "$hdf5_libdir"/libhdf5.so 2>/dev/null; then
    cases+=("h5_blocks[filesync] h5_blocks 3 coll,indep HDF5_DO_MPI_FILE_SYNC=1"
            "h5_extend[filesync] h5_extend 3 coll,indep HDF5_DO_MPI_FILE_SYNC=1")
else
    echo "NOTE HDF5_DO_MPI_FILE_SYNC: not known to $hdf5_libdir/libhdf5.so (HDF5 1.10 always" \
        "calls MPI_File_sync in H5Fflush); [filesync] cases not run"
fi
for c in "${cases[@]}"; do
    read -r name prog rest <<<"$c"
    ranks=
    set -- $rest
    while [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; do
        ranks="$ranks $1"
        shift
    done
    xfers=$1
    shift
    selected "$name" || continue
    for n in $ranks; do
        for x in ${xfers//,/ }; do
            run_case "$name" "$prog" "$n" "$x" "$@"
        done
    done
done

if [ -s "$work/timings" ]; then
    echo "run-apps: slowest runs (ms):"
    sort -rn "$work/timings" | head -n 5 | sed 's/^/  /'
    echo "run-apps: $(wc -l <"$work/timings") mpiexec runs in" \
        "$(( ($(date +%s%N) - t_start) / 1000000 )) ms, compilation included"
fi
if [ "$bytes_differ" -gt 0 ]; then
    echo "NOTE $bytes_same bblog/force files equal ufs byte for byte; $bytes_differ equal it" \
        "for h5diff but not byte for byte:"
    sed 's/^/  /' "$work/bytediffs"
fi
if [ -n "$failures" ]; then
    echo "failed:$failures"
fi
if [ -z "$keep_work" ]; then
    rm -rf "$work"
else
    echo "run-apps: work directory kept: $work"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
