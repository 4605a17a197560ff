# reorder/: two-level reordering and drain round planning.
noinst_HEADERS += reorder/bblog_reorder.h
