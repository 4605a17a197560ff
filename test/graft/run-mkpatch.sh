#!/bin/sh
# run-mkpatch.sh DSC: the site patch series (adio/graft/mkpatch-mpich.sh) on a clean Debian MPICH
# source tree, unpacked from DSC (scripts/build-mpi.sh keeps mpich_*.dsc in its cache's
# downloads/). Checks, each fatal:
#   - the series applies with `patch -p1` to another clean copy, without fuzz or rejects;
#   - every file it touches is then what adio/graft/graft.py makes of that file, and the
#     driver's files are the checkout's;
#   - graft.py run again on its grafted tree changes nothing, and refuses a directory that is no
#     MPI or ROMIO tree;
#   - the standalone layer's patches (adio/layer/) apply to the grafted ROMIO without fuzz;
#   - ROMIO's build system regenerates from the patched tree (autoreconf -fi -I confdb) with the
#     bblog file system in it (BUILD_AD_BBLOG, --with-bblog).
# Exit: 0 passed, 1 failed.
set -eu

prog=run-mkpatch
die() {
    echo "$prog: FAIL: $*" >&2
    exit 1
}

[ $# -eq 1 ] || die "usage: $0 MPICH_DSC"
dsc=$1
[ -f "$dsc" ] || die "$dsc: no such file"
here=$(cd "$(dirname "$0")/../.." && pwd -P)

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-mkpatch-test.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
dpkg-source --no-check -x "$dsc" "$work/clean" >"$work/unpack.log" 2>&1 ||
    die "dpkg-source -x $dsc failed: $(tail -n 3 "$work/unpack.log")"
"$here/adio/graft/mkpatch-mpich.sh" "$work/clean" "$here" "$work/series" >"$work/mkpatch.log" 2>&1 ||
    die "mkpatch-mpich.sh failed: $(tail -n 5 "$work/mkpatch.log")"
echo "$prog: $(grep -c '^+++ ' "$work"/series/0001-*.patch) files edited," \
    "$(grep -c '^+++ ' "$work"/series/0002-*.patch) driver files added"

# Apply to a clean copy of the sources (ROMIO is all the series touches).
mkdir -p "$work/site/src/mpi" "$work/graft/src/mpi"
cp -a "$work/clean/src/mpi/romio" "$work/site/src/mpi/"
cp -a "$work/clean/src/mpi/romio" "$work/graft/src/mpi/"
for p in "$work"/series/*.patch; do
    (cd "$work/site" && patch -p1 --no-backup-if-mismatch -F0 <"$p") >"$work/patch.log" 2>&1 ||
        die "$(basename "$p") does not apply cleanly: $(tail -n 3 "$work/patch.log")"
    ! grep -qiE 'fuzz|offset|reject' "$work/patch.log" ||
        die "$(basename "$p") applies only with fuzz or offsets: $(cat "$work/patch.log")"
done

# The same tree made by the graft itself (its driver a symlink to the checkout).
python3 "$here/adio/graft/graft.py" "$work/graft/src/mpi/romio" "$here" >"$work/graft.log" 2>&1 ||
    die "graft.py failed: $(tail -n 5 "$work/graft.log")"
for f in $(sed -n 's/^graft: edited //p' "$work/graft.log" | sort -u); do
    cmp -s "$work/site/src/mpi/romio/$f" "$work/graft/src/mpi/romio/$f" ||
        die "src/mpi/romio/$f after the series differs from graft.py's"
done
for f in "$here"/adio/ad_bblog/*; do
    cmp -s "$f" "$work/site/src/mpi/romio/adio/ad_bblog/${f##*/}" ||
        die "adio/ad_bblog/${f##*/} after the series differs from the checkout's"
done
echo "$prog: the series applies without fuzz and makes the graft's sources"

# A second graft of the grafted tree changes nothing: no edit, no regeneration, no file touched.
touch "$work/graft.stamp"
python3 "$here/adio/graft/graft.py" "$work/graft/src/mpi/romio" "$here" >"$work/graft2.log" 2>&1 ||
    die "graft.py failed on a grafted tree: $(tail -n 5 "$work/graft2.log")"
[ ! -s "$work/graft2.log" ] || die "graft.py on a grafted tree said: $(head -n 3 "$work/graft2.log")"
touched=$(find "$work/graft" -newer "$work/graft.stamp" | head -n 3)
[ -z "$touched" ] || die "graft.py on a grafted tree touched $(echo $touched)"
# And a tree it does not know is refused, naming what it looked for.
mkdir -p "$work/notatree"
if python3 "$here/adio/graft/graft.py" "$work/notatree" "$here" >"$work/graft3.log" 2>&1 ||
    ! grep -q 'none of: .*MPICH 4.x.*Open MPI 4.1' "$work/graft3.log"; then
    die "graft.py on an empty directory: $(cat "$work/graft3.log")"
fi
echo "$prog: a second graft changes nothing, and an unknown tree is refused"

# The standalone layer's patches (adio/layer/, scripts/build-layer.sh) on a copy of the grafted
# ROMIO: each applies without fuzz or offsets.
cp -a "$work/site/src/mpi/romio" "$work/layer"
for p in "$here"/adio/layer/*.patch; do
    (cd "$work/layer" && patch -p1 --no-backup-if-mismatch -F0 <"$p") >"$work/layer.log" 2>&1 ||
        die "adio/layer/$(basename "$p") does not apply cleanly: $(tail -n 3 "$work/layer.log")"
    ! grep -qiE 'fuzz|offset|reject' "$work/layer.log" ||
        die "adio/layer/$(basename "$p") applies only with fuzz or offsets: $(cat "$work/layer.log")"
done
echo "$prog: the layer's $(ls "$here"/adio/layer/*.patch | wc -l) patches apply without fuzz"

(cd "$work/site/src/mpi/romio" && autoreconf -fi -I confdb) >"$work/autoreconf.log" 2>&1 ||
    die "autoreconf of the patched ROMIO failed: $(tail -n 5 "$work/autoreconf.log")"
grep -q 'BUILD_AD_BBLOG_TRUE' "$work/site/src/mpi/romio/configure" &&
    grep -q 'with-bblog' "$work/site/src/mpi/romio/configure" ||
    die "the patched ROMIO's configure knows no bblog file system"
echo "$prog: ROMIO's configure regenerates with the bblog file system"
echo "$prog: 3 passed, 0 failed"
