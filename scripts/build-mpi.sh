#!/bin/sh
# build-mpi.sh [--mpich-src DIR] [--bblog-src DIR] [--cache DIR] [-j N] [--no-check] [--prune]
#              [-- EXTRA MPICH CONFIGURE ARGS]
#
# From nothing to an MPICH with the bblog ROMIO driver compiled in (DESIGN.md section 2):
#   1. scripts/install-deps.sh (Debian packages; needs root only when something is missing);
#   2. the bblog core (libbblog.a + headers) built out of tree from the checkout and installed
#      into the cache with `install -C`, so unchanged files keep their mtime;
#   3. MPICH's source: Debian's (`apt-get source mpich`, downloaded once into the cache), or any
#      MPICH 4.x tree given with --mpich-src (copied into the cache, never modified in place);
#   4. adio/graft/graft.py on that copy, then configure, make, make install.
# Everything lives outside the checkout, under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/                     Debian source packages
#   mpich-<version>-<key>/         one build, keyed by what went into it (MPICH source, graft
#       src/ build/ install/       script, configure options, bblog checkout path)
#       core-build/ core/ logs/
#   current -> mpich-<version>-<key>/install
# A rerun with the same key is incremental: graft (a no-op unless something changed), refresh the
# core, relink libmpi if libbblog.a changed, make, install the libraries. Touching one driver file
# costs one compile, the libromio/libmpi link and the install (10-30 s); a file added to the
# driver's Makefile.mk costs an automake run more (see graft.py).
#
# Exits non-zero on any failure, after printing the tail of the log that shows it.
set -eu

prog=build-mpi
here=$(cd "$(dirname "$0")/.." && pwd -P)
bblog_src=$here
cache=${BBLOG_CACHE:-/var/cache/bblog}
mpich_src=
jobs=2
check=yes
env_out=
prune=no

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
    --mpich-src) [ $# -ge 2 ] || usage; mpich_src=$2; shift 2 ;;
    --mpich-src=*) mpich_src=${1#*=}; shift ;;
    --bblog-src) [ $# -ge 2 ] || usage; bblog_src=$2; shift 2 ;;
    --bblog-src=*) bblog_src=${1#*=}; shift ;;
    --cache) [ $# -ge 2 ] || usage; cache=$2; shift 2 ;;
    --cache=*) cache=${1#*=}; shift ;;
    -j) [ $# -ge 2 ] || usage; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    --no-check) check=no; shift ;;
    --prune) prune=yes; shift ;;
    --env-out) [ $# -ge 2 ] || usage; env_out=$2; shift 2 ;;
    --env-out=*) env_out=${1#*=}; shift ;;
    --) shift; break ;;
    -h|--help) usage ;;
    *) echo "$prog: unknown argument $1" >&2; usage ;;
    esac
done
# What is left are extra MPICH configure arguments (part of the cache key).
extra_args="$*"

bblog_src=$(cd "$bblog_src" && pwd -P) || die "--bblog-src: no such directory"
[ -f "$bblog_src/logfs/bblog_log.h" ] || die "$bblog_src is not a bblog checkout"
graft=$here/adio/graft/graft.py
[ -f "$graft" ] || die "$graft missing"

mkdir -p "$cache" || die "cannot create the cache $cache (set BBLOG_CACHE to a writable place)"
cache=$(cd "$cache" && pwd -P)
mkdir -p "$cache/logs"

# One build at a time per cache: two MPICH builds on a 2-core machine help nobody, and two
# writers of one build tree corrupt it.
exec 9>"$cache/.lock"
if ! flock -n 9; then
    echo "$prog: another build-mpi.sh holds $cache/.lock; waiting for it"
    flock 9
fi

now() {
    date +%s
}
t_start=$(now)

# run LOG CMD...: runs CMD with its output in LOG; on failure shows the log's tail and exits.
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
step "checking Debian packages (scripts/install-deps.sh)"
run "$cache/logs/install-deps.log" sh "$here/scripts/install-deps.sh"

# ---- 2. MPICH source identity and version ------------------------------------------------------
codename=bookworm
if [ -r /etc/os-release ]; then
    codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-bookworm}")
fi

# has_deb_src: whether some APT source already lists deb-src for this Debian release.
has_deb_src() {
    grep -qsE "^[[:space:]]*deb-src[[:space:]].*[[:space:]]$codename([[:space:]]|\$)" \
        /etc/apt/sources.list /etc/apt/sources.list.d/*.list && return 0
    for f in /etc/apt/sources.list.d/*.sources; do
        [ -f "$f" ] || continue
        grep -qiE '^Types:.*deb-src' "$f" &&
            grep -qiE "^Suites:.*[[:space:]]$codename([[:space:]]|\$)" "$f" && return 0
    done
    return 1
}

# ensure_deb_src: makes `apt-get source mpich` possible; adds a deb-src entry for this Debian
# release only when none exists.
ensure_deb_src() {
    if apt-cache showsrc mpich 2>/dev/null | grep -q '^Package: mpich'; then
        return 0
    fi
    [ "$(id -u)" = 0 ] ||
        die "no deb-src index for mpich; as root, add a deb-src entry for $codename and apt-get update"
    if ! has_deb_src; then
        step "adding /etc/apt/sources.list.d/bblog-deb-src.sources (deb-src $codename main)"
        cat >/etc/apt/sources.list.d/bblog-deb-src.sources <<EOF
Types: deb-src
URIs: http://deb.debian.org/debian
Suites: $codename
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
    fi
    run "$cache/logs/apt-update.log" apt-get update -q
    apt-cache showsrc mpich 2>/dev/null | grep -q '^Package: mpich' ||
        die "apt-get update did not make mpich's source package visible (see $cache/logs/apt-update.log)"
}

# mpich_version DIR: the version an MPICH source tree declares.
mpich_version() {
    v=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'\$/\1/p" "$1/configure" 2>/dev/null | head -n 1)
    [ -n "$v" ] || v=$(sed -n 's/^m4_define(\[MPICH_VERSION_m4\],\[\(.*\)\])dnl$/\1/p' \
        "$1/maint/version.m4" 2>/dev/null | head -n 1)
    echo "$v"
}

if [ -n "$mpich_src" ]; then
    mpich_src=$(cd "$mpich_src" && pwd -P) || die "--mpich-src: no such directory"
    [ -f "$mpich_src/src/mpi/romio/adio/common/ad_fstype.c" ] ||
        die "$mpich_src does not look like an MPICH source tree (no src/mpi/romio)"
    version=$(mpich_version "$mpich_src")
    case $version in
    4.*) ;;
    *) die "$mpich_src: MPICH ${version:-of unknown version}; the graft targets MPICH 4.x" ;;
    esac
    src_id="tree:$mpich_src"
else
    dl=$cache/downloads
    mkdir -p "$dl"
    dsc=$(ls "$dl"/mpich_*.dsc 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$dsc" ]; then
        step "downloading Debian's MPICH source (apt-get source mpich) into $dl"
        ensure_deb_src
        (cd "$dl" && apt-get source --download-only -q mpich) >"$cache/logs/fetch.log" 2>&1 || {
            tail -n 20 "$cache/logs/fetch.log" >&2
            die "apt-get source mpich failed (log: $cache/logs/fetch.log)"
        }
        dsc=$(ls "$dl"/mpich_*.dsc 2>/dev/null | sort -V | tail -n 1)
        [ -n "$dsc" ] || die "apt-get source left no mpich_*.dsc in $dl"
    fi
    deb_version=$(basename "$dsc" .dsc)
    deb_version=${deb_version#mpich_}
    version=${deb_version%-*}
    src_id="debian:$(basename "$dsc")"
fi

# ---- 3. the key --------------------------------------------------------------------------------
config_args="--with-device=ch3:nemesis --disable-fortran --disable-cxx
 --with-file-system=ufs+nfs+bblog --enable-shared --disable-static --with-hwloc=/usr"
[ -z "$extra_args" ] || config_args="$config_args $extra_args"
key=$( {
    echo "$src_id"
    echo "$config_args"
    echo "$bblog_src"
    cat "$graft"
} | sha256sum | cut -c1-12)
kdir=$cache/mpich-$version-$key
prefix=$kdir/install
logs=$kdir/logs
mkdir -p "$logs"
step "MPICH $version ($src_id), build key $key: $kdir"

# ---- 4. source tree ----------------------------------------------------------------------------
if [ ! -f "$kdir/src/.bblog-src-complete" ]; then
    rm -rf "$kdir/src" "$kdir/src.tmp" "$kdir/build"
    if [ -n "$mpich_src" ]; then
        step "copying $mpich_src"
        mkdir "$kdir/src.tmp"
        run "$logs/unpack.log" cp -a "$mpich_src/." "$kdir/src.tmp/"
    else
        step "unpacking $(basename "$dsc")"
        run "$logs/unpack.log" dpkg-source --no-check -x "$dsc" "$kdir/src.tmp"
    fi
    mv "$kdir/src.tmp" "$kdir/src"
    touch "$kdir/src/.bblog-src-complete"
fi

# ---- 5. graft ----------------------------------------------------------------------------------
step "grafting ad_bblog (adio/graft/graft.py)"
run "$logs/graft.log" python3 "$graft" "$kdir/src" "$bblog_src"
grep '^graft:' "$logs/graft.log" | sed 's/^/    /' || true

# ---- 6. the core -------------------------------------------------------------------------------
# Built out of tree with the checkout's own Autotools build; libbblog.a is position-independent
# (Makefile.am), so it can go into libmpi.so.
core_build=$kdir/core-build
core=$kdir/core
if [ ! -x "$bblog_src/configure" ] || [ ! -f "$bblog_src/Makefile.in" ]; then
    step "bblog core: autogen.sh"
    # Others may run autogen.sh in the same checkout at the same moment; one retry covers that.
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

# ---- 7. configure MPICH ------------------------------------------------------------------------
build=$kdir/build
if [ ! -f "$build/.bblog-configured" ]; then
    rm -rf "$build"
    mkdir -p "$build"
    step "configuring MPICH (log: $logs/configure.log)"
    # shellcheck disable=SC2086 # config_args is a list of words by construction
    (cd "$build" && run "$logs/configure.log" "$kdir/src/configure" --prefix="$prefix" \
        $config_args --with-bblog="$core")
    touch "$build/.bblog-configured"
fi

# libmpi links libbblog.a, which make does not know as a dependency: when install -C replaced
# the archive, drop libmpi.la so that make relinks it (no object is recompiled).
if [ -f "$build/lib/libmpi.la" ] && [ "$core/lib/libbblog.a" -nt "$build/lib/libmpi.la" ]; then
    step "libbblog.a changed: relinking libmpi"
    rm -f "$build/lib/libmpi.la"
fi

# ---- 8. build and install ----------------------------------------------------------------------
step "make -j$jobs (log: $logs/make.log)"
run "$logs/make.log" make -C "$build" -j"$jobs"
if [ -f "$build/.bblog-installed" ]; then
    # After one complete install, a rerun can only have changed libmpi (the driver is compiled
    # into libromio, the core linked into libmpi; a graft or option change is a new key), so
    # install the libraries alone: seconds, where `make install` spends a minute on a loaded
    # machine walking every header and man page.
    step "make install-libLTLIBRARIES (log: $logs/install.log)"
    run "$logs/install.log" make -C "$build" install-libLTLIBRARIES
else
    step "make -j$jobs install (log: $logs/install.log)"
    run "$logs/install.log" make -C "$build" -j"$jobs" install
    touch "$build/.bblog-installed"
fi

# Debian's MPICH names its library libmpich.so.12 (MPILIBNAME=mpich); the ABI is the same, so
# this link lets Debian's MPI programs and libraries (libhdf5-mpich) load ours.
[ -f "$prefix/lib/libmpi.so.12" ] || die "$prefix/lib/libmpi.so.12 was not installed"
ln -sfn libmpi.so.12 "$prefix/lib/libmpich.so.12"

# ---- the bblog command and its man pages, in the MPI's prefix ----------------------------------
# (bblog replay, ls, status, dump; bblog(1), bblog(7)): where the MPI's users find mpiexec.
step "installing the bblog command and man pages into $prefix"
run "$logs/tool.log" make -C "$core_build" -j"$jobs" tools/bblog
run "$logs/tool-install.log" make -C "$core_build" install-binPROGRAMS install-man prefix="$prefix"

# ---- 9. environment file and the stable link ----------------------------------------------------
env_file=$prefix/bin/bblog-env.sh
{
    echo "# Generated by bblog scripts/build-mpi.sh: the MPICH with the bblog ROMIO driver."
    echo "# Usage: . $env_file   (any POSIX shell; sourcing it again changes nothing)"
    echo "BBLOG_MPI_PREFIX=$prefix"
    cat <<'EOF'
export BBLOG_MPI_PREFIX
case ":${PATH:-}:" in
*":$BBLOG_MPI_PREFIX/bin:"*) ;;
*) PATH=$BBLOG_MPI_PREFIX/bin${PATH:+:$PATH}; export PATH ;;
esac
case ":${LD_LIBRARY_PATH:-}:" in
*":$BBLOG_MPI_PREFIX/lib:"*) ;;
*) LD_LIBRARY_PATH=$BBLOG_MPI_PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
   export LD_LIBRARY_PATH ;;
esac
# The empty entry that ends MANPATH keeps man's default search path.
case ":${MANPATH:-}:" in
*":$BBLOG_MPI_PREFIX/share/man:"*) ;;
*) MANPATH=$BBLOG_MPI_PREFIX/share/man:${MANPATH:-}; export MANPATH ;;
esac
EOF
} >"$env_file.tmp"
if cmp -s "$env_file.tmp" "$env_file"; then
    rm -f "$env_file.tmp"
else
    mv "$env_file.tmp" "$env_file"
fi

ln -sfn "$prefix" "$cache/current.tmp"
mv -T "$cache/current.tmp" "$cache/current"

# ---- 10. check ---------------------------------------------------------------------------------
if [ "$check" = yes ]; then
    step "checking the graft (adio/graft/check-mpi.sh)"
    run "$logs/check.log" sh "$here/adio/graft/check-mpi.sh" "$prefix"
    sed 's/^/    /' "$logs/check.log"
fi

# ---- 11. old builds ----------------------------------------------------------------------------
# Each graft or option change makes a new key (about 550 MB); --prune removes the other keys'
# builds once this one is installed and checked.
if [ "$prune" = yes ]; then
    for d in "$cache"/mpich-*; do
        [ -d "$d" ] && [ "$d" != "$kdir" ] || continue
        step "pruning $d"
        rm -rf "$d"
    done
fi

step "done"
echo "MPICH $version with bblog: $prefix  (also $cache/current)"
echo ". $env_file"
# For scripts that must use this very build, not whatever `current` points at later.
[ -z "$env_out" ] || echo "$env_file" >"$env_out"
