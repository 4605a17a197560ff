#!/bin/bash
# Communication per write call, through ufs: and through bblog: (issue 20): the MPI calls a
# write makes, inside the MPI library included, counted by the LD_PRELOAD library bbcount.c
# around NCALLS write calls of each kind (cnt_mpiio.c, cnt_pnetcdf.c, cnt_hdf5.c), at 2 ranks.
# Prints the table (the most over the processes, per write call) and checks bblog's figures:
#   MPI_File_write_at_all, MPI_File_set_view + MPI_File_write_all, MPI_File_write_at   0
#   ncmpi_put_vara_all, ncmpi_put_vara                                                 0
#   H5Dwrite, independent transfer                                                     0
#   H5Dwrite, collective transfer: HDF5 1.10's own MPI_Allreduce (choosing collective
#   I/O), none of bblog's                                                              1
# and the calls of one MPI_File_sync of one small collective write: the sync's notes, a header
# and the pieces to and from the other process (4), then, as both logged, a drain of one round
# on one node (ufs: none): the start's MPI_Allgather (which also says which logs the node's
# processes can open: no exchange of their names), the round's pieces (MPI_Allgather of their
# counts, MPI_Bcast of the first process's word that it cut the round's parts), the commit
# (MPI_Allreduce); no agreement that each process could open the node's logs (on one node a
# process that could not says so at the commit) and no MPI_Allreduce for the round's end  8
# and of MPI_File_close after one more such write (ufs: ROMIO's MPI_Barrier): that drain and
# the barrier before the logs are removed, after which the driver ends the shared file pointer
# (the graft has ROMIO skip its own barrier for it)                                   5
# and of an MPI_File_sync of 1 MiB blocks, written straight through (each of two syncs, the
# first too: the notes go on the file's communicator, no new one is made): no collective call,
# its notes (a header and the block's piece) to the other process, and nothing received (the
# other's notes are heard at the next write or the close)                               2
# and MPI_File_open, at most as many as through ufs: (each process opens the PFS file alone,
# and the processes agree on the result once; ROMIO's collective open of it made six) ufs
# and, in that open, no statfs of the PFS file or its directory by any process but rank 0
# beyond ROMIO's own (MPI_File_open asks on every process before ROMIO_FSTYPE_FORCE applies:
# the ufs: count): which file system holds the file is asked once, the answer shared by the
# open's agreement; and no open with O_CREAT of it by any process beyond ROMIO's own (its create
# pass on rank 0: rank 0 creates the file before the agreement, the others open what exists)
# (Calls on a communicator of one process reach no one and are not counted: bbcount.c.)
# Environment: as run-pnetcdf.sh (BBLOG_ENV_SCRIPT, PNETCDF_DIR, CI), and HDF5_CFLAGS,
# HDF5_LIBS as run-apps.sh (default Debian's libhdf5-mpich-dev).
# Exit: 0 all within the limits; 1 otherwise; 77 skip (no bblog MPI, PnetCDF or HDF5, CI unset).
set -u

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
pnc_dir=${PNETCDF_DIR:-no}

skip_or_fail() {
    if [ -n "${CI:-}" ]; then
        echo "run-count: $* (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-count: $*; skipping"
    exit 77
}

if [ "$env_script" = no ]; then
    echo "run-count: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
[ -r "$env_script" ] || skip_or_fail "no bblog MPI: $env_script not found"
[ "$pnc_dir" != no ] || skip_or_fail "no PnetCDF: configure --with-pnetcdf=DIR or set PNETCDF_DIR"
pnc=$pnc_dir
[ -r "$pnc/install/include/pnetcdf.h" ] && pnc=$pnc/install
[ -r "$pnc/include/pnetcdf.h" ] || skip_or_fail "no PnetCDF in $pnc_dir (scripts/build-pnetcdf.sh)"
multiarch=$(gcc -print-multiarch 2>/dev/null)
hdf5_cflags=${HDF5_CFLAGS:--I/usr/include/hdf5/mpich}
hdf5_libs=${HDF5_LIBS:--L/usr/lib/${multiarch:-x86_64-linux-gnu}/hdf5/mpich -lhdf5}
if [ -z "${HDF5_CFLAGS:-}" ] && [ ! -r /usr/include/hdf5/mpich/hdf5.h ]; then
    skip_or_fail "no parallel HDF5: /usr/include/hdf5/mpich/hdf5.h not found (libhdf5-mpich-dev)"
fi
# shellcheck source=/dev/null
. "$env_script"
command -v mpicc >/dev/null 2>&1 || { echo "run-count: no mpicc after $env_script" >&2; exit 1; }

if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/apps/bbcount.c" ]; then
    src=$(cd "$srcdir/test/apps" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-count.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
cflags="-std=gnu11 -O2 -Wall -Wextra -Werror"
# shellcheck disable=SC2086
mpicc $cflags -shared -fPIC "$src/bbcount.c" -ldl -o "$work/libbbcount.so" &&
    mpicc $cflags "$src/cnt_mpiio.c" -o "$work/cnt_mpiio" &&
    mpicc $cflags -I"$pnc/include" "$src/cnt_pnetcdf.c" -L"$pnc/lib" -lpnetcdf -lm \
        -o "$work/cnt_pnetcdf" &&
    mpicc $cflags $hdf5_cflags "$src/cnt_hdf5.c" $hdf5_libs -o "$work/cnt_hdf5" ||
    { echo "run-count: cannot compile the counting programs" >&2; exit 1; }

mkdir -p "$work/bb" "$work/out"
for fs in ufs bblog; do
    for p in cnt_mpiio cnt_pnetcdf cnt_hdf5; do
        if ! BBLOG_DIR=$work/bb ROMIO_FSTYPE_FORCE=$fs: timeout 300 \
            mpiexec -n 2 -env LD_PRELOAD "$work/libbbcount.so" -env BBCOUNT_PATH "$work/out" \
            "$work/$p" "$work/out/$p.$fs" \
            >"$work/$p.$fs.log" 2>&1; then
            echo "run-count: $p through $fs: failed" >&2
            tail -n 20 "$work/$p.$fs.log" >&2
            exit 1
        fi
        sed -n "s/^bbcount /$fs /p" "$work/$p.$fs.log" >>"$work/counts"
    done
done

python3 - "$work/counts" <<'PY'
import sys
limit = {"write_at_all": 0, "set_view+write_all": 0, "write_at": 0, "ncmpi_put_vara_all": 0,
         "ncmpi_put_vara": 0, "H5Dwrite(collective)": 1, "H5Dwrite(independent)": 0,
         "sync": 8, "close": 5, "sync(through)": 2, "open": "ufs"}
per = {}    # (label, fs) -> (calls per write, detail) of the process with the most
bad = []
statfs, creat = {}, {}
for line in open(sys.argv[1]):
    f = line.split()
    fs, label, kv = f[0], f[1], dict(x.split("=", 1) for x in f[2:])
    if label == "open":
        statfs[(fs, int(kv["rank"]))] = int(kv.get("statfs", 0))
        creat[(fs, int(kv["rank"]))] = int(kv.get("creat", 0))
    n = int(kv["ncalls"])
    if label == "sync(through)" and fs == "bblog" and int(kv["coll"]) > 0:
        bad.append("sync of blocks written through, through bblog: %s collective calls on "
                   "rank %s, none expected" % (kv["coll"], kv["rank"]))
    calls = (int(kv["coll"]) + int(kv["p2p"])) / n
    detail = " ".join("%s %g" % (k, int(v) / n) for k, v in kv.items()
                      if k not in ("rank", "ncalls", "coll", "p2p", "bytes", "p2pbytes", "ctl",
                                "ctlbytes"))
    if calls >= per.get((label, fs), (-1, ""))[0]:
        per[(label, fs)] = (calls, detail)
for (fs, r), n in sorted(statfs.items()):
    print("open through %s: rank %d made %d statfs calls of the PFS file or its directory"
          % (fs, r, n))
    if fs == "bblog" and r != 0 and n > statfs.get(("ufs", r), 0):
        bad.append("open through bblog: rank %d made %d statfs calls, ROMIO's own %d expected"
                   % (r, n, statfs.get(("ufs", r), 0)))
for (fs, r), n in sorted(creat.items()):
    print("open through %s: rank %d opened the PFS file with O_CREAT %d times" % (fs, r, n))
    if fs == "bblog" and n > creat.get(("ufs", r), 0):
        bad.append("open through bblog: rank %d opened the PFS file with O_CREAT %d times, "
                   "ROMIO's own %d expected" % (r, n, creat.get(("ufs", r), 0)))
print("| write call | ufs: | bblog: | bblog limit |")
print("|---|---|---|---|")
for label, lim in limit.items():
    u, b = per.get((label, "ufs")), per.get((label, "bblog"))
    if u is None or b is None:
        bad.append("no count for %s" % label)
        continue
    cell = lambda c: "%g%s" % (c[0], " (%s)" % c[1] if c[1] else "")
    most = u[0] + int(lim[4:] or 0) if str(lim).startswith("ufs") else lim
    print("| %s | %s | %s | %s |" % (label, cell(u), cell(b), lim))
    if b[0] > most:
        bad.append("%s through bblog: %g calls each, at most %g expected"
                   % (label, b[0], most))
for b in bad:
    print("run-count: FAIL " + b)
sys.exit(1 if bad else 0)
PY
