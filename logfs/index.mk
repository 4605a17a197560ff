# logfs/ interval index (DESIGN.md section 5).
libbblog_a_SOURCES += logfs/index.c

check_PROGRAMS += test/unit/test_index
TESTS += test/unit/test_index
test_unit_test_index_SOURCES = test/unit/test_index.c
test_unit_test_index_CFLAGS = $(UNIT_CFLAGS)
# --wrap=malloc: the test makes the pool refill fail to check that ENOMEM changes nothing.
# Per-target LDFLAGS replace AM_LDFLAGS, so the sanitizer flags are repeated here.
test_unit_test_index_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc
test_unit_test_index_LDADD = $(UNIT_LIBS)

noinst_PROGRAMS += bench/bench_index
bench_bench_index_SOURCES = bench/bench_index.c
bench_bench_index_LDADD = $(BBLOG_LIBS)
