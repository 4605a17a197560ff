#!/bin/sh
# fuzz.sh TARGET SECONDS [LIBFUZZER_OPTION...]: fuzzes one libFuzzer target of test/fuzz for
# SECONDS seconds with clang -fsanitize=fuzzer,address,undefined (Debian packages clang and
# libclang-rt-14-dev, from scripts/install-deps.sh).
#   TARGET  scan    the log header decoder and record scanner (test/fuzz/fuzz_scan.c)
#           replay  replay planning and application over up to 4 logs (test/fuzz/fuzz_replay.c)
# Builds the core with coverage instrumentation in ${BBLOG_FUZZ_BUILD:-/var/tmp/bblog-fuzz}
# (kept, so later runs start at once), starts from the committed corpus
# test/fuzz/corpus/TARGET plus what earlier runs found (BUILD/corpus-TARGET), and writes
# crashing inputs to BUILD/artifacts-TARGET/. Exits non-zero when it found something; the
# last lines give the executions done. Scratch log files go to /dev/shm (BBLOG_FUZZ_TMPDIR).
set -eu

usage() {
    echo "usage: scripts/fuzz.sh scan|replay SECONDS [LIBFUZZER_OPTION...]" >&2
    exit 2
}
[ $# -ge 2 ] || usage
target=$1
secs=$2
shift 2
case $target in
    scan | replay) ;;
    *) echo "fuzz.sh: unknown target '$target': use scan or replay" >&2; usage ;;
esac
case $secs in
    '' | *[!0-9]*) echo "fuzz.sh: SECONDS must be a whole number, not '$secs'" >&2; usage ;;
esac

here=$(cd "$(dirname "$0")/.." && pwd -P)
build=${BBLOG_FUZZ_BUILD:-/var/tmp/bblog-fuzz}
for p in clang; do
    command -v "$p" >/dev/null 2>&1 ||
        { echo "fuzz.sh: $p not found: run scripts/install-deps.sh" >&2; exit 1; }
done

san="-fsanitize=address,undefined -fno-sanitize-recover=undefined -fno-omit-frame-pointer"
cflags="-g -O1 $san -fsanitize=fuzzer-no-link"
mkdir -p "$build"
cd "$build"
[ -f "$here/configure" ] || (cd "$here" && ./autogen.sh >/dev/null)
# Reconfigure when the tree's configure is newer than this build's (autogen ran since).
if [ ! -f config.status ] || [ "$here/configure" -nt config.status ]; then
    "$here/configure" -q CC=clang CFLAGS="$cflags"
fi
make -s -j2 libbblog.a
# shellcheck disable=SC2086 # $san holds several flags
clang -g -O1 $san -fsanitize=fuzzer -I. -I"$here/logfs" -I"$here/reorder" -I"$here/plan" -I"$here/pace" -I"$here/test/fuzz" \
    -o "fuzz_$target" "$here/test/fuzz/fuzz_$target.c" "$here/test/fuzz/fuzzlog.c" \
    libbblog.a -laio -lpthread -lm

mkdir -p "corpus-$target" "artifacts-$target"
echo "fuzz.sh: fuzzing $target for $secs s; new inputs in $build/corpus-$target," \
     "crashes in $build/artifacts-$target/"
exec "./fuzz_$target" -max_total_time="$secs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$build/artifacts-$target/" "$@" \
    "corpus-$target" "$here/test/fuzz/corpus/$target"
