# test/security/: log-file security (issue 8): O_EXCL|O_NOFOLLOW 0600 logs in a 0700 per-user
# directory, checked against planted symlinks and against another user (nobody); and the bblog
# tool's replay writing only where it is told. Both need root (CI runs as root); run by hand as
# another user they skip (77) unless CI is set.
check_PROGRAMS += test/security/test_security
TESTS += test/security/test_security test/security/test_replay_target.sh
test_security_test_security_SOURCES = test/security/test_security.c
test_security_test_security_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/unit
test_security_test_security_CFLAGS = $(UNIT_CFLAGS)
test_security_test_security_LDADD = $(UNIT_LIBS)
EXTRA_DIST += test/security/test_replay_target.sh
