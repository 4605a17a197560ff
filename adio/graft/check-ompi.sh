#!/bin/sh
# check-ompi.sh PREFIX [COMPONENT]: checks that the Open MPI installed in PREFIX carries the
# bblog graft in its ROMIO component (romio321, the default: Open MPI 4.1; romio341: Open MPI
# 5.0); the Open MPI counterpart of check-mpi.sh. Every check is fatal:
#   - libmpi.so.40 is there (and for 4.1 libmpi_cxx.so.40: the sonames Debian's libopenmpi3
#     binaries need), and the io/COMPONENT component holds the "bblog:" prefix string, the
#     driver's operations table and the core library's symbols, and NEEDs libaio;
#   - a 2-rank program opening bblog:<tmp>/x, and a plain path with ROMIO_FSTYPE_FORCE=bblog:,
#     gets a file served by the bblog driver whose data reads back (the driver's statistics
#     prove it: a name that went to OMPIO, or to ufs, writes none). On 4.1 with
#     OMPI_MCA_io=romio321; on 5.0 without: its component must claim those names itself.
set -eu

prog=check-ompi
die() {
    echo "$prog: FAIL: $*" >&2
    exit 1
}

[ $# -ge 1 ] && [ $# -le 2 ] || die "usage: $0 PREFIX [romio321|romio341]"
prefix=$(cd "$1" && pwd -P) || die "$1: no such directory"
cname=${2:-romio321}
select=OMPI_MCA_io=$cname
[ "$cname" = romio321 ] || select=BBLOG_CHECK_NO_SELECT=1
here=$(cd "$(dirname "$0")" && pwd -P)

libs=libmpi.so.40
[ "$cname" = romio321 ] && libs="$libs libmpi_cxx.so.40"
for lib in $libs; do
    [ -f "$prefix/lib/$lib" ] || die "$prefix/lib/$lib missing"
done
echo "ok: $libs installed"
comp=$prefix/lib/openmpi/mca_io_$cname.so
# Open MPI 5 links its components into libmpi (no plug-in files by default).
[ "$cname" = romio321 ] || [ -f "$comp" ] || comp=$prefix/lib/libmpi.so.40
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
    out=$(env -u OMPI_MCA_io "$@" "$select" BBLOG_DIR="$tmp/bb" BBLOG_STATS="$tmp/stats" \
        OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
        OMPI_MCA_rmaps_base_oversubscribe=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe \
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

# Open MPI 5: with OMPIO chosen by hand, a bblog: name must fail to open, not become a file of
# that name (graft.py).
if [ "$cname" = romio341 ]; then
    out=$(cd "$tmp" && env BBLOG_DIR="$tmp/bb" OMPI_MCA_io=ompio OMPI_ALLOW_RUN_AS_ROOT=1 \
        OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe \
        LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 120 "$prefix/bin/mpiexec" -n 2 "$tmp/graft_probe" "bblog:$tmp/z" 2>&1) || true
    result=$(printf '%s\n' "$out" | sed -n 's/^RESULT //p' | head -n 1)
    case $result in
    ok*) die "OMPI_MCA_io=ompio: bblog:$tmp/z opened ($result): OMPIO took a bblog: name" ;;
    esac
    [ -z "$(find "$tmp" -name '*bblog:*' | head -n 1)" ] ||
        die "OMPI_MCA_io=ompio: a file named after bblog:$tmp/z was made"
    echo "ok: OMPI_MCA_io=ompio: bblog:$tmp/z is refused (${result:-no RESULT line})"
fi

"$prefix/bin/bblog" --help 2>&1 | grep -q '^usage: bblog ' ||
    die "$prefix/bin/bblog missing or not the bblog command (build-ompi.sh installs it)"
for m in man1/bblog.1 man7/bblog.7; do
    [ -f "$prefix/share/man/$m" ] || die "$prefix/share/man/$m missing"
done
echo "ok: the bblog command and bblog(1), bblog(7) are in $prefix"
