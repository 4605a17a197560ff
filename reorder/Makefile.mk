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

# The pacing controller of background drains (seed 003): a pure state machine, fake-clock tests.
noinst_HEADERS += reorder/bblog_pace.h
libbblog_a_SOURCES += reorder/pace.c
check_PROGRAMS += test/unit/test_pace
TESTS += test/unit/test_pace
test_unit_test_pace_SOURCES = test/unit/test_pace.c
test_unit_test_pace_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_pace_LDADD = $(UNIT_LIBS)
