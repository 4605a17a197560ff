#!/bin/bash
# The read servers against a local user who is not the job (issue 68; bblog(7), READ SERVERS).
# A 2-rank job (test/mpi/srvjob.c) on two nodes (pseudo-nodes of one rank, BBLOG_DEBUG_NODE_SIZE=1,
# or with MPITEST_CLUSTER the emulated cluster's n1 and n2), each rank reading the other's
# logged block every 50 ms through the other's read server, runs with RLIMIT_NOFILE 512 while an
# outside process (test/mpi/srvattack.c), which knows only the addresses and ports the job's
# open listens on (srvjob finds them in /proc/self/net/tcp), attacks both servers for ATTACK
# seconds:
#   none       no attack: the control (its descriptor count is the others' baseline)
#   garbage    2,000 connections sending random bytes
#   stall      4 connections each sending 8 bytes of a request, then nothing (again when
#              dropped)
#   flood      up to 2,500 connections held open
#   wrongkey   well-formed requests signed with another key
#   absurd     the same asking for 2^63 bytes and the largest limit
#   replay     the job's own requests (recorded from its sends by srvcap.so) on new connections
#   halfclose  half a request, then the write side shut
# Each case asserts: every read of the job returned the right bytes (srvjob's exit status); its
# slowest read took less than BOUND_MS (2000 ms: a server that waits on one client stalls the
# reads for the whole attack, 5 s; unattacked reads take 5-50 ms here); none of its own
# open()s failed; its descriptors grew by at most the servers' cap over the control (one
# connection per process of the other nodes plus 8, and its listening socket); its resident
# memory grew by less than 64 MiB; the server answered no request that was not the job's
# (srvattack's exit status); and the servers' statistics say what they did: deadline drops for
# stall, evictions or refusals for flood, bad requests for garbage, wrongkey, absurd and
# replay, and for the control none of those (the job's own connections are never dropped).
#
# Usage: run-srvattack.sh [CASE...]
# Environment: BBLOG_ENV_SCRIPT (the bblog MPI's environment script; "no": skip 77), CI (a
# missing MPI fails instead of skipping), MPITEST_CLUSTER (HOSTS: run on the emulated cluster,
# which must be up), ATTACK (seconds, default 5).
# Exit: 0 all passed; 1 something failed; 77 skipped.
set -u

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
attack=${ATTACK:-5}
bound_ms=2000
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(none garbage stall flood wrongkey absurd replay halfclose)

if [ "$env_script" = no ]; then
    echo "run-srvattack: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
if [ ! -r "$env_script" ]; then
    if [ -n "${CI:-}" ]; then
        echo "run-srvattack: no bblog MPI: $env_script not found (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-srvattack: no bblog MPI: $env_script not found; skipping"
    exit 77
fi
# shellcheck source=/dev/null
. "$env_script"
src=$(cd "$(dirname "$0")" && pwd)
cluster=$src/../../scripts/cluster.sh
for t in mpicc mpiexec cc prlimit python3 timeout; do
    command -v "$t" >/dev/null 2>&1 || { echo "run-srvattack: $t not found" >&2; exit 1; }
done

if [ -n "${MPITEST_CLUSTER:-}" ]; then
    eval "$("$cluster" env)"
    root=$CLUSTER_PFS bbroot=$CLUSTER_BB
else
    root=${TMPDIR:-/tmp} bbroot=/dev/shm
fi
work=$(mktemp -d "$root/bblog-srvattack.XXXXXX") || exit 1
bin=$work/bin
mkdir -p "$bin"
cflags="-std=gnu11 -O2 -Wall -Wextra -Wno-unused-parameter -Werror"
# shellcheck disable=SC2086
mpicc $cflags -I"$src" "$src/srvjob.c" "$src/common.c" -o "$bin/srvjob" &&
    cc $cflags "$src/srvattack.c" -o "$bin/srvattack" &&
    cc $cflags -shared -fPIC "$src/srvcap.c" -o "$bin/srvcap.so" -ldl ||
    { echo "run-srvattack: cannot compile the programs" >&2; exit 1; }

passed=0 failed=0 base_fds=
# in_nodes CMD...: CMD where the job's sockets are (every node of the cluster, or here).
in_nodes() {
    if [ -n "${MPITEST_CLUSTER:-}" ]; then
        for n in $CLUSTER_NODES; do "$cluster" exec "$n" "$@"; done
    else
        "$@"
    fi
}
attacker() {
    if [ -n "${MPITEST_CLUSTER:-}" ]; then
        "$cluster" exec "${CLUSTER_NODES%% *}" "$@"
    else
        "$@"
    fi
}
rss_kb() { # PID...: the sum of their resident sizes
    local p s=0 v
    for p in "$@"; do
        v=$(awk '/^VmRSS:/ {print $2}' "/proc/$p/status" 2>/dev/null)
        s=$((s + ${v:-0}))
    done
    echo $s
}

run_case() {
    local mode=$1
    local d=$work/$mode why= pids ports line rss0 rss1 rssmax arc=0 stats
    local -a env_job=(BBLOG_DEBUG_NODE_SIZE=1) launch=(mpiexec -launcher fork -n 2)
    mkdir -p "$d"
    stats=$d/stats.json
    [ "$mode" = replay ] && env_job+=(LD_PRELOAD="$bin/srvcap.so" SRVCAP_FILE="$d/cap")
    if [ -n "${MPITEST_CLUSTER:-}" ]; then
        env_job=()
        [ "$mode" = replay ] && env_job=(LD_PRELOAD="$bin/srvcap.so" SRVCAP_FILE="$d/cap")
        launch=("$cluster" mpiexec -hosts "$MPITEST_CLUSTER" -n 2)
    fi
    local bb
    bb=$(mktemp -d "$bbroot/bblog-srvattack.XXXXXX")
    in_nodes mkdir -p "$bb"
    (
        export BBLOG_DIR=$bb TEST_HINTS="bblog_stats=$stats"
        for e in "${env_job[@]}"; do export "${e?}"; done
        exec prlimit --nofile=512:512 timeout -k 5 120 "${launch[@]}" "$bin/srvjob" \
            "bblog:$d/f.out" "$d" 60
    ) >"$d/job.log" 2>&1 &
    local job=$! i
    for i in $(seq 1 300); do
        [ -s "$d/ready.0" ] && [ -s "$d/ready.1" ] && break
        kill -0 $job 2>/dev/null || break
        sleep 0.1
    done
    if ! [ -s "$d/ready.0" ] || ! [ -s "$d/ready.1" ]; then
        why="the job did not start: $(tail -n 3 "$d/job.log" | tr '\n' ' ')"
    else
        pids="$(head -n 1 "$d/ready.0") $(head -n 1 "$d/ready.1")"
        # What the job's open started to listen on (its read servers), and nothing else: the
        # MPI's own sockets are not the target.
        ports=$(tail -q -n +2 "$d/ready.0" "$d/ready.1" | sort -u)
        [ "$(echo "$ports" | grep -c .)" = 2 ] ||
            why="not one read server per node: the job's opens listen on [$(echo $ports)]"
        if [ "$mode" = replay ]; then
            for i in $(seq 1 50); do [ -s "$d/cap" ] && break; sleep 0.1; done
            [ -s "$d/cap" ] || why="${why:+$why; }no request of the job recorded"
        fi
    fi
    if [ -z "$why" ]; then
        rss0=$(rss_kb $pids) rssmax=$rss0
        if [ "$mode" != none ]; then
            local -a cap=()
            [ "$mode" = replay ] && cap=(-c "$d/cap")
            # shellcheck disable=SC2086
            attacker "$bin/srvattack" "$mode" "$attack" $ports "${cap[@]}" >"$d/attack.log" 2>&1 &
            local ap=$!
            while kill -0 $ap 2>/dev/null; do
                rss1=$(rss_kb $pids)
                [ "$rss1" -gt "$rssmax" ] && rssmax=$rss1
                sleep 0.25
            done
            wait $ap
            arc=$?
        else
            sleep "$attack"
        fi
    fi
    touch "$d/stop"
    wait $job
    local jrc=$?
    in_nodes rm -rf "$bb"
    if [ -z "$why" ]; then
        [ "$jrc" = 0 ] ||
            why="the job failed (exit $jrc): $(grep -m 3 FAIL "$d/job.log" | tr '\n' ' ')"
        line=$(grep '^srvjob:' "$d/job.log")
        [ -n "$line" ] || why="${why:+$why; }no summary from the job"
        [ "$arc" = 0 ] ||
            why="${why:+$why; }the server answered requests not the job's: $(cat "$d/attack.log")"
        [ $((rssmax - rss0)) -lt 65536 ] ||
            why="${why:+$why; }the job's memory grew by $(((rssmax - rss0) / 1024)) MiB under attack"
        local res
        res=$(python3 - "$mode" "$stats" "$line" "$bound_ms" "${base_fds:-}" <<'PY'
import json, sys
mode, path, line, bound, base = sys.argv[1], sys.argv[2], sys.argv[3], float(sys.argv[4]), sys.argv[5]
w = line.split()
f = {w[i]: w[i + 1] for i in range(1, len(w) - 1, 2)}
why = []
if float(f.get("worst_ms", 1e9)) >= bound:
    why.append("slowest read %s ms (bound %d ms)" % (f.get("worst_ms"), bound))
if int(f.get("failed_opens", 1)) != 0:
    why.append("%s of the job's own open()s failed" % f.get("failed_opens"))
fds = int(f.get("max_fds", 0))
# One connection per process of the other nodes (1 here) plus 8, and the listening socket.
if base and fds > int(base) + 1 + 8 + 1:
    why.append("the job held %d descriptors, %d more than without an attack" % (fds, fds - int(base)))
try:
    o = [json.loads(l) for l in open(path) if l.strip()][0]
except (OSError, ValueError, IndexError):
    o = None
    why.append("no statistics in %s" % path)
if o is not None:
    dl, ev, rf, bad = (o.get(k, 0) for k in ("server_deadline_drops", "server_evicted",
                                              "server_refused", "server_bad_requests"))
    want = {"stall": dl > 0, "flood": ev + rf > 0, "garbage": bad + dl > 0,
            "wrongkey": bad > 0, "absurd": bad > 0, "replay": bad > 0,
            "halfclose": True, "none": dl + ev + rf + bad == 0}[mode]
    if not want:
        why.append("statistics do not show the attack handled: deadline_drops %d evicted %d "
                   "refused %d bad_requests %d" % (dl, ev, rf, bad))
print("; ".join(why) if why else "ok fds=%d" % fds)
PY
)
        case $res in
        ok*) [ "$mode" = none ] && base_fds=${res#ok fds=} ;;
        *) why="${why:+$why; }$res" ;;
        esac
    fi
    if [ -z "$why" ]; then
        passed=$((passed + 1))
        echo "PASS srvattack[$mode] ($line; $(cat "$d/attack.log" 2>/dev/null))"
    else
        failed=$((failed + 1))
        echo "FAIL srvattack[$mode]: $why"
        tail -n 5 "$d/job.log" | sed 's/^/    | /'
    fi
}

for c in "${cases[@]}"; do
    run_case "$c"
done
[ "$failed" = 0 ] && rm -rf "$work"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
