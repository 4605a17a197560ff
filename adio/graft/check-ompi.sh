#!/bin/sh
# check-ompi.sh PREFIX: checks that the Open MPI installed in PREFIX carries the bblog graft
# (the Open MPI counterpart of check-mpi.sh). Every check is fatal:
#   - libmpi.so.40 and libmpi_cxx.so.40 are there (the sonames Debian's libopenmpi3 binaries
#     need), and the io/romio321 component holds the "bblog:" prefix string, the driver's
#     operations table and the core library's symbols, and NEEDs libaio;
#   - a 2-rank program with --mca io romio321 opening bblog:<tmp>/x, and a plain path with
#     ROMIO_FSTYPE_FORCE=bblog:, gets a file served by the bblog driver whose data reads back.
set -eu

prog=check-ompi
die() {
    echo "$prog: FAIL: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: $0 PREFIX"
prefix=$(cd "$1" && pwd -P) || die "$1: no such directory"
here=$(cd "$(dirname "$0")" && pwd -P)

for lib in libmpi.so.40 libmpi_cxx.so.40; do
    [ -f "$prefix/lib/$lib" ] || die "$prefix/lib/$lib missing"
done
echo "ok: libmpi.so.40 and libmpi_cxx.so.40 are installed"
comp=$prefix/lib/openmpi/mca_io_romio321.so
[ -f "$comp" ] || die "$comp missing (ROMIO component not built)"
strings -a "$comp" | grep -qx 'bblog:' ||
    die "$comp has no \"bblog:\" string: ad_fstype.c not grafted"
echo "ok: $comp contains the \"bblog:\" prefix"
nm -D "$comp" | grep -q ' [DdRrBb] ADIO_BBLOG_operations$' ||
    nm "$comp" | grep -q ' [DdRr] ADIO_BBLOG_operations$' ||
    die "$comp has no ADIO_BBLOG_operations (the driver was not compiled in)"
echo "ok: ADIO_BBLOG_operations is in the ROMIO component"
ncore=$(nm "$comp" | grep -c ' [Tt] bblog_' || true)
[ "$ncore" -gt 0 ] || die "$comp contains no bblog_* symbol of the core library"
echo "ok: $ncore core symbols (bblog_*) are linked into the component"
readelf -d "$comp" | grep 'NEEDED' | grep -q 'libaio\.so' || die "$comp does not NEED libaio"
echo "ok: the component NEEDs libaio"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bblog-check-ompi.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/bb"
"$prefix/bin/mpicc" -o "$tmp/graft_probe" "$here/graft_probe.c" ||
    die "$prefix/bin/mpicc cannot build graft_probe.c"
LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$tmp/graft_probe" |
    grep -q "libmpi.so.40 => $prefix/lib/" ||
    die "graft_probe does not resolve libmpi.so.40 to $prefix/lib"

# probe LABEL PATH [ENV=VALUE...]
probe() {
    label=$1
    path=$2
    shift 2
    rm -f "$tmp/stats"
    out=$(env "$@" BBLOG_DIR="$tmp/bb" BBLOG_STATS="$tmp/stats" OMPI_MCA_io=romio321 OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1 \
        LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 120 "$prefix/bin/mpiexec" -n 2 "$tmp/graft_probe" "$path" 2>&1) || true
    result=$(printf '%s\n' "$out" | sed -n 's/^RESULT //p' | head -n 1)
    case $result in
    "ok fs="*"data=ok")
        # Open MPI's MPI_File_get_info answers from its own copy of the hints, without
        # ROMIO's romio_filesystem_type (fs=?): bblog's statistics tell who served the file.
        grep -q '"bblog_stats"' "$tmp/stats" 2>/dev/null ||
            die "$label: no bblog statistics: the file was not opened by the bblog driver"
        echo "ok: $label: opened by the bblog driver (its statistics), data reads back"
        ;;
    *)
        printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /' >&2
        die "$label: ${result:-no result (crash or timeout?)}"
        ;;
    esac
}
probe "bblog:$tmp/x" "bblog:$tmp/x"
probe "ROMIO_FSTYPE_FORCE=bblog: $tmp/y" "$tmp/y" ROMIO_FSTYPE_FORCE=bblog:
