#!/bin/sh
# check-mpi.sh PREFIX: checks that the MPICH installed in PREFIX carries the bblog graft.
#
# Fatal (exit 1), because they mean the graft, the link or the install did not take:
#   - the bblog command or its man pages are not in PREFIX;
#   - libmpi.so.12 lacks the "bblog:" prefix string, the driver's operations table, or the core
#     library's symbols (libbblog.a), or does not NEED libaio;
#   - a 2-rank program opening bblog:<tmp>/x, or a plain path with ROMIO_FSTYPE_FORCE=bblog:,
#     is refused by ROMIO's file system resolution ("Specified filesystem is not available").
# Reported only (the driver's own correctness is tested elsewhere, test/mpi):
#   - the driver's open/write/close failing, or the data not reading back through ufs;
#   - whether Debian's libhdf5-mpich, if installed, would load this libmpi.
set -eu

prog=check-mpi
die() {
    echo "$prog: FAIL: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: $0 PREFIX"
prefix=$(cd "$1" && pwd -P) || die "$1: no such directory"
here=$(cd "$(dirname "$0")" && pwd -P)
lib=$prefix/lib/libmpi.so.12
[ -f "$lib" ] || die "$lib missing"

# -- the library ---------------------------------------------------------------------------------
strings -a "$lib" | grep -qx 'bblog:' || die "$lib has no \"bblog:\" string: fs table entry missing"
echo "ok: $lib contains the \"bblog:\" prefix"
nm "$lib" | grep -q ' [DdRr] ADIO_BBLOG_operations$' ||
    die "$lib has no ADIO_BBLOG_operations (the driver was not compiled in)"
echo "ok: ADIO_BBLOG_operations is in libmpi"
ncore=$(nm "$lib" | grep -c ' [TtDdRrBb] bblog_' || true)
[ "$ncore" -gt 0 ] || die "$lib contains no bblog_* symbol of the core library"
echo "ok: $ncore core symbols (bblog_*) are linked into libmpi"
readelf -d "$lib" | grep 'NEEDED' | grep -q 'libaio\.so' || die "$lib does not NEED libaio"
echo "ok: libmpi NEEDs $(readelf -d "$lib" | sed -n 's/.*NEEDED.*\[\(libaio[^]]*\)\].*/\1/p')"
[ -e "$prefix/lib/libmpich.so.12" ] || die "$prefix/lib/libmpich.so.12 link missing"
echo "ok: libmpich.so.12 -> $(readlink "$prefix/lib/libmpich.so.12")"
"$prefix/bin/bblog" --help 2>&1 | grep -q '^usage: bblog ' ||
    die "$prefix/bin/bblog missing or not the bblog command (build-mpi.sh installs it)"
for m in man1/bblog.1 man7/bblog.7; do
    [ -f "$prefix/share/man/$m" ] || die "$prefix/share/man/$m missing"
done
echo "ok: the bblog command and bblog(1), bblog(7) are in $prefix"

# -- a 2-rank program ------------------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/bblog-check.XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM
mkdir "$tmp/bb"
"$prefix/bin/mpicc" -o "$tmp/graft_probe" "$here/graft_probe.c" ||
    die "$prefix/bin/mpicc cannot build graft_probe.c"
# The probe must load this prefix's libmpi, not Debian's: say so, do not assume it.
LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} ldd "$tmp/graft_probe" |
    grep -q "libmpi.so.12 => $prefix/lib/" || die "graft_probe does not resolve libmpi.so.12 to $prefix/lib"

fatal=no
# probe LABEL PATH [ENV=VALUE...]: runs the probe on 2 ranks and judges its RESULT line.
probe() {
    label=$1
    path=$2
    shift 2
    out=$(env "$@" BBLOG_DIR="$tmp/bb" LD_LIBRARY_PATH="$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" \
        timeout 120 "$prefix/bin/mpiexec" -n 2 "$tmp/graft_probe" "$path" 2>&1) || true
    result=$(printf '%s\n' "$out" | sed -n 's/^RESULT //p' | head -n 1)
    case $result in
    "ok fs="*)
        fs=${result#ok fs=}
        fs=${fs% data=*}
        if printf '%s' "$fs" | grep -qi bblog; then
            echo "ok: $label: opened by the bblog driver (\"$fs\"), data ${result##*data=}"
        else
            echo "$prog: FAIL: $label: opened by \"$fs\", not by the bblog driver" >&2
            fatal=yes
        fi
        ;;
    unresolved*)
        echo "$prog: FAIL: $label: ROMIO does not know the bblog prefix: ${result#unresolved }" >&2
        fatal=yes
        ;;
    driver-error*)
        echo "report: $label: past file system resolution; the driver failed: ${result#driver-error }"
        ;;
    *)
        echo "report: $label: the probe gave no result (crash or timeout?); its output:"
        printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
        ;;
    esac
}
probe "bblog:$tmp/x" "bblog:$tmp/x"
probe "ROMIO_FSTYPE_FORCE=bblog: $tmp/y" "$tmp/y" ROMIO_FSTYPE_FORCE=bblog:
[ "$fatal" = no ] || exit 1

# -- Debian's HDF5 -------------------------------------------------------------------------------
h5=$(ls /usr/lib/*/libhdf5_mpich.so.* /usr/lib/*/hdf5/mpich/libhdf5.so.* 2>/dev/null | head -n 1 || true)
if [ -n "$h5" ]; then
    if LD_LIBRARY_PATH=$prefix/lib ldd "$h5" | grep -q "libmpich.so.12 => $prefix/lib/"; then
        echo "ok: $h5 loads $prefix/lib/libmpich.so.12 with LD_LIBRARY_PATH=$prefix/lib"
    else
        echo "report: $h5 does not resolve libmpich.so.12 to $prefix/lib:"
        LD_LIBRARY_PATH=$prefix/lib ldd "$h5" | grep -i mpi | sed 's/^/    /'
    fi
else
    echo "report: Debian's libhdf5-mpich is not installed; its loading was not checked"
fi
