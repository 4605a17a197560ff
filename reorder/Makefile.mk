# reorder/: two-level reordering and drain round planning.
noinst_HEADERS += reorder/bblog_reorder.h
# Owner of the lines below: reorder.
libbblog_a_SOURCES += reorder/reorder.c reorder/plan.c

check_PROGRAMS += test/unit/test_reorder test/unit/test_plan
TESTS += test/unit/test_reorder test/unit/test_plan
test_unit_test_reorder_SOURCES = test/unit/test_reorder.c
test_unit_test_reorder_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_reorder_LDADD = $(UNIT_LIBS)
test_unit_test_plan_SOURCES = test/unit/test_plan.c
test_unit_test_plan_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_plan_LDADD = $(UNIT_LIBS)

# Two-level reordering against flatten + qsort; prints JSON, asserts nothing.
noinst_PROGRAMS += bench/bench_reorder
bench_bench_reorder_SOURCES = bench/bench_reorder.c
bench_bench_reorder_LDADD = $(BBLOG_LIBS)
