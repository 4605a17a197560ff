# bench/: benchmarks. They assert nothing and print JSON; `make bench` builds the MPI-free ones.
# ior.c is an MPI program: run-driver-bench.sh and scripts/demo.sh build it with the mpicc of the
# MPICH that carries bblog (scripts/build-mpi.sh), so automake only ships it.
EXTRA_DIST += bench/ior.c bench/run-driver-bench.sh scripts/demo.sh
