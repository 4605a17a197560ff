#!/usr/bin/env python3
"""check-driver.py [SRCDIR]: the driver's files call each other without a cycle (DESIGN.md
section 1); no function of the driver, of logfs/ or of tools/ is longer than LIMIT lines unless
a comment right above it says why ("Long: ..."); bblog(7) describes every hint of the driver's
hint table (ad_bblog_base_hints.c) under HINTS and every key of its statistics table
(ADIOI_BBLOG_STATS, ad_bblog.h) under STATISTICS; and DESIGN.md's table of the driver's files
by concept names every file of the driver, and no file that is not there; and no call of the
driver's collective wrappers (ad_bblog_base_wait.c) drops what it returns.

A file calls another when it names, followed by "(", a function that the other file defines
(a line starting in column 0 with the name and its parameters). Prints each cycle found (the
files and the names that tie them) and each long function, and exits 1 if there is any."""
import os
import re
import sys

LIMIT = 80
top = sys.argv[1] if len(sys.argv) > 1 else \
    os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
src = os.path.join(top, "adio", "ad_bblog")
files = sorted(f for f in os.listdir(src) if f.endswith(".c"))
text = {f: open(os.path.join(src, f), encoding="utf-8").read() for f in files}

DEF = re.compile(r"^[A-Za-z][^;()]*?\b(ADIOI_BBLOG_\w+)\(", re.M)
CALL = re.compile(r"\b(ADIOI_BBLOG_\w+)\s*\(")
defined = {}
for f in files:
    for m in DEF.finditer(text[f]):
        defined.setdefault(m.group(1), f)

edges = {f: {} for f in files}
for f in files:
    for m in CALL.finditer(text[f]):
        g = defined.get(m.group(1))
        if g and g != f:
            edges[f].setdefault(g, set()).add(m.group(1))

# Cycles: Tarjan's strongly connected components.
index, low, stack, on, comps = {}, {}, [], set(), []


def visit(v):
    index[v] = low[v] = len(index)
    stack.append(v)
    on.add(v)
    for w in edges[v]:
        if w not in index:
            visit(w)
            low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = stack.pop()
            on.discard(w)
            comp.append(w)
            if w == v:
                break
        if len(comp) > 1:
            comps.append(sorted(comp))


for f in files:
    if f not in index:
        visit(f)

bad = 0
for comp in comps:
    bad += 1
    print("check-driver: these driver files call each other in a cycle: %s" % ", ".join(comp))
    for a in comp:
        for b, names in sorted(edges[a].items()):
            if b in comp:
                print("  %s -> %s: %s" % (a, b, ", ".join(sorted(names))))

# Long functions: a definition starts in column 0 with a "(" on its line, its body opens with a
# "{" alone on a line and ends at the next "}" in column 0 (the house style); a ";" before the
# "{" makes it a prototype.
# The core's log layer and the tool keep the same rule.
core = {}
for d in ("logfs", "tools"):
    for name in sorted(os.listdir(os.path.join(top, d))):
        if name.endswith(".c"):
            core[d + "/" + name] = open(os.path.join(top, d, name), encoding="utf-8").read()
for f, body_text in list(text.items()) + list(core.items()):
    lines = body_text.split("\n")
    start, body = None, False
    for i, line in enumerate(lines):
        if start is None:
            if re.match(r"^[A-Za-z_]", line) and "(" in line and not line.rstrip().endswith(";") \
                    and not line.startswith(("typedef", "enum", "union")):
                start, body = i, False
        elif not body:
            if line == "{":
                body = True
            elif line.rstrip().endswith(";") or not line.strip():
                start = None
        elif line.startswith("}"):
            n = i - start + 1
            above = "\n".join(lines[max(0, start - 12):start])
            if n > LIMIT and "Long:" not in above:
                bad += 1
                print("check-driver: %s:%d: %s is %d lines (over %d, and no \"Long:\" comment "
                      "above it says why)" % (f, start + 1, lines[start].strip(), n, LIMIT))
            start = None

# The collective wrappers' results: a call that begins a line (or is cast to void) and whose
# closing parenthesis ends the statement drops it, and after a failed call the output it
# leaves is undefined (ad_bblog_base.h).
WRAP = re.compile(r"^\s*(?:\(void\)\s*)?(ADIOI_BBLOG_(?:Barrier|Bcast|Allreduce|Reduce|Reduce_vec|"
                  r"Allgather|Allgatherv|Sparse))\s*\(", re.M)
for f in files:
    if f == "ad_bblog_base_wait.c":
        continue
    for m in WRAP.finditer(text[f]):
        t, i, depth = text[f], m.end(), 1
        while depth and i < len(t):
            depth += {"(": 1, ")": -1}.get(t[i], 0)
            i += 1
        if not t[i:].lstrip().startswith(";"):
            continue
        bad += 1
        print("check-driver: %s:%d: %s's result is dropped (a failed collective call must be "
              "handled)" % (f, text[f].count("\n", 0, m.start()) + 1, m.group(1)))

# Documentation lists: bblog(7) describes each hint under HINTS and each statistics key under
# STATISTICS.
man = open(os.path.join(top, "man", "bblog.7"), encoding="utf-8").read()


def section(name):
    start = man.index(".SH " + name + "\n")
    end = man.find("\n.SH ", start + 1)
    return man[start:end if end >= 0 else len(man)]


hints = re.findall(r'^\s*[A-Z]+\("(bblog_\w+)", "BBLOG_\w+",', text["ad_bblog_base_hints.c"], re.M)
stats = re.findall(r'X\((?:SUM|MAX|SEC), \w+, "(\w+)"\)',
                   open(os.path.join(src, "ad_bblog.h"), encoding="utf-8").read())
# A table this script no longer recognises must not pass as an empty one.
for kind, keys in (("hints", hints), ("statistics keys", stats)):
    if not keys:
        bad += 1
        print("check-driver: no %s found: did their table's form change?" % kind)
# A hint is described by an entry of its own (".B key" opening a .TP paragraph): the hints'
# paragraphs name each other, and a mention would hide a missing entry. A statistics key is
# described where the text names it.
entry = (".B %s\\fR", ".B %s\n", ".B %s ")
for kind, keys, sec, named in (("hint", hints, section("HINTS"), entry),
                               ("statistics key", stats, section("STATISTICS"),
                                ("\\fB%s\\fR", "\\fB%s\n") + entry)):
    for k in keys:
        if not any(p % k in sec for p in named):
            bad += 1
            print("check-driver: bblog(7) does not describe the %s %s" % (kind, k))

# DESIGN.md's table of the driver's files: the rows after "| concept | driver files |", files named in backquotes
# as `_x.c` (for ad_bblog_x.c) or in full.
design = open(os.path.join(top, "DESIGN.md"), encoding="utf-8").read().split("\n")
rows = []
for i, line in enumerate(design):
    if line.startswith("| concept | driver files |"):
        for row in design[i + 2:]:
            if not row.startswith("|"):
                break
            rows.append(row.split("|")[2])
        break
listed = set()
for cell in rows:
    for name in re.findall(r"`([\w.]+\.[ch])`", cell):
        listed.add("ad_bblog" + name if name.startswith("_") else name)
present = {f for f in os.listdir(src) if f.endswith((".c", ".h"))}
if not rows:
    bad += 1
    print("check-driver: DESIGN.md has no table of the driver's files (| concept | driver files |)")
for f in sorted(present - listed):
    bad += 1
    print("check-driver: DESIGN.md's table of the driver's files does not name %s" % f)
for f in sorted(listed - present):
    bad += 1
    print("check-driver: DESIGN.md's table of the driver's files names %s, which is not a driver file" % f)

print("check-driver: %d driver files, %d calls between them, %s; %d hints, %d statistics keys"
      % (len(files), sum(len(e) for e in edges.values()), "no cycle" if not comps else
         "%d cycle(s)" % len(comps), len(hints), len(stats)))
sys.exit(1 if bad else 0)
