# man/: bblog(1) the tool, bblog(7) hints and environment.
