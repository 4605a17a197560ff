#!/bin/bash
# Burst buffer full and injected I/O errors (issue 8). 4 ranks run fio (faultpat.h's workload:
# strided collective writes, a sync, independent writes, then rewrites of bytes still logged)
# through bblog, and each case checks: no hang (timeout), no crash (exit status 0, every rank
# finished), every error the program saw has an I/O class, and nothing reported written is
# missing: fcheck compares the file with the workload, after `bblog replay` when the job left
# logs behind.
#
# bbfull[SIZE]: bblog_dir on a tmpfs of SIZE the test mounts itself (root, private mount
#   namespace; if the mount fails, the case fails and says why). Also: no call fails at all,
#   the file equals plain ROMIO's (ufs leg) byte for byte, and no log is left. With default
#   hints the background drain makes room as the logs grow (bblog_high_water): nothing goes
#   straight to the PFS file and no warning is printed; with bblog_high_water=0 (hw0) the
#   burst buffer fills, and exactly one warning for the job names the directory.
# inject[...]: test/faults/bbfault.so (LD_PRELOAD; see bbfault.c) makes chosen calls fail with
#   EIO or ENOSPC or transfer half their bytes (or, once, land damaged: pfs-write-corrupt-verify,
#   which bblog_verify=true must catch at the sync): appends to the data log (libaio submit and
#   completion of staged appends, pwrite of those written from the caller's buffer), metadata
#   log writes, log reads during a drain (pread, and preadv of the node
#   exchange), the node exchange's open of other processes' logs and of their piece-list files
#   and the reads of those lists, PFS writes during a drain (from the drain buffer, and
#   straight from the mapped logs), and the same steps of the background drain's node batches
#   (bblog_mode=bb). The fault must have been injected (its log is not empty); a short
#   transfer must be absorbed (no error at all); EIO must come back as MPI_ERR_IO, ENOSPC as
#   MPI_ERR_NO_SPACE on every rank (the other ranks of a failed collective drain learn the
#   class at its commit), as a plain ROMIO write into a full file system reports it.
#
# Usage: run-faults.sh [PATTERN...]  only the cases whose name matches a shell pattern
# Environment: BBLOG_ENV_SCRIPT, BBLOG_TOOL, CI as for test/crash/run-crash.sh;
#   FAULT_TIMEOUT seconds per job before it counts as hung (default 60); FAULT_KEEP=1 keeps
#   the work directory.
# Exit: 0 all passed; 1 something failed; 77 skipped (no MPI and CI unset).
set -u

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
tmo=${FAULT_TIMEOUT:-60}
nprocs=4
patterns=("$@")

if [ "$env_script" = no ]; then
    echo "run-faults: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
if [ ! -r "$env_script" ]; then
    if [ -n "${CI:-}" ]; then
        echo "run-faults: no bblog MPI: $env_script not found (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-faults: no bblog MPI: $env_script not found; skipping"
    exit 77
fi
# shellcheck source=/dev/null
. "$env_script"
tool=${BBLOG_TOOL:-$PWD/tools/bblog}
cc=${CC:-cc}
for t in mpicc mpiexec timeout unshare cmp "$cc" "$tool"; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "run-faults: $t not found (the bblog command: build the core and run from its" \
             "build directory, or set BBLOG_TOOL)" >&2
        exit 1
    fi
done
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/faults/faultpat.h" ]; then
    src=$(cd "$srcdir/test/faults" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi
root=/dev/shm
[ -d "$root" ] && [ -w "$root" ] || root=${TMPDIR:-/tmp}
work=$(mktemp -d "$root/bblog-faults.XXXXXX") || exit 1
passed=0
failed=0
failures=
keep_work=
cleanup() {
    if [ -n "${FAULT_KEEP:-}" ] || [ "$failed" -gt 0 ]; then
        # Logs and messages stay for a look; the data files (up to 150 MB each) go unless
        # FAULT_KEEP asks for everything.
        [ -n "${FAULT_KEEP:-}" ] || find "$work" -name '*.out' -size +8M -delete
        echo "run-faults: work directory kept: $work"
    else
        rm -rf "$work"
    fi
}
trap cleanup EXIT

cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
# shellcheck disable=SC2086
if ! mpicc $cflags -I"$src" "$src/fio.c" -o "$work/fio" ||
    ! $cc $cflags -I"$src" "$src/fcheck.c" -o "$work/fcheck" ||
    ! mpicc $cflags -shared -fPIC "$src/bbfault.c" -o "$work/bbfault.so" -ldl; then
    echo "run-faults: cannot compile fio.c, fcheck.c or bbfault.c" >&2
    exit 1
fi
echo "run-faults: MPI $(command -v mpiexec), tool $tool, work in $work"

# shellcheck source=../runner-lib.sh
. "$src/../runner-lib.sh"

# run_job NAME TARGET NW T [ENV=VAL...] [-- WRAPPER...]: runs fio with fresh side, bb and pfs
# directories under $work/NAME; sets job_rc, dir.
run_job() {
    local name=$1 target=$2 nw=$3 t=$4
    shift 4
    local -a envs=() wrap=() genv=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    [ $# -gt 0 ] && shift && wrap=("$@")
    dir=$work/$name
    rm -rf "$dir"
    mkdir -p "$dir/side" "$dir/bb" "$dir/pfs"
    for e in "${envs[@]}"; do
        genv+=(-genv "${e%%=*}" "${e#*=}")
    done
    # shellcheck disable=SC2086
    "${wrap[@]}" timeout -k 5 "$tmo" mpiexec -launcher fork -n $nprocs -genv BBLOG_DIR "$dir/bb" \
        "${genv[@]}" "$work/fio" "${target//@/$dir}" "$dir/side" "$nw" "$t" overlap \
        >"$dir/job.log" 2>&1
    job_rc=$?
}

# Common checks after a job: sets why (problems so far) and errs (failed calls, one a line).
check_job() {
    local r
    why=
    if [ "$job_rc" = 124 ] || [ "$job_rc" = 137 ]; then
        why="hang: killed after $tmo s"
    elif [ "$job_rc" != 0 ]; then
        why="exit status $job_rc"
    fi
    for ((r = 0; r < nprocs; r++)); do
        if ! grep -qx done "$dir/side/res.$r" 2>/dev/null; then
            why="${why:+$why; }rank $r did not finish"
            break
        fi
    done
    errs=$(cat "$dir/side/res."* 2>/dev/null | grep -v '^done$')
}

# Replays what the job left (if anything) and checks the file; appends problems to why.
check_data() {
    local nw=$1 t=$2 logs
    logs=$(find "$dir/bb" -name '*.meta' 2>/dev/null | head -n 1)
    if [ -n "$logs" ] && ! "$tool" replay "$dir/bb" --file "$dir/pfs/target.out" \
        >"$dir/replay.log" 2>&1; then
        why="${why:+$why; }bblog replay of the logs left failed: $(tail -n 1 "$dir/replay.log")"
    fi
    if ! "$work/fcheck" "$dir/pfs/target.out" "$dir/side" $nprocs "$nw" "$t" overlap \
        >"$dir/check.log" 2>&1; then
        why="${why:+$why; }data reported written is missing: $(tail -n 1 "$dir/check.log")"
    fi
}

finish() { # NAME
    if [ -z "$why" ]; then
        report PASS "$1" $nprocs bblog
        [ -n "${FAULT_KEEP:-}" ] || rm -rf "$dir"
    else
        report FAIL "$1" $nprocs bblog "$why"
        [ -n "$errs" ] && echo "$errs" | cut -c 1-220 | head -n 8 | sed 's/^/    err: /'
        show_log "$dir/job.log"
        show_log "$dir/check.log"
    fi
}

# ---- burst buffer full -------------------------------------------------------------------
bbfull() { # SIZE [hw0]
    local size=$1 hw0=${2:-} name="bbfull[$1${2:+,$2}]" nw=256 t=40000 total mnt want=0
    local -a envs=(BBLOG_STATS="$work/$name.stats")
    [ -n "$hw0" ] && envs+=(BBLOG_HIGH_WATER=0) && want=1
    selected "$name" || return 0
    run_job "$name.ufs" "ufs:@/pfs/target.out" $nw $t
    if [ "$job_rc" != 0 ]; then
        why="the plain ROMIO reference run failed (exit $job_rc)"
        errs=
        finish "$name"
        return
    fi
    mv "$dir/pfs/target.out" "$work/ref.out"
    rm -rf "$dir"
    dir=$work/$name
    mkdir -p "$dir"
    # The mount is private to the job (its own mount namespace): nothing to unmount after.
    if ! unshare -m sh -c "mount -t tmpfs -o size=$size bblog-full '$dir' && umount '$dir'" \
        >"$work/mount.log" 2>&1; then
        why="cannot mount a tmpfs of $size for bblog_dir (this test needs root): \
$(head -n 1 "$work/mount.log")"
        errs=
        finish "$name"
        return
    fi
    rm -f "$work/$name.stats"
    run_job "$name" "bblog:@/pfs/target.out" $nw $t "${envs[@]}" -- \
        unshare -m sh -c 'mount -t tmpfs -o size="$0" bblog-full "$1/bb" && shift && exec "$@"' \
        "$size" "$work/$name"
    mnt=$dir/bb
    check_job
    if [ -n "$errs" ]; then
        why="${why:+$why; }calls failed although the burst buffer should only fill:\
$(echo "$errs" | sed 's/^write [0-9]* [01] /write /' | awk '{print $1, $2}' | sort | uniq -c |
  awk '{printf " %s on %d ranks with %s,", $2, $1, $3}')"
        why="${why%,} (a full burst buffer must be absorbed by draining or writing through: no \
call may fail for it, not even a later sync or close)"
    fi
    # tmpfs is gone with the namespace: logs the job left are not visible here any more, so
    # they are counted from the job's own message.
    if grep -q 'was not fully drained' "$dir/job.log"; then
        why="${why:+$why; }the job says logs were kept (not fully drained)"
    fi
    # hw0: one warning for the job, by the first process whose log hit the limit, naming the
    # directory; the others stay quiet. Default hints: none, the logs never outgrow the device.
    total=$(grep 'bblog: warning:' "$dir/job.log" | grep -c -F "burst buffer $mnt/bblog-")
    [ "$total" = "$want" ] || why="${why:+$why; }$total warnings naming $mnt ($want expected)"
    if [ -z "$hw0" ]; then
        why="${why:+$why; }$(python3 - "$work/$name.stats" <<'PY'
import json, sys
try:
    objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except (OSError, ValueError) as e:
    sys.exit("no bblog_stats (%s)" % e)
st = [o for o in objs if "bblog_stats" in o]
if not st:
    sys.exit("no bblog_stats object")
o = st[0]
if o.get("bytes_through", 1) != 0 or o.get("bytes_given_back", 0) <= 0:
    print("%s bytes went straight to the PFS file, %s given back: the background drain did "
          "not make room" % (o.get("bytes_through"), o.get("bytes_given_back")))
PY
)"
        why=${why%; }
    fi
    if ! cmp -s "$work/ref.out" "$dir/pfs/target.out"; then
        why="${why:+$why; }the file differs from plain ROMIO's"
        "$work/fcheck" "$dir/pfs/target.out" "$dir/side" $nprocs $nw $t overlap \
            >"$dir/check.log" 2>&1
    fi
    rm -f "$work/ref.out"
    finish "$name"
}

bbfull 2m   # no 4 MiB staging buffer fits
bbfull 12m  # 4 ranks x 4 MiB do not all fit
bbfull 2m hw0
bbfull 12m hw0

# ---- injected faults ---------------------------------------------------------------------
# inject NAME EXPECT NW T OP PATH ERR SKIP TIMES RANK SYNC [VAR=VALUE]...
#   EXPECT: absorb (no error may reach the caller), report (errors allowed, of the class ERR
#   maps to) or sync (as report, and MPI_File_sync must fail: with bblog_sync=bb, a sync after
#   a failed log write cannot have made the data durable)
inject() {
    local name="inject[$1]" expect=$2 nw=$3 t=$4 op=$5 path=$6 err=$7 skip=$8 times=$9
    local rank=${10} sync=${11} bad
    local -a extra=("${@:12}")
    local -a envs=(BBLOG_SYNC="$sync" LD_PRELOAD="$work/bbfault.so" BBFAULT_OP="$op"
                   BBFAULT_PATH="$path" BBFAULT_ERR="$err" BBFAULT_SKIP="$skip"
                   BBFAULT_TIMES="$times" BBFAULT_LOG="$work/$name/faults.log"
                   BBLOG_STATS="$work/$name.stats")
    selected "$name" || return 0
    [ "$rank" != all ] && envs+=(BBFAULT_RANK="$rank")
    envs+=("${extra[@]}")
    run_job "$name" "bblog:@/pfs/target.out" "$nw" "$t" "${envs[@]}"
    check_job
    if [ "$expect" = sync ] && ! echo "$errs" | grep -q '^sync '; then
        why="${why:+$why; }MPI_File_sync reported success although a write or flush before it failed"
    fi
    if [ ! -s "$dir/faults.log" ]; then
        why="${why:+$why; }the fault was never injected (nothing tested)"
    fi
    # want_stat KEY: the job's statistics (a file's, or its background drain's) must count at
    # least one of KEY (the path taken).
    if [ -n "${want_stat:-}" ] && ! python3 - "$work/$name.stats" "$want_stat" <<'PY'
import json, sys
try:
    objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except (OSError, ValueError):
    objs = []
sys.exit(0 if any(o.get(sys.argv[2], 0) > 0 for o in objs) else 1)
PY
    then
        why="${why:+$why; }no file's statistics count $want_stat"
    fi
    # want_none "KEY...": no file's statistics may count any of the KEYs.
    if [ -n "${want_none:-}" ] && ! python3 - "$work/$name.stats" "$want_none" <<'PY'
import json, sys
try:
    objs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
except (OSError, ValueError):
    objs = []
sys.exit(0 if objs and all(o.get(k, 0) == 0 for o in objs for k in sys.argv[2].split())
         else 1)
PY
    then
        why="${why:+$why; }the statistics count $want_none (or there are none)"
    fi
    if [ -n "$errs" ]; then
        if [ "$expect" = absorb ]; then
            why="${why:+$why; }an error reached the caller although it should be absorbed"
        else
            case $err in
            EIO) bad=$(echo "$errs" | grep -v -E '^[a-z]+( [0-9]+ [01])? MPI_ERR_IO ') ;;
            ENOSPC) bad=$(echo "$errs" | grep -v -E '^[a-z]+( [0-9]+ [01])? MPI_ERR_NO_SPACE ') ;;
            *) bad=$(echo "$errs" | grep -v -E '^[a-z]+( [0-9]+ [01])? MPI_ERR_(IO|NO_SPACE) ') ;;
            esac
            [ -n "$bad" ] && why="${why:+$why; }wrong error class: $(echo "$bad" | head -n 1 |
                                                                  cut -c 1-160)"
        fi
    fi
    if [[ $why == hang* && $name == *pfs-* ]]; then
        why="$why (after the failed PFS write, some rank still waited in an exchange of the \
drain that the others had left: a failed write must end the drain on every rank)"
    fi
    [ "$job_rc" = 124 ] || [ "$job_rc" = 137 ] || check_data "$nw" "$t"
    local injected reported
    injected=$(wc -l <"$dir/faults.log" 2>/dev/null || echo 0)
    reported=$(echo -n "$errs" | grep -c .)
    finish "$name"
    echo "    faults injected: $injected; errors reported: $reported"
}

small="256 40000"       # 5 MB per rank and phase: one 4 MiB staging buffer written per phase
# Appends under 4 KiB go through the staging buffers and libaio; from 4 KiB up they are written
# from the caller's buffer with pwrite where the log has no O_DIRECT, as on /dev/shm (log.c).
staged="2560 4000"      # the same 5 MB per rank and phase in appends under 4 KiB
large="512 72000"       # 18 MB per phase: more than the 16 MiB of staging, drains read the log
# shellcheck disable=SC2086
{
inject log-aio-eio       report $staged aio_complete .data EIO    0 1 1   pfs
inject log-aio-enospc    report $staged aio_complete .data ENOSPC 0 1 all pfs
inject log-aio-short     absorb $staged aio_complete .data short  0 0 all pfs
inject log-aio-eio-bb    sync   $staged aio_complete .data EIO    0 1 1   bb
inject log-submit-eio    report $staged aio_submit   .data EIO    0 1 2   pfs
inject log-write-eio     report $small pwrite       .data EIO    0 1 1   pfs
inject log-write-enospc  report $small pwrite       .data ENOSPC 0 1 all pfs
inject log-write-short   absorb $small pwrite       .data short  0 0 all pfs
inject log-meta-hdr-eio  report $small pwrite       .meta EIO    0 1 1   pfs
inject log-meta-rec-eio  report $small pwrite       .meta EIO    1 0 1   bb
# The burst buffer here is on /dev/shm, where a one-node drain writes the PFS straight from
# the mapped logs (pwritev, the pfs-write cases below); BBLOG_DEBUG_NO_MAP=1 makes it read
# the logs into its buffer first, as on a burst buffer on a device.
nomap=BBLOG_DEBUG_NO_MAP=1
inject drain-read-eio    report $large pread        .data EIO    0 1 1   pfs $nomap
inject drain-read-eio-all report $large pread       .data EIO    0 0 1   pfs $nomap
inject drain-read-short  absorb $large pread        .data short  0 0 all pfs $nomap
# The drain's node exchange: one rank cannot open the other processes' logs; it writes none of
# its chunks and says so at the commit, the drain is made again through MPI
# (drains_again_through_mpi in the statistics), and nobody sees an error.
want_stat=drains_again_through_mpi
inject node-open-eio     absorb $large open         .data EIO    0 1 1   pfs
want_stat=
# The piece lists of a round pass through list files on the burst buffer, and the node's first
# process leaves every process's part of the round in its own: one rank cannot open the first's
# (the round's lists then go through MPI, nobody sees an error), or cannot read its part there
# (that rank fails the drain on all ranks; the logs stay and replay completes the file); the
# first process cannot read another's list or write the parts (it says so in the round's
# broadcast: every rank fails the drain, replay completes the file).
inject node-list-open-eio absorb $large open        .list EIO    0 1 1   pfs
inject node-list-read-eio report $large pread       .list EIO    0 1 1   pfs
inject node-cut-read-eio report $large pread        .list EIO    0 1 0   pfs
inject node-cut-write-eio report $large pwrite      .list EIO    0 1 0   pfs
inject pfs-write-short   absorb $small pwrite  target.out short  0 0 all pfs
# One rank's write fails: BBLOG_DEBUG_STATIC_CHUNKS=1 gives rank 0 its equal run of each round's
# chunks, so that it writes at all (taking chunks in turn, a slow rank 0 may get none).
static=BBLOG_DEBUG_STATIC_CHUNKS=1
inject pfs-write-eio     report $small pwrite  target.out EIO    0 1 0   pfs $static
inject pfs-write-enospc-all report $small pwrite target.out ENOSPC 0 0 all pfs
inject pfs-write-eio-nomap report $small pwrite target.out EIO    0 1 0   pfs $nomap $static
inject pfs-write-short-nomap absorb $small pwrite target.out short 0 0 all pfs $nomap
# Writes of 1 MiB go straight to the PFS file; rank 1's flush of it at the sync fails. A rank
# with nothing logged flushes before the drain's agreement (ad_bblog_flush.c), and the sync
# must still report the failure after the drain (whose own flush, made again, succeeds).
# When every flush of rank 1 fails, the drain's too, rank 1 still starts the write-through
# epoch that the sync's agreement starts on every process (else the next sync hangs).
# Every write of a 1 MiB piece straight to the PFS file fails: the statistics count no byte
# written through (bytes_through and writes_through count what reached the file).
want_none="bytes_through writes_through"
inject pfs-through-eio   report 8 1048576 pwrite   target.out EIO    0 0 all pfs
want_none=
inject pfs-fsync-eio     sync   8 1048576 fsync    target.out EIO    0 1 1   pfs
inject pfs-fsync-eio-all sync   8 1048576 fsync    target.out EIO    0 0 1   pfs
# Silent damage: the first PFS write of each rank lands with its first byte inverted. With bblog_verify=true
# the drain reads back what it wrote, finds it, and fails the sync; the logs stay, and the
# replay of what was left makes the file whole (check_data).
inject pfs-write-corrupt-verify sync $small pwrite target.out corrupt 0 1 all pfs BBLOG_VERIFY=true
# Node batches of the background drain (bblog_mode=bb; phase A's interleaved 40000-byte pieces
# form them, ad_bblog_bg_batch.c). Rank 1 cannot open the others' piece lists (the batch fails for
# every process and each drains its own pieces), or cannot read them (it waits until the chunks
# the others took are written, then writes all its pieces again), or cannot open another
# process's log for a chunk, or a chunk's PFS write fails (the chunk fails, its owners keep its
# bytes for a later drain). Nothing reaches the caller, nothing is lost. The list cases pick
# their files by the pattern alone: "." as the path (which inject requires) matches every path.
lists=BBFAULT_GLOB='*.r[0-9]*.b[0-9]*'
want_stat=batches
inject batch-list-open-eio absorb $small open   .          EIO    0 1 1   bb BBLOG_MODE=bb "$lists"
inject batch-list-read-eio absorb $small pread  .          EIO    0 1 1   bb BBLOG_MODE=bb "$lists"
want_stat=batch_chunks
inject batch-data-open-eio absorb $small open   .data      EIO    0 1 1   bb BBLOG_MODE=bb
inject batch-pfs-write-eio absorb $small pwrite target.out EIO    0 1 1   bb BBLOG_MODE=bb
want_stat=
}

# ---- failed collective calls -------------------------------------------------------------
# coll SET N every|once [VAR=VALUE]...: the driver's Nth collective call (counted from the open;
# BBLOG_DEBUG_FAIL_COLL, bblog(7)) fails on every process, after it completed, with its output
# overwritten; with "every", every one after it too (a communicator that stays broken). No
# hang, no crash, every error reported is MPI_ERR_OTHER (or MPI_ERR_IO, the class a drain that
# failed on another process reports); with "every" at least one call reports one. An open that
# fails must fail on every process (nothing was written then); otherwise what was reported
# written is in the file, after `bblog replay` where the job left logs.
coll() {
    local set=$1 nth=$2 mode=$3 name="coll[$1,$2,$3]" bad every=0 opens
    shift 3
    selected "$name" || return 0
    [ "$mode" = every ] && every=1
    # shellcheck disable=SC2086
    run_job "$name" "bblog:@/pfs/target.out" $small BBLOG_SYNC=pfs \
        BBLOG_DEBUG_FAIL_COLL="$nth" BBLOG_DEBUG_FAIL_COLL_ALL=$every "$@"
    check_job
    if ! grep -q "BBLOG_DEBUG_FAIL_COLL: collective call $nth " "$dir/job.log"; then
        why="${why:+$why; }the job made fewer than $nth collective calls (nothing tested)"
    fi
    bad=$(echo "$errs" | grep . | grep -v -E '^[a-z]+( [0-9]+ [01])? MPI_ERR_(OTHER|IO) ')
    [ -n "$bad" ] && why="${why:+$why; }wrong error class: $(echo "$bad" | head -n 1 |
                                                          cut -c 1-160)"
    if [ "$every" = 1 ] && [ -z "$errs" ]; then
        why="${why:+$why; }every collective call from the ${nth}th failed, and no call said so"
    fi
    opens=$(echo "$errs" | grep -c '^open ')
    if [ "$opens" != 0 ] && [ "$opens" != "$nprocs" ]; then
        why="${why:+$why; }the open failed on $opens of $nprocs processes"
    elif [ "$opens" = 0 ] && [ "$job_rc" != 124 ] && [ "$job_rc" != 137 ]; then
        check_data $small
    fi
    finish "$name"
}

# Every call of the job: its open's agreements, its sync's drain, the close's; the planning
# points, batches and background drains of bblog_mode=bb; the node exchange's split barrier,
# counts and the broadcast of its parts between pseudo-nodes of 2 processes. (The job makes 11, 29 and 36 calls.)
for n in $(seq 1 11); do
    coll pfs "$n" once
    coll pfs "$n" every
done
for n in $(seq 1 29); do
    coll bb "$n" once BBLOG_MODE=bb
    coll bb "$n" every BBLOG_MODE=bb
done
for n in $(seq 1 36); do
    coll nodes "$n" once BBLOG_DEBUG_NODE_SIZE=2
    coll nodes "$n" every BBLOG_DEBUG_NODE_SIZE=2
done

echo "run-faults: $passed passed, $failed failed"
[ -z "$failures" ] || echo "run-faults: failures:$failures"
[ "$failed" = 0 ]
