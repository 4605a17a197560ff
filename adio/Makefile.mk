# adio/: the ROMIO driver (ad_bblog/, built inside MPICH's tree, not here) and the graft.
#
# The driver is compiled by ROMIO's own build, once adio/graft/graft.py has registered it
# in an MPICH tree; scripts/build-mpi.sh does that and builds the MPI in a cache outside this
# tree. Here the driver is only distributed.

# >>> Driver files, kept up to date by whoever adds or removes one in adio/ad_bblog/ (the list is
# explicit: `make dist` must not depend on what happens to lie in the directory). It must match
# adio/ad_bblog/Makefile.mk, plus that fragment itself.
EXTRA_DIST += \
    adio/ad_bblog/Makefile.mk \
    adio/ad_bblog/ad_bblog.h \
    adio/ad_bblog/ad_bblog_base.h \
    adio/ad_bblog/ad_bblog_bg.h \
    adio/ad_bblog/ad_bblog_bg_priv.h \
    adio/ad_bblog/ad_bblog_compat.h \
    adio/ad_bblog/ad_bblog_drain.h \
    adio/ad_bblog/ad_bblog_drain_priv.h \
    adio/ad_bblog/ad_bblog_ops.h \
    adio/ad_bblog/ad_bblog_peer.h \
    adio/ad_bblog/ad_bblog_peer_priv.h \
    adio/ad_bblog/ad_bblog.c \
    adio/ad_bblog/ad_bblog_base_err.c \
    adio/ad_bblog/ad_bblog_base_hints.c \
    adio/ad_bblog/ad_bblog_base_inner.c \
    adio/ad_bblog/ad_bblog_base_order.c \
    adio/ad_bblog/ad_bblog_base_overlap.c \
    adio/ad_bblog/ad_bblog_base_state.c \
    adio/ad_bblog/ad_bblog_base_stats.c \
    adio/ad_bblog/ad_bblog_base_sys.c \
    adio/ad_bblog/ad_bblog_base_wait.c \
    adio/ad_bblog/ad_bblog_bg.c \
    adio/ad_bblog/ad_bblog_bg_batch.c \
    adio/ad_bblog/ad_bblog_bg_cap.c \
    adio/ad_bblog/ad_bblog_bg_ctl.c \
    adio/ad_bblog/ad_bblog_bg_plan.c \
    adio/ad_bblog/ad_bblog_bg_trim.c \
    adio/ad_bblog/ad_bblog_close.c \
    adio/ad_bblog/ad_bblog_delete.c \
    adio/ad_bblog/ad_bblog_drain.c \
    adio/ad_bblog/ad_bblog_drain_agree.c \
    adio/ad_bblog/ad_bblog_drain_node.c \
    adio/ad_bblog/ad_bblog_drain_round.c \
    adio/ad_bblog/ad_bblog_drain_share.c \
    adio/ad_bblog/ad_bblog_drain_sieve.c \
    adio/ad_bblog/ad_bblog_fcntl.c \
    adio/ad_bblog/ad_bblog_features.c \
    adio/ad_bblog/ad_bblog_flush.c \
    adio/ad_bblog/ad_bblog_open.c \
    adio/ad_bblog/ad_bblog_peer_list.c \
    adio/ad_bblog/ad_bblog_peer_read.c \
    adio/ad_bblog/ad_bblog_peer_remote.c \
    adio/ad_bblog/ad_bblog_peer_server.c \
    adio/ad_bblog/ad_bblog_read.c \
    adio/ad_bblog/ad_bblog_resize.c \
    adio/ad_bblog/ad_bblog_sharedfp.c \
    adio/ad_bblog/ad_bblog_write.c
# <<< driver files

# The graft, its post-build check, and the scripts that fetch and build the MPI.
EXTRA_DIST += adio/graft/graft_probe.c
dist_noinst_SCRIPTS += adio/graft/graft.py adio/graft/check-mpi.sh \
    adio/graft/mkpatch-mpich.sh test/graft/run-mkpatch.sh \
    scripts/build-mpi.sh scripts/install-deps.sh
EXTRA_DIST += doc/mpi-versions.md

# `make mpi`: builds MPICH with this tree's driver, or rebuilds it incrementally, in the cache
# (${BBLOG_CACHE:-/var/cache/bblog}); e.g. make mpi MPI_BUILD_FLAGS="--mpich-src DIR".
MPI_BUILD_FLAGS =
mpi:
	$(SHELL) $(abs_top_srcdir)/scripts/build-mpi.sh --bblog-src $(abs_top_srcdir) $(MPI_BUILD_FLAGS)
.PHONY: mpi
