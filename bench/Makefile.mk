# bench/: benchmarks. They assert nothing and print JSON; `make bench` builds the MPI-free ones.
# ior.c is an MPI program: run-driver-bench.sh and scripts/demo.sh build it with the mpicc of the
# MPICH that carries bblog (scripts/build-mpi.sh), so automake only ships it.
EXTRA_DIST += bench/ior.c bench/run-driver-bench.sh scripts/demo.sh
# The benchmark matrix (issue 6, bench/README.md): run-matrix.py builds the MPI workloads with
# that mpicc too (flash_h5.c and ior_h5.c against Debian's parallel HDF5, btio_nc.c and
# ior_nc.c against PnetCDF).
EXTRA_DIST += bench/README.md bench/run-matrix.py bench/pfs.sh bench/mpibench.h \
	bench/btio.c bench/btio_nc.c bench/flash_h5.c bench/sync_probe.c bench/peer_read.c \
	bench/ior_nc.c bench/ior_h5.c bench/openclose.c
# The pacing benchmark (issue 5, run-pacing-bench.sh): ckpt.c is an MPI program the runner builds
# with that mpicc; probe.c (the PFS latency probe) is plain C, built here so warnings break.
noinst_PROGRAMS += bench/probe
bench_probe_SOURCES = bench/probe.c
EXTRA_DIST += bench/ckpt.c bench/run-pacing-bench.sh bench/pfs-sampler.py bench/pacing-report.py
# The output-phase matrix (issue 21): run-phases.py builds ckpt.c and vpic_h5.c (Debian's
# parallel HDF5) with that mpicc.
EXTRA_DIST += bench/vpic_h5.c bench/run-phases.py
# The soak benchmark (issue 8, bench/README.md): run-soak.sh builds soak.c with the bblog
# MPI's mpicc, runs it and fails on memory growth, descriptor leaks, logs left or wrong bytes.
EXTRA_DIST += bench/soak.c bench/run-soak.sh bench/run-node-asks.sh bench/run-layer-parity.sh
# The scaling figures (doc/scaling.md): run-scaling.sh builds scaling.c with the bblog MPI's
# mpicc and runs it on the emulated cluster; run-cluster-bench.sh the IOR-like cases there;
# run-mapping-bench.sh one log pair per node against one per process.
EXTRA_DIST += bench/scaling.c bench/run-scaling.sh bench/run-cluster-bench.sh doc/scaling.md \
    bench/run-mapping-bench.sh
# run-coord.sh: a rank's coordination bytes as the job grows (coord.c under test/apps/bbcount.c).
EXTRA_DIST += bench/coord.c bench/run-coord.sh
