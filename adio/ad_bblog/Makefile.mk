##
## ad_bblog inside ROMIO's tree (included from adio/Makefile.mk by the graft,
## adio/graft/graft.py). The core (logfs/, reorder/, plan/,
## pace/) is linked in as libbblog.a.
##

if BUILD_AD_BBLOG

noinst_HEADERS += \
    adio/ad_bblog/ad_bblog.h \
    adio/ad_bblog/ad_bblog_base.h \
    adio/ad_bblog/ad_bblog_bg.h \
    adio/ad_bblog/ad_bblog_bg_priv.h \
    adio/ad_bblog/ad_bblog_compat.h \
    adio/ad_bblog/ad_bblog_drain.h \
    adio/ad_bblog/ad_bblog_drain_priv.h \
    adio/ad_bblog/ad_bblog_ops.h \
    adio/ad_bblog/ad_bblog_peer.h \
    adio/ad_bblog/ad_bblog_peer_priv.h

romio_other_sources += \
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

endif BUILD_AD_BBLOG
