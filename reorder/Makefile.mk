# reorder/: two-level reordering of flattened requests.
noinst_HEADERS += reorder/bblog_reorder.h
# Owner of the lines below: reorder.
libbblog_a_SOURCES += reorder/reorder.c

check_PROGRAMS += test/unit/test_reorder
TESTS += test/unit/test_reorder
test_unit_test_reorder_SOURCES = test/unit/test_reorder.c
test_unit_test_reorder_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_reorder_LDADD = $(UNIT_LIBS)

# Two-level reordering against flatten + qsort; prints JSON, asserts nothing.
noinst_PROGRAMS += bench/bench_reorder
bench_bench_reorder_SOURCES = bench/bench_reorder.c
bench_bench_reorder_LDADD = $(BBLOG_LIBS)
