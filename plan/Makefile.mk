# plan/: the drain's rounds and a node's share of a round (DESIGN.md section 6).
noinst_HEADERS += plan/bblog_plan.h
libbblog_a_SOURCES += plan/plan.c
check_PROGRAMS += test/unit/test_plan
TESTS += test/unit/test_plan
test_unit_test_plan_SOURCES = test/unit/test_plan.c
test_unit_test_plan_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_plan_LDADD = $(UNIT_LIBS)
