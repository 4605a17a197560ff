# test/fuzz/: libFuzzer targets of the log scanner and of replay (issue 8). scripts/fuzz.sh
# builds them with clang -fsanitize=fuzzer,address,undefined and fuzzes for a given time;
# make check replays the committed corpus (test/fuzz/corpus/TARGET) through a plain main(),
# corpus_main.c, with the compiler and flags of the tree (ASan + UBSan in the sanitizer build
# of scripts/test-all.sh). mkseeds regenerates the seeds (test/fuzz/README.md).
noinst_HEADERS += test/fuzz/fuzzlog.h
check_PROGRAMS += test/fuzz/corpus_scan test/fuzz/corpus_replay test/fuzz/mkseeds
TESTS += test/fuzz/corpus_scan test/fuzz/corpus_replay

test_fuzz_corpus_scan_SOURCES = test/fuzz/fuzz_scan.c test/fuzz/fuzzlog.c test/fuzz/corpus_main.c
test_fuzz_corpus_scan_CPPFLAGS = $(AM_CPPFLAGS) \
    -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/test/fuzz/corpus/scan"'
test_fuzz_corpus_scan_LDADD = $(BBLOG_LIBS)

test_fuzz_corpus_replay_SOURCES = test/fuzz/fuzz_replay.c test/fuzz/fuzzlog.c \
    test/fuzz/corpus_main.c
test_fuzz_corpus_replay_CPPFLAGS = $(AM_CPPFLAGS) \
    -DFUZZ_CORPUS_DIR='"$(abs_top_srcdir)/test/fuzz/corpus/replay"'
test_fuzz_corpus_replay_LDADD = $(BBLOG_LIBS)

test_fuzz_mkseeds_SOURCES = test/fuzz/mkseeds.c test/fuzz/fuzzlog.c test/unit/simlog.c
test_fuzz_mkseeds_CPPFLAGS = $(AM_CPPFLAGS) -I$(top_srcdir)/test/unit
test_fuzz_mkseeds_LDADD = $(BBLOG_LIBS)

EXTRA_DIST += test/fuzz/README.md test/fuzz/corpus scripts/fuzz.sh
