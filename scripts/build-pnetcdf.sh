#!/bin/sh
# build-pnetcdf.sh [--cache DIR] [-j N]
#
# PnetCDF from Debian's source package (`apt-get source pnetcdf`, 1.12.3 on Debian 12), built
# against the bblog MPI of scripts/build-mpi.sh (its bblog-env.sh must exist), C only, with
# PnetCDF's burst-buffer driver (--enable-burst-buffering). Cached like the MPI, under
# ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/pnetcdf/               Debian source package
#   pnetcdf-<version>-<key>/         one build, keyed by the source package, the configure
#       src/ build/ install/ logs/   options and the MPI it is built against; the build tree
#                                    stays, for PnetCDF's own `make check` and `make ptest`
#   pnetcdf-current -> pnetcdf-<version>-<key>
# A rerun with the same key does nothing. Exits non-zero on failure, after printing the tail of
# the log that shows it.
set -eu

prog=build-pnetcdf
cache=${BBLOG_CACHE:-/var/cache/bblog}
jobs=2

die() {
    echo "$prog: $*" >&2
    exit 1
}

while [ $# -gt 0 ]; do
    case $1 in
    --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache=$2; shift 2 ;;
    --cache=*) cache=${1#*=}; shift ;;
    -j) [ $# -ge 2 ] || die "-j needs a number"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h|--help) sed -n '2p' "$0" | sed 's/^# //' >&2; exit 2 ;;
    *) die "unknown argument $1" ;;
    esac
done

env_script=$cache/current/bin/bblog-env.sh
[ -r "$env_script" ] || die "no bblog MPI ($env_script): run scripts/build-mpi.sh first"
# shellcheck source=/dev/null
. "$env_script"
mpi_prefix=$(cd "$BBLOG_MPI_PREFIX" && pwd -P)

run() { # LOG CMD...
    run_log=$1
    shift
    if ! "$@" >"$run_log" 2>&1; then
        echo "$prog: FAILED: $*" >&2
        tail -n 40 "$run_log" >&2
        echo "$prog: full log: $run_log" >&2
        exit 1
    fi
}

t0=$(date +%s)
step() {
    echo "$prog: [$(($(date +%s) - t0))s] $*"
}

dl=$cache/downloads/pnetcdf
mkdir -p "$dl"
exec 9>"$cache/.pnetcdf.lock"
flock 9
dsc=$(ls "$dl"/pnetcdf_*.dsc 2>/dev/null | sort -V | tail -n 1)
if [ -z "$dsc" ]; then
    step "downloading Debian's PnetCDF source (apt-get source pnetcdf) into $dl"
    (cd "$dl" && apt-get source --download-only -q pnetcdf) >"$dl/fetch.log" 2>&1 || {
        tail -n 20 "$dl/fetch.log" >&2
        die "apt-get source pnetcdf failed (deb-src entries: scripts/build-mpi.sh adds them)"
    }
    dsc=$(ls "$dl"/pnetcdf_*.dsc 2>/dev/null | sort -V | tail -n 1)
    [ -n "$dsc" ] || die "apt-get source left no pnetcdf_*.dsc in $dl"
fi
deb_version=$(basename "$dsc" .dsc)
deb_version=${deb_version#pnetcdf_}
version=${deb_version%-*}

config_args="--disable-fortran --disable-cxx --enable-burst-buffering --disable-shared"
key=$(printf '%s\n%s\n%s\n' "$(basename "$dsc")" "$config_args" "$mpi_prefix" |
    sha256sum | cut -c1-12)
kdir=$cache/pnetcdf-$version-$key
if [ -f "$kdir/.done" ]; then
    ln -sfn "$kdir" "$cache/pnetcdf-current"
    step "PnetCDF $version already built in $kdir"
    exit 0
fi

rm -rf "$kdir"
mkdir -p "$kdir/logs"
step "unpacking $(basename "$dsc") (Debian patches applied) into $kdir/src"
run "$kdir/logs/unpack.log" dpkg-source -x "$dsc" "$kdir/src"
# Debian's tarball carries no configure script.
step "autoreconf"
run "$kdir/logs/autoreconf.log" sh -c "cd '$kdir/src' && autoreconf -fi"
mkdir -p "$kdir/build"
step "configure ($config_args) with $(command -v mpicc)"
# shellcheck disable=SC2086
run "$kdir/logs/configure.log" sh -c "cd '$kdir/build' && '$kdir/src/configure' \
    --prefix='$kdir/install' MPICC=mpicc $config_args"
step "make -j$jobs"
run "$kdir/logs/make.log" make -C "$kdir/build" -j"$jobs"
step "make install"
run "$kdir/logs/install.log" make -C "$kdir/build" install
touch "$kdir/.done"
ln -sfn "$kdir" "$cache/pnetcdf-current"
step "PnetCDF $version in $kdir/install (build tree $kdir/build)"
