# logfs/: the on-disk log, appender, scanner. Owner of these lines: logfs.
noinst_HEADERS += logfs/bblog_err.h logfs/bblog_format.h logfs/bblog_log.h logfs/bblog_index.h
libbblog_a_SOURCES += logfs/err.c
# The log: checksums, format, appender, scanner, per-user directory (DESIGN.md section 4).
noinst_HEADERS += logfs/bblog_io.h logfs/bblog_grow.h logfs/bblog_size.h test/unit/testutil.h
libbblog_a_SOURCES += logfs/crc32c.c logfs/format.c logfs/log.c logfs/scan.c logfs/userdir.c

check_PROGRAMS += test/unit/test_format test/unit/test_log test/unit/test_scan
TESTS += test/unit/test_format test/unit/test_log test/unit/test_scan
test_unit_test_format_SOURCES = test/unit/test_format.c
test_unit_test_format_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_format_LDADD = $(UNIT_LIBS)
test_unit_test_log_SOURCES = test/unit/test_log.c
test_unit_test_log_CFLAGS = $(UNIT_CFLAGS)
# Fault injection and ordering checks: the test wraps the calls the appender really makes to
# write, sync and truncate. Per-target LDFLAGS replace AM_LDFLAGS, so the sanitizer flags are
# repeated here.
test_unit_test_log_LDFLAGS = $(AM_LDFLAGS) \
    -Wl,--wrap=pwrite,--wrap=fdatasync,--wrap=ftruncate,--wrap=io_submit,--wrap=io_getevents \
    -Wl,--wrap=io_setup,--wrap=io_destroy
test_unit_test_log_LDADD = $(UNIT_LIBS)
test_unit_test_scan_SOURCES = test/unit/test_scan.c
test_unit_test_scan_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_scan_LDADD = $(UNIT_LIBS)

# bench/bench_logsync: the cost of one log sync (payload, record, sync mark), JSON, no asserts.
noinst_PROGRAMS += bench/bench_logsync
bench_bench_logsync_SOURCES = bench/bench_logsync.c
bench_bench_logsync_LDADD = $(BBLOG_LIBS)
# bench/bench_append: the cost per byte of logging one transfer size, JSON, no asserts.
noinst_PROGRAMS += bench/bench_append
bench_bench_append_SOURCES = bench/bench_append.c
bench_bench_append_LDADD = $(BBLOG_LIBS)
