# tools/: the bblog command (ls, dump, check, replay) and the replay library it uses.
libbblog_a_SOURCES += logfs/replay.c logfs/replay_part.c
noinst_HEADERS += logfs/bblog_replay.h

bin_PROGRAMS += tools/bblog
tools_bblog_SOURCES = tools/bblog.c
tools_bblog_LDADD = $(BBLOG_LIBS)

# Replay end to end: simulated ranks (test/unit/simlog.c) write real logs, replay is compared
# with the simulation's model byte for byte.
check_PROGRAMS += test/unit/test_replay test/unit/mklogs
TESTS += test/unit/test_replay test/unit/test_tool.sh test/unit/test_damage.sh
test_unit_test_replay_SOURCES = test/unit/test_replay.c test/unit/simlog.c test/unit/simlog.h
test_unit_test_replay_CFLAGS = $(UNIT_CFLAGS)
test_unit_test_replay_LDADD = $(UNIT_LIBS)

# mklogs: the logs of a simulated crashed job, for test_tool.sh and scripts/demo-core.sh.
test_unit_mklogs_SOURCES = test/unit/mklogs.c test/unit/simlog.c test/unit/simlog.h
test_unit_mklogs_LDADD = $(BBLOG_LIBS)

# test_tool.sh runs from the build directory (as make check does) and finds its programs there.
EXTRA_DIST += test/unit/test_tool.sh test/unit/test_damage.sh test/unit/toolcheck.sh
dist_noinst_SCRIPTS += scripts/demo-core.sh

# The Slurm node epilog that recovers the files of a job killed with logs left on the burst
# buffers (bblog(1), SLURM): installed as $(pkglibexecdir)/bblog-slurm-epilog.
dist_pkglibexec_SCRIPTS = tools/bblog-slurm-epilog
