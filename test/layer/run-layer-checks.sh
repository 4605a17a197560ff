#!/bin/bash
# run-layer-checks.sh: the ways a program reaches bblog's preloadable layer over a binary MPI
# (scripts/build-layer.sh), and the message it gets where its MPI-IO would not reach bblog
# (doc/mpi-versions.md). test/layer/linkorder.c, 2 ranks, its file named bblog:..., with
# ROMIO_FSTYPE_FORCE=bblog: set too:
#   preload     built with the MPI's mpicc, run by the layer's mpiexec (the preload): bblog
#               writes the file (its stats name it), no warning
#   bblog-run   the same program under bin/bblog-run and the binary MPI's own mpiexec: the same
#   linked      linked with -lbblog-mpiio (the MPI's mpicc puts its libmpi after it), no
#               preload: the same
#   wrong-order libmpi ahead of the layer in the link line, no preload, the file named plainly
#               with ROMIO_FSTYPE_FORCE=bblog: (a bblog: name fails to open there): the binary
#               MPI's own MPI-IO writes the file, and rank 0 says on stderr, once, that bblog
#               is bypassed ("bblog: this program's MPI_File_open is ...")
#   static      bblog-run and the layer's mpiexec given a statically linked program: each says
#               it is statically linked
# Usage: run-layer-checks.sh [LAYER_ENV]   (default <cache>/layer-current/bin/layer-env.sh)
# Exit: 0 all passed, 1 something failed.
set -u
src=$(cd "$(dirname "$0")" && pwd)
env_script=${1:-${BBLOG_CACHE:-/var/cache/bblog}/layer-current/bin/layer-env.sh}
[ -r "$env_script" ] || { echo "run-layer-checks: no layer environment $env_script" >&2; exit 1; }
# shellcheck disable=SC1090
. "$env_script"
inst=$BBLOG_MPI_PREFIX
wmpi=$BBLOG_LAYER_MPI
lib=$inst/lib/libbblog-mpiio.so
work=$(mktemp -d "${TMPDIR:-/var/tmp}/bblog-layer-checks.XXXXXX")
warn="bblog: this program's MPI_File_open is"
passed=0 failed=0

fail() { echo "FAIL $*"; failed=$((failed + 1)); }
pass() { echo "PASS $*"; passed=$((passed + 1)); }

set -e
mpicc -O2 -o "$work/plain" "$src/linkorder.c"
mpicc -O2 -o "$work/linked" "$src/linkorder.c" -L"$inst/lib" -Wl,-rpath,"$inst/lib" \
    -lbblog-mpiio
mpicc -O2 -o "$work/wrong" "$src/linkorder.c" -Wl,--no-as-needed "$wmpi/lib/libmpi.so" \
    "$lib" -Wl,-rpath,"$inst/lib"
printf 'int main(void) { return 0; }\n' >"$work/static.c"
gcc -static -o "$work/static" "$work/static.c"
set +e

# check NAME BBLOG(yes|no) WARNINGS CMD...: runs CMD with the file bblog:<work>/NAME.out (with
# BBLOG=no: <work>/NAME.out and ROMIO_FSTYPE_FORCE=bblog:, which the binary MPI's own ROMIO
# ignores); it must exit 0 with the 128 bytes written, bblog must (yes) or must not (no) have
# written them, as its stats say, and stderr must hold WARNINGS lines of the layer's link-order
# warning.
check() {
    local name=$1 want=$2 nwarn=$3 why= n file
    shift 3
    file=bblog:$work/$name.out
    [ "$want" = no ] && file=$work/$name.out
    mkdir -p "$work/$name.bb"
    BBLOG_DIR=$work/$name.bb BBLOG_STATS=$work/$name.stats ROMIO_FSTYPE_FORCE=bblog: \
        "$@" "$file" >"$work/$name.log" 2>&1 || why="exit status $?;"
    [ "$(stat -c %s "$work/$name.out" 2>/dev/null)" = 128 ] ||
        why="$why the file is not the 128 bytes written;"
    if [ "$want" = yes ]; then
        grep -q "$name.out" "$work/$name.stats" 2>/dev/null ||
            why="$why bblog did not write the file (no stats for it);"
    elif [ -s "$work/$name.stats" ]; then
        why="$why bblog wrote stats, but the binary MPI's MPI-IO was expected;"
    fi
    n=$(grep -c "$warn" "$work/$name.log")
    [ "$n" = "$nwarn" ] || why="$why $n link-order warnings, expected $nwarn;"
    if [ -n "$why" ]; then
        fail "$name: $why"
        sed 's/^/    /' "$work/$name.log" | head -n 20
    else
        pass "$name"
    fi
}

check preload yes 0 mpiexec -n 2 "$work/plain"
check bblog-run yes 0 "$inst/bin/bblog-run" "$wmpi/bin/mpiexec" -n 2 "$work/plain"
check linked yes 0 "$wmpi/bin/mpiexec" -n 2 "$work/linked"
check wrong-order no 1 "$wmpi/bin/mpiexec" -n 2 "$work/wrong"
grep -q "$warn $wmpi/lib/libmpi" "$work/wrong-order.log" ||
    fail "wrong-order: the warning does not name the binary MPI's library"

for w in "$inst/bin/bblog-run" "$inst/bin/mpiexec -n 1"; do
    # shellcheck disable=SC2086 # $w is a command and its arguments
    out=$($w "$work/static" 2>&1)
    if printf '%s\n' "$out" | grep -q "$work/static is statically linked"; then
        pass "static: ${w##*/}"
    else
        fail "static: ${w##*/} said nothing of the statically linked program: $out"
    fi
done

echo "run-layer-checks: $passed passed, $failed failed (work in $work)"
[ "$failed" = 0 ] && rm -rf "$work"
[ "$failed" = 0 ]
