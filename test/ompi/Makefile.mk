# Open MPI (issue 7): the graft into Open MPI 4.1's ROMIO component, its build script and its
# tests. Distributed only: the Open MPI build (scripts/build-ompi.sh, 82 minutes the first time)
# does not fit make check's budget, so scripts/test-ompi.sh runs it and these tests as a job of
# its own (README, "Open MPI").
dist_noinst_SCRIPTS += adio/graft/check-ompi.sh \
    scripts/build-ompi.sh scripts/test-ompi.sh test/ompi/run-ompi.sh
EXTRA_DIST += test/ompi/Makefile.mk test/ompi/h5py_slabs.py test/ompi/nc4_par.c \
    test/ompi/pnc_strided.c test/mpi/valgrind-ompi.supp
