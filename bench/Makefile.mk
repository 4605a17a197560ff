# bench/: benchmarks. They assert nothing and print JSON; `make bench` builds the MPI-free ones.
