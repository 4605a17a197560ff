# pace/: the pacing controller of background drains (seed 003): a pure state machine,
# fake-clock tests.
noinst_HEADERS += pace/bblog_pace.h
libbblog_a_SOURCES += pace/pace.c
check_PROGRAMS += test/unit/test_pace
TESTS += test/unit/test_pace
test_unit_test_pace_SOURCES = test/unit/test_pace.c
test_unit_test_pace_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_pace_LDADD = $(UNIT_LIBS)
