# logfs/ interval index (DESIGN.md section 5).
libbblog_a_SOURCES += logfs/index.c

check_PROGRAMS += test/unit/test_index
TESTS += test/unit/test_index
test_unit_test_index_SOURCES = test/unit/test_index.c
test_unit_test_index_CFLAGS = $(UNIT_CFLAGS)
# --wrap=malloc: the test makes node allocation fail to check that ENOMEM changes nothing.
# Per-target LDFLAGS replace AM_LDFLAGS, so the sanitizer flags are repeated here.
test_unit_test_index_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc
test_unit_test_index_LDADD = $(UNIT_LIBS)

# The same tests with the index compiled in at node capacity 4: deep trees from few extents,
# so that splits, merges and separator updates at every level run under the model oracle.
check_PROGRAMS += test/unit/test_index_small
TESTS += test/unit/test_index_small
test_unit_test_index_small_SOURCES = test/unit/test_index.c logfs/index.c
test_unit_test_index_small_CFLAGS = $(UNIT_CFLAGS) -DBBLOG_IDX_LEAF_CAP=4 \
    -DBBLOG_IDX_INNER_CAP=4 -DTEST_MAX_BYTES_PER_EXTENT=128
test_unit_test_index_small_LDFLAGS = $(AM_LDFLAGS) -Wl,--wrap=malloc
test_unit_test_index_small_LDADD = $(CMOCKA_LIBS)

noinst_PROGRAMS += bench/bench_index
bench_bench_index_SOURCES = bench/bench_index.c
bench_bench_index_LDADD = $(BBLOG_LIBS)
