#!/bin/bash
# build-layer.sh [--mpich VERSION] [--cache DIR] [--env-out FILE]
#
# bblog over a binary MPI, without rebuilding it (issue 69; doc/mpi-versions.md): ROMIO from the
# MPICH 4.0.2 source that scripts/build-mpi.sh unpacks and grafts, built standalone against the
# binary MPICH of PyPI's `mpich` wheel (default 5.0.2), into one shared library,
# libbblog-mpiio.so: ROMIO, its embedded MPL and the bblog core, exporting only the MPI-IO entry
# points (adio/layer/bblog-mpiio.map). A program built against that MPI writes through bblog
# with the library preloaded:
#   LD_PRELOAD=.../libbblog-mpiio.so mpiexec -n 4 ./app bblog:/pfs/out   (or bin/bblog-run)
# ROMIO's standalone build needs the patches in adio/layer/ (each says why in its own lines).
#
# Everything lives under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/wheels/mpich-V-*.whl        the wheel (pip download, once)
#   mpich-wheel-V/                         the wheel unpacked: bin/mpicc, include, lib/libmpi.so.12
#   layer-mpich-V-<key>/                   one build, keyed by the wheel, the grafted ROMIO's
#                                          build key, the patches, the map and the driver and
#                                          core sources; install/lib/libbblog-mpiio.so,
#                                          install/bin/bblog-run, install/bin/layer-env.sh,
#                                          install/bin/bblog and the man pages
# layer-env.sh puts the wheel's mpicc first in PATH and an mpiexec that preloads the layer in
# every process (adding to an LD_PRELOAD the caller set): BBLOG_ENV_SCRIPT=it for
# test/mpi/run-diff.sh runs the differential suite through the layer.
# Not part of CI yet (its time); run by hand: scripts/build-layer.sh && \
#   BBLOG_ENV_SCRIPT=/var/cache/bblog/layer-current/bin/layer-env.sh test/mpi/run-diff.sh
set -eu
prog=build-layer
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${BBLOG_CACHE:-/var/cache/bblog}
mpich=5.0.2
env_out=
while [ $# -gt 0 ]; do
    case $1 in
    --mpich) mpich=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --env-out) env_out=$2; shift 2 ;;
    *) echo "usage: $0 [--mpich VERSION] [--cache DIR] [--env-out FILE]" >&2; exit 2 ;;
    esac
done
export BBLOG_CACHE=$cache
# shellcheck source=scripts/lib.sh
. "$here/scripts/lib.sh"

# ---- 1. the grafted ROMIO and the bblog core, from scripts/build-mpi.sh's cache -----------------
step "the grafted MPICH 4.0.2 tree and the bblog core (scripts/build-mpi.sh)"
envf=$(mktemp)
trap 'rm -f "$envf"' EXIT
run "$cache/logs/layer-build-mpi.log" "$here/scripts/build-mpi.sh" --env-out "$envf"
mpi_prefix=$(sed -n 's/^BBLOG_MPI_PREFIX=//p' "$(cat "$envf")")
gkdir=$(dirname "$mpi_prefix")
romio_src=$gkdir/src/src/mpi/romio
core=$gkdir/core
[ -d "$romio_src/adio/ad_bblog" ] && [ -f "$core/lib/libbblog.a" ] ||
    die "no grafted ROMIO or core under $gkdir"

# ---- 2. the wheel --------------------------------------------------------------------------------
wheels=$cache/downloads/wheels
mkdir -p "$wheels"
# PyPI's sha256 of the wheel this script was tested with (x86_64, glibc 2.28 and later).
case $mpich in
5.0.2) whl_sha256=8fed465ebff269ea2ebac179a25de02671ddf8df476e0f115be089015015cfd4 ;;
*) whl_sha256= ;;
esac
whl=$(ls "$wheels"/mpich-"$mpich"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$whl" ]; then
    # Debian's python3 has no pip: a virtual environment's (python3-venv), made once.
    venv=$cache/downloads/pip-venv
    [ -x "$venv/bin/python" ] ||
        run "$cache/logs/layer-venv.log" "${BBLOG_PYTHON:-/usr/bin/python3}" -m venv "$venv"
    step "pip download mpich==$mpich"
    run "$cache/logs/layer-pip.log" "$venv/bin/python" -m pip download --no-deps \
        --only-binary=:all: "mpich==$mpich" -d "$wheels"
    whl=$(ls "$wheels"/mpich-"$mpich"-*.whl | head -n 1)
fi
sum=$(sha256sum <"$whl" | cut -d' ' -f1)
if [ -n "$whl_sha256" ] && [ "$sum" != "$whl_sha256" ]; then
    rm -f "$whl"
    die "$whl: sha256 $sum, expected $whl_sha256 (PyPI's for mpich $mpich); removed, run again"
fi
wmpi=$cache/mpich-wheel-$mpich
if [ ! -x "$wmpi/bin/mpicc" ]; then
    step "unpacking $(basename "$whl")"
    rm -rf "$wmpi" "$wmpi.tmp"
    mkdir -p "$wmpi.tmp"
    python3 -m zipfile -e "$whl" "$wmpi.tmp"
    mv "$wmpi.tmp/mpich-$mpich.data/data" "$wmpi"
    rm -rf "$wmpi.tmp"
    chmod +x "$wmpi"/bin/*     # zip entries lose their mode bits
fi

# ---- 3. the key ---------------------------------------------------------------------------------
key=$( {
    basename "$whl"
    basename "$gkdir"
    cat "$here"/adio/layer/*.patch "$here"/adio/layer/*.c "$here/adio/layer/bblog-mpiio.map" "$0"
    cat "$here"/adio/ad_bblog/*.[ch] "$core/lib/libbblog.a"
} | sha256sum | cut -c1-12)
kdir=$cache/layer-mpich-$mpich-$key
inst=$kdir/install
lib=$inst/lib/libbblog-mpiio.so
mkdir -p "$kdir/logs"
step "layer over MPICH $mpich, key $key: $kdir"

if [ ! -f "$kdir/.done" ]; then
    # ---- 4. ROMIO with the driver (a copy: the graft's link points into the checkout), patched
    rm -rf "$kdir/src" "$kdir/build"
    mkdir -p "$kdir/src" "$kdir/build" "$inst/lib" "$inst/bin"
    cp -a "$romio_src" "$kdir/src/romio"
    rm -rf "$kdir/src/romio/adio/ad_bblog"
    cp -a "$here/adio/ad_bblog" "$kdir/src/romio/adio/ad_bblog"
    for p in "$here"/adio/layer/*.patch; do
        run "$kdir/logs/patch.log" patch -d "$kdir/src/romio" -p1 --no-backup-if-mismatch -i "$p"
    done
    # ROMIO's message keys with MPICH's texts for them (the standalone glue has no table):
    # errnames.txt's "**key[ %s...]:text" lines (continued by a trailing backslash) for the
    # keys ROMIO's sources name, as C string pairs for mpio_err.c (patch 11).
    mkdir -p "$kdir/build/gen"
    grep -rhoE '"\*\*[a-zA-Z0-9_]+( %[a-zA-Z])*"' "$kdir/src/romio/adio" "$kdir/src/romio/mpi-io" |
        tr -d '"' | sort -u >"$kdir/build/gen/keys"
    awk '/\\$/ { sub(/\\$/, ""); line = line $0; next } { print line $0; line = "" }' \
        "$gkdir/src/src/mpi/errhan/errnames.txt" |
        awk -F: 'NR == FNR { want[$0] = 1; next }
                 /^\*\*/ && ($1 in want) && !seen[$1]++ {
                     text = substr($0, length($1) + 2); gsub(/\\/, "\\\\", text)
                     gsub(/"/, "\\\"", text); sub(/[ \t]+$/, "", text)
                     printf "    {\"%s\", \"%s\"},\n", $1, text }' \
            "$kdir/build/gen/keys" - >"$kdir/build/gen/mpio_errnames.h"
    [ -s "$kdir/build/gen/mpio_errnames.h" ] || die "no ROMIO message texts from errnames.txt"
    step "autoreconf (log: $kdir/logs/autoreconf.log)"
    (cd "$kdir/src/romio" && run "$kdir/logs/autoreconf.log" autoreconf -fi -I confdb)

    # ---- 5. configure standalone against the wheel, build
    step "configure (log: $kdir/logs/configure.log)"
    (cd "$kdir/build" && run "$kdir/logs/configure.log" "$kdir/src/romio/configure" \
        --prefix="$inst" --with-mpi="$wmpi" CC="$wmpi/bin/mpicc" --with-mpi-impl=mpich \
        --with-file-system=ufs+nfs+bblog --with-bblog="$core" --disable-f77 --disable-f90 \
        CPPFLAGS="-DADIOI_BBLOG_ROMIO_NUMVERSION=40002300 -DMPIO_HAVE_ERRNAMES -I$kdir/build/gen" \
        CFLAGS="-g -O2")
    step "make (log: $kdir/logs/make.log)"
    run "$kdir/logs/make.log" make -C "$kdir/build" -j"$(nproc)"

    # ---- 6. one shared library: libromio's PIC objects, the embedded MPL, the core
    step "linking $lib"
    printf 'print-objs:\n\t@echo $(am_libromio_la_OBJECTS)\n' >"$kdir/print-objs.mk"
    objs=$(cd "$kdir/build" && for lo in $(make -s -f Makefile -f "$kdir/print-objs.mk" print-objs);
           do echo "$kdir/build/$(dirname "$lo")/.libs/$(basename "${lo%.lo}").o"; done)
    # shellcheck disable=SC2086 # objs is a list of paths without blanks
    run "$kdir/logs/link.log" "$wmpi/bin/mpicc" -shared -o "$lib" -Wl,-soname,libbblog-mpiio.so \
        -Wl,--version-script="$here/adio/layer/bblog-mpiio.map" -Wl,--no-undefined \
        -fPIC -O2 -g "$here/adio/layer/layer_check.c" \
        $objs "$kdir/build/mpl/.libs/libmpl.a" "$core/lib/libbblog.a" -laio -lpthread -lm -lrt -ldl
    extra=$(nm -D --defined-only "$lib" | awk '{print $3}' |
            grep -v -E '^P?MPI_(File_|Register_datarep)|^MPIO_' || true)
    [ -z "$extra" ] || die "$lib exports more than the MPI-IO entry points: $extra"

    # ---- 7. the wrappers and the environment script
    # A statically linked program never loads a preloaded library: its MPI-IO stays with the
    # MPI linked into it. Both wrappers say so for any such program among their arguments.
    static_check='for a in "$@"; do
    if [ -f "$a" ] && [ -x "$a" ] && [ "$(head -c 4 "$a" 2>/dev/null)" = "$(printf "\177ELF")" ] &&
        LD_PRELOAD= ldd "$a" 2>&1 | grep -qE "not a dynamic executable|statically linked"; then
        echo "bblog-run: $a is statically linked: the preloaded bblog layer cannot reach it," \
            "so its MPI-IO calls stay with the MPI linked into it (bblog: files are not" \
            "handled by bblog); link it against the shared MPI library" >&2
    fi
done'
    cat >"$inst/bin/bblog-run" <<EOF
#!/bin/sh
# bblog-run CMD...: CMD (mpiexec and its arguments, or a program) with bblog's MPI-IO layer
# preloaded in it and in every process it starts (scripts/build-layer.sh).
$static_check
LD_PRELOAD="$lib\${LD_PRELOAD:+:\$LD_PRELOAD}"
export LD_PRELOAD
exec "\$@"
EOF
    cat >"$inst/bin/mpiexec" <<EOF
#!/bin/sh
# The wheel's mpiexec with bblog's MPI-IO layer preloaded in every process (adding to the
# caller's LD_PRELOAD, as the tests' fault injector sets it).
$static_check
exec "$wmpi/bin/mpiexec" -genv LD_PRELOAD "$lib\${LD_PRELOAD:+:\$LD_PRELOAD}" "\$@"
EOF
    # (not a link: the wheel's mpicc finds its prefix from its own path)
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$wmpi/bin/mpicc" >"$inst/bin/mpicc"
    cat >"$inst/bin/layer-env.sh" <<EOF
# Generated by bblog scripts/build-layer.sh: the wheel's MPICH $mpich with bblog's MPI-IO layer.
# Usage: . $inst/bin/layer-env.sh
BBLOG_MPI_PREFIX=$inst
BBLOG_LAYER_MPI=$wmpi
export BBLOG_MPI_PREFIX BBLOG_LAYER_MPI
PATH=$inst/bin:$wmpi/bin:\$PATH
LD_LIBRARY_PATH=$wmpi/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PATH LD_LIBRARY_PATH
EOF
    chmod +x "$inst/bin/bblog-run" "$inst/bin/mpiexec" "$inst/bin/mpicc"
    # The bblog command (status, replay after a crash) and the man pages, as build-mpi.sh
    # installs them beside the grafted MPI.
    mkdir -p "$inst/share/man/man1" "$inst/share/man/man7"
    cp "$mpi_prefix/bin/bblog" "$inst/bin/bblog"
    cp "$mpi_prefix/share/man/man1/bblog.1" "$inst/share/man/man1/"
    cp "$mpi_prefix/share/man/man7/bblog.7" "$inst/share/man/man7/"
    touch "$kdir/.done"
fi
ln -sfn "$kdir/install" "$cache/layer-current.tmp"
mv -T "$cache/layer-current.tmp" "$cache/layer-current"
step "done: $lib"
echo ". $inst/bin/layer-env.sh"
[ -z "$env_out" ] || echo "$inst/bin/layer-env.sh" >"$env_out"
