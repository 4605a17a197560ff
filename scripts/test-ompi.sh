#!/bin/sh
# test-ompi.sh [--series 4|5] [-j N] [--reuse BUILDDIR]: bblog on Open MPI 4.1.4 (--series 4,
# the default) or 5.0.7 (--series 5), from nothing. Not part of scripts/test-all.sh: the first
# Open MPI build alone takes longer than the CI budget leaves (README); run this as its own CI
# job, or by hand. Later runs reuse the cached build.
#   1. scripts/build-ompi.sh: Debian's Open MPI with bblog grafted into io/romio321, checked by
#      adio/graft/check-ompi.sh;
#   2. test/mpi/run-diff.sh on that MPI: the driver's differential suite, unchanged programs,
#      byte-for-byte comparison with plain ROMIO;
#   3. test/ompi/run-ompi.sh: Debian's h5py, netCDF-4 and PnetCDF binaries on that MPI (Open
#      MPI 4.1 only: Debian 12 builds them on it).
# --reuse BUILDDIR is passed to build-ompi.sh: refresh that existing Open MPI build (made by an
# earlier graft) instead of building the current key's from nothing.
# Prints each step's time; exits non-zero if any step fails (all steps run).
set -u

here=$(cd "$(dirname "$0")/.." && pwd -P)
jobs=2
series=4
reuse=
while [ $# -ge 2 ]; do
    case $1 in
    -j) jobs=$2 ;;
    --series) series=$2 ;;
    --reuse) reuse=$2 ;;
    *) break ;;
    esac
    shift 2
done
if [ $# -ne 0 ]; then
    echo "test-ompi: unknown argument $1 (usage: test-ompi.sh [--series 4|5] [-j N]" \
        "[--reuse BUILDDIR])" >&2
    exit 2
fi

env_out=$(mktemp "${TMPDIR:-/tmp}/bblog-ompi-env.XXXXXX") || exit 1
trap 'rm -f "$env_out"' EXIT
status=0
t_all=$(date +%s)

t=$(date +%s)
if ! "$here/scripts/build-ompi.sh" --series "$series" -j "$jobs" ${reuse:+--reuse "$reuse"} \
    --env-out "$env_out"; then
    echo "test-ompi: build-ompi.sh failed" >&2
    exit 1
fi
echo "test-ompi: build: $(($(date +%s) - t)) s"

# The bblog command of that MPI's install (t_durable runs `bblog status`): a fresh clone has
# no in-tree build of it.
t=$(date +%s)
CI=${CI:-1} BBLOG_TOOL=${BBLOG_TOOL:-$(dirname "$(cat "$env_out")")/bblog} \
    BBLOG_ENV_SCRIPT=$(cat "$env_out") "$here/test/mpi/run-diff.sh" || status=1
echo "test-ompi: differential suite: $(($(date +%s) - t)) s"

# Debian 12's binaries are built on Open MPI 4.1 (io/romio321): series 4 only.
if [ "$series" = 4 ]; then
    t=$(date +%s)
    BBLOG_ENV_SCRIPT=$(cat "$env_out") "$here/test/ompi/run-ompi.sh" || status=1
    echo "test-ompi: Debian binaries: $(($(date +%s) - t)) s"
fi

echo "test-ompi: total $(($(date +%s) - t_all)) s; $([ $status = 0 ] && echo PASS || echo FAIL)"
exit $status
