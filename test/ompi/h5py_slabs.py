"""h5py_slabs.py PATH: per-rank slabs of HDF5 datasets through Debian's h5py (driver='mpio').

Run under mpiexec (4 ranks in test/ompi/run-ompi.sh). Writes, as a Python user of parallel
HDF5 would:
  - /slabs: float64 (16 * nprocs, 1000), rank r writes rows [16r, 16r + 16) collectively;
  - /interleaved: int32 (64 * nprocs,), rank r writes elements r, r + nprocs, ... independently
    (a strided hyperslab: many small pieces per rank);
  - /grp/meta: int64 (nprocs, 4), rank r writes row r independently; attributes on the file and
    the group (written collectively, as h5py requires);
reads its own slab back before closing, then re-opens the file read-only (mpio) and checks every
rank's data. Prints one line "LIBMPI <path>" (rank 0) naming the libmpi this process loaded, so
the runner can tell that Debian's binaries run on the bblog Open MPI. Exits 1 on a mismatch.
"""
import sys

from mpi4py import MPI
import numpy as np
import h5py

ROWS, COLS, PER_RANK = 16, 1000, 64


def loaded_libmpi():
    with open("/proc/self/maps") as maps:
        for line in maps:
            if "libmpi.so" in line:
                return line.split()[-1]
    return "?"


def expected(nprocs):
    slabs = np.empty((ROWS * nprocs, COLS))
    for r in range(nprocs):
        slabs[r * ROWS:(r + 1) * ROWS] = (np.arange(ROWS * COLS).reshape(ROWS, COLS)
                                          + 1e6 * (r + 1))
    inter = np.arange(PER_RANK * nprocs, dtype=np.int32) * 7 + 3
    meta = np.arange(nprocs * 4, dtype=np.int64).reshape(nprocs, 4) * 11
    return slabs, inter, meta


def main():
    comm = MPI.COMM_WORLD
    rank, nprocs = comm.Get_rank(), comm.Get_size()
    path = sys.argv[1]
    if not h5py.get_config().mpi:
        print("h5py_slabs: h5py was loaded without MPI (serial build)", file=sys.stderr)
        return 1
    if rank == 0:
        print("LIBMPI %s" % loaded_libmpi(), flush=True)
    slabs, inter, meta = expected(nprocs)
    bad = 0

    with h5py.File(path, "w", driver="mpio", comm=comm) as f:
        f.attrs["title"] = "bblog h5py test"
        f.attrs["nprocs"] = nprocs
        d = f.create_dataset("slabs", (ROWS * nprocs, COLS), dtype="f8")
        di = f.create_dataset("interleaved", (PER_RANK * nprocs,), dtype="i4")
        g = f.create_group("grp")
        g.attrs["units"] = "counts"
        dm = g.create_dataset("meta", (nprocs, 4), dtype="i8")

        with d.collective:
            d[rank * ROWS:(rank + 1) * ROWS, :] = slabs[rank * ROWS:(rank + 1) * ROWS]
        di[rank::nprocs] = inter[rank::nprocs]
        dm[rank, :] = meta[rank]

        # A process reads its own writes back before anything is synchronised.
        mine = d[rank * ROWS:(rank + 1) * ROWS, :]
        if not np.array_equal(mine, slabs[rank * ROWS:(rank + 1) * ROWS]):
            print("h5py_slabs rank %d: own slab differs before close" % rank, file=sys.stderr)
            bad += 1

    with h5py.File(path, "r", driver="mpio", comm=comm) as f:
        for name, want in (("slabs", slabs), ("interleaved", inter), ("grp/meta", meta)):
            got = f[name][...]
            if not np.array_equal(got, want):
                n = int(np.count_nonzero(got != want))
                print("h5py_slabs rank %d: %s: %d values differ after re-open" % (rank, name, n),
                      file=sys.stderr)
                bad += 1
        if f.attrs["nprocs"] != nprocs or f["grp"].attrs["units"] != "counts":
            print("h5py_slabs rank %d: attributes differ" % rank, file=sys.stderr)
            bad += 1

    bad = comm.allreduce(bad)
    if rank == 0:
        print("h5py_slabs: %s" % ("ok" if bad == 0 else "%d mismatches" % bad), flush=True)
    return 0 if bad == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
