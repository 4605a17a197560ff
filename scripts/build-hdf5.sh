#!/bin/sh
# build-hdf5.sh [--mpi-env FILE] [--cache DIR] [--prefix-out FILE] [-j N]
#
# HDF5 from Debian's source package (`apt-get source hdf5`, 1.10.8 on Debian 12), built against
# the bblog MPI of scripts/build-mpi.sh with --enable-parallel, for HDF5's own parallel tests
# (testpar/, run by test/apps/run-hdf5-testpar.sh). Only the library (src/), the test library
# (test/libh5test.la) and the testpar programs are built, nothing is installed (2-3 minutes on
# 2 cores).
#   --mpi-env FILE     the MPI to build against: the file written by `build-mpi.sh --env-out`
#                      (it holds the path of the MPI's bblog-env.sh), or that bblog-env.sh itself.
#                      Default: $cache/current/bin/bblog-env.sh (the MPI built last, by anyone).
#   --prefix-out FILE  write the directory of this build (src/ build/ logs/ below it) to FILE,
#                      for test/apps/run-hdf5-testpar.sh --build-dir.
# Cached like the MPI, under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/hdf5/                  Debian source package
#   hdf5-<version>-<key>/            one build, keyed by the source package, the configure
#       src/ build/ logs/            options and the MPI it is built against; the testpar
#       testpar-programs             programs are in build/testpar, their names (in HDF5's
#                                    order) in testpar-programs
#   hdf5-current -> hdf5-<version>-<key>
# A rerun with the same key does nothing. Exits non-zero on failure, after printing the tail of
# the log that shows it.
set -eu

prog=build-hdf5
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

debian_source hdf5 HDF5

# Static only (libtool compiles every file once, not twice); no Fortran, C++, high-level
# library, tools or Java: testpar needs none of them. zlib (Debian's zlib1g-dev) is found by
# configure, so t_filters_parallel tests the deflate filter. Not optimised (-O0): the library
# compiles in about 1 minute on 2 cores instead of 4-5 at production's -O3, and testpar's time
# goes to I/O and MPI, not to HDF5's own code.
config_args="--enable-parallel --disable-shared --disable-fortran --disable-cxx --disable-hl"
config_args="$config_args --disable-tools --disable-java --enable-build-mode=production"
config_args="$config_args --enable-optimization=none"
key=$(printf '%s\n%s\n%s\n' "$(basename "$dsc")" "$config_args" "$mpi_prefix" |
    sha256sum | cut -c1-12)
kdir=$cache/hdf5-$version-$key
done_out() {
    ln -sfn "$kdir" "$cache/hdf5-current"
    if [ -n "$prefix_out" ]; then
        echo "$kdir" >"$prefix_out.tmp" && mv "$prefix_out.tmp" "$prefix_out"
    fi
}
if [ -f "$kdir/.done" ]; then
    done_out
    step "HDF5 $version already built in $kdir"
    exit 0
fi

rm -rf "$kdir"
mkdir -p "$kdir/logs"
step "unpacking $(basename "$dsc") (Debian patches applied) into $kdir/src"
run "$kdir/logs/unpack.log" dpkg-source -x "$dsc" "$kdir/src"
# The tarball's configure and Makefile.in are used as they are: HDF5 disables automake's
# rebuild rules (AM_MAINTAINER_MODE([disable])), and the Debian patches to configure.ac and
# Makefile.am (library flavour names, reproducibility) do not matter here.
mkdir -p "$kdir/build"
step "configure ($config_args) with $(command -v mpicc)"
# shellcheck disable=SC2086
run "$kdir/logs/configure.log" sh -c "cd '$kdir/build' && '$kdir/src/configure' \
    --prefix='$kdir/install' CC=mpicc $config_args"
step "make -C src -j$jobs (the library)"
run "$kdir/logs/make-src.log" make -C "$kdir/build/src" -j"$jobs"
step "make -C test libh5test.la (the test library)"
run "$kdir/logs/make-test.log" make -C "$kdir/build/test" -j"$jobs" libh5test.la
# testpar's check_PROGRAMS, built without being run (`make check` would run them).
progs=$(make -s -C "$kdir/build/testpar" -f Makefile -f - print-check_PROGRAMS 2>/dev/null <<'EOF'
print-%:
	@echo $($*)
EOF
) || die "cannot read check_PROGRAMS from $kdir/build/testpar/Makefile"
[ -n "$progs" ] || die "no check_PROGRAMS in $kdir/build/testpar/Makefile"
step "make -C testpar -j$jobs ($progs)"
# shellcheck disable=SC2086
run "$kdir/logs/make-testpar.log" make -C "$kdir/build/testpar" -j"$jobs" $progs
echo $progs >"$kdir/testpar-programs"
touch "$kdir/.done"
done_out
step "HDF5 $version in $kdir (testpar programs in $kdir/build/testpar)"
