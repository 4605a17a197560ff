#!/bin/sh
# bblog replay writes to the file its logs' headers name, or, with --file PFS --output PATH, to
# PATH, and to nothing else: checked by fingerprinting the whole scratch tree before and after.
# It follows no symlink planted at a log or at a per-user directory, and (root replaying a
# shared bblog_dir) does not write with root's rights what another user's logs say.
# make check runs it from the build directory; elsewhere set BBLOG_BUILDDIR. Needs root for
# the other-user case: as another user it skips (77) unless CI is set.
set -u

. "$(dirname "$0")/../unit/toolcheck.sh"
toolcheck_programs test_replay_target.sh
BBLOG=$(cd "$(dirname "$BBLOG")" && pwd -P)/bblog
MKLOGS=$(cd "$(dirname "$MKLOGS")" && pwd -P)/mklogs
if [ "$(id -u)" != 0 ]; then
    if [ -n "${CI:-}" ]; then
        echo "test_replay_target.sh: needs root (CI is set, so this is a failure)" >&2
        exit 1
    fi
    echo "test_replay_target.sh: needs root to act as another user: skipped" >&2
    exit 77
fi
command -v setpriv >/dev/null 2>&1 ||
    { echo "test_replay_target.sh: setpriv (util-linux) not found" >&2; exit 99; }

T=$(mktemp -d /tmp/bblog-test-target.XXXXXX) || exit 99
F=$(mktemp -d /tmp/bblog-test-target-fp.XXXXXX) || { rm -rf "$T"; exit 99; }
trap 'rm -rf "$T" "$F"' EXIT
chmod 755 "$T"
OUT=$F/out
ERR=$F/err

# Every file under $T with its type and checksum.
fingerprint() {
    (cd "$T" && find . -print | LC_ALL=C sort |
        while IFS= read -r f; do
            if [ -f "$f" ] && [ ! -L "$f" ]; then
                printf '%s %s\n' "$f" "$(cksum <"$f")"
            else
                printf '%s %s\n' "$f" "$(stat -c %F "$f")"
            fi
        done)
}

# changed BEFORE AFTER: the paths whose fingerprint changed, appeared or disappeared.
changed() {
    diff "$1" "$2" | sed -n 's/^[<>] \([^ ]*\) .*/\1/p' | LC_ALL=C sort -u
}

mkdir -p "$T/pfs" "$T/logs"

# ---- no option: the file of the header and nothing else
run 0 "$MKLOGS" --job j1 --tag out "$T/logs" "$T/pfs/out.dat" "$T/expected.dat"
cp "$T/pfs/out.dat" "$T/drained.dat"
fingerprint >"$F/before"
run 0 "$BBLOG" replay "$T/logs"
fingerprint >"$F/after"
checks=$((checks + 1))
[ "$(changed "$F/before" "$F/after")" = "./pfs/out.dat" ] ||
    fail "replay without --file changed: $(changed "$F/before" "$F/after" | tr '\n' ' ')"
checks=$((checks + 1))
cmp -s "$T/pfs/out.dat" "$T/expected.dat" || fail "replayed file differs from the expected one"

# ---- --file of a path no log names: an error naming it, nothing written
fingerprint >"$F/before"
run 1 "$BBLOG" replay "$T/logs" --file "$T/pfs/other.dat"
has "$ERR" "$T/pfs/other.dat"
run 1 "$BBLOG" replay "$T/logs" --output "$T/stray.dat"
has "$ERR" "--output needs --file"
fingerprint >"$F/after"
checks=$((checks + 1))
[ -z "$(changed "$F/before" "$F/after")" ] ||
    fail "refused replays changed: $(changed "$F/before" "$F/after" | tr '\n' ' ')"

# ---- --file with --output: PATH only, the header's file untouched
cp "$T/drained.dat" "$T/pfs/copy.dat"
fingerprint >"$F/before"
run 0 "$BBLOG" replay "$T/logs" --file "$T/pfs/out.dat" --output "$T/pfs/copy.dat"
fingerprint >"$F/after"
checks=$((checks + 1))
[ "$(changed "$F/before" "$F/after")" = "./pfs/copy.dat" ] ||
    fail "replay --output changed: $(changed "$F/before" "$F/after" | tr '\n' ' ')"
checks=$((checks + 1))
cmp -s "$T/pfs/copy.dat" "$T/expected.dat" || fail "--output file differs from the expected one"

# ---- symlinks planted at a log and at a per-user directory are not followed
mkdir -p "$T/hidden" "$T/links"
run 0 "$MKLOGS" --job j2 --tag h --nprocs 1 "$T/hidden" "$T/pfs/hidden.dat" "$T/expected2.dat"
ln -s "$T/hidden/h.r0.meta" "$T/links/h.r0.meta"
ln -s "$T/hidden/h.r0.data" "$T/links/h.r0.data"
ln -s "$T/hidden" "$T/links/bblog-0"
rm -f "$T/pfs/hidden.dat"
fingerprint >"$F/before"
"$BBLOG" replay "$T/links" >"$OUT" 2>"$ERR"
fingerprint >"$F/after"
checks=$((checks + 1))
[ -z "$(changed "$F/before" "$F/after")" ] ||
    fail "replay through symlinks changed: $(changed "$F/before" "$F/after" | tr '\n' ' ')"

# ---- a log whose .data is a symlink (to a file the log's writer could not read) is refused
mkdir -p "$T/dlink"
run 0 "$MKLOGS" --job j3 --tag d --nprocs 1 --no-drain "$T/dlink" "$T/pfs/dlink.dat" /dev/null
mv "$T/dlink/d.r0.data" "$T/rootonly-data"
chmod 600 "$T/rootonly-data"
ln -s "$T/rootonly-data" "$T/dlink/d.r0.data"
fingerprint >"$F/before"
run 1 "$BBLOG" replay "$T/dlink"
has "$ERR" "$T/dlink/d.r0.meta: can't read the log"
fingerprint >"$F/after"
checks=$((checks + 1))
[ -z "$(changed "$F/before" "$F/after")" ] ||
    fail "replay through a .data symlink changed: $(changed "$F/before" "$F/after" | tr '\n' ' ')"

# ---- root replaying a shared directory does not write what another user's logs say
mkdir -p "$T/shared" "$T/rootonly"
chmod 1777 "$T/shared"
printf 'root data\n' >"$T/rootonly/victim.dat"
chmod 644 "$T/rootonly/victim.dat"
run 0 setpriv --reuid=nobody --regid=nogroup --clear-groups -- \
    "$MKLOGS" --userdir --no-drain --job evil --tag e --nprocs 1 \
    "$T/shared" "$T/rootonly/victim.dat" /dev/null
fingerprint >"$F/before"
"$BBLOG" replay "$T/shared" >"$OUT" 2>"$ERR"
st=$?
fingerprint >"$F/after"
checks=$((checks + 1))
[ "$st" -ne 0 ] || fail "root replayed logs owned by nobody into $T/rootonly/victim.dat"
checks=$((checks + 1))
[ -z "$(changed "$F/before" "$F/after")" ] ||
    fail "replay of another user's logs changed: $(changed "$F/before" "$F/after" | tr '\n' ' ')"
has "$ERR" "$T/shared/bblog-65534/e.r0.meta"
# ... nor into a file root names: the logs are refused, whatever the target.
"$BBLOG" replay "$T/shared" --file "$T/rootonly/victim.dat" --output "$T/pfs/evil.dat" \
    >"$OUT" 2>"$ERR"
checks=$((checks + 1))
[ ! -e "$T/pfs/evil.dat" ] || fail "--output replay of another user's logs wrote $T/pfs/evil.dat"

toolcheck_end test_replay_target.sh
