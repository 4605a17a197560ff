##
## ad_bblog inside ROMIO's tree (included from adio/Makefile.mk by the graft,
## adio/graft/graft.py). The core (logfs/, reorder/, plan/,
## pace/) is linked in as libbblog.a.
##

if BUILD_AD_BBLOG

noinst_HEADERS += adio/ad_bblog/ad_bblog.h adio/ad_bblog/ad_bblog_compat.h \
    adio/ad_bblog/ad_bblog_remote.h

romio_other_sources +=                  \
    adio/ad_bblog/ad_bblog.c            \
    adio/ad_bblog/ad_bblog_batch.c      \
    adio/ad_bblog/ad_bblog_bg.c         \
    adio/ad_bblog/ad_bblog_cap.c        \
    adio/ad_bblog/ad_bblog_close.c      \
    adio/ad_bblog/ad_bblog_delete.c     \
    adio/ad_bblog/ad_bblog_drain.c      \
    adio/ad_bblog/ad_bblog_err.c        \
    adio/ad_bblog/ad_bblog_fcntl.c      \
    adio/ad_bblog/ad_bblog_features.c   \
    adio/ad_bblog/ad_bblog_flush.c      \
    adio/ad_bblog/ad_bblog_hints.c      \
    adio/ad_bblog/ad_bblog_inner.c      \
    adio/ad_bblog/ad_bblog_node.c       \
    adio/ad_bblog/ad_bblog_open.c       \
    adio/ad_bblog/ad_bblog_order.c      \
    adio/ad_bblog/ad_bblog_read.c       \
    adio/ad_bblog/ad_bblog_remote.c     \
    adio/ad_bblog/ad_bblog_resize.c     \
    adio/ad_bblog/ad_bblog_server.c     \
    adio/ad_bblog/ad_bblog_shared.c     \
    adio/ad_bblog/ad_bblog_shfp.c       \
    adio/ad_bblog/ad_bblog_stats.c      \
    adio/ad_bblog/ad_bblog_trim.c       \
    adio/ad_bblog/ad_bblog_vis.c        \
    adio/ad_bblog/ad_bblog_wait.c       \
    adio/ad_bblog/ad_bblog_write.c

endif BUILD_AD_BBLOG
