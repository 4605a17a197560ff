#!/bin/sh
# graft-mpich.sh TREE BBLOG_SRCDIR
# (environment: BBLOG_GRAFT_LINK=flags names the core in LIBS as -L/-l flags, for Open MPI 5's
# ROMIO, which graft-ompi.sh grafts with this script; default: by the archive's path)
#
# Registers the bblog ROMIO driver in an MPICH 4.x source tree (or a bare ROMIO tree), as
# DESIGN.md section 2 describes. ROMIO has no plug-in loader, so the driver must be compiled
# into the MPI library; this script makes the few edits that let ROMIO's own build pick it up:
#   src/mpi/romio/configure.ac       `bblog` in known_filesystems_m4_w (which also yields
#                                    AM_CONDITIONAL(BUILD_AD_BBLOG)), --with-bblog=DIR and a
#                                    ROMIO_BBLOG block adding the core's -I and LIBS
#   adio/include/adio.h              #define ADIO_BBLOG 190
#   adio/include/adioi_fs_proto.h    extern ADIO_BBLOG_operations (under ROMIO_BBLOG)
#   adio/common/ad_fstype.c          the "bblog:" entry of the prefix table
#   adio/Makefile.mk                 include of adio/ad_bblog/Makefile.mk
#   mpi-io/set_view.c                for a bblog file: no MPI_Allreduce checking the info
#                                    argument (the driver checks its bblog_* keys alone), no
#                                    shared-pointer reset and no barrier; the driver counts
#                                    views instead (ad_bblog_shfp.c)
#   mpi-io/get_info.c                for a bblog file: the driver refreshes its bblog_pending_bytes
#                                    and bblog_durable keys first (ad_bblog_hints.c)
#   adio/common/ad_get_sh_fp.c,      for a bblog file: the driver's shared pointer, one slot
#   adio/common/ad_set_sh_fp.c       per view (ad_bblog_shfp.c)
#   adio/ad_bblog                    symlink to BBLOG_SRCDIR/adio/ad_bblog, so that editing a
#                                    driver file in the checkout costs an incremental make
# then regenerates ROMIO's build system, in src/mpi/romio alone: autoreconf -fi -I confdb when
# configure.ac changed, automake alone when only a Makefile fragment changed, nothing otherwise.
#
# Idempotent: every edit first checks whether it is already there, files are rewritten only when
# their content changes, and a second run changes nothing (no file, no mtime).
# The edits are anchored on lines every MPICH 4.x release has; an anchor that is missing stops
# the script with a message naming the file, never a half-grafted tree.
set -eu

prog=graft-mpich
die() {
    echo "$prog: $*" >&2
    exit 1
}

[ $# -eq 2 ] || die "usage: $0 ROMIO_OR_MPICH_TREE BBLOG_SRCDIR"
tree=$1
bblog_src=$2

[ -d "$tree" ] || die "$tree: no such directory"
[ -d "$bblog_src" ] || die "$bblog_src: no such directory"
tree=$(cd "$tree" && pwd -P)
bblog_src=$(cd "$bblog_src" && pwd -P)

if [ -f "$tree/src/mpi/romio/adio/common/ad_fstype.c" ]; then
    romio=$tree/src/mpi/romio
elif [ -f "$tree/adio/common/ad_fstype.c" ]; then
    romio=$tree
else
    die "$tree is neither an MPICH tree (src/mpi/romio) nor a ROMIO tree (adio/common/ad_fstype.c)"
fi

driver=$bblog_src/adio/ad_bblog
[ -d "$driver" ] || die "$driver: no such directory (BBLOG_SRCDIR must be a bblog checkout)"
# automake reads the fragment when it regenerates ROMIO: without it autoreconf fails far less
# clearly than this.
[ -f "$driver/Makefile.mk" ] || die "$driver/Makefile.mk missing: the driver has no automake fragment yet"

command -v python3 >/dev/null 2>&1 || die "python3 is needed (scripts/install-deps.sh installs it)"

# The source edits. Python rather than sed because several of them insert multi-line blocks
# relative to anchors, and each must be a no-op when already applied.
python3 - "$romio" <<'PYEOF'
import os
import re
import sys

romio = sys.argv[1]
changed = []


def fail(msg):
    sys.stderr.write("graft-mpich: %s\n" % msg)
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


def insert_before(text, path, anchor_re, block, what):
    m = re.search(anchor_re, text, re.M)
    if not m:
        fail("%s: anchor for %s not found (%s); is this an MPICH 4.x tree?"
             % (path, what, anchor_re))
    return text[:m.start()] + block + text[m.start():]


CONFIGURE_BLOCK = r'''dnl >>> bblog graft (bblog adio/graft/graft-mpich.sh): the burst-buffer log driver.
dnl Its core (plain C, no MPI) is built outside this tree: --with-bblog=DIR names DIR/include
dnl and DIR/lib/libbblog.a. The archive and the system libraries it needs go into LIBS: in MPICH
dnl they reach WRAPPER_LIBS, hence libmpi's LIBADD, through localdefs; in Open MPI 5 (as -L and
dnl -l flags, which libtool keeps in the convenience library libromio_dist.la) they reach the
dnl io/romio341 component.
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


# How LIBS names the core: by the archive's path (MPICH), or as -L and -l flags (Open MPI 5,
# graft-ompi.sh: an archive named by its path would be dropped from libromio_dist.la's
# dependencies, leaving the component with undefined bblog_* symbols that fail only at dlopen).
if os.environ.get("BBLOG_GRAFT_LINK", "archive") == "flags":
    CONFIGURE_BLOCK = CONFIGURE_BLOCK.replace("@CORE_LIBS@", "-L$bblog_core_dir/lib -lbblog")
else:
    CONFIGURE_BLOCK = CONFIGURE_BLOCK.replace("@CORE_LIBS@", "$bblog_core_dir/lib/libbblog.a")


def configure_ac(text, path):
    m = re.search(r"m4_define\(\[known_filesystems_m4_w\],\s*\[([^\]]*)\]", text)
    if not m:
        fail("%s: known_filesystems_m4_w not found" % path)
    if "bblog" not in m.group(1).split():
        # Insert as a word at the end of the list, keeping the list's own layout.
        text = text[:m.end(1)] + " bblog" + text[m.end(1):]
    if "dnl >>> bblog graft" not in text:
        # After the loop that sets $file_system_bblog and the m4_foreach that turns the known
        # list into AM_CONDITIONAL(BUILD_AD_BBLOG); the other drivers' blocks follow here too.
        # Before the comment that introduces the summary line, if it is there, not inside it.
        anchor = r"^(?:#\n# Print list of configured file systems\n(?:#.*\n)*)?" \
            r"AC_MSG_CHECKING\(\[configured file systems\]\)"
        text = insert_before(text, path, anchor, CONFIGURE_BLOCK, "the ROMIO_BBLOG block")
    return text


def adio_h(text, path):
    if re.search(r"^#define\s+ADIO_BBLOG\s", text, re.M):
        return text
    clash = re.search(r"^#define\s+(ADIO_\w+)\s+190\b", text, re.M)
    if clash:
        fail("%s: id 190 is taken by %s; pick another ADIO_BBLOG id" % (path, clash.group(1)))
    return insert_before(text, path, r"^#define\s+ADIO_SEEK_SET\b",
                         "#define ADIO_BBLOG               190    /* bblog burst-buffer log */\n\n",
                         "ADIO_BBLOG")


def fs_proto_h(text, path):
    if "ADIO_BBLOG_operations" in text:
        return text
    block = ("#ifdef ROMIO_BBLOG\n"
             "/* prototypes are in adio/ad_bblog/ad_bblog.h (bblog) */\n"
             "extern struct ADIOI_Fns_struct ADIO_BBLOG_operations;\n"
             "#endif\n\n")
    return insert_before(text, path, r"^#endif\s*/\*\s*ADIOI_FS_PROTO_H_INCLUDED",
                         block, "the ADIO_BBLOG_operations extern")


def fstype_c(text, path):
    if "ADIO_BBLOG_operations" in text:
        return text
    block = ("#ifdef ROMIO_BBLOG\n"
             "    {&ADIO_BBLOG_operations, ADIO_BBLOG, \"bblog:\"},\n"
             "#endif\n")
    return insert_before(text, path, r"^\s*\{\s*0\s*,\s*0\s*,\s*0\s*\}\s*,?\s*/\*\s*guard entry",
                         block, "the fstypes[] entry")


def adio_makefile_mk(text, path):
    line = "include $(top_srcdir)/adio/ad_bblog/Makefile.mk\n"
    if line in text:
        return text
    return insert_before(text, path, r"^include \$\(top_srcdir\)/adio/common/Makefile\.mk",
                         line, "the ad_bblog Makefile.mk include")


SET_VIEW_INFO = (
    "#ifdef ROMIO_BBLOG\n"
    "    /* bblog graft: a bblog file's set_view makes no collective call (ad_bblog_shfp.c);\n"
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
    "     * pointer has one slot per view (ad_bblog_shfp.c). */\n"
    "    if (adio_fh->file_system == ADIO_BBLOG) {\n"
    "        ADIOI_BBLOG_View_changed(adio_fh);\n"
    "        goto bblog_view_done;\n"
    "    }\n"
    "#endif\n")
SET_VIEW_LABEL = (
    "#ifdef ROMIO_BBLOG\n"
    "  bblog_view_done:\n"
    "#endif\n")
BBLOG_PROTO = (
    "#ifdef ROMIO_BBLOG\n"
    "/* bblog graft: set_view (ad_bblog_shfp.c, ad_bblog_hints.c) and the shared pointer of a\n"
    " * bblog file (ad_bblog_shfp.c) */\n"
    "void ADIOI_BBLOG_View_changed(ADIO_File fd);\n"
    "void ADIOI_BBLOG_Get_shared_fp(ADIO_File fd, ADIO_Offset incr, ADIO_Offset * shared_fp,\n"
    "                               int *error_code);\n"
    "void ADIOI_BBLOG_Set_shared_fp(ADIO_File fd, ADIO_Offset offset, int *error_code);\n"
    "int ADIOI_BBLOG_Check_info(MPI_Info info);\n"
    "void ADIOI_BBLOG_Refresh_info(ADIO_File fd);\n"
    "#endif\n\n")
GET_INFO = (
    "#ifdef ROMIO_BBLOG\n"
    "    /* bblog graft: what is still pending changes with every call (ad_bblog_hints.c) */\n"
    "    if (adio_fh->file_system == ADIO_BBLOG)\n"
    "        ADIOI_BBLOG_Refresh_info(adio_fh);\n"
    "#endif\n")


def fs_proto_h_shfp(text, path):
    if "ADIOI_BBLOG_View_changed" in text:
        return text
    return insert_before(text, path, r"^#endif\s*/\*\s*ADIOI_FS_PROTO_H_INCLUDED",
                         BBLOG_PROTO, "the bblog set_view and shared pointer prototypes")


def set_view_c(text, path):
    if "bblog graft" in text:
        return text
    text = insert_before(text, path, r"^\s*MPIO_CHECK_INFO_ALL\(info, error_code, adio_fh->comm\);",
                         SET_VIEW_INFO, "the info check")
    text = insert_before(text, path, r"^\s*/\* reset shared file pointer to zero \*/",
                         SET_VIEW_RESET, "the shared pointer reset")
    return insert_before(text, path, r"^\s*if \(strcmp\(datarep, \"external32\"\)",
                         SET_VIEW_LABEL, "the end of the shared pointer reset")


def get_info_c(text, path):
    if "bblog graft" in text:
        return text
    return insert_before(text, path, r"^\s*error_code = MPI_Info_dup\(adio_fh->info, info_used\);",
                         GET_INFO, "the info duplication")


def sh_fp_c(fn, args):
    def edit_fn(text, path):
        if "bblog graft" in text:
            return text
        block = ("#ifdef ROMIO_BBLOG\n"
                 "    if (fd->file_system == ADIO_BBLOG) {    /* bblog graft (ad_bblog_shfp.c) */\n"
                 "        ADIOI_BBLOG_%s(%s);\n"
                 "        return;\n"
                 "    }\n"
                 "#endif\n\n" % (fn, args))
        return insert_before(text, path, r"^#ifdef ROMIO_NFS", block, "the " + fn + " hook")
    return edit_fn


edit("configure.ac", configure_ac)
edit("adio/include/adio.h", adio_h)
edit("adio/include/adioi_fs_proto.h", fs_proto_h)
edit("adio/common/ad_fstype.c", fstype_c)
edit("adio/Makefile.mk", adio_makefile_mk)
edit("adio/include/adioi_fs_proto.h", fs_proto_h_shfp)
edit("mpi-io/set_view.c", set_view_c)
edit("mpi-io/get_info.c", get_info_c)
edit("adio/common/ad_get_sh_fp.c", sh_fp_c("Get_shared_fp", "fd, incr, shared_fp, error_code"))
edit("adio/common/ad_set_sh_fp.c", sh_fp_c("Set_shared_fp", "fd, offset, error_code"))
for rel in changed:
    print("graft-mpich: edited %s" % rel)
PYEOF

# The driver directory is a symlink into the checkout: ROMIO's automake dependency tracking then
# sees edits of the checkout's files directly, and make rebuilds exactly what changed.
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

# Regenerate ROMIO's build system only as far as its inputs changed, because every regeneration
# costs a rebuild in a configured tree:
# - configure.ac changed (the first graft; or a hand edit): autoreconf -fi -I confdb. A configured
#   build then reruns ROMIO's configure, which rewrites mpio.h, which everything includes: a full
#   rebuild of ROMIO and of MPICH.
# - only a Makefile.am/Makefile.mk changed (e.g. a file added to the driver's fragment, seen
#   through the symlink): automake alone. The build tree's rebuild rules then regenerate just the
#   Makefiles, and make compiles just what is new.
# Debian's autotools differ from the ones MPICH's release was generated with; ROMIO has its own
# confdb (libtool included), so regenerating ROMIO alone stays consistent, and the build tree's
# rebuild rules call the same automake version that generated its Makefile.in.
stamp=$romio/.bblog-graft-autoreconf
cfg_sum=$(sha256sum <"$romio/configure.ac" | cut -d' ' -f1)
mk_sum=$(cd "$romio" && find -L . -path ./mpl -prune -o -path ./autom4te.cache -prune -o \
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
