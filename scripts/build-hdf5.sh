#!/bin/sh
# build-hdf5.sh [--series 1.10|1.14] [--mpi-env FILE] [--cache DIR] [--prefix-out FILE] [-j N]
#
# HDF5 from Debian's source package (`apt-get source hdf5`, 1.10.8 on Debian 12), built against
# the bblog MPI of scripts/build-mpi.sh with --enable-parallel, for HDF5's own parallel tests
# (testpar/, run by test/apps/run-hdf5-testpar.sh). Only the library (src/), the test library
# (test/libh5test.la) and the testpar programs are built, nothing is installed (2-3 minutes on
# 2 cores).
#   --series 1.14      HDF5 1.14 instead: Debian's hdf5 source package 1.14.x from sid (trixie's
#                      1.14.5 if sid has none or does not serve it), fetched with apt-get
#                      through a private APT state ($cache/apt-<suite>/: its own sources.list,
#                      lists and cache, no apt.conf.d), the machine's APT configuration untouched.
#                      Default 1.10: the package of the machine's own deb-src entries.
#   --mpi-env FILE     the MPI to build against: the file written by `build-mpi.sh --env-out`
#                      (it holds the path of the MPI's bblog-env.sh), or that bblog-env.sh itself.
#                      Default: $cache/current/bin/bblog-env.sh (the MPI built last, by anyone).
#   --prefix-out FILE  write the directory of this build (src/ build/ logs/ below it) to FILE,
#                      for test/apps/run-hdf5-testpar.sh --build-dir.
# Cached like the MPI, under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/hdf5/                  Debian source package (downloads/hdf5-1.14/: --series 1.14)
#   hdf5-<version>-<key>/            one build, keyed by the source package, the configure
#       src/ build/ logs/            options and the MPI it is built against; the testpar
#       testpar-programs             programs are in build/testpar, their names (in HDF5's
#                                    order) in testpar-programs
#   hdf5-current -> hdf5-<version>-<key>   (--series 1.14: hdf5-1.14-current)
# A rerun with the same key does nothing. Exits non-zero on failure, after printing the tail of
# the log that shows it.
set -eu

prog=build-hdf5
cache=${BBLOG_CACHE:-/var/cache/bblog}
jobs=2
mpi_env=
prefix_out=
series=1.10

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
    --series) [ $# -ge 2 ] || die "--series needs 1.10 or 1.14"; series=$2; shift 2 ;;
    --series=*) series=${1#*=}; shift ;;
    -j) [ $# -ge 2 ] || die "-j needs a number"; jobs=$2; shift 2 ;;
    -j*) jobs=${1#-j}; shift ;;
    -h|--help) sed -n '2,19p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *) die "unknown argument $1" ;;
    esac
done

case $series in 1.10|1.14) ;; *) die "--series: expected 1.10 or 1.14, not '$series'" ;; esac

load_mpi_env "$mpi_env"

# apt_priv SUITE CMD ARGS...: CMD (apt-get, apt-cache) with a private APT state for Debian's
# SUITE under $cache/apt-SUITE: a deb-src entry for SUITE alone, its own lists and cache, no
# apt.conf.d (none of the machine's update hooks run); Valid-Until not checked, as by the
# machine's own configuration (the mirror may serve an older snapshot).
apt_priv() {
    ad=$cache/apt-$1
    mkdir -p "$ad/lists" "$ad/cache" "$ad/apt.conf.d" "$ad/sources.list.d" "$ad/preferences.d"
    echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
        "http://deb.debian.org/debian $1 main" >"$ad/sources.list"
    shift
    cat >"$ad/apt.conf" <<EOF
Dir::Etc::Parts "$ad/apt.conf.d";
Dir::Etc::Main "/dev/null";
Dir::Etc::SourceList "$ad/sources.list";
Dir::Etc::SourceParts "$ad/sources.list.d";
Dir::Etc::Preferences "/dev/null";
Dir::Etc::PreferencesParts "$ad/preferences.d";
Dir::State::Lists "$ad/lists";
Dir::Cache "$ad/cache";
Acquire::Check-Valid-Until "false";
EOF
    APT_CONFIG=$ad/apt.conf "$@"
}

# debian_source_114: as debian_source (scripts/lib.sh) for HDF5 1.14: the newest hdf5_1.14.*.dsc
# under $cache/downloads/hdf5-1.14, else downloaded from sid (else trixie) through apt_priv.
# Sets dl, dsc, deb_version and version.
debian_source_114() {
    dl=$cache/downloads/hdf5-1.14
    mkdir -p "$dl"
    exec 9>"$cache/.hdf5-1.14.lock"
    flock 9
    dsc=$(ls "$dl"/hdf5_1.14.*.dsc 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$dsc" ]; then
        : >"$dl/fetch.log"
        for suite in sid trixie; do
            step "downloading Debian's HDF5 1.14 source from $suite into $dl"
            apt_priv "$suite" apt-get update -q >>"$dl/fetch.log" 2>&1 || continue
            # sid may list several hdf5 versions (1.14 next to 2.x): the newest 1.14.
            v=$(apt_priv "$suite" apt-cache showsrc hdf5 2>>"$dl/fetch.log" |
                sed -n 's/^Version: \(1\.14\.\)/\1/p' | sort -V | tail -n 1)
            [ -n "$v" ] || { echo "no hdf5 1.14 in $suite" >>"$dl/fetch.log"; continue; }
            (cd "$dl" && apt_priv "$suite" apt-get source --download-only -q "hdf5=$v") \
                >>"$dl/fetch.log" 2>&1 && break
            rm -f "$dl"/hdf5_*
        done
        dsc=$(ls "$dl"/hdf5_1.14.*.dsc 2>/dev/null | sort -V | tail -n 1)
        [ -n "$dsc" ] || {
            tail -n 20 "$dl/fetch.log" >&2
            die "no HDF5 1.14 source from sid or trixie (log: $dl/fetch.log)"
        }
    fi
    deb_version=$(basename "$dsc" .dsc)
    deb_version=${deb_version#hdf5_}
    version=${deb_version%-*}
    version=${version%+*}
}

if [ "$series" = 1.14 ]; then
    debian_source_114
    current=hdf5-1.14-current
else
    debian_source hdf5 HDF5
    current=hdf5-current
fi

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
    ln -sfn "$kdir" "$cache/$current"
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
