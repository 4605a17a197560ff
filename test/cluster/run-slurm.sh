#!/bin/bash
# Jobs submitted with Slurm's sbatch across the emulated cluster (scripts/cluster.sh up N
# --slurm), writing through bblog: with node-local burst buffers, and the node epilog that
# recovers a killed job's files (tools/bblog-slurm-epilog, installed as the cluster's Epilog).
#
# The job: test/crash/crashwrite on 2 nodes x 2 ranks under hydra's mpiexec, which starts its
# proxies with srun, submitted as the cluster's own user (not root); bblog_sync=bb (each sync makes the logs durable on the burst buffer only,
# so a killed job leaves data that only the logs hold).
#   slurm-clean: the job runs to its end. The file is exactly the schedule's (crashcheck), no
#     log is left on any node, and the epilog gathered nothing.
#   slurm-killed: scancel kills the job once rank 0 has acknowledged a few syncs. The epilogs
#     recover the file in parts: each node publishes its part and replays its own logs in
#     place, as the job's user: every acknowledged byte is right (crashcheck), the epilog's log
#     says that both nodes replayed their parts, and no log is left on any node nor in the
#     gather directory.
#   slurm-killed-gather: the same, with the job's recovery decided for gathering before the
#     epilogs run (as when a node's part did not come in time): the epilogs copy each node's
#     logs to the PFS and the last one replays them all.
# On a cluster with one burst buffer for all nodes (up --shared-bb) the epilog is configured
# for a shared one (no gather directory): one node replays the logs in place.
#
# Usage: run-slurm.sh (the cluster must be up with --slurm; run-cluster.sh does that)
# Environment: BBLOG_ENV_SCRIPT (the bblog MPI), BBLOG_TOOL (the bblog command), CLUSTER_ROOT
# and CLUSTER_PFX as for scripts/cluster.sh.
# Exit: 0 all passed; 1 something failed.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$here/scripts/cluster.sh
env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
tool=${BBLOG_TOOL:-$PWD/tools/bblog}
# The PFS is mounted inside the nodes: run on n1, where sbatch is called too.
if [ "$(ip netns identify $$ 2>/dev/null)" != "${CLUSTER_PFX:-bbc}-n1" ]; then
    exec "$cluster" exec n1 "$0" "$@"
fi
eval "$("$cluster" env)" || exit 1
if [ -z "${SLURM_CONF:-}" ]; then
    echo "run-slurm: the cluster runs no Slurm (scripts/cluster.sh up N --slurm)" >&2
    exit 1
fi
export SLURM_CONF
[ -x "$tool" ] || { echo "run-slurm: no bblog tool: $tool (set BBLOG_TOOL)" >&2; exit 1; }
# shellcheck source=/dev/null
. "$env_script" || exit 1

work=$(mktemp -d "$CLUSTER_PFS/bblog-slurm.XXXXXX") || exit 1
# The jobs run as the cluster's user: the work directory is theirs, the burst buffer is open
# to all (as a node's scratch device is), the gather directory root's (mode 711, bblog(1)).
chown "$CLUSTER_UID:$CLUSTER_UID" "$work"
chmod 755 "$work"
as_user=(setpriv --reuid="$CLUSTER_UID" --regid="$CLUSTER_UID" --clear-groups)
bbdir=$CLUSTER_BB/${work##*/}      # the jobs' bblog_dir: on every node its own tmpfs, or shared
gather=$work/gather
elog=$gather/bblog-epilog.log
shared=0
if [ "$CLUSTER_BB_KIND" = shared ]; then
    shared=1 gather= elog=$bbdir/bblog-epilog.log
fi
passed=0
failed=0
on_n1() { "$cluster" exec n1 "$@"; }
on_all() {
    local n
    for n in $CLUSTER_NODES; do "$cluster" exec "$n" "$@" || return 1; done
}

src=$here/test/crash
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Werror"
for p in crashwrite crashcheck; do
    # shellcheck disable=SC2086
    mpicc $cflags -I"$src" "$src/$p.c" -o "$work/$p" || { echo "run-slurm: cannot compile $p" >&2; exit 1; }
done

# The site's epilog configuration, and the epilog in the cluster's epilog.d.
epilog_d=$(dirname "$SLURM_CONF")/epilog.d
cat >"$work/epilog.conf" <<EOF
BBLOG_EPILOG_BB=$bbdir
BBLOG_EPILOG_GATHER=$gather
BBLOG_EPILOG_TOOL=$tool
BBLOG_EPILOG_MIN_RUN=0
EOF
# MIN_RUN 0: crashwrite's pieces are small, which by default the epilogs would gather; the
# decision to gather is slurm-killed-gather's, and the finely cut bytes' test_tool.sh's.
echo "run-slurm: $([ $shared = 1 ] && echo "one burst buffer for all nodes, replay in place" ||
    echo "node-local burst buffers, logs gathered in $gather")"
printf '%s\n' '#!/bin/sh' "BBLOG_EPILOG_CONF=$work/epilog.conf exec $here/tools/bblog-slurm-epilog" \
    >"$epilog_d/50-bblog"
chmod 755 "$epilog_d/50-bblog"
[ -z "$gather" ] || { mkdir -p "$gather" && chmod 711 "$gather"; }
on_all mkdir -p "$bbdir"
on_all chmod 1777 "$bbdir"

result() { # NAME WHY... (empty WHY: pass)
    local name=$1
    shift
    if [ -z "$*" ]; then
        passed=$((passed + 1))
        echo "PASS $name"
    else
        failed=$((failed + 1))
        echo "FAIL $name: $*"
        sed 's/^/    | /' "$work/check.log" 2>/dev/null | head -n 20
        sed 's/^/    job| /' "$work/job.out" 2>/dev/null | tail -n 8
        sed 's/^/    epilog| /' "$elog" 2>/dev/null | tail -n 8
    fi
}

# submit NAME STEPS: sbatch the job; sets jobid.
submit() {
    local name=$1 steps=$2
    rm -rf "$work/side" "$work/out.$name"
    mkdir -p "$work/side"
    chown "$CLUSTER_UID:$CLUSTER_UID" "$work/side"
    cat >"$work/job.sh" <<EOF
#!/bin/bash
#SBATCH -N 2 --ntasks-per-node=2
. $env_script
export BBLOG_DIR=$bbdir BBLOG_SYNC=bb BBLOG_FLUSH_BUFFER_SIZE=64k
mpiexec -n 4 $work/crashwrite bblog:$work/out.$name $work/side $steps
EOF
    jobid=$(on_n1 "${as_user[@]}" sbatch --parsable -o "$work/job.out" "$work/job.sh") || return 1
    jobid=${jobid%%;*}
}

# wait_gone: until the job has left the queue and its epilogs have run (at most 120 s).
wait_gone() {
    local i
    for ((i = 0; i < 240; i++)); do
        [ -z "$(on_n1 squeue -h -j "$jobid" 2>/dev/null)" ] && return 0
        sleep 0.5
    done
    return 1
}

ack_of() {
    local a
    a=$(od -An -t d8 "$work/side/ack.$1" 2>/dev/null | tr -d ' ')
    echo "${a:--1}"
}

left_logs() { on_all find "$bbdir" -name "$jobid.*" | head -n 3; }

# slurm-clean
steps=24
why=
: >"$work/check.log"
if ! submit clean $steps; then
    why="sbatch failed"
elif ! wait_gone; then
    why="the job did not end within 120 s"
else
    "$work/crashcheck" "$work/out.clean" 4 $steps bb "$work/side" >"$work/check.log" 2>&1 ||
        why="the file is wrong after a clean run"
    [ "$(ack_of 0)" = $steps ] || why="${why:+$why; }rank 0 did not finish (ack $(ack_of 0))"
    [ "$(stat -c %u "$work/out.clean" 2>/dev/null)" = "$CLUSTER_UID" ] ||
        why="${why:+$why; }the file is not the job user's: the job did not run as $CLUSTER_USER"
    left=$(left_logs)
    [ -z "$left" ] || why="${why:+$why; }logs left after a clean close: $(echo $left)"
    [ -z "$gather" ] || [ ! -e "$gather/$jobid" ] ||
        why="${why:+$why; }the epilog gathered logs of a clean job"
fi
result "slurm-clean (job $jobid)" "$why"

# killed NAME HOW: a job killed mid-run and recovered by the epilogs; HOW is parts (the
# default), gather (decided for gathering before the epilogs run) or shared.
killed() {
    local name=$1 how=$2
    steps=600
    why=
    : >"$work/check.log"
    if ! submit "$name" $steps; then
        why="sbatch failed"
    else
        if [ "$how" = gather ]; then
            mkdir -p "$gather/$jobid/parts" && ln -s gather "$gather/$jobid/parts/recovery" &&
                chown -R "$CLUSTER_UID:$CLUSTER_UID" "$gather/$jobid" && chmod 700 "$gather/$jobid"
        fi
        for ((i = 0; i < 1200; i++)); do
            [ "$(ack_of 0)" -ge 9 ] && break
            [ -z "$(on_n1 squeue -h -j "$jobid" 2>/dev/null)" ] && break
            sleep 0.05
        done
        ack_at_kill=$(ack_of 0)
        on_n1 scancel "$jobid"
        if ! wait_gone; then
            why="the job did not leave the queue within 120 s of scancel"
        elif [ "$ack_at_kill" -lt 9 ] || [ "$(ack_of 0)" = $steps ]; then
            why="the job was not killed mid-run (rank 0's ack: $ack_at_kill at scancel, $(ack_of 0) at the end)"
        else
            if [ "$how" = parts ]; then
                [ "$(grep -c "job $jobid: replayed its part in place" "$elog" 2>/dev/null)" = 2 ] ||
                    why="the epilogs of both nodes did not replay their parts"
            else
                grep -q "job $jobid: replayed from" "$elog" 2>/dev/null ||
                    why="the epilog did not replay the job's logs"
                [ "$how" = gather ] && ! grep -q "job $jobid: gathered" "$elog" &&
                    why="${why:+$why; }the epilogs did not gather the logs"
            fi
            "$work/crashcheck" "$work/out.$name" 4 $steps bb "$work/side" >"$work/check.log" 2>&1 ||
                why="${why:+$why; }acknowledged data lost or garbage after the epilog"
            grep '^crashcheck: .*bytes hold' "$work/check.log" | sed "s/^crashcheck:/  $name:/"
            [ "$(stat -c %u "$work/out.$name" 2>/dev/null)" = "$CLUSTER_UID" ] ||
                why="${why:+$why; }the file is not the job user's"
            left=$(left_logs)
            [ -z "$left" ] || why="${why:+$why; }logs left on the nodes: $(echo $left)"
            [ -z "$gather" ] || [ ! -e "$gather/$jobid" ] ||
                why="${why:+$why; }the gathered logs or parts were left in $gather/$jobid"
        fi
    fi
    result "$name (job $jobid)" "$why"
}

if [ $shared = 1 ]; then
    killed slurm-killed shared
else
    killed slurm-killed parts
    killed slurm-killed-gather gather
fi

rm -f "$epilog_d/50-bblog"
if [ "$failed" = 0 ]; then
    rm -rf "$work"
    on_all rm -rf "$bbdir"
else
    echo "run-slurm: work directory kept: $work"
fi
echo "run-slurm: $passed passed, $failed failed"
[ "$failed" = 0 ]
