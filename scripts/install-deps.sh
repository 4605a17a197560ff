#!/bin/sh
# Installs the Debian 12 packages bblog needs to build and test everything (run as root).
# Idempotent: packages already present are left alone, apt is not even updated then.
# libhdf5-mpich-dev (the HDF5 application tests, test/apps) pulls in Debian's own mpich and
# libmpich12; the tests run on the bblog MPI all the same (its bblog-env.sh puts its mpiexec
# first in PATH and its libmpi.so.12 / libmpich.so.12 first in LD_LIBRARY_PATH, and run-apps.sh
# checks that the programs load them).
set -eu

pkgs="autoconf automake libtool pkg-config make gcc libaio-dev libcmocka-dev
      dpkg-dev file bison flex python3 libhwloc-dev valgrind strace
      libhdf5-mpich-dev hdf5-tools"
missing=
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing; run this script as root" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $missing
