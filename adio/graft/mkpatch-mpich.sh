#!/bin/sh
# mkpatch-mpich.sh MPICH_TREE BBLOG_SRCDIR OUTDIR
#
# For a site that builds its own MPICH: writes the bblog graft of that MPICH 4.x source tree as
# a patch series it can keep with its other patches, instead of running graft.py on its
# tree at every build:
#   OUTDIR/0001-romio-register-the-bblog-file-system.patch   graft.py's source edits
#                                       (configure.ac, the prefix table, set_view, get_info, ...)
#   OUTDIR/0002-romio-add-the-bblog-driver.patch   the driver's files, as new files under
#                                       src/mpi/romio/adio/ad_bblog/
# Both apply with `patch -p1` in the top of a tree of the same MPICH version; generated files
# (configure, Makefile.in) are left out, so after patching the site regenerates ROMIO's build
# system, then builds the bblog core and configures MPICH with the file system:
#   cd src/mpi/romio && autoreconf -fi -I confdb && cd -
#   (bblog checkout) ./autogen.sh && ./configure && make libbblog.a, then copy libbblog.a to
#   DIR/lib and logfs/*.h reorder/*.h plan/*.h pace/*.h to DIR/include
#   ./configure --with-file-system=ufs+nfs+bblog --with-bblog=DIR ...   (its other options)
# bblog(7), SITE INSTALLATION, says the same. MPICH_TREE is not modified: the graft runs on a
# copy.
set -eu

prog=mkpatch-mpich
die() {
    echo "$prog: $*" >&2
    exit 1
}

[ $# -eq 3 ] || die "usage: $0 MPICH_TREE BBLOG_SRCDIR OUTDIR"
tree=$(cd "$1" && pwd -P) || die "$1: no such directory"
bblog_src=$(cd "$2" && pwd -P) || die "$2: no such directory"
out=$3
[ -f "$tree/src/mpi/romio/adio/common/ad_fstype.c" ] ||
    die "$tree is not an MPICH tree (no src/mpi/romio/adio/common/ad_fstype.c)"
[ -d "$bblog_src/adio/ad_bblog" ] || die "$bblog_src is not a bblog checkout"
here=$(cd "$(dirname "$0")" && pwd -P)
mkdir -p "$out"
out=$(cd "$out" && pwd -P)

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-mkpatch.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
mkdir -p "$work/a/src/mpi" "$work/b/src/mpi"
cp -a "$tree/src/mpi/romio" "$work/a/src/mpi/"
cp -a "$tree/src/mpi/romio" "$work/b/src/mpi/"
python3 "$here/graft.py" "$work/b/src/mpi/romio" "$bblog_src" >"$work/graft.log" 2>&1 || {
    cat "$work/graft.log" >&2
    die "graft.py failed on a copy of $tree"
}
edited=$(sed -n 's/^graft: edited //p' "$work/graft.log" | sort -u)
[ -n "$edited" ] || die "graft.py edited nothing: is $tree grafted already?"

version=$(sed -n "s/^PACKAGE_VERSION='\(.*\)'\$/\1/p" "$tree/configure" 2>/dev/null | head -n 1)
rev=$(git -C "$bblog_src" rev-parse --short HEAD 2>/dev/null || echo unknown)

# header SUBJECT: a patch's header, as git format-patch writes one.
header() {
    printf 'From: bblog <bblog@localhost>\nSubject: [PATCH] %s\n\n' "$1"
    printf 'Made by bblog adio/graft/mkpatch-mpich.sh from bblog %s for MPICH %s.\n\n---\n' \
        "$rev" "${version:-(unknown version)}"
}

p1=$out/0001-romio-register-the-bblog-file-system.patch
{
    header "romio: register the bblog file system"
    for f in $edited; do
        (cd "$work" && diff -u "a/src/mpi/romio/$f" "b/src/mpi/romio/$f") || [ $? = 1 ] ||
            die "diff failed on $f"
    done
} >"$p1"

p2=$out/0002-romio-add-the-bblog-driver.patch
{
    header "romio: add the bblog driver (adio/ad_bblog)"
    for f in $(cd "$bblog_src/adio/ad_bblog" && ls); do
        [ -f "$bblog_src/adio/ad_bblog/$f" ] || continue
        (cd "$work" && diff -u --label /dev/null --label "b/src/mpi/romio/adio/ad_bblog/$f" \
            /dev/null "$bblog_src/adio/ad_bblog/$f") || [ $? = 1 ] || die "diff failed on $f"
    done
} >"$p2"
echo "$prog: wrote $p1 ($(echo "$edited" | wc -l) files)"
echo "$prog: wrote $p2 ($(cd "$bblog_src/adio/ad_bblog" && ls | wc -l) files)"
