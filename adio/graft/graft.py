#!/usr/bin/env python3
"""graft.py [--link archive|flags] TREE BBLOG_SRCDIR

Compiles the bblog ROMIO driver into an MPI: registers it in the ROMIO of an MPICH 4.x, Open MPI
4.1 or Open MPI 5.0 source tree, or in a bare ROMIO tree, as DESIGN.md section 2 describes. ROMIO
has no plug-in loader, so the driver must be built into the MPI library; this makes the few edits
that let ROMIO's own build pick it up, links ROMIO's adio/ad_bblog to BBLOG_SRCDIR/adio/ad_bblog
(editing a driver file in the checkout then costs an incremental make), and regenerates ROMIO's
build system as far as its inputs changed.

What differs between MPIs is data, below: TREES says where each keeps its ROMIO and how the core
library is named to the linker, ROMIOS which edits each ROMIO generation takes, OMPI5_COMPONENTS
what Open MPI 5's io components need. The edits themselves are written once.

Idempotent: every edit checks first whether it is there (the configure block is replaced, so a
re-graft brings it up to date), files are rewritten only when their content changes, and a second
run changes nothing. An anchor that is missing stops the graft with a message naming the file,
never a half-grafted tree. Prints "graft: edited PATH" (PATH relative to TREE) per file changed.

--link: how ROMIO's LIBS names the core (libbblog.a): "archive" by its path (MPICH: LIBS reach
libmpi's LIBADD through WRAPPER_LIBS) or "flags" as -L/-l flags (Open MPI: libtool keeps flags
in the convenience library libromio_dist.la and so links them into the io component; an archive
named by its path would be dropped from it, leaving undefined bblog_* symbols that fail only when
Open MPI dlopens the component). Default: the tree's, "archive" for a bare ROMIO tree.
"""

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys

PROG = "graft"


def fail(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.exit(1)


# ---- the MPIs: data -------------------------------------------------------------------------

class Tree:
    def __init__(self, name, romio, link, marker=None, components=None):
        self.name = name            # what the tree is, for messages
        self.romio = romio          # its ROMIO, relative to the tree
        self.link = link            # how LIBS names the core: "archive" or "flags"
        self.marker = marker        # a file only this kind of tree has (besides ROMIO's)
        self.components = components  # edits outside ROMIO: [(file, edit function)]


# ---- ROMIO's edits ----------------------------------------------------------------------------

CONFIGURE_BLOCK = r'''dnl >>> bblog graft (bblog adio/graft/graft.py): the burst-buffer log driver.
dnl Its core (plain C, no MPI) is built outside this tree: --with-bblog=DIR names DIR/include
dnl and DIR/lib/libbblog.a. The archive and the system libraries it needs go into LIBS: in MPICH
dnl they reach WRAPPER_LIBS, hence libmpi's LIBADD, through localdefs; in Open MPI (as -L and -l
dnl flags, which libtool keeps in the convenience library libromio_dist.la) they reach the io
dnl component.
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
    PAC_APPEND_FLAG([@CORE_LIBS@ -laio -lpthread -lm], [LIBS])
    AC_DEFINE(ROMIO_BBLOG, 1, [Define for ROMIO with the bblog burst-buffer log driver])
fi
dnl <<< bblog graft

'''
CORE_LIBS = {"archive": "$bblog_core_dir/lib/libbblog.a",
             "flags": "-L$bblog_core_dir/lib -lbblog"}

OPS_EXTERN = ("#ifdef ROMIO_BBLOG\n"
              "/* prototypes are in adio/ad_bblog/ad_bblog.h (bblog) */\n"
              "extern struct ADIOI_Fns_struct ADIO_BBLOG_operations;\n"
              "#endif\n\n")

# The hooks of ROMIO 3.4 and later into the driver (set_view, get_info, the shared pointer, close).
HOOK_PROTOS = (
    "#ifdef ROMIO_BBLOG\n"
    "/* bblog graft: set_view (ad_bblog_sharedfp.c, ad_bblog_base_hints.c) and the shared pointer of a\n"
    " * bblog file (ad_bblog_sharedfp.c) */\n"
    "void ADIOI_BBLOG_View_changed(ADIO_File fd);\n"
    "void ADIOI_BBLOG_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,\n"
    "                               int *error_code);\n"
    "void ADIOI_BBLOG_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);\n"
    "int ADIOI_BBLOG_Check_info(MPI_Info info);\n"
    "void ADIOI_BBLOG_Refresh_info(ADIO_File fd);\n"
    "#endif\n\n")
CLOSE_HOOK_DEFINE = (
    "#ifdef ROMIO_BBLOG\n"
    "/* bblog graft: MPI_File_close leaves a bblog file's shared file pointer to the driver's\n"
    " * close (ad_bblog_close.c) */\n"
    "#define ADIOI_BBLOG_CLOSE_HOOK 1\n"
    "#endif\n\n")
CLOSE_SHARED_FP = (
    "#ifdef ROMIO_BBLOG\n"
    "    if (adio_fh->file_system == ADIO_BBLOG) {\n"
    "        /* bblog graft: the driver's close ends the shared file pointer after the\n"
    "         * synchronisation its own close makes anyway (ad_bblog_close.c): no barrier here */\n"
    "    } else\n"
    "#endif\n")
# ROMIO 3.2 (Open MPI 4.1) has none of the 3.4 hooks above but get_info's refresh, and keeps its
# close's MPI_Barrier before the shared pointer's file is closed; Open MPI's blocking barrier polls,
# so a bblog file's processes wait there with the driver's own barrier, which sleeps
# (ad_bblog_base_wait.c), as they do in the driver's close.
CHAIN_PROTOS = (
    "#ifdef ROMIO_BBLOG\n"
    "/* bblog graft: get_info's refresh (ad_bblog_base_hints.c) and close's barrier (ad_bblog_base_wait.c) */\n"
    "void ADIOI_BBLOG_Refresh_info(ADIO_File fd);\n"
    "int ADIOI_BBLOG_Barrier(MPI_Comm comm);\n"
    "#endif\n\n")
CLOSE_BARRIER = (
    "#ifdef ROMIO_BBLOG\n"
    "\t/* bblog graft: a bblog file's processes wait here without spinning (ad_bblog_base_wait.c) */\n"
    "\tif (adio_fh->file_system == ADIO_BBLOG)\n"
    "\t    ADIOI_BBLOG_Barrier((adio_fh)->comm);\n"
    "\telse\n"
    "#endif\n")
SET_VIEW_INFO = (
    "#ifdef ROMIO_BBLOG\n"
    "    /* bblog graft: a bblog file's set_view makes no collective call (ad_bblog_sharedfp.c);\n"
    "     * the driver checks the info alone, here, because ADIO_Set_view drops the error of\n"
    "     * its SetInfo. */\n"
    "    if (adio_fh->file_system == ADIO_BBLOG) {\n"
    "        error_code = ADIOI_BBLOG_Check_info(info);\n"
    "        if (error_code != MPI_SUCCESS) {\n"
    "            error_code = MPIO_Err_return_file(adio_fh, error_code);\n"
    "            goto fn_exit;\n"
    "        }\n"
    "    } else\n"
    "#endif\n")
SET_VIEW_RESET = (
    "#ifdef ROMIO_BBLOG\n"
    "    /* bblog graft: no reset and no barrier; the driver counts views, and the shared\n"
    "     * pointer has one slot per view (ad_bblog_sharedfp.c). */\n"
    "    if (adio_fh->file_system == ADIO_BBLOG) {\n"
    "        ADIOI_BBLOG_View_changed(adio_fh);\n"
    "        goto bblog_view_done;\n"
    "    }\n"
    "#endif\n")
SET_VIEW_LABEL = (
    "#ifdef ROMIO_BBLOG\n"
    "  bblog_view_done:\n"
    "#endif\n")
GET_INFO = (
    "#ifdef ROMIO_BBLOG\n"
    "    /* bblog graft: what is still pending changes with every call (ad_bblog_base_hints.c) */\n"
    "    if (adio_fh->file_system == ADIO_BBLOG)\n"
    "        ADIOI_BBLOG_Refresh_info(adio_fh);\n"
    "#endif\n")

# ROMIO 3.2's ad_fstype.c: a strncmp chain for the prefix, one block per file system for *ops.
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


ORDERED_BARRIER = (
    "#ifdef ROMIO_BBLOG\n"
    "    /* bblog graft: every process fetches its pointer for this ordered write before any\n"
    "     * goes on (to fetch for its next one): a bblog file's collective write, which keeps\n"
    "     * that order on other drivers, makes no MPI call. */\n"
    "    if (adio_fh->file_system == ADIO_BBLOG)\n"
    "        MPI_Barrier(adio_fh->comm);\n"
    "#endif\n")


class Editor:
    """Edits files of one tree; remembers which changed."""

    def __init__(self, root, what):
        self.root = root
        self.what = what
        self.changed = []

    def edit(self, rel, fn):
        path = os.path.join(self.root, rel)
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
            if path not in self.changed:
                self.changed.append(path)

    def insert(self, text, path, anchor_re, block, what, after=False, last=False):
        """BLOCK before (or after) the first (or last) match of ANCHOR_RE."""
        found = list(re.finditer(anchor_re, text, re.M))
        if not found:
            fail("%s: anchor for %s not found (%s); is this %s?"
                 % (path, what, anchor_re, self.what))
        m = found[-1] if last else found[0]
        pos = m.end() if after else m.start()
        return text[:pos] + block + text[pos:]


def romio_edits(ed, gen, link):
    """The edits of one ROMIO tree: GEN "table" (ROMIO 3.4 and later: MPICH 4, Open MPI 5) or
    "chain" (ROMIO 3.2: Open MPI 4.1)."""
    block = CONFIGURE_BLOCK.replace("@CORE_LIBS@", CORE_LIBS[link])

    def configure_ac(text, path):
        m = re.search(r"m4_define\(\[known_filesystems_m4_w\],\s*\[([^\]]*)\]", text)
        if not m:
            fail("%s: known_filesystems_m4_w not found" % path)
        if "bblog" not in m.group(1).split():
            text = text[:m.end(1)] + " bblog" + text[m.end(1):]
        old = re.search(r"^dnl >>> bblog graft.*?^dnl <<< bblog graft\n\n", text, re.M | re.S)
        if old:
            return text[:old.start()] + block + text[old.end():]
        # After the loop that sets $file_system_bblog and the m4_foreach that turns the known
        # list into AM_CONDITIONAL(BUILD_AD_BBLOG); before the summary line's comment.
        return ed.insert(text, path, r"^(?:#\n# Print list of configured file systems\n(?:#.*\n)*)?"
                         r"AC_MSG_CHECKING\(\[configured file systems\]\)",
                         block, "the ROMIO_BBLOG block")

    def adio_h(text, path):
        if re.search(r"^#define\s+ADIO_BBLOG\s", text, re.M):
            return text
        clash = re.search(r"^#define\s+(ADIO_\w+)\s+190\b", text, re.M)
        if clash:
            fail("%s: id 190 is taken by %s; pick another ADIO_BBLOG id" % (path, clash.group(1)))
        return ed.insert(text, path, r"^#define\s+ADIO_SEEK_SET\b",
                         "#define ADIO_BBLOG               190    /* bblog burst-buffer log */\n\n",
                         "ADIO_BBLOG")

    def fs_proto_h(text, path):
        if "ADIO_BBLOG_operations" in text:
            return text
        if gen == "table":
            return ed.insert(text, path, r"^#endif\s*/\*\s*ADIOI_FS_PROTO_H_INCLUDED", OPS_EXTERN,
                             "the ADIO_BBLOG_operations extern")
        if not re.search(r"^#ifndef ADIO_PROTO\b", text, re.M):
            fail("%s: include guard ADIO_PROTO not found" % path)
        return ed.insert(text, path, r"^#endif\s*(?:/\*[^\n]*\*/)?\s*\Z", OPS_EXTERN,
                         "the closing #endif of ADIO_PROTO", last=True)

    def fstype_c(text, path):
        if "ADIO_BBLOG" in text:
            return text
        if gen == "table":
            return ed.insert(text, path,
                             r"^\s*\{\s*0\s*,\s*0\s*,\s*0\s*\}\s*,?\s*/\*\s*guard entry",
                             "#ifdef ROMIO_BBLOG\n"
                             "    {&ADIO_BBLOG_operations, ADIO_BBLOG, \"bblog:\"},\n"
                             "#endif\n", "the fstypes[] entry")
        text = ed.insert(text, path, r"^    else \{\n#ifdef ROMIO_NTFS\n", PREFIX_TEST,
                         "the end of ADIO_FileSysType_prefix's strncmp chain")
        resolved = r"^    \*error_code = MPI_SUCCESS;\n    \*fstype = file_system;\n"
        return ed.insert(text, path, resolved, OPS_BLOCK,
                         "the end of ADIO_ResolveFileType", last=True)

    def adio_makefile_mk(text, path):
        line = "include $(top_srcdir)/adio/ad_bblog/Makefile.mk\n"
        if line in text:
            return text
        return ed.insert(text, path, r"^include \$\(top_srcdir\)/adio/common/Makefile\.mk",
                         line, "the ad_bblog Makefile.mk include")

    def once(marker, anchor_re, block, what):
        """The edit that inserts BLOCK before ANCHOR_RE unless MARKER shows it is there."""
        return lambda text, path: (text if marker in text else
                                   ed.insert(text, path, anchor_re, block, what))

    proto_end = r"^#endif\s*/\*\s*ADIOI_FS_PROTO_H_INCLUDED"
    hook_protos = once("ADIOI_BBLOG_View_changed", proto_end, HOOK_PROTOS,
                       "the bblog set_view and shared pointer prototypes")
    close_hook_define = once("ADIOI_BBLOG_CLOSE_HOOK", proto_end, CLOSE_HOOK_DEFINE,
                             "the bblog close hook's definition")
    close_c = once("bblog graft", r"^[ \t]*if \(ADIO_Feature\(adio_fh, ADIO_SHARED_FP\)\) \{",
                   CLOSE_SHARED_FP, "the shared pointer's barrier")
    # Ordered writes: ROMIO passes a token from each process to the next around the shared
    # pointer's fetch, which orders the processes within one call; what keeps a process from
    # fetching for its next ordered write before the last process fetched for this one is the
    # collective write after it, and a bblog file's collective write makes no MPI call.
    def ordered_c(text, path):
        if "bblog graft" in text:
            return text
        return ed.insert(text, path,
                         r"^[ \t]*MPI_Send\(NULL, 0, MPI_BYTE, dest, 0, adio_fh->comm\);\n",
                         ORDERED_BARRIER, "the ordered token's send", after=True)

    get_info_c = once("bblog graft",
                      r"^\s*error_code = MPI_Info_dup\(adio_fh->info, info_used\);",
                      GET_INFO, "the info duplication")

    def set_view_c(text, path):
        if "bblog graft" in text:
            return text
        text = ed.insert(text, path, r"^\s*MPIO_CHECK_INFO_ALL\(info, error_code, adio_fh->comm\);",
                         SET_VIEW_INFO, "the info check")
        text = ed.insert(text, path, r"^\s*/\* reset shared file pointer to zero \*/",
                         SET_VIEW_RESET, "the shared pointer reset")
        return ed.insert(text, path, r"^\s*if \(strcmp\(datarep, \"external32\"\)",
                         SET_VIEW_LABEL, "the end of the shared pointer reset")

    def sh_fp_c(fn, args):
        return once("bblog graft", r"^#ifdef ROMIO_NFS",
                    "#ifdef ROMIO_BBLOG\n"
                    "    if (fd->file_system == ADIO_BBLOG) {"
                    "    /* bblog graft (ad_bblog_sharedfp.c) */\n"
                    "        ADIOI_BBLOG_%s(%s);\n"
                    "        return;\n"
                    "    }\n"
                    "#endif\n\n" % (fn, args), "the " + fn + " hook")

    edits = [("configure.ac", configure_ac),
             ("adio/include/adio.h", adio_h),
             ("adio/include/adioi_fs_proto.h", fs_proto_h),
             ("adio/common/ad_fstype.c", fstype_c),
             ("adio/Makefile.mk", adio_makefile_mk)]
    if gen == "chain":
        edits += [("adio/include/adioi_fs_proto.h",
                   lambda text, path: text if "ADIOI_BBLOG_Refresh_info" in text else
                   ed.insert(text, path, r"^#endif\s*(?:/\*[^\n]*\*/)?\s*\Z", CHAIN_PROTOS,
                             "the closing #endif of ADIO_PROTO", last=True)),
                  ("mpi-io/close.c", once("bblog graft",
                                          r"^[ \t]*MPI_Barrier\(\(adio_fh\)->comm\);",
                                          CLOSE_BARRIER, "the shared pointer's barrier")),
                  ("mpi-io/get_info.c", get_info_c)]
    if gen == "table":
        edits += [("adio/include/adioi_fs_proto.h", hook_protos),
                  ("adio/include/adioi_fs_proto.h", close_hook_define),
                  ("mpi-io/close.c", close_c),
                  ("mpi-io/write_ord.c", ordered_c),
                  ("mpi-io/write_ordb.c", ordered_c),
                  ("mpi-io/set_view.c", set_view_c),
                  ("mpi-io/get_info.c", get_info_c),
                  ("adio/common/ad_get_sh_fp.c",
                   sh_fp_c("Get_shared_fp", "fd, incr, shared_fp, error_code")),
                  ("adio/common/ad_set_sh_fp.c",
                   sh_fp_c("Set_shared_fp", "fd, offset, error_code"))]
    return edits


# ---- Open MPI 5's io components ---------------------------------------------------------------
# Open MPI 5 opens files with OMPIO unless told otherwise, and OMPIO would take bblog:PATH for a
# file named so, silently. So io/romio341's file_query and delete_query claim, at priority 100
# (OMPIO asks for 30), every name with the bblog: prefix, and every name while
# ROMIO_FSTYPE_FORCE starts with bblog:, and io/ompio's refuse them (with OMPI_MCA_io=ompio such
# an open fails instead of bypassing bblog).

CLAIMS_HELPER = """/* bblog graft (bblog adio/graft/graft.py): the bblog driver is ROMIO's alone. A
 * bblog: name, or any name while ROMIO_FSTYPE_FORCE says bblog:, goes to ROMIO, ahead of OMPIO,
 * and OMPIO refuses it: it would take it for a plain file name, silently. */
static int bblog_claims(const char *name)
{
    const char *force = getenv("ROMIO_FSTYPE_FORCE");

    return (name != NULL && (strncmp(name, "bblog:", 6) == 0 ||
                             strncmp(name, "BBLOG:", 6) == 0)) ||
        (force != NULL && (strncmp(force, "bblog:", 6) == 0 || strncmp(force, "BBLOG:", 6) == 0));
}

"""

# The info given to MPI_File_open and MPI_File_set_view: the component hands ROMIO a copy made by
# opal_info_dup, whose entries count as never read, and ROMIO's own MPI_Info_dup (ADIO_Open,
# system_hints.c) keeps only entries read before: every hint given, ROMIO's and bblog's, was
# lost. Marking the copied entries read keeps them.
INFO_DUP = "    opal_info_dup (info, &opal_info);\n"
INFO_KEEP = ("    /* bblog graft (graft.py): keep the hints through ROMIO's MPI_Info_dup */\n"
             "    {\n"
             "        opal_info_entry_t *bblog_e;\n"
             "        OPAL_LIST_FOREACH (bblog_e, &opal_info->super, opal_info_entry_t)\n"
             "            bblog_e->ie_referenced++;\n"
             "    }\n")


def component_claims(claims):
    """An edit adding bblog_claims() and, after each (line, claim) of CLAIMS, the claim."""
    def edit_fn(ed, text, path):
        if "bblog_claims" in text:
            return text
        text = ed.insert(text, path,
                         r"^static const struct mca_io_base_module_2_0_0_t \*\nfile_query *\(",
                         CLAIMS_HELPER, "file_query")
        for line, claim in claims:
            if text.count(line) != 1:
                fail("%s: not one line %r; is this %s?" % (path, line.strip(), ed.what))
            text = text.replace(line, line + claim)
        for inc in ("#include <stdlib.h>\n", "#include <string.h>\n"):
            if inc not in text:
                text = ed.insert(text, path, r"^#include ", inc, "the first #include")
        return text
    return edit_fn


def keep_hints(ed, text, path):
    if "bblog graft" in text:
        return text
    if text.count(INFO_DUP) != 2:
        fail("%s: not two lines %r; is this %s?" % (path, INFO_DUP.strip(), ed.what))
    return text.replace(INFO_DUP, INFO_DUP + INFO_KEEP)


# ---- Open MPI 4.1: get_info and set_info ------------------------------------------------------
# Open MPI 4.1's MPI_File_get_info and MPI_File_set_info answer from Open MPI's own copy of the
# hints and never call the io component, so ROMIO never hears of them: the bblog driver's
# bblog_pending_bytes and bblog_durable (bblog(7), DURABILITY) were missing from get_info, and
# set_info took an invalid bblog_* value without a word. Two hooks in Open MPI's core, set by
# io/romio321 when it opens a file, add the driver's bblog_* keys to what get_info returns and
# hand set_info's hints to ROMIO first, for bblog files only; other files are left as they were.

OMPI_HOOKS_DECL = """/* bblog graft (bblog adio/graft/graft.py): set by io/romio321 when it opens a file; for a file
 * of the bblog driver, get_info adds the driver's bblog_* keys to INFO, set_info hands INFO to
 * ROMIO (which refuses an invalid bblog_* value); other files: OMPI_SUCCESS, nothing done. */
OMPI_DECLSPEC extern int (*ompi_file_bblog_get_info)(ompi_file_t *fh, opal_info_t *info);
OMPI_DECLSPEC extern int (*ompi_file_bblog_set_info)(ompi_file_t *fh, opal_info_t *info);

"""
OMPI_HOOKS_DEF = """
/* bblog graft (bblog adio/graft/graft.py): see file.h */
int (*ompi_file_bblog_get_info)(ompi_file_t *fh, opal_info_t *info) = NULL;
int (*ompi_file_bblog_set_info)(ompi_file_t *fh, opal_info_t *info) = NULL;
"""
GET_INFO_CALL = """    /* bblog graft (graft.py): the bblog driver's own keys, which only ROMIO knows */
    if (NULL != ompi_file_bblog_get_info) {
        int bblog_rc = ompi_file_bblog_get_info(fh, opal_info_used);
        if (OMPI_SUCCESS != bblog_rc) {
            ompi_info_free(info_used);
            return OMPI_ERRHANDLER_INVOKE(fh, bblog_rc, FUNC_NAME);
        }
    }
"""
SET_INFO_LINE = "    ret = opal_infosubscribe_change_info(&fh->super, &info->super);\n"
SET_INFO_CALLS = """    /* bblog graft (graft.py): a bblog file's hints go to its driver first, which refuses an
     * invalid bblog_* value as MPI_File_open does; nothing is changed then */
    ret = OMPI_SUCCESS;
    if (NULL != ompi_file_bblog_set_info)
        ret = ompi_file_bblog_set_info(fh, &info->super);
    if (OMPI_SUCCESS == ret)
        ret = opal_infosubscribe_change_info(&fh->super, &info->super);
"""
ROMIO321_HOOKS = """/* bblog graft (bblog adio/graft/graft.py): the hooks of ompi/file/file.h for this component's
 * bblog files. */
static int bblog_file_of_ours(ompi_file_t *fh)
{
    return strcmp(fh->f_io_selected_component.v2_0_0.io_version.mca_component_name,
                  "romio321") == 0 && bblog_claims(fh->f_filename);
}

static int bblog_get_info(ompi_file_t *fh, opal_info_t *info)
{
    mca_io_romio321_data_t *data;
    ompi_info_t *romio_info = NULL;
    opal_info_entry_t *e;
    int ret;

    if (!bblog_file_of_ours(fh))
        return OMPI_SUCCESS;
    data = (mca_io_romio321_data_t *) fh->f_io_selected_data;
    OPAL_THREAD_LOCK (&mca_io_romio321_mutex);
    ret = ROMIO_PREFIX(MPI_File_get_info) (data->romio_fh, &romio_info);
    OPAL_THREAD_UNLOCK (&mca_io_romio321_mutex);
    if (MPI_SUCCESS != ret)
        return ret;
    OPAL_LIST_FOREACH (e, &romio_info->super.super, opal_info_entry_t) {
        if (strncmp(e->ie_key, "bblog_", 6) == 0 &&
            OPAL_SUCCESS != (ret = opal_info_set(info, e->ie_key, e->ie_value)))
            break;
    }
    ompi_info_free(&romio_info);
    return ret;
}

static int bblog_set_info(ompi_file_t *fh, opal_info_t *info)
{
    return bblog_file_of_ours(fh) ? mca_io_romio321_file_set_info(fh, info) : OMPI_SUCCESS;
}

"""
ROMIO321_REGISTER = """    ompi_file_bblog_get_info = bblog_get_info;     /* bblog graft: the hooks above */
    ompi_file_bblog_set_info = bblog_set_info;
"""


# bblog_claims() of CLAIMS_HELPER (below) with the comment of Open MPI 4.1, which has no OMPIO claim
CLAIMS_41 = ("/* bblog graft (bblog adio/graft/graft.py): a bblog file: a bblog: name, or any name\n"
             " * while ROMIO_FSTYPE_FORCE says bblog: */\n" + CLAIMS_HELPER[CLAIMS_HELPER.index("static int"):])


def once_file(marker, anchor_re, block, what, after=False, last=False):
    """An edit inserting BLOCK at ANCHOR_RE unless MARKER is in the file."""
    def edit_fn(ed, text, path):
        if marker in text:
            return text
        return ed.insert(text, path, anchor_re, block, what, after=after, last=last)
    return edit_fn


def set_info_calls(ed, text, path):
    if "bblog graft" in text:
        return text
    if text.count(SET_INFO_LINE) != 1:
        fail("%s: not one line %r; is this %s?" % (path, SET_INFO_LINE.strip(), ed.what))
    return text.replace(SET_INFO_LINE, SET_INFO_CALLS)


def romio321_open(ed, text, path):
    if "bblog graft" in text:
        return text
    text = ed.insert(text, path, r"^int\nmca_io_romio321_file_open \(",
                     CLAIMS_41 + ROMIO321_HOOKS, "mca_io_romio321_file_open")
    text = ed.insert(text, path, r"^    ret = ROMIO_PREFIX\(MPI_File_open\)", ROMIO321_REGISTER,
                     "the ROMIO open")
    for inc in ("#include <stdlib.h>\n", "#include <string.h>\n"):
        if inc not in text:
            text = ed.insert(text, path, r"^#include ", inc, "the first #include")
    return text


OMPI41_COMPONENTS = [
    ("ompi/file/file.h", once_file("ompi_file_bblog_get_info", r"^END_C_DECLS", OMPI_HOOKS_DECL,
                                   "the last END_C_DECLS", last=True)),
    ("ompi/file/file.c", once_file("ompi_file_bblog_get_info",
                                   r"^ompi_predefined_file_t +\*ompi_mpi_file_null_addr = .*\n",
                                   OMPI_HOOKS_DEF, "ompi_mpi_file_null_addr", after=True)),
    ("ompi/mpi/c/file_get_info.c", once_file("bblog graft",
                                             r"^    opal_info_dup_mpistandard\(fh->super\.s_info, "
                                             r"&opal_info_used\);\n", GET_INFO_CALL,
                                             "the info duplication", after=True)),
    ("ompi/mpi/c/file_set_info.c", set_info_calls),
    ("ompi/mca/io/romio321/src/io_romio321_file_open.c", romio321_open),
]

OMPI5_COMPONENTS = [
    ("ompi/mca/io/romio341/src/io_romio341_component.c", component_claims((
        ("    *priority = priority_param;\n",
         "    if (bblog_claims(file->f_filename))\n        *priority = 100;\n"),
        ("    *priority = delete_priority_param;\n",
         "    if (bblog_claims(filename))\n        *priority = 100;\n")))),
    ("ompi/mca/io/ompio/io_ompio_component.c", component_claims((
        ("    *priority = priority_param;\n",
         "    if (bblog_claims(file->f_filename))\n        return NULL;\n"),
        ("    *usable = true;\n",
         "    if (bblog_claims(filename))\n        *usable = false;\n")))),
    ("ompi/mca/io/romio341/src/io_romio341_file_open.c", keep_hints),
]

# First match wins: Open MPI 5 is told from a bare ROMIO 3.4 by its component.
TREES = (
    Tree("Open MPI 5.0", "3rd-party/romio341", "flags",
         marker="ompi/mca/io/romio341/src/io_romio341_component.c", components=OMPI5_COMPONENTS),
    Tree("MPICH 4.x", "src/mpi/romio", "archive"),
    Tree("Open MPI 4.1", "ompi/mca/io/romio321/romio", "flags",
         marker="ompi/mca/io/romio321/src/io_romio321_file_open.c", components=OMPI41_COMPONENTS),
    Tree("a ROMIO tree", ".", "archive"),
)


# ---- regeneration -----------------------------------------------------------------------------

def makefiles_sum(romio):
    """A digest of ROMIO's Makefile.am and Makefile.mk files (the driver's through the link)."""
    h = hashlib.sha256()
    files = []
    for top, dirs, names in os.walk(romio, followlinks=True):
        dirs[:] = [d for d in dirs if not (top == romio and d in ("mpl", "autom4te.cache"))]
        files += [os.path.join(top, n) for n in names if n in ("Makefile.am", "Makefile.mk")]
    for f in sorted(os.path.relpath(p, romio) for p in files):
        h.update(("== %s\n" % f).encode())
        with open(os.path.join(romio, f), "rb") as fh:
            h.update(fh.read())
    return h.hexdigest()


def has_conditional(configure):
    """Whether ROMIO's generated configure knows the bblog file system."""
    if not os.path.exists(configure):
        return False
    with open(configure, errors="replace") as f:
        return "BUILD_AD_BBLOG_TRUE" in f.read()


def regenerate(romio):
    """Regenerates ROMIO's build system only as far as its inputs changed, because every
    regeneration costs a rebuild in a configured tree:
    - configure.ac changed (the first graft, or a hand edit): autoreconf -fi -I confdb; a
      configured build then reruns ROMIO's configure, which rewrites mpio.h: a full rebuild;
    - only a Makefile.am or Makefile.mk changed (e.g. a file added to the driver's fragment, seen
      through the link): automake alone; make then compiles just what is new.
    ROMIO has its own confdb (libtool included), so regenerating ROMIO alone stays consistent with
    the release's autotools elsewhere; Open MPI's configure runs ROMIO's as a sub-configure."""
    stamp = os.path.join(romio, ".bblog-graft-autoreconf")
    with open(os.path.join(romio, "configure.ac"), "rb") as f:
        cfg_sum = hashlib.sha256(f.read()).hexdigest()
    mk_sum = makefiles_sum(romio)
    old = {}
    if os.path.exists(stamp):
        with open(stamp) as f:
            old = dict(line.split(" ", 1) for line in f.read().splitlines() if " " in line)
    configure = os.path.join(romio, "configure")
    if old.get("configure.ac") != cfg_sum or not has_conditional(configure):
        cmd, why = ["autoreconf", "-fi", "-I", "confdb"], "regenerating ROMIO's build system"
    elif old.get("makefiles") != mk_sum or not os.path.exists(os.path.join(romio, "Makefile.in")):
        cmd, why = ["automake", "--add-missing", "--copy"], \
            "a Makefile fragment changed: regenerating ROMIO's Makefile.in"
    else:
        return
    if shutil.which(cmd[0]) is None:
        fail("%s not found (install autoconf automake libtool)" % cmd[0])
    print("%s: %s (%s in %s)" % (PROG, why, " ".join(cmd), romio), flush=True)
    if subprocess.call(cmd, cwd=romio) != 0:
        fail("%s failed in %s" % (" ".join(cmd), romio))
    if not has_conditional(configure):
        fail("%s/configure has no BUILD_AD_BBLOG conditional after %s" % (romio, cmd[0]))
    with open(stamp + ".tmp", "w") as f:
        f.write("configure.ac %s\nmakefiles %s\n" % (cfg_sum, mk_sum))
    os.replace(stamp + ".tmp", stamp)


# ---- main -------------------------------------------------------------------------------------

def main(argv):
    ap = argparse.ArgumentParser(prog="graft.py", description="Compiles the bblog driver into "
                                 "an MPI's ROMIO (see the top of this file).")
    ap.add_argument("--link", choices=sorted(CORE_LIBS), help="how LIBS names the core")
    ap.add_argument("tree", metavar="MPI_OR_ROMIO_TREE")
    ap.add_argument("bblog_src", metavar="BBLOG_SRCDIR")
    args = ap.parse_args(argv)
    link, tree, bblog_src = args.link, args.tree, args.bblog_src
    for d in (tree, bblog_src):
        if not os.path.isdir(d):
            fail("%s: no such directory" % d)
    tree, bblog_src = os.path.realpath(tree), os.path.realpath(bblog_src)
    driver = os.path.join(bblog_src, "adio", "ad_bblog")
    if not os.path.isdir(driver):
        fail("%s: no such directory (BBLOG_SRCDIR must be a bblog checkout)" % driver)
    # automake reads the fragment when it regenerates ROMIO: without it autoreconf fails far less
    # clearly than this.
    if not os.path.isfile(os.path.join(driver, "Makefile.mk")):
        fail("%s/Makefile.mk missing: the driver has no automake fragment" % driver)

    for kind in TREES:
        romio = os.path.normpath(os.path.join(tree, kind.romio))
        if os.path.isfile(os.path.join(romio, "adio/common/ad_fstype.c")) and \
                (kind.marker is None or os.path.isfile(os.path.join(tree, kind.marker))):
            break
    else:
        fail("%s is none of: %s (no adio/common/ad_fstype.c where they keep ROMIO)"
             % (tree, ", ".join(t.name for t in TREES)))
    with open(os.path.join(romio, "adio/common/ad_fstype.c"), errors="replace") as f:
        gen = "table" if re.search(r"/\*\s*guard entry", f.read()) else "chain"

    ed = Editor(tree, kind.name + (" (ROMIO 3.4 or later)" if gen == "table" else " (ROMIO 3.2)"))
    for rel, fn in romio_edits(ed, gen, link or kind.link):
        ed.edit(os.path.join(kind.romio, rel), fn)
    for rel, fn in kind.components or ():
        ed.edit(rel, lambda text, path, fn=fn: fn(ed, text, path))
    for path in ed.changed:
        print("%s: edited %s" % (PROG, os.path.relpath(path, tree)))

    # The driver directory is a link into the checkout: ROMIO's automake dependency tracking then
    # sees edits of the checkout's files directly, and make rebuilds exactly what changed.
    dest = os.path.join(romio, "adio", "ad_bblog")
    if os.path.islink(dest):
        if os.readlink(dest) != driver:
            os.unlink(dest)
            os.symlink(driver, dest)
            print("%s: re-pointed adio/ad_bblog -> %s" % (PROG, driver))
    elif os.path.exists(dest):
        fail("%s exists and is not a symlink; remove it (the driver lives in %s)" % (dest, driver))
    else:
        os.symlink(driver, dest)
        print("%s: linked adio/ad_bblog -> %s" % (PROG, driver))
    sys.stdout.flush()
    regenerate(romio)


if __name__ == "__main__":
    main(sys.argv[1:])
