# man/: bblog(1) the tool, bblog(7) hints and environment.
dist_man_MANS += man/bblog.1
dist_man_MANS += man/bblog.7
