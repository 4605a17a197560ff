#!/bin/bash
# Crash and replay harness (issue 8): kills bblog jobs with SIGKILL at random moments, replays
# their logs with `bblog replay`, and checks that nothing acknowledged was lost.
#
# crashwrite (4 ranks, crashpat.h's schedule: overlapping rewrites across steps, a sync every
# 2 steps, each rank recording the step its last completed sync acknowledged) runs through
# bblog: with bblog_sync=pfs and bblog_sync=bb, a 64 KiB flush buffer (several drain rounds per
# sync), and as mode bbcap with bblog_sync=bb and bblog_max_size=128k (a burst buffer much
# smaller than the data: the background drain trims the logs while the job runs, and replay must
# skip what lies below each log's trim point). First one complete run per mode (the file must
# be exactly the schedule's last writes), and in modes pfs and bb with one log pair per node
# (bblog_mapping=node: complete[pfs,node], complete[bb,node]); then --runs killed runs,
# alternating the mode, the mapping and the kill: the whole job (SIGKILL to mpiexec's process
# group: mpiexec, proxy and ranks at once) or one random rank (SIGKILL to its pid; mpiexec then
# tears the others down). The kill moment follows the job's progress, not the
# clock (the machine may be loaded): a random sync j of the job is picked, and the kill comes a
# random 0-100 ms after rank 0 acknowledged it; j = 0 is 0-400 ms after every rank is about to
# open the file, and j past the last sync is 0-1500 ms after it (the drain of close, and the
# time after the end). After each kill:
#   - `bblog replay BBDIR --file PFS` succeeds (when logs are left), and crashcheck finds every
#     byte at its last acknowledged value or a newer value written to it, never anything else;
#   - replaying a second time changes no byte (idempotence);
#   - replay refuses, writing nothing, --file of another path, --job of another job, and a log
#     directory that also holds a log of another (killed) job of the same file.
# Deterministic cases: trim-superseded[bbcap] and pair-empty[bb,node] (below), and
# drain-commit[bb]: with bblog_sync=bb, rank 1 dies (SIGKILL from test/faults/bbfault.so) in the
# drain of close just before it marks its log drained, after rank 0 marked its own: replay must
# not put rank 1's older bytes back over what other ranks wrote later and the completed drain
# put on the PFS.
#
# On the emulated cluster (MPITEST_CLUSTER=HOSTS, test/cluster-lib.sh): the job runs across the
# nodes, the file and the side directory on the cluster's PFS, each node's logs on its own burst
# buffer; the kill of one rank becomes the kill of one node's ranks (those of the last node), and
# after each kill the job's logs are replayed in parts (bblog replay --parts: every node its own
# logs, in place, after the exchange of the records' metadata) and must give the bytes that one
# replay of every node's logs copied into one directory on the PFS gives (a replay per node
# without the parts would order overlapping writes of two nodes wrongly). On a
# cluster whose nodes share one burst buffer (scripts/cluster.sh up --shared-bb) the jobs run
# with bblog_shared_bb=true and n1, where the runner is, replays the logs in place (the node
# whose ranks are killed is the last).
# drain-commit[bb] needs its two ranks on one node and runs off the cluster only. One case runs
# on the cluster only, drain-death[pfs]: rank 2, an aggregator of ROMIO's two-phase write on a
# node of its own, dies at its first write to the PFS file (the drain of the first sync); no
# other rank may return from that sync with success, and the replay must leave every
# acknowledged byte right.
#
# Usage: run-crash.sh [--runs N] [--seed S] [--steps N] [--keep]
#   --runs N   killed runs (default 24); --seed S: random seed (default: time; printed);
#   --steps N  steps per job (default 32 with bblog_sync=pfs, whose syncs drain, and 96 with
#              bb, whose syncs are quick); --keep: keep the work directory.
# Environment:
#   BBLOG_ENV_SCRIPT  the bblog MPI's environment script ("no": not configured, skip 77);
#                     default /var/cache/bblog/current/bin/bblog-env.sh
#   BBLOG_TOOL        the bblog command (default tools/bblog of the build directory, $PWD)
#   CI                when set, a missing MPI or tool is a failure, not a skip
#   CRASH_WORK        where the work directory goes (default /dev/shm, else TMPDIR)
#   CRASH_TIMEOUT     seconds a job may take before it counts as hung (default 120)
#   CRASH_ONLY        MODE,KIND,J: every killed run the same, to reproduce a failure: the
#                     mode (pfs|bb|bbcap), the kill (job|rank; rank is node on the cluster) and the
#                     sync j (0: after the open; as in the run's name kill[I,MODE,KIND@sync J+..]);
#                     the delay after it stays random. E.g. pfs,rank,1
#   CRASH_MAPPING     process|node: every killed run with that bblog_mapping (default: the even
#                     runs with node, one log pair per node, the odd ones with process)
#   MPITEST_CLUSTER   HOSTS: run on the emulated cluster (above)
# Exit: 0 all passed; 1 something failed; 77 skipped (no MPI and CI unset).
set -u
# shellcheck source=../cluster-lib.sh
. "$(dirname "$0")/../cluster-lib.sh"

runs=24
seed=$(date +%s)
steps=
keep=
while [ $# -gt 0 ]; do
    case $1 in
    --runs) runs=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --steps) steps=$2; shift 2 ;;
    --keep) keep=1; shift ;;
    *) echo "run-crash: unknown argument $1 (usage: run-crash.sh [--runs N] [--seed S]" \
            "[--steps N] [--keep])" >&2; exit 1 ;;
    esac
done
case $runs${steps:-0} in
*[!0-9]*|'') echo "run-crash: --runs and --steps take numbers" >&2; exit 1 ;;
esac
declare -A nsteps=([pfs]=${steps:-32} [bb]=${steps:-96} [bbcap]=${steps:-96})
case $seed in *[!0-9]*|'') echo "run-crash: --seed takes a number" >&2; exit 1 ;; esac

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
[ "${CLUSTER_BB_KIND:-}" = shared ] && export BBLOG_SHARED_BB=true
tmo=${CRASH_TIMEOUT:-120}
only=${CRASH_ONLY:-}
case $only in
''|pfs,job,[0-9]*|pfs,rank,[0-9]*|bb,job,[0-9]*|bb,rank,[0-9]*|bbcap,job,[0-9]*|bbcap,rank,[0-9]*) ;;
*) echo "run-crash: CRASH_ONLY=$only: expected MODE,KIND,J (pfs|bb|bbcap, job|rank, a sync" \
        "number)" >&2
   exit 1 ;;
esac
nprocs=4

if [ "$env_script" = no ]; then
    echo "run-crash: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
if [ ! -r "$env_script" ]; then
    if [ -n "${CI:-}" ]; then
        echo "run-crash: no bblog MPI: $env_script not found (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-crash: no bblog MPI: $env_script not found; skipping"
    exit 77
fi
# shellcheck source=/dev/null
. "$env_script"
cl_mpi
tool=${BBLOG_TOOL:-$PWD/tools/bblog}
for t in mpicc mpiexec setsid timeout cmp "$tool"; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "run-crash: $t not found (the bblog command: build the core and run from its" \
             "build directory, or set BBLOG_TOOL)" >&2
        exit 1
    fi
done

if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/crash/crashpat.h" ]; then
    src=$(cd "$srcdir/test/crash" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi
root=${CRASH_WORK:-/dev/shm}
[ -n "$cl_nodes" ] && root=$CLUSTER_PFS
[ -d "$root" ] && [ -w "$root" ] || root=${TMPDIR:-/tmp}
work=$(mktemp -d "$root/bblog-crash.XXXXXX") || exit 1
ompi_sessions "$work/ompi" || exit 1
bb=$work/bb                 # the burst buffer; on the cluster, a directory on every node's own
[ -n "$cl_nodes" ] && bb=$CLUSTER_BB/${work##*/}
cleanup() {
    if [ -n "$keep" ] || [ "$failed" -gt 0 ]; then
        echo "run-crash: work directory kept: $work${cl_nodes:+ (logs in $bb on each node)}"
    else
        rm -rf "$work"
        all_nodes rm -rf "$bb"
    fi
}
passed=0
failed=0
trap cleanup EXIT

cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
for p in crashwrite crashcheck captrim; do
    # shellcheck disable=SC2086
    if ! mpicc $cflags -I"$src" "$src/$p.c" -o "$work/$p"; then
        echo "run-crash: cannot compile $p.c" >&2
        exit 1
    fi
done
# shellcheck disable=SC2086
if ! ${CC:-cc} $cflags -shared -fPIC "$src/../faults/bbfault.c" -o "$work/bbfault.so" -ldl; then
    echo "run-crash: cannot compile ../faults/bbfault.c" >&2
    exit 1
fi

RANDOM=$seed
echo "run-crash: seed $seed, $runs killed runs of $nprocs ranks, ${nsteps[pfs]} steps with" \
    "bblog_sync=pfs, ${nsteps[bb]} with bb; work in $work"
echo "run-crash: MPI $(command -v mpiexec), tool $tool"

ms() { echo $(( $(date +%s%N) / 1000000 )); }
# A random integer in [0, $1).
rnd() { echo $(( (RANDOM * 32768 + RANDOM) % $1 )); }

pfs=$work/pfs/crash.out     # one path for all runs: logs of earlier jobs name it too
mkdir -p "$work/pfs" "$work/prev"

# launch MODE JOBID [MAPPING]: starts crashwrite in its own session (its pid is the process
# group id), with fresh side and burst-buffer directories, logs per process or per node
# (bblog_mapping, default process); sets job_pid, steps.
launch() {
    local mode=$1 id=$2 mapping=${3:-process}
    rm -rf "$work/side" "$pfs" "$pfs".*
    # the session directory of the job killed before, if Open MPI's (all its processes are gone)
    [ -z "$ompi_base" ] || rm -rf "${ompi_base:?}"/*
    mkdir -p "$work/side"
    all_nodes rm -rf "$bb"
    all_nodes mkdir -p "$bb"
    steps=${nsteps[$mode]}
    local max=0
    [ "$mode" = bbcap ] && max=128k
    BBLOG_DIR=$bb BBLOG_SYNC=${mode%cap} BBLOG_MAX_SIZE=$max BBLOG_FLUSH_BUFFER_SIZE=64k \
        BBLOG_JOB_ID=$id BBLOG_MAPPING=$mapping \
        setsid mpiexec "${cl_launch[@]}" -n $nprocs "$work/crashwrite" "bblog:$pfs" "$work/side" \
        "$steps" >"$work/job.log" 2>&1 &
    job_pid=$!
}

# Waits until every rank wrote its pid file (it is about to open the file) or the job ended;
# sets t_ready.
wait_ready() {
    local r
    for ((r = 0; r < nprocs; r++)); do
        while [ ! -s "$work/side/pid.$r" ] && kill -0 "$job_pid" 2>/dev/null; do
            sleep 0.01
        done
    done
    t_ready=$(ms)
}

# The step rank $1 last recorded as acknowledged (-1: none yet).
ack_of() {
    local a
    a=$(od -An -t d8 "$work/side/ack.$1" 2>/dev/null | tr -d ' ')
    echo "${a:--1}"
}

# Waits for the job (mpiexec) to end, at most $1 seconds; then kills what is left of its process
# group and reaps it. Sets job_rc (137 when it had to be killed) and job_hung.
reap() {
    local limit=$1 t0
    t0=$(ms)
    job_hung=0
    while kill -0 "$job_pid" 2>/dev/null && [ $(( $(ms) - t0 )) -lt $((limit * 1000)) ]; do
        sleep 0.05
    done
    if kill -0 "$job_pid" 2>/dev/null; then
        job_hung=1
        kill -KILL -- "-$job_pid" 2>/dev/null
    fi
    # A killed job was disowned (no "Killed" notice from bash): wait then only reaps nothing.
    wait "$job_pid" 2>/dev/null
    job_rc=$?
    # Ranks are in the group too; none may still be writing when replay starts.
    while pgrep -g "$job_pid" >/dev/null 2>&1; do
        kill -KILL -- "-$job_pid" 2>/dev/null
        sleep 0.01
    done
    # hydra's proxies run in sessions of their own (on the cluster, on other nodes): each rank,
    # by the pid it recorded, while it is still a crashwrite.
    local f p
    for f in "$work"/side/pid.*; do
        p=$(cat "$f" 2>/dev/null) || continue
        while tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -q crashwrite; do
            kill -KILL "$p" 2>/dev/null
            sleep 0.01
        done
    done
}

result() { # NAME WHY... (empty WHY: pass)
    local name=$1
    shift
    if [ -z "$*" ]; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name: $*"
        sed 's/^/    | /' "$work/check.log" 2>/dev/null | head -n 30
        tail -n 8 "$work/job.log" | sed 's/^/    job| /'
        mkdir -p "$work/failed/$name"
        cp -a "$work/side" "$work/job.log" "$work/check.log" "$work/failed/$name/" 2>/dev/null
        all_nodes sh -c "d='$work/failed/$name/bb.'\$(hostname) && mkdir -p \"\$d\" &&
            cp -a '$bb/.' \"\$d/\"" 2>/dev/null
        cp "$pfs" "$work/failed/$name/" 2>/dev/null
    fi
}

# Complete runs: the reference time per mode, and the file after a clean close.
declare -A t_full
for run in pfs bb bbcap pfs,node bb,node; do
    mode=${run%,node}
    mapping=process
    [ "$run" = "$mode" ] || mapping=node
    name="complete[$run]"
    launch "$mode" "crash-full-${run/,/-}-$$" "$mapping"
    wait_ready
    reap "$tmo"
    t_full[$mode]=$(( $(ms) - t_ready ))
    why=
    [ "$job_hung" = 1 ] && why="did not finish in $tmo s"
    [ "$job_rc" != 0 ] && [ -z "$why" ] && why="exit status $job_rc"
    : >"$work/check.log"
    if [ -z "$why" ] && ! "$work/crashcheck" "$pfs" $nprocs "$steps" "${mode%cap}" "$work/side" \
        >"$work/check.log" 2>&1; then
        why="the file after a clean close is wrong"
        [ "${mode%cap}" = bb ] && why="$why (with bblog_sync=bb every byte reaches the PFS in the \
close drain: where ranks' writes overlap, the write with the highest stamp must win)"
    fi
    left=$(all_nodes find "$bb" -type f | head -n 3)
    [ -n "$left" ] && why="${why:+$why; }logs left after a clean close: $(echo $left)"
    result "$name" "$why"
    echo "run-crash: complete run, bblog_sync=$mode, bblog_mapping=$mapping: ${t_full[$mode]} ms" \
        "from ready to the end"
done

# replay_all ARGS...: `bblog replay ... ARGS` over every log the job left, into check.log. On the
# cluster the logs of every node are first copied into one directory on the PFS (a replay per
# node would order each node's records among themselves only, and could put one node's older
# bytes over another's newer ones where their ranks wrote the same bytes): one replay there.
replay_all() {
    local from=$bb
    if [ -n "$cl_nodes" ] && [ "${CLUSTER_BB_KIND:-}" != shared ]; then
        from=$work/gathered
        rm -rf "$from"
        mkdir -p "$from"
        all_nodes cp -a "$bb/." "$from/" || return 1
    fi
    "$tool" replay "$from" "$@" >>"$work/check.log" 2>&1
}

# in_parts: whether the killed runs replay in parts (a cluster with node-local burst buffers).
in_parts() {
    [ -n "$cl_nodes" ] && [ "${CLUSTER_BB_KIND:-}" != shared ]
}

# replay_parts JOB: the job's logs replayed in parts (`bblog replay --parts`), every node its own
# logs in place, all nodes at once, into check.log. Fails when a node's replay fails.
replay_parts() {
    local parts=$work/parts.$1 node pids=() rc=0
    rm -rf "$parts"
    mkdir -p "$parts"
    for node in $cl_nodes; do
        "$cluster_sh" exec "$node" "$tool" replay "$bb" --job "$1" --file "$pfs" --parts "$parts" \
            --node "$node" --wait 60 --min-run 0 >"$work/parts.$node.log" 2>&1 &
        pids+=($!)
    done
    for node in "${pids[@]}"; do
        wait "$node" || rc=1
    done
    for node in $cl_nodes; do
        sed "s/^/$node: /" "$work/parts.$node.log" >>"$work/check.log"
    done
    return $rc
}

# drain-commit[bb]: the kill between two ranks' marks of the close drain (see the top).
name="drain-commit[bb]"
if [ -n "$cl_nodes" ]; then
    echo "NOTE $name: not on the cluster (its two ranks must share a node)"
else
steps=${nsteps[bb]}
rm -rf "$work/side" "$bb" "$pfs"
mkdir -p "$work/side" "$bb"
BBLOG_DIR=$work/bb BBLOG_SYNC=bb BBLOG_FLUSH_BUFFER_SIZE=64k BBLOG_JOB_ID=crash-commit-$$ \
    BBFAULT_OP=pwrite BBFAULT_PATH=.meta BBFAULT_OFF=0 BBFAULT_SKIP=1 BBFAULT_ERR=kill \
    BBFAULT_RANK=1 BBFAULT_PEER=0 BBFAULT_LOG=$work/commit.faults \
    LD_PRELOAD=$work/bbfault.so timeout -k 5 "$tmo" mpiexec "${cl_launch[@]}" -n $nprocs \
    "$work/crashwrite" "bblog:$pfs" "$work/side" "$steps" >"$work/job.log" 2>&1
why=
: >"$work/check.log"
if ! grep -q 'after the peer marked its log drained' "$work/commit.faults" 2>/dev/null; then
    why="the kill did not happen between the two marks: $(cat "$work/commit.faults" 2>/dev/null)"
else
    cp "$pfs" "$work/before" 2>/dev/null || : >"$work/before"
    "$tool" replay "$bb" --file "$pfs" >>"$work/check.log" 2>&1 ||
        why="bblog replay failed"
    if ! "$work/crashcheck" "$pfs" $nprocs "$steps" bb "$work/side" "$work/before" \
        >>"$work/check.log" 2>&1; then
        broken=$(sed -n 's/^crashcheck: \([0-9]*\) bytes were right before the replay.*/\1/p' \
                 "$work/check.log")
        why="${why:+$why; }acknowledged data lost after replay (the replay broke ${broken:-?}"
        why="$why bytes that were right before it: replay applied a dead rank's drained"
        why="$why records, see drained_gen in logfs/bblog_format.h)"
    fi
fi
result "$name" "$why"
fi

# pair-empty[bb,node]: with one log pair per node and bblog_sync=bb (each sync writes the
# records), rank 1 dies in the drain of close while it empties its slot, after the slot's header
# took the next epoch and its payloads were punched, before its records were zeroed (logfs/log.c,
# log_empty): the kill comes at the fallocate that zeroes the records. Those records point at
# holes; they were drained, and replay must take them for that, not for damage (a random kill of
# the bbcap mode landed in this window once).
name="pair-empty[bb,node]"
if [ -n "$cl_nodes" ]; then
    echo "NOTE $name: not on the cluster (a kill of one rank there is a kill of a node's ranks)"
else
steps=${nsteps[bb]}
rm -rf "$work/side" "$bb" "$pfs" "$work/pair.faults"
mkdir -p "$work/side" "$bb"
BBLOG_DIR=$work/bb BBLOG_SYNC=bb BBLOG_MAPPING=node BBLOG_JOB_ID=crash-pair-$$ \
    BBFAULT_OP=fallocate BBFAULT_PATH=.meta BBFAULT_ERR=kill BBFAULT_RANK=1 \
    BBFAULT_LOG=$work/pair.faults \
    LD_PRELOAD=$work/bbfault.so timeout -k 5 "$tmo" mpiexec "${cl_launch[@]}" -n $nprocs \
    "$work/crashwrite" "bblog:$pfs" "$work/side" "$steps" >"$work/job.log" 2>&1
why=
: >"$work/check.log"
slot1=$("$tool" dump --slot 1 "$(find "$bb" -name '*.n0.meta' | head -1)" 2>&1)
if [ ! -s "$work/pair.faults" ]; then
    why="rank 1 never emptied its slot: no fault was injected"
elif ! grep -q '^epoch 1$' <<<"$slot1" || ! grep -Eq '^(record seq=|DAMAGED)' <<<"$slot1"; then
    why="rank 1's slot did not take the next epoch with its records left: the case tests nothing"
else
    "$tool" replay "$bb" --file "$pfs" >>"$work/check.log" 2>&1 ||
        why="bblog replay failed (drained records whose payloads were punched taken for damage)"
    "$work/crashcheck" "$pfs" $nprocs "$steps" bb "$work/side" >>"$work/check.log" 2>&1 ||
        why="${why:+$why; }acknowledged data lost or garbage after replay"
fi
result "$name" "$why"
fi

# trim-superseded[bbcap]: rank 0 gives back the log space of acknowledged bytes that the last
# rank overwrote later, in a write no sync acknowledged, and the job dies (captrim.c). The newer
# write must have been durable before rank 0 let its bytes go: after the replay the bytes hold
# the acknowledged value or the newer one, never what the PFS file held before either.
name="trim-superseded[bbcap]"
rm -rf "$work/side" "$pfs" "$pfs".*
mkdir -p "$work/side"
all_nodes rm -rf "$bb"
all_nodes mkdir -p "$bb"
BBLOG_DIR=$bb BBLOG_SYNC=bb BBLOG_MAX_SIZE=256k BBLOG_JOB_ID=crash-trim-$$ \
    timeout -k 5 "$tmo" mpiexec "${cl_launch[@]}" -n $nprocs "$work/captrim" "bblog:$pfs" \
    "$work/side" "$bb" >"$work/job.log" 2>&1
why=
: >"$work/check.log"
if [ ! -s "$work/side/trimmed" ]; then
    why="rank 0 never gave back the log space of its first bytes: the case tests nothing"
elif ! replay_all --file "$pfs"; then
    why="bblog replay failed"
else
    bad=$(head -c 65536 "$pfs" | tr -d '\252\273' | wc -c)
    short=$((65536 - $(head -c 65536 "$pfs" | wc -c)))
    [ "$bad" = 0 ] ||
        why="after the replay $bad of the first 64 KiB hold neither the acknowledged 0xaa nor the newer 0xbb"
    [ "$short" = 0 ] || why="${why:+$why; }the file ends $short bytes before 64 KiB"
fi
result "$name" "$why"

# drain-death[pfs]: on the cluster, rank 2 (an aggregator of ROMIO's two-phase write on a node
# of its own) dies at its first write to the PFS file, in the drain of the first sync. The
# other processes must not return from that sync with success: MPI may complete their
# collective calls without the dead process (MPICH's ch3 did, and its two-phase exchange went
# on without its data), and a sync that succeeded there acknowledged bytes that never reached
# the PFS (ad_bblog_drain_agree.c, Drain_check).
name="drain-death[pfs]"
if [ -z "$cl_nodes" ]; then
    echo "NOTE $name: only on the cluster (off it the drain of one node writes no aggregator's domain)"
else
steps=${nsteps[pfs]}
rm -rf "$work/side" "$pfs" "$work/death.faults"
mkdir -p "$work/side"
all_nodes rm -rf "$bb"
all_nodes mkdir -p "$bb"
BBLOG_DIR=$bb BBLOG_SYNC=pfs BBLOG_FLUSH_BUFFER_SIZE=64k BBLOG_JOB_ID=crash-death-$$ \
    BBFAULT_OP=pwrite BBFAULT_PATH=${pfs##*/} BBFAULT_ERR=kill BBFAULT_RANK=2 \
    BBFAULT_LOG=$work/death.faults \
    LD_PRELOAD=$work/bbfault.so timeout -k 5 "$tmo" mpiexec "${cl_launch[@]}" -n $nprocs \
    "$work/crashwrite" "bblog:$pfs" "$work/side" "$steps" >"$work/job.log" 2>&1
why=
: >"$work/check.log"
if [ ! -s "$work/death.faults" ]; then
    why="rank 2 made no write to the PFS file: no fault was injected"
else
    acked=
    for ((r = 0; r < nprocs; r++)); do
        [ "$(ack_of "$r")" -ge 1 ] && acked="$acked $r"
    done
    [ -n "$acked" ] && why="the first sync succeeded on rank(s)$acked although rank 2 died in its drain"
    nlogs=$(all_nodes find "$bb" -name '*.meta' | wc -l)
    if [ "$nlogs" -gt 0 ] && ! replay_all --file "$pfs"; then
        why="${why:+$why; }bblog replay failed"
    fi
    "$work/crashcheck" "$pfs" $nprocs "$steps" pfs "$work/side" >>"$work/check.log" 2>&1 ||
        why="${why:+$why; }acknowledged data lost or garbage after replay"
fi
result "$name" "$why"
fi

prev_log=       # a log with undrained data of an earlier killed job of the same file
for ((i = 1; i <= runs; i++)); do
    case $((i % 3)) in 1) mode=pfs ;; 2) mode=bb ;; 0) mode=bbcap ;; esac
    kind=job
    [ $(((i - 1) / 2 % 2)) = 1 ] && kind=rank
    [ -z "$only" ] || IFS=, read -r mode kind _ <<<"$only"
    [ "$kind" = rank ] && [ -n "$cl_nodes" ] && kind=node
    # Logs per node (bblog_mapping=node) in the even runs: every 12 runs cover each mode, kill
    # and mapping together.
    mapping=${CRASH_MAPPING:-process}
    [ -z "${CRASH_MAPPING:-}" ] && [ $((i % 2)) = 0 ] && mapping=node
    id="crash-$i-$$"
    victim=
    launch "$mode" "$id" "$mapping"
    disown "$job_pid"
    nsync=$((steps / 2))
    j=$(rnd $((nsync + 2)))
    [ -z "$only" ] || j=${only##*,}
    if [ "$j" = 0 ]; then
        target=-2 delay=$(rnd 400)
    elif [ "$j" -le "$nsync" ]; then
        target=$((2 * j - 1)) delay=$(rnd 100)
    else
        target=$((steps - 1)) delay=$(rnd 1500)
    fi
    wait_ready
    while [ "$(ack_of 0)" -lt "$target" ] && kill -0 "$job_pid" 2>/dev/null; do
        sleep 0.01
    done
    sleep "$(printf '%d.%03d' $((delay / 1000)) $((delay % 1000)))"
    if [ "$kind" = job ]; then
        kill -KILL -- "-$job_pid" 2>/dev/null
    elif [ "$kind" = node ]; then
        victim=${cl_nodes##* }
        for ((r = 0; r < nprocs; r++)); do
            [ "$(node_of_rank $r $nprocs)" = "$victim" ] &&
                kill -KILL "$(cat "$work/side/pid.$r" 2>/dev/null)" 2>/dev/null
        done
    else
        victim=$(rnd $nprocs)
        kill -KILL "$(cat "$work/side/pid.$victim" 2>/dev/null)" 2>/dev/null
    fi
    at="sync $j+${delay}ms"
    [ "$j" = 0 ] && at="open+${delay}ms"
    reap 30
    mtag=
    [ "$mapping" = node ] && mtag=,node
    name="kill[$i,$mode$mtag,$kind${victim:+ $victim}@$at]"
    why=
    # Every rank acknowledged STEPS: the job had closed the file when it was killed.
    done_ranks=0
    for ((r = 0; r < nprocs; r++)); do
        [ "$(ack_of "$r")" = "$steps" ] && done_ranks=$((done_ranks + 1))
    done
    ended=0
    [ "$done_ranks" = "$nprocs" ] && ended=1 && name="$name(after the end)"
    [ "$job_hung" = 1 ] && [ "$kind" = job ] && why="processes left 30 s after SIGKILL of the job"
    : >"$work/check.log"
    nlogs=$(all_nodes find "$bb" -name '*.meta' | wc -l)
    if [ "$nlogs" -gt 0 ] && in_parts; then
        # In parts, against one replay of all the logs gathered (into a copy): the same bytes.
        rm -f "$work/gathered.dat"
        [ -e "$pfs" ] && cp "$pfs" "$work/gathered.dat"
        if ! replay_all --file "$pfs" --output "$work/gathered.dat"; then
            why="${why:+$why; }bblog replay of the gathered logs failed"
        elif ! replay_parts "$id"; then
            why="${why:+$why; }bblog replay --parts failed"
        elif ! cmp -s "$pfs" "$work/gathered.dat"; then
            why="${why:+$why; }the replay in parts differs from the replay of all logs gathered"
        fi
    elif [ "$nlogs" -gt 0 ]; then
        if ! replay_all --file "$pfs"; then
            why="${why:+$why; }bblog replay failed"
        fi
    fi
    if ! "$work/crashcheck" "$pfs" $nprocs "$steps" "${mode%cap}" "$work/side" \
        >>"$work/check.log" 2>&1; then
        why="${why:+$why; }acknowledged data lost or garbage after replay"
        [ "$ended" = 1 ] && [ "$nlogs" = 0 ] && why="$why (the job had closed the file before \
the kill and left no logs: the close drain, not a replay, left these bytes; see complete[$mode])"
    fi
    grep '^crashcheck: .*bytes hold' "$work/check.log" | sed "s/^crashcheck:/  $name:/"
    if [ "$nlogs" -gt 0 ]; then
        # Idempotence.
        cp "$pfs" "$work/snap" 2>/dev/null || : >"$work/snap"
        if ! replay_all --file "$pfs"; then
            why="${why:+$why; }second replay failed"
        elif ! cmp -s "$work/snap" "$pfs"; then
            why="${why:+$why; }the second replay changed the file"
        fi
        # Another file: refused, nothing created.
        if "$tool" replay "$bb" --file "$pfs.other" >"$work/refuse.log" 2>&1; then
            why="${why:+$why; }replay --file of a file without logs succeeded"
        elif ! grep -q -F "$pfs.other" "$work/refuse.log" || [ -e "$pfs.other" ]; then
            why="${why:+$why; }replay --file of another file: no message naming it, or it"
            why="$why was created"
        fi
        # Another job: refused, the file untouched.
        if "$tool" replay "$bb" --file "$pfs" --job "not-$id" >"$work/refuse.log" 2>&1; then
            why="${why:+$why; }replay --job of another job succeeded"
        elif ! grep -q -F "not-$id" "$work/refuse.log" || ! cmp -s "$work/snap" "$pfs"; then
            why="${why:+$why; }replay --job of another job: no message naming it, or the"
            why="$why file changed"
        fi
        cat "$work/refuse.log" >>"$work/check.log"
        # Logs of two jobs of the same file side by side: refused without --job.
        undrained=$("$tool" ls "$bb" | sed -n 's/^file .* \([0-9]*\) bytes undrained.*/\1/p' |
                    head -n 1)
        if [ -n "$prev_log" ] && [ "${undrained:-0}" -gt 0 ]; then
            rm -rf "$work/mix"
            mkdir -p "$work/mix"
            cp -a "$bb/." "$work/mix/"
            cp "$prev_log".meta "$prev_log".data "$work/mix/bblog-$(id -u)/"
            if "$tool" replay "$work/mix" --file "$pfs" --output "$work/mix.out" \
                >"$work/refuse.log" 2>&1; then
                why="${why:+$why; }replay of logs of two jobs of one file succeeded"
            elif ! grep -q -i 'job' "$work/refuse.log" || [ -s "$work/mix.out" ]; then
                why="${why:+$why; }replay of two jobs' logs: no message about the jobs, or"
                why="$why data written"
            fi
            cat "$work/refuse.log" >>"$work/check.log"
            rm -rf "$work/mix" "$work/mix.out"
        fi
        if [ "${undrained:-0}" -gt 0 ]; then
            m=$("$tool" ls "$bb" | grep -v 'undrained=0 bytes' |
                sed -n 's/\.meta\(\[slot [0-9]*\]\)\{0,1\}: file=.*//p' | head -n 1)
            if [ -n "$m" ]; then
                cp "$m.meta" "$work/prev/log.meta" && cp "$m.data" "$work/prev/log.data" &&
                    prev_log=$work/prev/log
            fi
        fi
    fi
    result "$name" "$why"
done

echo "run-crash: $passed passed, $failed failed"
[ "$failed" = 0 ]
