# tools/: the bblog command (ls, dump, check, replay) and the replay library it uses.
