#!/bin/sh
# The bblog command on the logs of simulated crashed jobs (test/unit/mklogs): exit codes and
# output lines of ls, dump, check and replay, and the replayed files byte for byte.
# make check runs it from the build directory; elsewhere set BBLOG_BUILDDIR.
set -u

. "$(dirname "$0")/toolcheck.sh"
toolcheck_programs test_tool.sh

T=$(mktemp -d "${TMPDIR:-/tmp}/bblog-test-tool.XXXXXX") || exit 99
trap 'rm -rf "$T"' EXIT
OUT=$T/out
ERR=$T/err

mkdir -p "$T/pfs" "$T/logs" "$T/bad" "$T/two" "$T/multi" "$T/miss" "$T/node"

# ---- a 4-rank job with a drain and a torn tail on rank 3, logs in the per-user directory
run 0 "$MKLOGS" --userdir --job job-tool --tag out --torn 3 \
    "$T/logs" "$T/pfs/out.dat" "$T/expected.dat"
LOGS=$(sed -n 's/^log //p' "$OUT")
[ "$(echo "$LOGS" | wc -l)" -eq 4 ] || fail "mklogs did not report 4 logs"
L0=$(echo "$LOGS" | sed -n 1p)
L3=$(echo "$LOGS" | sed -n 4p)
case $L0 in "$T/logs/bblog-"*/out.r0.meta) ;; *) fail "rank 0's log is at $L0" ;; esac

run 0 "$BBLOG" --help
has "$OUT" "replay DIR"
run 0 "$BBLOG" replay --help
has "$OUT" "--dry-run"

run 0 "$BBLOG" ls "$T/logs"
for r in 0 1 2; do
    has "$OUT" "out.r$r.meta: file=$T/pfs/out.dat job=job-tool rank=$r/4 epoch=1 state=clean"
done
has "$OUT" "out.r3.meta: file=$T/pfs/out.dat job=job-tool rank=3/4 epoch=1 state=torn"
has "$OUT" "file $T/pfs/out.dat: job job-tool set "
has "$OUT" " (4 processes): 4 logs, "
has "$OUT" ", 1 torn; replay with: bblog replay $T/logs --file $T/pfs/out.dat"
[ "$(grep -c 'undrained=[1-9][0-9]* bytes' "$OUT")" -eq 4 ] || fail "ls: not 4 logs undrained"

run 0 "$BBLOG" check "$L0"
has "$OUT" "$L0: clean:"
run 1 "$BBLOG" check "$L3"
has "$OUT" "$L3: torn:"
run 1 "$BBLOG" check $LOGS
run 0 "$BBLOG" check -q "${L0%.meta}.data"
[ -s "$OUT" ] && fail "check -q printed something"

run 0 "$BBLOG" dump "$L3"
has "$OUT" "file $T/pfs/out.dat"
has "$OUT" "rank 3 of 4"
has "$OUT" "epoch 1"
has "$OUT" "end torn at meta byte"
grep -q '^record seq=[0-9]* off=[0-9]* len=[0-9]* .* gen=[23] .* undrained$' "$OUT" ||
    fail "dump shows no undrained record of gen 2 or 3"

# dry run: nothing written
cp "$T/pfs/out.dat" "$T/drained.dat"
run 0 "$BBLOG" replay "$T/logs" --dry-run
has "$OUT" "$T/pfs/out.dat: would replay"
same "$T/pfs/out.dat" "$T/drained.dat"

run 0 "$BBLOG" replay "$T/logs"
has "$OUT" "$L3: torn tail dropped"
has "$OUT" "$T/pfs/out.dat: replayed"
has "$OUT" "of 4 logs of job job-tool (4 processes)"
same "$T/pfs/out.dat" "$T/expected.dat"
run 0 "$BBLOG" replay "$T/logs" --file "$T/pfs/out.dat"
same "$T/pfs/out.dat" "$T/expected.dat"

# --output: the same replay into a copy of the drained file, with a small gather buffer
cp "$T/drained.dat" "$T/copy.dat"
run 0 "$BBLOG" replay "$T/logs" --file "$T/pfs/out.dat" --output "$T/copy.dat" -b 8k
has "$OUT" "into $T/copy.dat (existing)"
same "$T/copy.dat" "$T/expected.dat"
# Sizes as the hints take them (bblog_size.h): a unit of k to T; 0, no digits, anything after
# the unit, or more than half the address space is refused, naming the value, and nothing is
# written.
cp "$T/drained.dat" "$T/copy2.dat"
for b in 0 x8k 8kb 8x "" 99999999999999999999 9000000000T; do
    run 1 "$BBLOG" replay "$T/logs" --file "$T/pfs/out.dat" --output "$T/copy2.dat" -b "$b"
    grep -q -- "--buffer-size $b: give a positive byte count" "$ERR" ||
        fail "replay -b '$b': no message naming the value"
done
same "$T/copy2.dat" "$T/drained.dat"
run 0 "$BBLOG" replay "$T/logs" --file "$T/pfs/out.dat" --output "$T/copy2.dat" -b " 1m"
same "$T/copy2.dat" "$T/expected.dat"
run 1 "$BBLOG" replay "$T/logs" --output "$T/copy.dat"
has "$ERR" "--output needs --file"

# ---- mid-log corruption on rank 1: check says 2, replay refuses and names the log
run 0 "$MKLOGS" --job job-bad --tag bad --corrupt 1 "$T/bad" "$T/pfs/bad.dat" "$T/bad-exp.dat"
B1=$(sed -n 's/^log //p' "$OUT" | sed -n 2p)
cp "$T/pfs/bad.dat" "$T/bad-before.dat"
run 2 "$BBLOG" check "$B1"
has "$OUT" "$B1: corrupt:"
run 0 "$BBLOG" ls "$T/bad"
has "$OUT" "bad.r1.meta: file=$T/pfs/bad.dat job=job-bad rank=1/4 epoch=1 state=corrupt"
has "$OUT" "1 CORRUPT (replay refuses this file unless --salvage)"
run 2 "$BBLOG" replay "$T/bad"
has "$ERR" "bblog replay: $T/pfs/bad.dat: LOST: rank 1: $B1 at meta byte"
has "$ERR" "bblog replay: $B1: 1 damaged item in the logs of this file"
has "$ERR" "bblog dump $B1"
same "$T/pfs/bad.dat" "$T/bad-before.dat"

# ---- unreadable and not-a-log files
echo "not a log" >"$T/bad/notes.meta"
run 3 "$BBLOG" check "$T/bad/notes.meta"
has "$OUT" "$T/bad/notes.meta: unreadable: not a bblog log"
run 3 "$BBLOG" check "$T/nonexistent.meta"
run 3 "$BBLOG" check $LOGS "$T/bad/notes.meta"

# ---- two jobs wrote logs of the same file: refused until a job is named
run 0 "$MKLOGS" --no-drain --job job-A --tag a --seed 5 "$T/two" "$T/pfs/two.dat" "$T/a.dat"
run 0 "$MKLOGS" --no-drain --job job-B --tag b --seed 6 "$T/two" "$T/pfs/two.dat" "$T/b.dat"
run 1 "$BBLOG" replay "$T/two"
has "$ERR" "job 'job-A'"
has "$ERR" "--job JOB_ID"
[ -e "$T/pfs/two.dat" ] && fail "a refused replay created $T/pfs/two.dat"
run 0 "$BBLOG" replay "$T/two" --job job-B
same "$T/pfs/two.dat" "$T/b.dat"
rm "$T/pfs/two.dat"
run 0 "$BBLOG" replay "$T/two" --job job-A
same "$T/pfs/two.dat" "$T/a.dat"

# ---- --file: only the named file of several
run 0 "$MKLOGS" --no-drain --tag x --seed 7 "$T/multi" "$T/pfs/x.dat" "$T/x.dat"
run 0 "$MKLOGS" --no-drain --tag y --seed 8 --nprocs 2 "$T/multi" "$T/pfs/y.dat" "$T/y.dat"
run 0 "$MKLOGS" --no-drain --tag z --seed 9 --job job-Z "$T/multi" "$T/pfs/z.dat" "$T/z.dat"
run 0 "$BBLOG" replay "$T/multi" --file "$T/pfs/y.dat"
same "$T/pfs/y.dat" "$T/y.dat"
[ -e "$T/pfs/x.dat" ] && fail "--file y.dat also replayed x.dat"
[ -e "$T/pfs/z.dat" ] && fail "--file y.dat also replayed z.dat"
run 1 "$BBLOG" replay "$T/multi" --file "$T/pfs/w.dat"
has "$ERR" "$T/pfs/w.dat: no log of this file was found"
run 0 "$BBLOG" replay "$T/multi" --job job-Z
same "$T/pfs/z.dat" "$T/z.dat"
[ -e "$T/pfs/x.dat" ] && fail "--job job-Z also replayed x.dat"
run 0 "$BBLOG" replay "$T/multi"
same "$T/pfs/x.dat" "$T/x.dat"
same "$T/pfs/y.dat" "$T/y.dat"
same "$T/pfs/z.dat" "$T/z.dat"

# ---- a rank without a log, and one stuck in its drain: reported, replayed
run 0 "$MKLOGS" --missing 2 --stuck 1 --tag m "$T/miss" "$T/pfs/m.dat" "$T/m.dat"
run 0 "$BBLOG" replay "$T/miss"
has "$OUT" "$T/pfs/m.dat: no log of rank 2 (of 4)"
has "$OUT" "$T/pfs/m.dat: ignored 1 log with nothing undrained"
same "$T/pfs/m.dat" "$T/m.dat"

# ---- status: crashed logs need replay (3), logs a live process holds are draining (2), a file
# without logs is drained (0); --wait returns once no process holds a log
mkdir -p "$T/st"
run 0 "$MKLOGS" --sync --job job-st --tag st "$T/st" "$T/pfs/st.dat" "$T/st.dat"
S0=$(sed -n 's/^log //p' "$OUT" | sed -n 1p)
run 3 "$BBLOG" status "$T/st"
has "$OUT" "$T/pfs/st.dat: job job-st set "
has "$OUT" ": replay_needed: 4 logs, "
has "$OUT" "run 'bblog replay $T/st --file $T/pfs/st.dat'"
run 3 "$BBLOG" status "$T/st" --json
has "$OUT" "\"file\": \"$T/pfs/st.dat\", \"job\": \"job-st\""
has "$OUT" "\"logs\": 4, \"live\": 0, "
has "$OUT" "\"state\": \"replay_needed\"}"
run 2 flock "$S0" "$BBLOG" status "$T/st" --file "$T/pfs/st.dat"
has "$OUT" ": draining: 4 logs, 1 held by live processes, "
run 0 "$BBLOG" status "$T/st" --file "$T/pfs/none.dat"
has "$OUT" "$T/pfs/none.dat: no logs: nothing pending"
# A holder that keeps rank 0's log locked until its fifo is closed; the status waits for it.
mkfifo "$T/hold" "$T/held"
flock "$S0" sh -c 'echo held >"$0"; cat "$1" >/dev/null' "$T/held" "$T/hold" &
holder=$!
read -r _ <"$T/held"
"$BBLOG" status "$T/st" --wait >"$T/wait.out" 2>&1 &
waiter=$!
exec 3>"$T/hold"
run 2 "$BBLOG" status "$T/st"
exec 3>&-
wait "$holder"
wait "$waiter"
got=$?
checks=$((checks + 1))
[ "$got" -eq 3 ] || fail "status --wait exited $got after the holder let go, expected 3"
grep -qF ": replay_needed: 4 logs" "$T/wait.out" || fail "status --wait did not report the end"
run 0 "$BBLOG" replay "$T/st"
same "$T/pfs/st.dat" "$T/st.dat"
run 1 "$BBLOG" status
run 1 "$BBLOG" status "$T/st" --frob

# ---- one log pair per node (bblog_mapping=node): each slot is one log; a torn slot, replay
run 0 "$MKLOGS" --node --job job-node --tag nd --torn 2 "$T/node" "$T/pfs/node.dat" \
    "$T/node-exp.dat"
N=$(sed -n 's/^log //p' "$OUT" | head -n 1)
[ "$(sed -n 's/^log //p' "$OUT" | sort -u | wc -l)" -eq 1 ] || fail "mklogs --node: not one pair"
[ "$(ls "$T/node" | wc -l)" -eq 2 ] || fail "mklogs --node: not two files"
run 0 "$BBLOG" ls "$T/node"
has "$OUT" "$N[slot 2]: file=$T/pfs/node.dat job=job-node rank=2/4 epoch=1 state=torn"
has "$OUT" "$N[slot 3]: file=$T/pfs/node.dat job=job-node rank=3/4"
has "$OUT" "(4 processes): 4 logs"
run 1 "$BBLOG" check "$N"
has "$OUT" "$N[slot 0]: clean:"
has "$OUT" "$N[slot 2]: torn:"
run 0 "$BBLOG" dump "$N"
has "$OUT" "node log pair of 4 slots"
run 0 "$BBLOG" dump --slot 1 "$N"
has "$OUT" "slot 1 of 4 of a node's log pair"
has "$OUT" "rank 1 of 4"
run 1 "$BBLOG" dump --slot 4 "$N"
run 1 "$BBLOG" dump --slot x "$N"
has "$ERR" "--slot wants a slot number"
run 0 "$BBLOG" replay "$T/node"
has "$OUT" "of 4 logs of job job-node (4 processes)"
same "$T/pfs/node.dat" "$T/node-exp.dat"

# ---- a job killed while opening its file: an empty .meta file under the driver's name
mkdir -p "$T/unborn"
H=$(python3 -c 'import sys
h = 0xcbf29ce484222325
for b in sys.argv[1].encode():
    h = ((h ^ b) * 0x100000001b3) % 2**64
print("%016x" % h)' "$T/pfs/unborn.dat") || fail "python3: no FNV-1a hash"
U=$T/unborn/job-U.$H.4242.0.n0.meta
: >"$U"
run 0 "$BBLOG" replay "$T/unborn" --file "$T/pfs/unborn.dat"
has "$OUT" "$U: empty: its creation did not finish"
has "$OUT" "$T/pfs/unborn.dat: nothing to replay: its 1 logs hold no undrained data"
[ -e "$T/pfs/unborn.dat" ] && fail "replay of an empty log created $T/pfs/unborn.dat"
run 0 "$BBLOG" check "$U"
has "$OUT" "$U: empty: its creation did not finish"
run 0 "$BBLOG" ls "$T/unborn"
has "$OUT" "$U: empty: its creation did not finish"
run 1 "$BBLOG" replay "$T/unborn" --file "$T/pfs/other.dat"
has "$ERR" "no log of this file was found"

# ---- replay in parts: a job's logs on two "nodes" (directories), each node replaying its own
# after the exchange of parts in a directory both see; the file is the one replay's
mkdir -p "$T/pn/a" "$T/pn/b" "$T/parts"
run 0 "$MKLOGS" --job job-P --tag p --seed 21 --stuck 1 "$T/pn" "$T/pfs/p.dat" "$T/p-exp.dat"
mv "$T/pn/p.r0."* "$T/pn/p.r3."* "$T/pn/a/" && mv "$T/pn/p.r"[12].* "$T/pn/b/" ||
    fail "moving the logs to the nodes failed"
"$BBLOG" replay "$T/pn/a" --job job-P --parts "$T/parts" --node a --wait 60 --min-run 0 \
    >"$T/a.out" 2>&1 &
apid=$!
run 0 "$BBLOG" replay "$T/pn/b" --job job-P --parts "$T/parts" --node b --wait 60 --min-run 0
wait $apid || fail "node a's replay in parts exited $?: $(cat "$T/a.out")"
has "$OUT" "$T/parts/b.part: this node's part: 1 file of job job-P"
has "$OUT" "$T/pfs/p.dat: in parts: ordered against 1 other node's part"
has "$T/a.out" "$T/pfs/p.dat: in parts: ordered against 1 other node's part"
has "$OUT" "$T/parts: the other nodes' parts: "
[ "$(readlink "$T/parts/recovery")" = parts ] || fail "the recovery was not decided in parts"
same "$T/pfs/p.dat" "$T/p-exp.dat"
# Again on one node (an epilog run twice): the decision stands, the same bytes.
run 0 "$BBLOG" replay "$T/pn/a" --job job-P --parts "$T/parts" --node a --wait 0
same "$T/pfs/p.dat" "$T/p-exp.dat"
# The same logs with the default --min-run: their runs average well under 32 KiB (small random
# writes), so the nodes decide to gather; nothing written.
cp "$T/pfs/p.dat" "$T/p-replayed.dat"
"$BBLOG" replay "$T/pn/a" --job job-P --parts "$T/fparts" --node a --wait 60 >"$T/a.out" 2>&1 &
apid=$!
run 4 "$BBLOG" replay "$T/pn/b" --job job-P --parts "$T/fparts" --node b --wait 60
wait $apid
[ $? = 4 ] || fail "node a did not follow the decision to gather: $(cat "$T/a.out")"
cat "$T/a.out" >>"$OUT"
has "$OUT" "$T/fparts: the nodes' bytes come in runs of "
[ "$(readlink "$T/fparts/recovery")" = gather ] || fail "finely cut bytes were not gathered"
same "$T/pfs/p.dat" "$T/p-replayed.dat"
run 1 "$BBLOG" replay "$T/pn/a" --job job-P --parts "$T/fparts" --min-run x
has "$ERR" "--min-run x: give a byte count"
# Node b's part gone: node a alone cannot know what wins; a fresh exchange that times out
# decides on gathering (exit 4), which a node arriving later follows; nothing is written.
mkdir -p "$T/gn/a" "$T/gn/b" "$T/gparts"
run 0 "$MKLOGS" --job job-G --tag g --seed 22 "$T/gn" "$T/pfs/g.dat" "$T/g-exp.dat"
mv "$T/gn/g.r0."* "$T/gn/a/" && mv "$T/gn/g.r"[123].* "$T/gn/b/" || fail "moving logs failed"
cp "$T/pfs/g.dat" "$T/g-drained.dat"
run 4 "$BBLOG" replay "$T/gn/a" --job job-G --parts "$T/gparts" --node a --wait 0.3
has "$OUT" "$T/gparts/recovery: the job's logs are to be gathered"
[ "$(readlink "$T/gparts/recovery")" = gather ] || fail "no decision to gather"
run 4 "$BBLOG" replay "$T/gn/b" --job job-G --parts "$T/gparts" --node b --wait 60
same "$T/pfs/g.dat" "$T/g-drained.dat"
run 0 "$BBLOG" replay "$T/gn/a" "$T/gn/b" --job job-G
same "$T/pfs/g.dat" "$T/g-exp.dat"
# The same rank on two nodes is refused before anything is decided.
mkdir -p "$T/dparts"
cp -r "$T/gn/b" "$T/gn/c"
run 4 "$BBLOG" replay "$T/gn/c" --job job-G --parts "$T/dparts" --node c --wait 0
rm "$T/dparts/recovery"
run 1 "$BBLOG" replay "$T/gn/b" --job job-G --parts "$T/dparts" --node b --wait 0
has "$ERR" "has logs on two nodes"
[ -e "$T/dparts/recovery" ] && fail "a refused exchange decided the recovery"
run 1 "$BBLOG" replay "$T/gn/b" --parts "$T/dparts"
has "$ERR" "--parts replays one job's logs in place: it needs --job"
run 1 "$BBLOG" replay "$T/gn/b" --job job-G --parts "$T/dparts" --dry-run
run 1 "$BBLOG" replay "$T/gn/b" --job job-G --parts "$T/dparts" --node a/b
has "$ERR" "--node a/b: give a name without '/'"
run 1 "$BBLOG" replay "$T/gn/b" --job job-G --parts "$T/dparts" --wait -1
has "$ERR" "--wait -1: give seconds"

# ---- usage errors
run 1 "$BBLOG"
run 1 "$BBLOG" frobnicate
has "$ERR" "unknown command 'frobnicate'"
run 1 "$BBLOG" replay
run 1 "$BBLOG" ls "$T/nonexistent"
has "$ERR" "$T/nonexistent"

toolcheck_end test_tool.sh
