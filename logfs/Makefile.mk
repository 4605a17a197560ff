# logfs/: the on-disk log, appender, scanner. Owner of these lines: logfs.
noinst_HEADERS += logfs/bblog_err.h logfs/bblog_format.h logfs/bblog_log.h logfs/bblog_index.h
libbblog_a_SOURCES += logfs/err.c
