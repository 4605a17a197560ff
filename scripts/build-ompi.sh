#!/bin/sh
# build-ompi.sh [--series 4|5] [--ompi-src DIR] [--bblog-src DIR] [--cache DIR] [-j N]
#               [--no-check] [--env-out FILE] [--reuse BUILDDIR] [-- EXTRA CONFIGURE ARGS]
#
# From nothing to an Open MPI 4.1 (--series 4, the default: Debian 12's 4.1.4, component
# io/romio321) or 5.0 (--series 5: Debian 13 "trixie"'s 5.0.7, component io/romio341) with the
# bblog ROMIO driver compiled into its ROMIO component, the Open MPI counterpart of build-mpi.sh.
# Open MPI 5's source comes from trixie's deb-src index, kept in the cache's own APT state
# ($cache/apt-trixie): the machine's APT sources are not touched. Open MPI 5 has no C++
# bindings (no libmpi_cxx), runs with its bundled PMIx and PRRTE, and needs no OMPI_MCA_io:
# the graft makes its ROMIO component claim bblog: names ahead of OMPIO (adio/graft/graft.py).
#   1. scripts/install-deps.sh --ompi (Debian packages, Open MPI build dependencies and stack);
#   2. the bblog core (libbblog.a + headers), built out of tree and installed with `install -C`;
#   3. Open MPI's source: Debian's (`apt-get source openmpi`, 4.1.4, downloaded once into the
#      cache) or any Open MPI 4.1 tree given with --ompi-src (copied, never modified in place);
#   4. adio/graft/graft.py on that copy, then configure, make, make install.
# The library keeps Debian's soname (libmpi.so.40, plus libmpi_cxx.so.40, which Debian's
# libpnetcdf needs), so Debian's binaries built on libopenmpi3 (python3-h5py-mpi, python3-mpi4py,
# libnetcdf-mpi, libpnetcdf, libhdf5-openmpi) run on it unchanged with LD_LIBRARY_PATH. Like
# Debian's build it uses the system's libevent, hwloc and PMIx; Fortran, OpenSHMEM, Java and the
# network drivers (verbs, UCX, OFI, PSM) are left out: shared memory and TCP on one node.
# Open MPI's default MPI-IO component is OMPIO, which knows nothing of ROMIO drivers: bblog needs
# `--mca io romio321` (OMPI_MCA_io=romio321), which the environment script sets unless it is set.
#
# Everything lives under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/openmpi/             Debian source package
#   openmpi-<version>-<key>/       one build, keyed by source, graft script, configure options
#       src/ build/ install/ core-build/ core/ logs/
#   openmpi-current -> openmpi-<version>-<key>/install   (Open MPI 5: openmpi5-current)
# A rerun with the same key is incremental: only the ROMIO component is rebuilt and installed
# (a driver edit costs its compile and the relink of mca_io_romio321.so).
# The key hashes graft.py's text, so any edit of the graft script means a new directory and
# a full build (82 minutes on 2 cores). --reuse BUILDDIR refreshes an existing, installed
# openmpi-<version>-<key> directory instead, after checking that it was configured from the same
# source with the same options: the graft is rerun on its tree (idempotent; it regenerates ROMIO's
# build system if its edits changed, which make in the component then picks up) and only the
# ROMIO component is rebuilt. Use it when the graft script changed in ways that need no fresh
# tree (an edit the graft applies in place); a graft whose old edits must disappear needs the
# full build.
# A build holds $cache/.lock-ompi, not build-mpi.sh's lock: an Open MPI build takes long enough
# that MPICH rebuilds (seconds) must not queue behind it.
#
# Exits non-zero on any failure, after printing the tail of the log that shows it.
set -eu

prog=build-ompi
here=$(cd "$(dirname "$0")/.." && pwd -P)
bblog_src=$here
cache=${BBLOG_CACHE:-/var/cache/bblog}
ompi_src=
series=4
jobs=2
check=yes
env_out=
reuse=

die() {
    echo "$prog: $*" >&2
    exit 1
}

usage() {
    sed -n '2,3p' "$0" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [ $# -gt 0 ]; do
    case $1 in
    --series) [ $# -ge 2 ] || usage; series=$2; shift 2 ;;
    --series=*) series=${1#*=}; shift ;;
    --ompi-src) [ $# -ge 2 ] || usage; ompi_src=$2; shift 2 ;;
    --ompi-src=*) ompi_src=${1#*=}; shift ;;
    --bblog-src) [ $# -ge 2 ] || usage; bblog_src=$2; shift 2 ;;
    --bblog-src=*) bblog_src=${1#*=}; shift ;;
    --cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
    --cache=*) cache=${1#*=}; shift ;;
    -j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    --no-check) check=no; shift ;;
    --env-out) [ $# -ge 2 ] || usage; env_out=$2; shift 2 ;;
    --env-out=*) env_out=${1#*=}; shift ;;
    --reuse) [ $# -ge 2 ] || usage; reuse=$2; shift 2 ;;
    --reuse=*) reuse=${1#*=}; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown argument $1" >&2; usage ;;
    esac
done
extra_args="$*"
case $series in
4) comp=romio321 want=4.1 ;;
5) comp=romio341 want=5.0 ;;
*) die "--series $series: 4 (Open MPI 4.1) or 5 (Open MPI 5.0)" ;;
esac

bblog_src=$(cd "$bblog_src" && pwd -P) || die "--bblog-src: no such directory"
[ -f "$bblog_src/logfs/bblog_log.h" ] || die "$bblog_src is not a bblog checkout"
graft=$here/adio/graft/graft.py
[ -f "$graft" ] || die "$graft missing"

mkdir -p "$cache" || die "cannot create the cache $cache (set BBLOG_CACHE to a writable place)"
cache=$(cd "$cache" && pwd -P)
mkdir -p "$cache/logs"

exec 9>"$cache/.lock-ompi"
if ! flock -n 9; then
    echo "$prog: another build-ompi.sh holds $cache/.lock-ompi; waiting for it"
    flock 9
fi

now() {
    date +%s
}
t_start=$(now)

run() {
    run_log=$1
    shift
    if ! "$@" >"$run_log" 2>&1; then
        echo "$prog: FAILED: $*" >&2
        echo "---- last lines of $run_log ----" >&2
        tail -n 40 "$run_log" >&2
        echo "---- full log: $run_log" >&2
        exit 1
    fi
}

step() {
    echo "$prog: [$(($(now) - t_start))s] $*"
}

# ---- 1. packages ------------------------------------------------------------------------------
step "checking Debian packages (scripts/install-deps.sh --ompi)"
run "$cache/logs/install-deps.log" sh "$here/scripts/install-deps.sh" --ompi
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || gcc -print-multiarch)
pmix_dir=/usr/lib/$multiarch/pmix2
[ -f "$pmix_dir/include/pmix.h" ] || die "$pmix_dir/include/pmix.h missing (Debian: libpmix-dev)"

# ---- 2. source identity and version -------------------------------------------------------------
ompi_version() {
    sed -n 's/^PACKAGE_VERSION=.\([0-9][0-9.]*\).*$/\1/p' "$1/configure" 2>/dev/null | head -n 1
}

if [ -n "$ompi_src" ]; then
    ompi_src=$(cd "$ompi_src" && pwd -P) || die "--ompi-src: no such directory"
    [ -d "$ompi_src/ompi/mca/io/$comp" ] ||
        die "$ompi_src does not look like an Open MPI $want tree (no ompi/mca/io/$comp)"
    version=$(ompi_version "$ompi_src")
    case $version in
    "$want".*) ;;
    *) die "$ompi_src: Open MPI ${version:-of unknown version}; --series $series is $want" ;;
    esac
    src_id="tree:$ompi_src"
else
    dl=$cache/downloads/openmpi
    [ "$series" = 4 ] || dl=$cache/downloads/openmpi-$series
    mkdir -p "$dl"
    dsc=$(ls "$dl"/openmpi_*.dsc 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$dsc" ] && [ "$series" = 5 ]; then
        step "downloading trixie's Open MPI source into $dl (APT state in $cache/apt-trixie)"
        apt_dir=$cache/apt-trixie
        mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial"
        echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
            "http://deb.debian.org/debian trixie main" >"$apt_dir/sources.list"
        set -- -o Dir::Etc::SourceList="$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null \
            -o Dir::State::Lists="$apt_dir/lists" -o Dir::Cache="$apt_dir/cache"
        run "$cache/logs/apt-trixie.log" apt-get "$@" update -q
        (cd "$dl" && apt-get "$@" source --download-only -q openmpi) \
            >"$cache/logs/fetch-ompi.log" 2>&1 || {
            tail -n 20 "$cache/logs/fetch-ompi.log" >&2
            die "apt-get source openmpi (trixie) failed (log: $cache/logs/fetch-ompi.log)"
        }
        dsc=$(ls "$dl"/openmpi_*.dsc 2>/dev/null | sort -V | tail -n 1)
        [ -n "$dsc" ] || die "apt-get source left no openmpi_*.dsc in $dl"
    fi
    if [ -z "$dsc" ]; then
        step "downloading Debian's Open MPI source (apt-get source openmpi) into $dl"
        apt-cache showsrc openmpi 2>/dev/null | grep -q '^Package: openmpi' ||
            die "no deb-src index for openmpi: run scripts/build-mpi.sh once (it adds" \
                "deb-src), or add a deb-src entry and apt-get update"
        (cd "$dl" && apt-get source --download-only -q openmpi) \
            >"$cache/logs/fetch-ompi.log" 2>&1 || {
            tail -n 20 "$cache/logs/fetch-ompi.log" >&2
            die "apt-get source openmpi failed (log: $cache/logs/fetch-ompi.log)"
        }
        dsc=$(ls "$dl"/openmpi_*.dsc 2>/dev/null | sort -V | tail -n 1)
        [ -n "$dsc" ] || die "apt-get source left no openmpi_*.dsc in $dl"
    fi
    deb_version=$(basename "$dsc" .dsc)
    deb_version=${deb_version#openmpi_}
    version=${deb_version%-*}
    case $version in
    "$want".*) ;;
    *) die "$dsc: Open MPI $version; --series $series is Open MPI $want" ;;
    esac
    src_id="debian:$(basename "$dsc")"
fi

# ---- 3. the key --------------------------------------------------------------------------------
# --with-io-romio-flags is added below with the core's path, which is inside the key's directory.
config_args="--disable-mpi-fortran --disable-oshmem --disable-mpi-java
 --with-libevent=external --with-hwloc=external
 --without-ucx --without-ofi --without-cuda --without-tm --enable-shared --disable-static"
if [ "$series" = 4 ]; then
    config_args="$config_args --with-pmix=$pmix_dir --enable-mpi-cxx --without-verbs
 --without-psm --without-psm2"
else
    # The PRRTE that Open MPI 5 bundles needs PMIx 4.2.4 or later, and Debian 12 has 4.2.2:
    # both bundled.
    config_args="$config_args --with-pmix=internal --with-prrte=internal"
fi
romio_fs=ufs+nfs+bblog
[ -z "$extra_args" ] || config_args="$config_args $extra_args"
key=$( {
    echo "$src_id"
    echo "$config_args"
    echo "$romio_fs"
    echo "$bblog_src"
    cat "$graft"
} | sha256sum | cut -c1-12)
kdir=$cache/openmpi-$version-$key
if [ -n "$reuse" ]; then
    reuse=$(cd "$reuse" 2>/dev/null && pwd -P) || die "--reuse: no such directory"
    [ -f "$reuse/src/.bblog-src-complete" ] && [ -f "$reuse/build/.bblog-installed" ] ||
        die "--reuse $reuse: not a complete build-ompi.sh build (no src/.bblog-src-complete" \
            "or build/.bblog-installed)"
    # The directory's configure line must be the one this run would use, with its own paths.
    # shellcheck disable=SC2086 # config_args is a list of words by construction
    want_cfg=$(echo "$reuse/src/configure" --prefix="$reuse/install" $config_args \
        --with-io-romio-flags="--with-file-system=$romio_fs --with-bblog=$reuse/core")
    # (Open MPI 5's config.log quotes the arguments that hold spaces; 4.1's does not.)
    have_cfg=$(sed -n "s/^  \\$ //p" "$reuse/build/config.log" | head -n 1 | tr -d "'")
    [ "$have_cfg" = "$want_cfg" ] ||
        die "--reuse $reuse: configured differently; it has: $have_cfg; this run needs: $want_cfg"
    if [ -n "$ompi_src" ]; then
        [ "$(ompi_version "$reuse/src")" = "$version" ] ||
            die "--reuse $reuse: Open MPI $(ompi_version "$reuse/src"), not $version"
    else
        [ -f "$(dirname "$dsc")/openmpi_$version.orig.tar.xz" ] &&
            tar -xOJf "$(dirname "$dsc")/openmpi_$version.orig.tar.xz" \
                "openmpi-$version/configure" | cmp -s - "$reuse/src/configure" ||
            die "--reuse $reuse: its source is not $(basename "$dsc")'s"
    fi
    [ "$reuse" = "$kdir" ] || step "reusing $reuse (this run's key is $key)"
    kdir=$reuse
fi
prefix=$kdir/install
logs=$kdir/logs
mkdir -p "$logs"
step "Open MPI $version ($src_id), build key $key: $kdir"

# ---- 4. source tree ----------------------------------------------------------------------------
if [ ! -f "$kdir/src/.bblog-src-complete" ]; then
    rm -rf "$kdir/src" "$kdir/src.tmp" "$kdir/build"
    if [ -n "$ompi_src" ]; then
        step "copying $ompi_src"
        mkdir "$kdir/src.tmp"
        run "$logs/unpack.log" cp -a "$ompi_src/." "$kdir/src.tmp/"
    else
        # Without Debian's patches: they touch packaging paths (components in lib/openmpi3),
        # other architectures, man pages and tests, not the library's ABI, and they patch
        # configure.ac and Makefile.am files, so applying them means regenerating all of Open
        # MPI's build system with autogen.pl, as Debian's build does.
        step "unpacking $(basename "$dsc") (upstream source, Debian's patches not applied)"
        run "$logs/unpack.log" dpkg-source --no-check --skip-patches -x "$dsc" "$kdir/src.tmp"
    fi
    mv "$kdir/src.tmp" "$kdir/src"
    touch "$kdir/src/.bblog-src-complete"
fi

# ---- 5. graft ----------------------------------------------------------------------------------
step "grafting ad_bblog (adio/graft/graft.py)"
run "$logs/graft.log" python3 "$graft" "$kdir/src" "$bblog_src"
grep '^graft:' "$logs/graft.log" | sed 's/^/    /' || true

# ---- 6. the core -------------------------------------------------------------------------------
core_build=$kdir/core-build
core=$kdir/core
if [ ! -x "$bblog_src/configure" ] || [ ! -f "$bblog_src/Makefile.in" ]; then
    step "bblog core: autogen.sh"
    "$bblog_src/autogen.sh" >"$logs/core-autogen.log" 2>&1 ||
        run "$logs/core-autogen.log" "$bblog_src/autogen.sh"
fi
mkdir -p "$core_build" "$core/include" "$core/lib"
if [ ! -f "$core_build/Makefile" ]; then
    step "bblog core: configure"
    (cd "$core_build" && run "$logs/core-configure.log" "$bblog_src/configure")
fi
step "bblog core: make libbblog.a"
run "$logs/core-make.log" make -C "$core_build" -j"$jobs" libbblog.a
run "$logs/core-install.log" install -C -m 644 "$bblog_src"/logfs/*.h "$bblog_src"/reorder/*.h \
    "$bblog_src"/plan/*.h "$bblog_src"/pace/*.h \
    "$core/include/"
run "$logs/core-install.log" install -C -m 644 "$core_build/libbblog.a" "$core/lib/libbblog.a"

# ---- 7. configure Open MPI ---------------------------------------------------------------------
build=$kdir/build
romio_rel=ompi/mca/io/romio321/romio
[ "$series" = 4 ] || romio_rel=3rd-party/romio341
if [ ! -f "$build/.bblog-configured" ]; then
    rm -rf "$build"
    mkdir -p "$build"
    step "configuring Open MPI (log: $logs/configure.log)"
    # shellcheck disable=SC2086 # config_args is a list of words by construction
    (cd "$build" && run "$logs/configure.log" "$kdir/src/configure" --prefix="$prefix" \
        $config_args \
        --with-io-romio-flags="--with-file-system=$romio_fs --with-bblog=$core")
    grep -q 'define ROMIO_BBLOG 1' "$build/$romio_rel/adio/include/romioconf.h" ||
        die "ROMIO was configured without the bblog file system (see $logs/configure.log)"
    touch "$build/.bblog-configured"
fi

# The component links libbblog.a, which make does not know as a dependency: when install -C
# replaced the archive, drop the component's .la so that make relinks it.
comp_dir=$build/ompi/mca/io/$comp
if [ -f "$comp_dir/mca_io_$comp.la" ] &&
   [ "$core/lib/libbblog.a" -nt "$comp_dir/mca_io_$comp.la" ]; then
    step "libbblog.a changed: relinking mca_io_$comp"
    rm -f "$comp_dir/mca_io_$comp.la" "$build/$romio_rel/libromio_dist.la"
fi

# ---- 8. build and install ----------------------------------------------------------------------
if [ -f "$build/.bblog-installed" ]; then
    # Within one key only the driver (through the graft's symlink) and the core can change, and
    # both end up in the ROMIO component alone.
    # (Open MPI 5: and io/ompio, whose file_query the graft edits too.)
    # (Open MPI 5: and io/ompio, whose file_query the graft edits too; both are linked into
    # libmpi there, which make in ompi/ relinks.)
    dirs=$comp_dir
    [ "$series" = 4 ] || dirs="$build/$romio_rel $build/ompi/mca/io/ompio $build/ompi"
    for d in $dirs; do
        step "make -j$jobs in ${d#"$build"/} (log: $logs/make.log)"
        run "$logs/make.log" make -C "$d" -j"$jobs"
    done
    d=$comp_dir
    [ "$series" = 4 ] || d=$build/ompi
    step "make install in ${d#"$build"/} (log: $logs/install.log)"
    run "$logs/install.log" make -C "$d" install
else
    t_make=$(now)
    # ROMIO needs only configure's mpi.h: building it first shows a driver that does not
    # compile for this ROMIO in a minute rather than at the end of the whole build.
    step "make -j$jobs in ROMIO first (log: $logs/make-romio.log)"
    run "$logs/make-romio.log" make -C "$build/$romio_rel" -j"$jobs"
    step "make -j$jobs (log: $logs/make.log; the longest step)"
    run "$logs/make.log" make -C "$build" -j"$jobs"
    step "make -j$jobs install (log: $logs/install.log)"
    run "$logs/install.log" make -C "$build" -j"$jobs" install
    echo "make and install: $(($(now) - t_make)) s," \
        "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)" \
        >"$logs/build-time.txt"
    touch "$build/.bblog-installed"
fi

libs=libmpi.so.40
[ "$series" = 4 ] && libs="$libs libmpi_cxx.so.40"
for lib in $libs; do
    [ -f "$prefix/lib/$lib" ] ||
        die "$prefix/lib/$lib was not installed (Debian's binaries need it)"
done
# Open MPI 4.1 builds its components as plug-ins; 5.0 links them into libmpi.
[ -f "$prefix/lib/openmpi/mca_io_$comp.so" ] || [ "$series" != 4 ] ||
    die "$prefix/lib/openmpi/mca_io_$comp.so was not installed"

# ---- the bblog command and its man pages, in the MPI's prefix ----------------------------------
step "installing the bblog command and man pages into $prefix"
run "$logs/tool.log" make -C "$core_build" -j"$jobs" tools/bblog
run "$logs/tool-install.log" make -C "$core_build" install-binPROGRAMS install-man prefix="$prefix"

# ---- 9. environment file and the stable link ----------------------------------------------------
env_file=$prefix/bin/bblog-env.sh
{
    echo "# Generated by bblog scripts/build-ompi.sh: the Open MPI with the bblog ROMIO driver."
    echo "# Usage: . $env_file   (any POSIX shell; sourcing it again changes nothing)"
    echo "BBLOG_MPI_PREFIX=$prefix"
    echo "BBLOG_MPI_FLAVOUR=openmpi"
    cat <<'EOF'
export BBLOG_MPI_PREFIX BBLOG_MPI_FLAVOUR
case ":${PATH:-}:" in
*":$BBLOG_MPI_PREFIX/bin:"*) ;;
*) PATH=$BBLOG_MPI_PREFIX/bin${PATH:+:$PATH}; export PATH ;;
esac
# Also what makes Debian's binaries (libopenmpi3, libmpi.so.40) load this Open MPI.
case ":${LD_LIBRARY_PATH:-}:" in
*":$BBLOG_MPI_PREFIX/lib:"*) ;;
*) LD_LIBRARY_PATH=$BBLOG_MPI_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
   export LD_LIBRARY_PATH ;;
esac
case ":${MANPATH:-}:" in
*":$BBLOG_MPI_PREFIX/share/man:"*) ;;
*) MANPATH=$BBLOG_MPI_PREFIX/share/man:${MANPATH:-}; export MANPATH ;;
esac
EOF
    # Open MPI 5's ROMIO component claims bblog: names itself (adio/graft/graft.py); 4.1's does not.
    if [ "$series" = 4 ]; then
        cat <<'EOF'
# bblog lives in ROMIO; Open MPI's default MPI-IO component (OMPIO) would ignore bblog: names
# and ROMIO_FSTYPE_FORCE. Set OMPI_MCA_io=ompio before sourcing this to keep OMPIO.
OMPI_MCA_io=${OMPI_MCA_io:-romio321}
export OMPI_MCA_io
EOF
    fi
} >"$env_file.tmp"
if cmp -s "$env_file.tmp" "$env_file"; then
    rm -f "$env_file.tmp"
else
    mv "$env_file.tmp" "$env_file"
fi

current=openmpi-current
[ "$series" = 4 ] || current=openmpi$series-current
ln -sfn "$prefix" "$cache/$current.tmp"
mv -T "$cache/$current.tmp" "$cache/$current"

# ---- 10. check ---------------------------------------------------------------------------------
if [ "$check" = yes ]; then
    step "checking the graft (adio/graft/check-ompi.sh)"
    run "$logs/check.log" sh "$here/adio/graft/check-ompi.sh" "$prefix" "$comp"
    sed 's/^/    /' "$logs/check.log"
fi

step "done"
[ ! -f "$logs/build-time.txt" ] || echo "first build: $(cat "$logs/build-time.txt")"
echo "Open MPI $version with bblog: $prefix  (also $cache/$current)"
echo ". $env_file"
[ -z "$env_out" ] || echo "$env_file" >"$env_out"
