#!/bin/sh
# The damage table: what `bblog replay` and `bblog check` say about logs that are damaged
# rather than torn. Each row makes the logs of a simulated crashed job (test/unit/mklogs: 4
# ranks, a drain, then three records per rank that a sync acknowledged and three it did not),
# damages rank 1's log in one way at one place, and checks the verdict:
#   replayed   exit 0, the file is what the job wrote
#   torn       exit 0, "torn tail dropped": only records no sync acknowledged were lost
#   CORRUPT    exit 2, a LOST line names the log (and the file range, when its record is
#              intact), the file is not touched; with --salvage exit 3 and the file written
# A duplicate log set (another run with the same job id) is refused with exit 1 until one set
# is picked with --set. make check runs it from the build directory; elsewhere set
# BBLOG_BUILDDIR.
set -u

. "$(dirname "$0")/toolcheck.sh"
toolcheck_programs test_damage.sh

T=$(mktemp -d "${TMPDIR:-/tmp}/bblog-test-damage.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
OUT=$T/out
ERR=$T/err
row=

# ---- byte surgery
zero() {        # zero FILE OFFSET COUNT
    dd if=/dev/zero of="$1" bs=1 seek="$2" count="$3" conv=notrunc status=none
}
flip() {        # flip FILE OFFSET: one bit of the byte at OFFSET
    b=$(od -An -tu1 -j "$2" -N1 "$1" | tr -d ' ')
    printf "\\$(printf %o $((b ^ 16)))" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# ---- a fresh crashed job in $D; rank 1's log is $M1 (.meta) and $D1 (.data)
n=0
fresh() {
    n=$((n + 1))
    D=$T/job$n
    PFS=$T/pfs$n.dat
    EXP=$T/exp$n.dat
    mkdir -p "$D"
    "$MKLOGS" --sync --job job-dmg --tag dmg "$D" "$PFS" "$EXP" >"$OUT" 2>"$ERR" ||
        { fail "mklogs failed"; return 1; }
    M0=$(sed -n 's/^log //p' "$OUT" | sed -n 1p)
    M1=$(sed -n 's/^log //p' "$OUT" | sed -n 2p)
    D0=${M0%.meta}.data
    D1=${M1%.meta}.data
    cp "$PFS" "$T/before.dat"
    # Rank 1's records of this epoch: "slot data_off len off", one line each, 6 of them.
    "$BBLOG" dump "$M1" >"$T/dump" 2>&1
    sed -n 's/^record seq=[0-9]* off=\([0-9]*\) len=\([0-9]*\) data_off=\([0-9]*\) .* slot=\([0-9]*\) undrained$/\4 \3 \2 \1/p' \
        "$T/dump" >"$T/recs"
    [ "$(wc -l <"$T/recs")" -eq 6 ] || { fail "rank 1 does not hold 6 undrained records"; return 1; }
    META_END=$(sed -n 's/^synced count=1 seq=[0-9]* meta_end=\([0-9]*\) .*/\1/p' "$T/dump")
    [ "$META_END" = $((4096 + 3 * 64)) ] || { fail "rank 1's sync mark is not after 3 records"; return 1; }
}
slot() { sed -n "$(($1 + 1))p" "$T/recs" | cut -d' ' -f1; }
doff() { sed -n "$(($1 + 1))p" "$T/recs" | cut -d' ' -f2; }
rlen() { sed -n "$(($1 + 1))p" "$T/recs" | cut -d' ' -f3; }
foff() { sed -n "$(($1 + 1))p" "$T/recs" | cut -d' ' -f4; }

# ---- verdicts
replayed() {
    run 0 "$BBLOG" replay "$D"
    hasnt "$ERR" "LOST"
    same "$PFS" "$EXP"
}
torn() {
    run 0 "$BBLOG" replay "$D"
    has "$OUT" "$M1: torn tail dropped"
    hasnt "$ERR" "LOST"
    run 1 "$BBLOG" check "$M1"
}
# corrupt WHAT [COUNT]: refused, naming rank 1 and what was found (and COUNT: "N damaged
# items, M"); salvage on request.
corrupt() {
    run 2 "$BBLOG" replay "$D"
    has "$ERR" "LOST: rank 1"
    has "$ERR" "$1"
    has "$ERR" "was not written"
    has "$ERR" "--salvage"
    same "$PFS" "$T/before.dat"
    if [ $# -gt 1 ]; then
        has "$ERR" "$2 of them acknowledged by a sync"
    fi
    run 3 "$BBLOG" replay "$D" --salvage
    has "$ERR" "SALVAGED"
    has "$OUT" "replayed"
    differs "$PFS" "$T/before.dat"
}
# lost_range I: the LOST lines give record I's file range.
lost_range() {
    run 2 "$BBLOG" replay "$D"
    has "$ERR" "file bytes [$(foff "$1"), $(($(foff "$1") + $(rlen "$1"))))"
}

# ---- the table: name, damage, verdict
row="clean"; fresh && {
    replayed
    run 0 "$BBLOG" check "$M1"
}
row="header zeroed (job id)"; fresh && {
    zero "$M1" 60 16
    corrupt "header corrupt or inconsistent" "1 damaged item, 1"
    run 3 "$BBLOG" check "$M1"
}
row="header bit flipped (epoch)"; fresh && {
    flip "$M1" 40
    corrupt "everything this log holds is lost" "1 damaged item, 1"
}
row="header cut (meta log truncated inside the header)"; fresh && {
    truncate -s 2000 "$M1"
    corrupt "everything this log holds is lost" "1 damaged item, 1"
}
row="sync slot bit flipped"; fresh && {
    flip "$M1" $((3584 + 16))
    replayed
}
row="meta head: bytes zeroed in the first (synced) record"; fresh && {
    zero "$M1" $(($(slot 0) + 8)) 16
    corrupt "record fails its checksum" "1 damaged item, 1"
    has "$ERR" "file range unknown (acknowledged by a sync)"
    run 2 "$BBLOG" check "$M1"
}
row="meta middle: bytes zeroed in the last synced record"; fresh && {
    zero "$M1" $(($(slot 2) + 8)) 16
    corrupt "record fails its checksum" "1 damaged item, 1"
}
row="meta middle: bytes zeroed in an unsynced record, valid ones after"; fresh && {
    zero "$M1" $(($(slot 3) + 8)) 16
    corrupt "file range unknown (not yet synced)" "1 damaged item, 0"
}
row="meta tail: bytes zeroed in the last record, which a sync acknowledged"; fresh && {
    truncate -s "$META_END" "$M1"
    zero "$M1" $(($(slot 2) + 8)) 16
    corrupt "record fails its checksum" "1 damaged item, 1"
}
row="meta: a whole synced slot zeroed"; fresh && {
    zero "$M1" "$(slot 1)" 64
    corrupt "record slot is all zeros" "1 damaged item, 1"
}
row="meta tail: bytes zeroed in the last (unsynced) record"; fresh && {
    zero "$M1" $(($(slot 5) + 8)) 16
    torn
}
row="meta: a whole unsynced slot zeroed (extended with zeros)"; fresh && {
    zero "$M1" "$(slot 3)" 64
    torn
}
row="meta head: bit flipped in the first record"; fresh && {
    flip "$M1" $(($(slot 0) + 20))
    corrupt "record fails its checksum" "1 damaged item, 1"
}
row="meta tail: bit flipped in the last record"; fresh && {
    flip "$M1" $(($(slot 5) + 20))
    torn
}
row="meta cut inside the first (synced) record"; fresh && {
    truncate -s $(($(slot 0) + 30)) "$M1"
    corrupt "meta log ends inside a record" "2 damaged items, 2"
}
row="meta cut before its sync mark, at a record boundary"; fresh && {
    truncate -s "$(slot 2)" "$M1"
    corrupt "meta log ends before its last sync mark" "1 damaged item, 1"
    has "$ERR" "1 synced records were cut off the end of a log"
}
row="meta cut at its sync mark (the unsynced records gone)"; fresh && {
    truncate -s "$META_END" "$M1"
    run 0 "$BBLOG" replay "$D"
    hasnt "$ERR" "LOST"
}
row="meta tail cut inside the last record"; fresh && {
    truncate -s $(($(slot 5) + 30)) "$M1"
    torn
}
row="data head: first (synced) payload zeroed"; fresh && {
    zero "$D1" "$(doff 0)" 8
    corrupt "payload fails its checksum" "1 damaged item, 1"
    lost_range 0
}
row="data middle: bit flipped in a synced payload"; fresh && {
    flip "$D1" $(($(doff 2) + $(rlen 2) / 2))
    corrupt "payload fails its checksum" "1 damaged item, 1"
    lost_range 2
}
row="data tail: last (unsynced) payload zeroed"; fresh && {
    zero "$D1" "$(doff 5)" 8
    corrupt "payload fails its checksum" "1 damaged item, 0"
    lost_range 5
}
row="data cut inside a synced payload"; fresh && {
    truncate -s $(($(doff 1) + 1)) "$D1"
    corrupt "payload lies past the end of the data log" "5 damaged items, 2"
    lost_range 1
}
row="data tail cut inside the last payload"; fresh && {
    truncate -s $(($(doff 5) + 1)) "$D1"
    corrupt "payload lies past the end of the data log" "1 damaged item, 0"
}
row="data file missing"; fresh && {
    rm "$D1"
    corrupt "the data log (.data file) is missing" "6 damaged items, 3"
    run 2 "$BBLOG" check "$M1"
    has "$OUT" "its .data file is missing"
}
row="meta file missing"; fresh && {
    rm "$M1"
    corrupt "its .meta file is missing while its .data file is in $D"
}
row="data files of ranks 0 and 1 swapped"; fresh && {
    mv "$D0" "$T/swap" && mv "$D1" "$D0" && mv "$T/swap" "$D1"
    corrupt "payload"
    has "$ERR" "its .data file is not its own"
    has "$ERR" "LOST: rank 0"
}
row="duplicate log set: another run with the same job id"; {
    D=$T/dup
    PFS=$T/dup.dat
    mkdir -p "$D"
    "$MKLOGS" --no-drain --job job-dmg --tag dmg --seed 3 "$D" "$PFS" "$T/exp-first.dat" \
        >/dev/null 2>"$ERR" || fail "mklogs (first run) failed"
    "$MKLOGS" --no-drain --job job-dmg --tag dmg2 --seed 7 "$D" "$PFS" "$T/exp-second.dat" \
        >/dev/null 2>"$ERR" || fail "mklogs (second run) failed"
    run 1 "$BBLOG" replay "$D"
    has "$ERR" "log belongs to set"
    has "$ERR" "bblog replay --list $D"
    [ -e "$PFS" ] && fail "a refused replay created $PFS"
    run 0 "$BBLOG" replay --list "$D"
    [ "$(grep -c "^set [0-9a-f]\{16\}: file $PFS, job job-dmg, 4 of 4 ranks logged" "$OUT")" -eq 2 ] ||
        fail "--list does not show two sets of 4 ranks"
    SET1=$(sed -n 's/^set \([0-9a-f]*\): .*/\1/p' "$OUT" | sed -n 1p)
    SET2=$(sed -n 's/^set \([0-9a-f]*\): .*/\1/p' "$OUT" | sed -n 2p)
    has "$OUT" "--set $SET1"
    has "$OUT" "--set $SET2"
    run 0 "$BBLOG" replay "$D" --set "$SET2"
    same "$PFS" "$T/exp-second.dat"
    rm "$PFS"
    run 0 "$BBLOG" replay "$D" --set "$SET1"
    same "$PFS" "$T/exp-first.dat"
    run 1 "$BBLOG" replay "$D" --set 0123456789abcdef
    has "$ERR" "no log of this file belongs to set 0123456789abcdef"
    run 1 "$BBLOG" replay "$D" --set nothex
    has "$ERR" "--set nothex"
}

row=
toolcheck_end test_damage.sh
