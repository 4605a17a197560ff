#!/bin/sh
# build-pnetcdf.sh [--mpi-env FILE] [--cache DIR] [--prefix-out FILE] [-j N]
#
# PnetCDF from Debian's source package (`apt-get source pnetcdf`, 1.12.3 on Debian 12), built
# against the bblog MPI of scripts/build-mpi.sh, C only, with PnetCDF's burst-buffer driver
# (--enable-burst-buffering).
#   --mpi-env FILE     the MPI to build against: the file written by `build-mpi.sh --env-out`
#                      (it holds the path of the MPI's bblog-env.sh), or that bblog-env.sh itself.
#                      Default: $cache/current/bin/bblog-env.sh (the MPI built last, by anyone).
#   --prefix-out FILE  write the directory of this build (install/, build/, src/ below it) to
#                      FILE, for the test runners (test/apps/run-pnetcdf*.sh, configure
#                      --with-pnetcdf).
# Cached like the MPI, under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/pnetcdf/               Debian source package
#   pnetcdf-<version>-<key>/         one build, keyed by the source package, the configure
#       src/ build/ install/ logs/   options and the MPI it is built against; the build tree
#                                    stays, with PnetCDF's test programs built (`make tests`),
#                                    for its own `make check` and `make ptest`
#                                    (test/apps/run-pnetcdf-suite.sh)
#   pnetcdf-current -> pnetcdf-<version>-<key>
# A rerun with the same key does nothing. Exits non-zero on failure, after printing the tail of
# the log that shows it.
set -eu

prog=build-pnetcdf
cache=${BBLOG_CACHE:-/var/cache/bblog}
jobs=2
mpi_env=
prefix_out=

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

while [ $# -gt 0 ]; do
    case $1 in
    --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache=$2; shift 2 ;;
    --cache=*) cache=${1#*=}; shift ;;
    --mpi-env) [ $# -ge 2 ] || die "--mpi-env needs a file"; mpi_env=$2; shift 2 ;;
    --mpi-env=*) mpi_env=${1#*=}; shift ;;
    --prefix-out) [ $# -ge 2 ] || die "--prefix-out needs a file"; prefix_out=$2; shift 2 ;;
    --prefix-out=*) prefix_out=${1#*=}; shift ;;
    -j) [ $# -ge 2 ] || die "-j needs a number"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *) die "unknown argument $1" ;;
    esac
done

load_mpi_env "$mpi_env"

debian_source pnetcdf PnetCDF

config_args="--disable-fortran --disable-cxx --enable-burst-buffering --disable-shared"
key=$(printf '%s\n%s\n%s\n' "$(basename "$dsc")" "$config_args" "$mpi_prefix" |
    sha256sum | cut -c1-12)
kdir=$cache/pnetcdf-$version-$key
# The directory of this build, for the runners (--prefix-out).
done_out() {
    ln -sfn "$kdir" "$cache/pnetcdf-current"
    if [ -n "$prefix_out" ]; then
        echo "$kdir" >"$prefix_out.tmp" && mv "$prefix_out.tmp" "$prefix_out"
    fi
}
# PnetCDF's own test programs, for test/apps/run-pnetcdf-suite.sh: `make tests` builds them
# without running them. Serial: PnetCDF 1.12.3's test Makefiles race under -j (two rules
# compile the same object: "mv: cannot stat '.deps/test_put.Tpo'").
build_tests() {
    if [ ! -f "$kdir/.tests-done" ]; then
        step "make tests (PnetCDF's test programs, serial)"
        run "$kdir/logs/tests.log" make -C "$kdir/build" tests
        touch "$kdir/.tests-done"
    fi
}
if [ -f "$kdir/.done" ]; then
    build_tests
    done_out
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
build_tests
done_out
step "PnetCDF $version in $kdir/install (build tree $kdir/build)"
