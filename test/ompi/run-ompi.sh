#!/bin/bash
# Debian's own parallel I/O binaries, not rebuilt, on the Open MPI with bblog (issue 7).
#
# Debian builds python3-h5py-mpi, python3-mpi4py, libnetcdf-mpi, libpnetcdf and libhdf5-openmpi
# on Open MPI 4.1.4 (libmpi.so.40). scripts/build-ompi.sh builds the same Open MPI with bblog in
# its ROMIO component; its environment script puts that libmpi.so.40 first in LD_LIBRARY_PATH,
# so these binaries load it unchanged. Each application runs twice, with OMPI_MCA_io=romio321:
#   romio  plain ROMIO (the reference)
#   bblog  ROMIO_FSTYPE_FORCE=bblog: (unchanged file names), BBLOG_DIR a fresh directory on
#          /dev/shm, BBLOG_STATS a file
# and the bblog leg passes when the program exits 0 (each checks its own data after re-opening
# the file), rank 0 loaded libmpi.so.40 from the bblog Open MPI (it prints the path it mapped),
# bblog logged bytes (its statistics), the burst buffer is empty afterwards, and the output
# matches the reference:
#   h5py         /usr/bin/python3 test/ompi/h5py_slabs.py (h5py driver='mpio', 4 ranks);
#                h5diff must find no difference
#   nc4_par      netCDF-4 through libnetcdf-mpi (nc_create_par, 4 ranks); ncdump outputs equal
#                and h5diff finds no difference. Both legs run with ROMIO data sieving off
#                (ROMIO_HINTS): netCDF's dimension-scale datasets are never written, and plain
#                ROMIO's data sieving fills such bytes with stale buffer contents (0xff here)
#                where bblog leaves zeros; h5diff reads them. With it off, both give zeros.
#   pnc_strided  PnetCDF (libpnetcdf, CDF-5, 4 ranks); ncmpidiff finds no difference, and the
#                files are equal byte for byte
# The C programs are compiled with Debian's mpicc.openmpi against Debian's libraries, as any
# Debian user's program is, then run on the bblog Open MPI.
#
# Usage: run-ompi.sh [PATTERN...]   cases whose name matches (h5py, nc4_par, pnc_strided)
# Environment:
#   BBLOG_ENV_SCRIPT   the Open MPI's environment script (build-ompi.sh --env-out writes its
#                      path); default
#                      ${BBLOG_CACHE:-/var/cache/bblog}/openmpi-current/bin/bblog-env.sh
#   OMPITEST_KEEP=1    keep the work directory even when everything passed
#   OMPITEST_TIMEOUT   seconds per mpiexec (default 300)
# A missing prerequisite (the Open MPI, a Debian package) is a failure with a message naming it.
# Exit: 0 all passed, 1 otherwise.
set -u

env_script=${BBLOG_ENV_SCRIPT:-${BBLOG_CACHE:-/var/cache/bblog}/openmpi-current/bin/bblog-env.sh}
tmo=${OMPITEST_TIMEOUT:-300}
src=$(cd "$(dirname "$0")" && pwd)

die() {
    echo "run-ompi: $*" >&2
    exit 1
}

[ -r "$env_script" ] ||
    die "no bblog Open MPI: $env_script not found (scripts/build-ompi.sh builds it)"
# shellcheck source=/dev/null
. "$env_script"
command -v mpiexec >/dev/null 2>&1 || die "mpiexec not found after sourcing $env_script"
# shellcheck source=../runner-lib.sh
. "$(dirname "$0")/../runner-lib.sh"
is_ompi ||
    die "$env_script is not an Open MPI's (mpiexec: $(command -v mpiexec)); use build-ompi.sh's"
prefix=${BBLOG_MPI_PREFIX:?$env_script sets no BBLOG_MPI_PREFIX}
[ -f "$prefix/lib/libmpi.so.40" ] || die "$prefix/lib/libmpi.so.40 missing"

multiarch=$(gcc -print-multiarch 2>/dev/null || echo x86_64-linux-gnu)
nc_inc=/usr/lib/$multiarch/netcdf/mpi/include
py=/usr/bin/python3
need() { # FILE PACKAGE
    [ -e "$1" ] || die "$1 not found (Debian package $2; scripts/install-deps.sh installs it)"
}
need /usr/bin/mpicc.openmpi libopenmpi-dev
need "$nc_inc/netcdf_par.h" libnetcdf-mpi-dev
need /usr/include/pnetcdf.h libpnetcdf-dev
need /usr/bin/h5diff hdf5-tools
need /usr/bin/ncdump netcdf-bin
need /usr/bin/ncmpidiff pnetcdf-bin
need "$py" python3
# Debian's h5py falls back to its serial build when the MPI one does not import: ask for both
# modules directly.
H5PY_ALWAYS_USE_MPI=1 "$py" -c 'import mpi4py, h5py._debian_h5py_mpi' 2>/dev/null ||
    die "Debian's MPI h5py does not import with $py (python3-h5py-mpi, python3-mpi4py)"

# Open MPI as root needs consent, and more ranks than cores needs oversubscription; bblog lives
# in the ROMIO component, not in OMPIO.
export OMPI_MCA_io=romio321 OMPI_MCA_rmaps_base_oversubscribe=1
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-ompitest.XXXXXX") || exit 1
bin=$work/bin
mkdir -p "$bin"
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Werror"
# Debian's wrapper, run outside the bblog environment: with its LD_LIBRARY_PATH it would load
# the bblog Open MPI's libopen-pal and look for its wrapper data there.
debcc() {
    env -u LD_LIBRARY_PATH /usr/bin/mpicc.openmpi "$@"
}
# shellcheck disable=SC2086
debcc $cflags -I"$nc_inc" -o "$bin/nc4_par" "$src/nc4_par.c" -lnetcdf_mpi ||
    die "cannot compile nc4_par.c with Debian's mpicc.openmpi and libnetcdf-mpi"
# shellcheck disable=SC2086
debcc $cflags -o "$bin/pnc_strided" "$src/pnc_strided.c" -lpnetcdf ||
    die "cannot compile pnc_strided.c with Debian's mpicc.openmpi and libpnetcdf"

passed=0
failed=0
failures=
keep_work=${OMPITEST_KEEP:-}
patterns=("$@")
bbroot=/dev/shm
[ -d "$bbroot" ] && [ -w "$bbroot" ] || bbroot=$work
ompi_sessions "$work/ompi" || die "cannot make $work/ompi"

# run_leg DIR LEG N CMD... PATH: one mpiexec; sets leg_rc, leg_log, leg_bb.
run_leg() {
    local dir=$1 leg=$2 n=$3
    shift 3
    leg_bb=$(mktemp -d "$bbroot/bblog-bb.XXXXXX") || return 1
    leg_log=$dir/$leg.log
    (
        unset ROMIO_FSTYPE_FORCE BBLOG_STATS
        export BBLOG_DIR="$leg_bb"
        if [ "$leg" = bblog ]; then
            export ROMIO_FSTYPE_FORCE=bblog: BBLOG_STATS="$dir/bblog.stats"
        fi
        exec timeout -k 10 "$tmo" mpiexec -n "$n" "$@"
    ) >"$leg_log" 2>&1
    leg_rc=$?
}

# Problems common to both legs, one line each.
leg_problems() {
    local dir=$1 leg=$2 lib left
    if [ "$leg_rc" = 124 ] || [ "$leg_rc" = 137 ]; then
        echo "timeout after $tmo s"
    elif [ "$leg_rc" != 0 ]; then
        echo "exit status $leg_rc"
    fi
    lib=$(sed -n 's/^LIBMPI //p' "$leg_log" | head -n 1)
    case $lib in
    "$prefix"/lib/libmpi.so.40*) ;;
    *) echo "rank 0 loaded libmpi from ${lib:-nowhere it could tell}, not from $prefix/lib" ;;
    esac
    left=$(find "$leg_bb" -type f 2>/dev/null | head -n 3)
    [ -z "$left" ] || echo "log files left in the burst buffer: $(echo $left)"
    if [ "$leg" = bblog ]; then
        "$py" - "$dir/bblog.stats" <<'PY'
import json, sys
try:
    text = open(sys.argv[1]).read()
except OSError:
    print("no bblog statistics (%s): the files did not go through bblog" % sys.argv[1])
    sys.exit(0)
dec, pos, logged, files = json.JSONDecoder(), 0, 0, 0
while True:
    while pos < len(text) and text[pos].isspace():
        pos += 1
    if pos >= len(text):
        break
    try:
        obj, pos = dec.raw_decode(text, pos)
    except ValueError as e:
        print("bblog statistics are not JSON objects: %s" % e)
        sys.exit(0)
    files += 1
    logged += int(obj.get("bytes_logged", 0)) + int(obj.get("bytes_through", 0))
if logged == 0:
    print("bblog statistics of %d files show no byte written through bblog" % files)
PY
    fi
}

# compare KIND REF OUT: prints what differs, if anything.
compare() {
    local kind=$1 ref=$2 out=$3
    case $kind in
    h5)
        /usr/bin/h5diff "$ref" "$out" >"$out.h5diff" 2>&1 ||
            echo "h5diff finds differences ($(head -c 300 "$out.h5diff" | tr '\n' ' '))"
        ;;
    nc4)
        /usr/bin/h5diff "$ref" "$out" >"$out.h5diff" 2>&1 ||
            echo "h5diff finds differences ($(head -c 300 "$out.h5diff" | tr '\n' ' '))"
        # ncdump names the file in its first line; compare what follows.
        if ! diff <(/usr/bin/ncdump "$ref" | tail -n +2) <(/usr/bin/ncdump "$out" | tail -n +2) \
            >"$out.ncdump-diff" 2>&1; then
            echo "ncdump outputs differ ($(head -c 300 "$out.ncdump-diff" | tr '\n' ' '))"
        fi
        ;;
    pnc)
        # ncmpidiff is an MPI program itself (Debian's, on this Open MPI as well).
        timeout -k 10 "$tmo" mpiexec -n 1 /usr/bin/ncmpidiff "$ref" "$out" >"$out.ncmpidiff" 2>&1 ||
            echo "ncmpidiff finds differences ($(tail -c 300 "$out.ncmpidiff" | tr '\n' ' '))"
        cmp -s "$ref" "$out" || echo "not equal byte for byte: $(cmp "$ref" "$out" 2>&1)"
        ;;
    esac
}

# run_app NAME N KIND CMD...: the two legs; CMD gets the output path appended.
run_app() {
    local name=$1 n=$2 kind=$3
    shift 3
    local dir=$work/$name leg why ref_why=
    mkdir -p "$dir"
    for leg in romio bblog; do
        run_leg "$dir" "$leg" "$n" "$@" "$dir/$leg.out"
        why=$(leg_problems "$dir" "$leg")
        if [ "$leg" = bblog ]; then
            if [ -n "$ref_why" ]; then
                why="${why:+$why
}no reference (the romio leg failed)"
            elif [ "$leg_rc" = 0 ]; then
                why="${why:+$why
}$(compare "$kind" "$dir/romio.out" "$dir/bblog.out")"
            fi
        else
            ref_why=$why
        fi
        why=$(echo "$why" | sed '/^$/d' | paste -sd ';' -)
        if [ -z "$why" ]; then
            report PASS "$name" "$n" "$leg"
        else
            report FAIL "$name" "$n" "$leg" "$why"
            show_log "$leg_log"
        fi
        rm -rf "$leg_bb"
    done
}

echo "run-ompi: Open MPI $prefix ($env_script); work in $work"
t0=$(date +%s)
selected h5py && run_app h5py 4 h5 "$py" "$src/h5py_slabs.py"
printf 'romio_ds_write disable\nromio_ds_read disable\n' >"$work/nods.hints"
selected nc4_par && ROMIO_HINTS=$work/nods.hints run_app nc4_par 4 nc4 "$bin/nc4_par"
selected pnc_strided && run_app pnc_strided 4 pnc "$bin/pnc_strided"
echo "run-ompi: $(($(date +%s) - t0)) s"

if [ -n "$failures" ]; then
    echo "failed:$failures"
fi
if [ -z "$keep_work" ]; then
    rm -rf "$work"
else
    echo "run-ompi: work directory kept: $work"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
