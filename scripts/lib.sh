# lib.sh - what the build scripts for libraries on the bblog MPI share (build-pnetcdf.sh,
# build-hdf5.sh, build-mpi4py.sh). Sourced; the caller sets prog and cache first.

t0=$(date +%s)

die() {
    echo "$prog: $*" >&2
    exit 1
}

step() {
    echo "$prog: [$(($(date +%s) - t0))s] $*"
}

run() { # LOG CMD...: runs CMD into LOG; on failure shows its tail and exits
    run_log=$1
    shift
    if ! "$@" >"$run_log" 2>&1; then
        echo "$prog: FAILED: $*" >&2
        tail -n 40 "$run_log" >&2
        echo "$prog: full log: $run_log" >&2
        exit 1
    fi
}

# load_mpi_env MPI_ENV: sources the bblog MPI's environment script (MPI_ENV: the script, or
# the file build-mpi.sh --env-out wrote; empty: $cache/current) and checks that its mpicc is
# first in PATH. Sets env_script, mpi_prefix (physical path), mpicc, mpi_layer and mpi_libdir.
# The environment script of scripts/build-layer.sh (layer-env.sh) names a binary MPI with
# bblog's preloadable MPI-IO layer: its BBLOG_MPI_PREFIX holds the layer (lib/ has only
# libbblog-mpiio.so), BBLOG_LAYER_MPI the binary MPI, whose lib/ has the libmpi that mpicc
# links. mpi_layer: that binary MPI's prefix (empty for an MPI with bblog grafted in);
# mpi_libdir: the directory of the libmpi that programs built with mpicc load.
load_mpi_env() {
    if [ -z "$1" ]; then
        env_script=$cache/current/bin/bblog-env.sh
        [ -r "$env_script" ] || die "no bblog MPI ($env_script): run scripts/build-mpi.sh first"
    else
        [ -r "$1" ] || die "--mpi-env: cannot read $1"
        if grep -q BBLOG_MPI_PREFIX "$1"; then
            env_script=$1
        else
            env_script=$(head -n 1 "$1")
            [ -r "$env_script" ] ||
                die "--mpi-env: $1 names '$env_script', which is not a readable file" \
                    "(expected the output of build-mpi.sh --env-out)"
        fi
    fi
    # Set by layer-env.sh only: not inherited from a layer environment sourced before.
    unset BBLOG_LAYER_MPI
    # shellcheck source=/dev/null
    . "$env_script"
    [ -n "${BBLOG_MPI_PREFIX:-}" ] || die "$env_script did not set BBLOG_MPI_PREFIX"
    mpi_prefix=$(cd "$BBLOG_MPI_PREFIX" && pwd -P)
    mpicc=$(command -v mpicc) || die "no mpicc in PATH after sourcing $env_script"
    [ "$mpicc" = "$mpi_prefix/bin/mpicc" ] || [ "$mpicc" = "$BBLOG_MPI_PREFIX/bin/mpicc" ] ||
        die "mpicc is $mpicc, not the one of $env_script"
    mpi_layer=${BBLOG_LAYER_MPI:-}
    if [ -n "$mpi_layer" ]; then
        mpi_libdir=$(cd "$mpi_layer/lib" && pwd -P) ||
            die "$env_script: no lib/ in BBLOG_LAYER_MPI=$mpi_layer"
    else
        mpi_libdir=$mpi_prefix/lib
    fi
}

# debian_source PKG NAME: the newest PKG_*.dsc under $cache/downloads/PKG, downloaded with
# `apt-get source` when there is none (NAME for messages), under a lock held until the caller
# exits (fd 9). Sets dl, dsc, deb_version and version (upstream, without Debian's +repack).
debian_source() {
    dl=$cache/downloads/$1
    mkdir -p "$dl"
    exec 9>"$cache/.$1.lock"
    flock 9
    dsc=$(ls "$dl"/"$1"_*.dsc 2>/dev/null | sort -V | tail -n 1)
    if [ -z "$dsc" ]; then
        step "downloading Debian's $2 source (apt-get source $1) into $dl"
        (cd "$dl" && apt-get source --download-only -q "$1") >"$dl/fetch.log" 2>&1 || {
            tail -n 20 "$dl/fetch.log" >&2
            die "apt-get source $1 failed (deb-src entries: scripts/build-mpi.sh adds them)"
        }
        dsc=$(ls "$dl"/"$1"_*.dsc 2>/dev/null | sort -V | tail -n 1)
        [ -n "$dsc" ] || die "apt-get source left no $1_*.dsc in $dl"
    fi
    deb_version=$(basename "$dsc" .dsc)
    deb_version=${deb_version#"$1"_}
    version=${deb_version%-*}
    version=${version%+*}
}
