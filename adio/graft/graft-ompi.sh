#!/bin/sh
# graft-ompi.sh TREE BBLOG_SRCDIR
#
# Registers the bblog ROMIO driver in an Open MPI 5.0 or 4.1 source tree, or in Open MPI 4.1's
# bare ROMIO tree; the Open MPI counterpart of graft-mpich.sh.
#
# Open MPI 5.0 (ROMIO 3.4.1 in 3rd-party/romio341, component io/romio341): that ROMIO has MPICH
# 4's driver interface and prefix table, so graft-mpich.sh grafts it, naming the core in LIBS
# as -L/-l flags (BBLOG_GRAFT_LINK=flags). Then the components: Open MPI 5 opens files with
# OMPIO unless told otherwise, and OMPIO would take bblog:PATH for a file named so, silently. So
# io/romio341's file_query and delete_query claim, at priority 100 (OMPIO asks for 30), every
# name with the bblog: prefix, and every name while ROMIO_FSTYPE_FORCE starts with bblog:, and
# io/ompio's refuse them (with OMPI_MCA_io=ompio such an open fails instead of bypassing bblog).
# And io/romio341's file_open and set_view keep the hints they pass to ROMIO (below): without
# that, Open MPI 5.0.7 loses every hint given to MPI_File_open, ROMIO's own as well as bblog's.
#
# Open MPI 4.1 (ROMIO 3.2.1, in ompi/mca/io/romio321/romio): ROMIO 3.2.1 differs from MPICH
# 4's ROMIO in two places that matter here:
#   - adio/common/ad_fstype.c has no prefix table: ADIO_FileSysType_prefix is a chain of
#     strncmp tests, and ADIO_ResolveFileType one #ifdef ROMIO_<FS> block per file system that
#     sets *ops; the graft adds a "bblog:" test and an ADIO_BBLOG block to each;
#   - adioi_fs_proto.h ends with a bare #endif (guard ADIO_PROTO).
# The other edits are the same as for MPICH:
#   configure.ac                     `bblog` in known_filesystems_m4_w (so --with-file-system=
#                                    ...+bblog works and AM_CONDITIONAL(BUILD_AD_BBLOG) exists),
#                                    --with-bblog=DIR and a ROMIO_BBLOG block adding the core's
#                                    -I and LIBS (which libtool carries from libromio_dist.la
#                                    into mca_io_romio321.so)
#   adio/include/adio.h              #define ADIO_BBLOG 190
#   adio/include/adioi_fs_proto.h    extern ADIO_BBLOG_operations (under ROMIO_BBLOG)
#   adio/Makefile.mk                 include of adio/ad_bblog/Makefile.mk
#   adio/ad_bblog                    symlink to BBLOG_SRCDIR/adio/ad_bblog
# then regenerates ROMIO's build system (autoreconf -fi -I confdb in the ROMIO tree alone) when
# configure.ac changed, automake alone when only a Makefile fragment changed, nothing otherwise.
# Open MPI's own configure runs ROMIO's as a sub-configure, so it needs no regeneration; the
# file systems are chosen with --with-io-romio-flags="--with-file-system=ufs+nfs+bblog
# --with-bblog=DIR".
#
# Idempotent, like graft-mpich.sh: every edit first checks whether it is there, files are
# rewritten only when their content changes; an anchor that is missing stops the script with a
# message naming the file, never a half-grafted tree.
set -eu

prog=graft-ompi
die() {
    echo "$prog: $*" >&2
    exit 1
}

[ $# -eq 2 ] || die "usage: $0 OMPI_OR_ROMIO_TREE BBLOG_SRCDIR"
tree=$1
bblog_src=$2

[ -d "$tree" ] || die "$tree: no such directory"
[ -d "$bblog_src" ] || die "$bblog_src: no such directory"
tree=$(cd "$tree" && pwd -P)
bblog_src=$(cd "$bblog_src" && pwd -P)

comp5=$tree/ompi/mca/io/romio341/src/io_romio341_component.c
if [ -f "$tree/3rd-party/romio341/adio/common/ad_fstype.c" ] && [ -f "$comp5" ]; then
    BBLOG_GRAFT_LINK=flags sh "$(dirname "$0")/graft-mpich.sh" "$tree/3rd-party/romio341" \
        "$bblog_src" || die "graft-mpich.sh failed on $tree/3rd-party/romio341"
    python3 - "$comp5" "$tree/ompi/mca/io/ompio/io_ompio_component.c" \
        "$tree/ompi/mca/io/romio341/src/io_romio341_file_open.c" <<'PYEOF'
import os
import re
import sys

HELPER = """/* bblog graft (bblog adio/graft/graft-ompi.sh): the bblog driver is ROMIO's alone. A bblog:
 * name, or any name while ROMIO_FSTYPE_FORCE says bblog:, goes to ROMIO, ahead of OMPIO, and
 * OMPIO refuses it: it would take it for a plain file name, silently. */
static int bblog_claims(const char *name)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");

    return (name != NULL && (strncmp(name, "bblog:", 6) == 0 ||
                             strncmp(name, "BBLOG:", 6) == 0)) ||
        (force != NULL && (strncmp(force, "bblog:", 6) == 0 || strncmp(force, "BBLOG:", 6) == 0));
}

"""
# (file, line after which the claim goes, the claim) for ROMIO's and OMPIO's components.
EDITS = {
    "romio341": (("    *priority = priority_param;\n",
                  "    if (bblog_claims(file->f_filename))\n        *priority = 100;\n"),
                 ("    *priority = delete_priority_param;\n",
                  "    if (bblog_claims(filename))\n        *priority = 100;\n")),
    "ompio": (("    *priority = priority_param;\n",
               "    if (bblog_claims(file->f_filename))\n        return NULL;\n"),
              ("    *usable = true;\n",
               "    if (bblog_claims(filename))\n        *usable = false;\n")),
}


def graft(path, edits):
    with open(path, encoding="utf-8") as f:
        text = old = f.read()

    def fail(msg):
        sys.stderr.write("graft-ompi: %s: %s; is this Open MPI 5.0?\n" % (path, msg))
        sys.exit(1)

    if "bblog_claims" in text:
        return
    m = re.search(r"^static const struct mca_io_base_module_2_0_0_t \*\nfile_query *\(",
                  text, re.M)
    if not m:
        fail("file_query not found")
    text = text[:m.start()] + HELPER + text[m.start():]
    for line, claim in edits:
        if text.count(line) != 1:
            fail("not one line %r" % line.strip())
        text = text.replace(line, line + claim)
    for inc in ("#include <stdlib.h>\n", "#include <string.h>\n"):
        if inc not in text:
            m = re.search(r"^#include ", text, re.M)
            text = text[:m.start()] + inc + text[m.start():]
    with open(path + ".bblog-tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".bblog-tmp", path)
    print("graft-ompi: edited %s" % path)


graft(sys.argv[1], EDITS["romio341"])
graft(sys.argv[2], EDITS["ompio"])

# The info given to MPI_File_open and MPI_File_set_view: the component hands ROMIO a copy made
# by opal_info_dup, whose entries count as never read, and ROMIO's own MPI_Info_dup (ADIO_Open,
# system_hints.c) keeps only entries read before: every hint given, ROMIO's and bblog's, was
# lost. Marking the copied entries read keeps them.
path = sys.argv[3]
with open(path, encoding="utf-8") as f:
    text = old = f.read()
DUP = "    opal_info_dup (info, &opal_info);\n"
MARK = ("    /* bblog graft (graft-ompi.sh): keep the hints through ROMIO's MPI_Info_dup */\n"
        "    {\n"
        "        opal_info_entry_t *bblog_e;\n"
        "        OPAL_LIST_FOREACH (bblog_e, &opal_info->super, opal_info_entry_t)\n"
        "            bblog_e->ie_referenced++;\n"
        "    }\n")
if "bblog graft" not in text:
    if text.count(DUP) != 2:
        sys.stderr.write("graft-ompi: %s: not two lines %r; is this Open MPI 5.0?\n"
                         % (path, DUP.strip()))
        sys.exit(1)
    text = text.replace(DUP, DUP + MARK)
    with open(path + ".bblog-tmp", "w", encoding="utf-8") as f:
        f.write(text)
    os.replace(path + ".bblog-tmp", path)
    print("graft-ompi: edited %s" % path)
PYEOF
    exit 0
fi
if [ -f "$tree/ompi/mca/io/romio321/romio/adio/common/ad_fstype.c" ]; then
    romio=$tree/ompi/mca/io/romio321/romio
elif [ -f "$tree/adio/common/ad_fstype.c" ]; then
    romio=$tree
else
    die "$tree is neither an Open MPI 5.0 tree (3rd-party/romio341), an Open MPI 4.1 tree" \
        "(ompi/mca/io/romio321/romio) nor a ROMIO tree"
fi

driver=$bblog_src/adio/ad_bblog
[ -d "$driver" ] || die "$driver: no such directory (BBLOG_SRCDIR must be a bblog checkout)"
[ -f "$driver/Makefile.mk" ] || die "$driver/Makefile.mk missing: the driver has no automake fragment"

command -v python3 >/dev/null 2>&1 || die "python3 is needed (scripts/install-deps.sh installs it)"

python3 - "$romio" <<'PYEOF'
import os
import re
import sys

romio = sys.argv[1]
changed = []


def fail(msg):
    sys.stderr.write("graft-ompi: %s\n" % msg)
    sys.exit(1)


def edit(rel, fn):
    path = os.path.join(romio, rel)
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            old = f.read()
    except OSError as e:
        fail("%s: %s" % (path, e.strerror))
    new = fn(old, path)
    if new != old:
        tmp = path + ".bblog-tmp"
        with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
            f.write(new)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
        changed.append(rel)


def insert_at(text, path, anchor_re, block, what, after=False, last=False):
    found = list(re.finditer(anchor_re, text, re.M))
    if not found:
        fail("%s: anchor for %s not found (%s); is this Open MPI 4.1's ROMIO 3.2.1?"
             % (path, what, anchor_re))
    m = found[-1] if last else found[0]
    pos = m.end() if after else m.start()
    return text[:pos] + block + text[pos:]


CONFIGURE_BLOCK = r'''dnl >>> bblog graft (bblog adio/graft/graft-ompi.sh): the burst-buffer log driver.
dnl Its core (plain C, no MPI) is built outside this tree: --with-bblog=DIR names DIR/include
dnl and DIR/lib/libbblog.a. The archive and the system libraries it needs go into LIBS as -L and
dnl -l flags, which libtool records in the convenience library libromio_dist.la and so links into
dnl the io/romio321 component; an archive named by its path (as MPICH's graft does) would be
dnl dropped from a convenience library's dependencies, leaving the component with undefined
dnl bblog_* symbols that only fail when Open MPI dlopens it.
AC_ARG_WITH([bblog],
    [AS_HELP_STRING([--with-bblog=DIR],
        [bblog core in DIR (DIR/include/bblog_log.h, DIR/lib/libbblog.a), needed by the bblog file system])],
    [], [with_bblog=no])
if test -n "$file_system_bblog" ; then
    AS_CASE(["$with_bblog"], [no|yes|""],
        [AC_MSG_ERROR([the bblog file system needs --with-bblog=DIR (DIR/include/bblog_log.h, DIR/lib/libbblog.a)])])
    bblog_core_dir=`cd "$with_bblog" 2>/dev/null && pwd`
    if test -z "$bblog_core_dir" || test ! -f "$bblog_core_dir/include/bblog_log.h" ||
       test ! -f "$bblog_core_dir/lib/libbblog.a" ; then
        AC_MSG_ERROR([--with-bblog=$with_bblog: DIR/include/bblog_log.h or DIR/lib/libbblog.a is missing])
    fi
    AC_CHECK_LIB([aio], [io_setup], [:],
        [AC_MSG_ERROR([libaio not found: the bblog driver needs it (Debian: libaio-dev)])])
    PAC_APPEND_FLAG([-I$bblog_core_dir/include], [CPPFLAGS])
    PAC_APPEND_FLAG([-L$bblog_core_dir/lib -lbblog -laio -lpthread -lm], [LIBS])
    AC_DEFINE(ROMIO_BBLOG, 1, [Define for ROMIO with the bblog burst-buffer log driver])
fi
dnl <<< bblog graft

'''


def configure_ac(text, path):
    m = re.search(r"m4_define\(\[known_filesystems_m4_w\],\s*\[([^\]]*)\]", text)
    if not m:
        fail("%s: known_filesystems_m4_w not found" % path)
    if "bblog" not in m.group(1).split():
        text = text[:m.end(1)] + " bblog" + text[m.end(1):]
    # An older graft's block is replaced, so that re-grafting a tree brings it up to date.
    old = re.search(r"^dnl >>> bblog graft.*?^dnl <<< bblog graft\n\n", text, re.M | re.S)
    if old:
        text = text[:old.start()] + CONFIGURE_BLOCK + text[old.end():]
    else:
        anchor = r"^(?:#\n# Print list of configured file systems\n(?:#.*\n)*)?" \
            r"AC_MSG_CHECKING\(\[configured file systems\]\)"
        text = insert_at(text, path, anchor, CONFIGURE_BLOCK, "the ROMIO_BBLOG block")
    return text


def adio_h(text, path):
    if re.search(r"^#define\s+ADIO_BBLOG\s", text, re.M):
        return text
    clash = re.search(r"^#define\s+(ADIO_\w+)\s+190\b", text, re.M)
    if clash:
        fail("%s: id 190 is taken by %s; pick another ADIO_BBLOG id" % (path, clash.group(1)))
    return insert_at(text, path, r"^#define\s+ADIO_SEEK_SET\b",
                     "#define ADIO_BBLOG               190    /* bblog burst-buffer log */\n\n",
                     "ADIO_BBLOG")


def fs_proto_h(text, path):
    if "ADIO_BBLOG_operations" in text:
        return text
    if not re.search(r"^#ifndef ADIO_PROTO\b", text, re.M):
        fail("%s: include guard ADIO_PROTO not found" % path)
    block = ("#ifdef ROMIO_BBLOG\n"
             "/* prototypes are in adio/ad_bblog/ad_bblog.h (bblog) */\n"
             "extern struct ADIOI_Fns_struct ADIO_BBLOG_operations;\n"
             "#endif\n\n")
    # The guard's #endif is the file's last line.
    return insert_at(text, path, r"^#endif\s*(?:/\*[^\n]*\*/)?\s*\Z", block,
                     "the closing #endif of ADIO_PROTO", last=True)


PREFIX_TEST = '''    else if (!strncmp(filename, "bblog:", 6) || !strncmp(filename, "BBLOG:", 6)) {
\t*fstype = ADIO_BBLOG;
    }
'''

OPS_BLOCK = '''    if (file_system == ADIO_BBLOG) {
#ifndef ROMIO_BBLOG
\t*error_code = MPIO_Err_create_code(MPI_SUCCESS, MPIR_ERR_RECOVERABLE,
\t\t\t\t\t   myname, __LINE__, MPI_ERR_IO,
\t\t\t\t\t   "**iofstypeunsupported", 0);
\treturn;
#else
\t*ops = &ADIO_BBLOG_operations;
#endif
    }
'''


def fstype_c(text, path):
    if "ADIO_BBLOG" in text:
        return text
    # ADIO_FileSysType_prefix: before the final else (NTFS default or "no such file" error).
    text = insert_at(text, path, r"^    else \{\n#ifdef ROMIO_NTFS\n", PREFIX_TEST,
                     "the end of ADIO_FileSysType_prefix's strncmp chain")
    # ADIO_ResolveFileType: after the last per-file-system block, before the success return.
    return insert_at(text, path,
                     r"^    \*error_code = MPI_SUCCESS;\n    \*fstype = file_system;\n",
                     OPS_BLOCK, "the end of ADIO_ResolveFileType", last=True)


def adio_makefile_mk(text, path):
    line = "include $(top_srcdir)/adio/ad_bblog/Makefile.mk\n"
    if line in text:
        return text
    return insert_at(text, path, r"^include \$\(top_srcdir\)/adio/common/Makefile\.mk",
                     line, "the ad_bblog Makefile.mk include")


edit("configure.ac", configure_ac)
edit("adio/include/adio.h", adio_h)
edit("adio/include/adioi_fs_proto.h", fs_proto_h)
edit("adio/common/ad_fstype.c", fstype_c)
edit("adio/Makefile.mk", adio_makefile_mk)
for rel in changed:
    print("graft-ompi: edited %s" % rel)
PYEOF

link=$romio/adio/ad_bblog
if [ -L "$link" ]; then
    if [ "$(readlink "$link")" != "$driver" ]; then
        ln -sfn "$driver" "$link"
        echo "$prog: re-pointed adio/ad_bblog -> $driver"
    fi
elif [ -e "$link" ]; then
    die "$link exists and is not a symlink; remove it (the driver lives in $driver)"
else
    ln -s "$driver" "$link"
    echo "$prog: linked adio/ad_bblog -> $driver"
fi

# Regeneration, as in graft-mpich.sh: ROMIO alone, with its own confdb; only as far as the
# inputs changed, since a regenerated configure means a full rebuild of ROMIO.
stamp=$romio/.bblog-graft-autoreconf
cfg_sum=$(sha256sum <"$romio/configure.ac" | cut -d' ' -f1)
mk_sum=$(cd "$romio" && find -L . -path ./autom4te.cache -prune -o \
        \( -name Makefile.am -o -name Makefile.mk \) -print | LC_ALL=C sort | while read -r f; do
    echo "== $f"
    cat "$f"
done | sha256sum | cut -d' ' -f1)
old_cfg=
old_mk=
if [ -f "$stamp" ]; then
    old_cfg=$(sed -n 's/^configure.ac //p' "$stamp")
    old_mk=$(sed -n 's/^makefiles //p' "$stamp")
fi
if [ "$old_cfg" != "$cfg_sum" ] || [ ! -f "$romio/configure" ] ||
   ! grep -q 'BUILD_AD_BBLOG_TRUE' "$romio/configure"; then
    command -v autoreconf >/dev/null 2>&1 ||
        die "autoreconf not found (install autoconf automake libtool)"
    echo "$prog: regenerating ROMIO's build system (autoreconf -fi -I confdb in $romio)"
    (cd "$romio" && autoreconf -fi -I confdb) || die "autoreconf failed in $romio"
    grep -q 'BUILD_AD_BBLOG_TRUE' "$romio/configure" ||
        die "$romio/configure has no BUILD_AD_BBLOG conditional after autoreconf"
elif [ "$old_mk" != "$mk_sum" ] || [ ! -f "$romio/Makefile.in" ]; then
    command -v automake >/dev/null 2>&1 || die "automake not found (install automake)"
    echo "$prog: a Makefile fragment changed: regenerating ROMIO's Makefile.in (automake in $romio)"
    (cd "$romio" && automake --add-missing --copy) || die "automake failed in $romio"
else
    exit 0
fi
printf 'configure.ac %s\nmakefiles %s\n' "$cfg_sum" "$mk_sum" >"$stamp.tmp"
mv "$stamp.tmp" "$stamp"
