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
      libhdf5-mpich-dev hdf5-tools python3-matplotlib"
# clang and its libFuzzer runtime: scripts/fuzz.sh (test/fuzz).
pkgs="$pkgs clang libclang-rt-14-dev"
# python3 -m venv and Python's headers: scripts/build-mpi4py.sh builds mpi4py in a venv.
pkgs="$pkgs python3-venv python3-dev"
# The emulated cluster (scripts/cluster.sh, test/cluster) and the benchmarks' PFS
# (bench/pfs.sh): namespaces, GlusterFS. Debian's own glusterd is not started (policy-rc.d
# below): the scripts run their own, on loopback or inside the cluster's namespaces.
pkgs="$pkgs iproute2 util-linux glusterfs-server glusterfs-client"
# Slurm on the emulated cluster (scripts/cluster.sh up --slurm, test/cluster/run-slurm.sh); its
# daemons are not started either: the cluster runs its own, inside its namespaces.
pkgs="$pkgs slurmd slurmctld slurm-client munge"
# --ompi: also what scripts/build-ompi.sh and test/ompi/run-ompi.sh need (Open MPI's build
# dependencies, Debian's Open MPI parallel I/O stack). They co-install with the MPICH packages,
# but Open MPI's alternatives (mpicc, mpirun, mpi.h, h5pcc) have the higher priority: MPICH is
# set back as the system default below, as it was.
ompi=no
if [ "${1:-}" = --ompi ]; then
    ompi=yes
    pkgs="$pkgs libevent-dev libpmix-dev libopenmpi-dev python3-h5py-mpi python3-mpi4py
          libnetcdf-mpi-dev netcdf-bin libpnetcdf-dev pnetcdf-bin"
fi
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
# No service may start during the install (glusterfs-server would start glusterd on every
# interface); a policy-rc.d of the machine's own is left as it is.
policy=
if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\nexit 101\n' >"$policy"
    chmod 755 "$policy"
fi
apt-get install -y -q --no-install-recommends $missing || { [ -z "$policy" ] || rm -f "$policy"; exit 1; }
[ -z "$policy" ] || rm -f "$policy"
if [ "$ompi" = yes ]; then
    ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
    for alt in mpi:/usr/bin/mpicc.mpich mpirun:/usr/bin/mpirun.mpich \
        "mpi-$ma:/usr/include/$ma/mpich" h5pcc:/usr/bin/h5pcc.mpich; do
        [ ! -e "${alt#*:}" ] || update-alternatives --set "${alt%%:*}" "${alt#*:}"
    done
fi
