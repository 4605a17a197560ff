# test/: unit tests are declared by their module's fragment; MPI and app tests run from here.

# The driver's structure (DESIGN.md section 1): no cycle between its files, no over-long function
# without a reason, bblog(7) describing every hint and statistics key (test/check-driver.py),
# checked against mutated copies too.
TESTS += test/check-driver.sh
EXTRA_DIST += test/check-driver.sh test/check-driver.py

# MPI differential tests (test/mpi/run-diff.sh): the runner compiles the programs itself with the
# mpicc of the bblog MPI, so they are sources here, not check_PROGRAMS. make check runs it in trees
# configured --with-bblog-mpi; run by hand, it skips (77) when no bblog MPI is installed and CI is
# unset.
if MPI_TESTS
TESTS += test/mpi/run-diff.sh
endif

# A rank's coordination from 8 to 64 processes at fixed work per rank, counted, not timed
# (test/mpi/run-coord-growth.sh, over bench/run-coord.sh).
if MPI_TESTS
TESTS += test/mpi/run-coord-growth.sh
endif
EXTRA_DIST += test/mpi/run-coord-growth.sh
EXTRA_DIST += test/runner-lib.sh test/mpi/run-diff.sh test/mpi/common.h test/mpi/common.c test/mpi/valgrind.supp \
    test/mpi/t_contig.c test/mpi/t_strided.c test/mpi/t_noncontig.c test/mpi/t_view.c \
    test/mpi/t_overlap.c test/mpi/t_raw.c test/mpi/t_size.c test/mpi/t_atomic.c \
    test/mpi/t_shared.c test/mpi/t_nonblock.c test/mpi/t_manyfiles.c test/mpi/t_delete.c \
    test/mpi/t_empty.c test/mpi/t_bigdata.c test/mpi/t_hints.c test/mpi/t_errors.c \
    test/mpi/t_collread.c test/mpi/t_twofh.c test/mpi/t_xorder.c \
    test/mpi/t_bgdrain.c test/mpi/t_selfsync.c test/mpi/t_selfgrow.c \
    test/mpi/t_peerread.c test/mpi/t_subcomm.c test/mpi/t_merge.c test/mpi/t_durable.c \
    test/mpi/t_capacity.c test/mpi/t_planspace.c test/mpi/t_phases.c test/mpi/t_sieve.c \
    test/mpi/t_closebb.c test/mpi/t_batchfh.c test/mpi/t_batchmix.c test/mpi/t_holes.c \
    test/mpi/t_syncalone.c test/mpi/t_idlewait.c test/mpi/t_extent.c test/mpi/t_nodeasks.c \
    test/mpi/t_errhan.c test/mpi/t_threads.c test/mpi/t_largecount.c \
    test/mpi/t_ordered.c test/mpi/t_completion.c

# Application tests (test/apps/run-apps.sh): HDF5 programs compiled by the runner with the bblog
# MPI's mpicc against Debian's libhdf5-mpich, compared with h5diff against plain ROMIO. Same
# rules as run-diff.sh (skips, 77, without --with-bblog-mpi or, CI unset, without HDF5).
if MPI_TESTS
TESTS += test/apps/run-apps.sh
endif
EXTRA_DIST += test/apps/run-apps.sh test/apps/h5common.h test/apps/h5common.c \
    test/apps/h5_blocks.c test/apps/h5_extend.c
# PnetCDF application tests (test/apps/run-pnetcdf.sh): pnc_*.c compiled by the runner against
# the PnetCDF of scripts/build-pnetcdf.sh (configure --with-pnetcdf=DIR), compared with ncmpidiff
# and cmp against plain ROMIO. Skips (77) when configured without --with-pnetcdf, unless CI is
# set. PnetCDF's own suites (run-pnetcdf-suite.sh) run from scripts/test-all.sh, not here.
if MPI_TESTS
TESTS += test/apps/run-pnetcdf.sh
endif
# Communication per write call through MPI-IO, PnetCDF and HDF5, counted by an LD_PRELOAD
# library (test/apps/run-count.sh): needs the bblog MPI, PnetCDF and Debian's parallel HDF5.
if MPI_TESTS
TESTS += test/apps/run-count.sh
endif
EXTRA_DIST += test/apps/run-count.sh test/apps/bbcount.c test/apps/cnt_mpiio.c \
    test/apps/cnt_pnetcdf.c test/apps/cnt_hdf5.c
EXTRA_DIST += scripts/lib.sh scripts/build-pnetcdf.sh test/apps/run-pnetcdf.sh test/apps/run-pnetcdf-suite.sh \
    test/apps/pnc_common.h test/apps/pnc_common.c test/apps/pnc_record.c test/apps/pnc_btio.c
# HDF5's own parallel tests (testpar/ of the HDF5 of scripts/build-hdf5.sh) through ufs: and
# bblog: (test/apps/run-hdf5-testpar.sh, issue 18): run by scripts/test-all.sh, not by make check.
EXTRA_DIST += scripts/build-hdf5.sh test/apps/run-hdf5-testpar.sh

# The runners compile into test/mpi/build and test/apps/build of the build tree.
clean-local: clean-mpi-tests
clean-mpi-tests:
	-rm -rf test/mpi/build test/apps/build
.PHONY: clean-mpi-tests

# Crash/replay harness and fault tests (issue 8): shell runners that compile their programs with
# the bblog MPI's mpicc (and cc), like run-diff.sh, and use the bblog command of this build tree
# (tools/bblog: make check builds it first). Same skip rules as run-diff.sh.
if MPI_TESTS
TESTS += test/crash/run-crash.sh test/faults/run-faults.sh
endif
EXTRA_DIST += test/crash/run-crash.sh test/crash/crashpat.h test/crash/crashwrite.c \
    test/crash/crashcheck.c test/crash/captrim.c test/faults/run-faults.sh \
    test/faults/faultpat.h test/faults/fio.c \
    test/faults/fcheck.c test/faults/bbfault.c bench/crash-replay-long.sh

# The read servers against an outside process (issue 68; bblog(7), READ SERVERS): garbage,
# stalled requests, floods of connections, wrong and replayed signatures, absurd sizes and
# half-closed connections while a job on pseudo-nodes reads other nodes' logged bytes.
if MPI_TESTS
TESTS += test/mpi/run-srvattack.sh
endif
EXTRA_DIST += test/mpi/run-srvattack.sh test/mpi/srvjob.c test/mpi/srvattack.c test/mpi/srvcap.c

# bblog_dir on a different device per rank (issue 8): even ranks log to /dev/shm, odd ranks to
# /var/tmp; the file must equal plain ROMIO's, and the logs of both replayed after a kill.
if MPI_TESTS
TESTS += test/mpi/run-devdir.sh
endif
EXTRA_DIST += test/mpi/run-devdir.sh test/mpi/devdir.c

# ROMIO's own test programs (src/mpi/romio/test of the MPICH source) through ufs:, bblog: and
# ROMIO_FSTYPE_FORCE=bblog: (issue 22): run by scripts/test-all.sh, not by make check.
EXTRA_DIST += test/romio/run-romio-tests.sh
# How a program reaches the preloadable layer over a binary MPI (scripts/build-layer.sh), and the
# message where it would not: run by scripts/test-all.sh, not by make check.
EXTRA_DIST += test/layer/run-layer-checks.sh test/layer/linkorder.c
# mpi4py's own I/O tests (test_io, test_file of the pinned mpi4py that scripts/build-mpi4py.sh
# builds on the bblog MPI) through ufs: and bblog: (issue 22): run by scripts/test-all.sh.
EXTRA_DIST += scripts/build-mpi4py.sh test/apps/run-mpi4py.sh
