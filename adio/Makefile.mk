# adio/: the ROMIO driver (ad_bblog/, built inside MPICH's tree, not here) and the graft.
