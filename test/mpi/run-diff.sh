#!/bin/bash
# MPI differential tests of bblog (DESIGN.md section 8).
#
# Compiles test/mpi/t_*.c with the mpicc of the bblog MPI (the environment script of the MPICH
# built with the driver grafted in, or of the Open MPI: scripts/build-ompi.sh), then runs every
# program, for each rank count of its case, three ways into a fresh directory:
#   ufs    ufs:$dir/ufs.out      plain ROMIO, the reference
#   bblog  bblog:$dir/bb.out     the driver, by prefix
#   force  $dir/force.out        the driver, by ROMIO_FSTYPE_FORCE=bblog:
# each with BBLOG_DIR set to a fresh burst-buffer directory on /dev/shm. A leg passes when the
# program exits 0 (it checks what it can itself), its files equal the ufs leg's byte for byte
# (cmp), the burst-buffer directory holds no file afterwards (logs go at close unless
# bblog_keep_logs=true), and no hidden shared-file-pointer file is left next to the output.
# Error-path cases (t_errors) run through bblog only (by prefix and by ROMIO_FSTYPE_FORCE); a
# subset runs under valgrind.
#
# Usage: run-diff.sh [PATTERN...]   only cases whose name matches one of the shell patterns
#        (names as printed: t_raw, t_bigdata[max256k], ...; groups: t_errors, t_errors[env],
#        valgrind).
# Environment:
#   BBLOG_ENV_SCRIPT  the MPI's environment script (make check passes configure's
#                     --with-bblog-mpi value; "no": not configured, skip);
#                     default /var/cache/bblog/current/bin/bblog-env.sh
#   CI                when set, a missing MPI or valgrind is a failure instead of a skip
#   MPITEST_BUILD     where the programs are compiled (default test/mpi/build under $PWD when
#                     run by make check, else a temporary directory)
#   MPITEST_KEEP=1    keep the work directory even when everything passed
#   MPITEST_REF       reuse (default): a case with the program, ranks and ROMIO hints of an
#                     earlier case takes that case's ufs files as its reference (line "REF");
#                     fresh: every case runs plain ROMIO; check: runs it and fails where its
#                     files differ from the reused ones
#   MPITEST_TIMEOUT   seconds per mpiexec (default 120; 900 with MPITEST_VALGRIND=all)
#   MPITEST_CLUSTER   HOSTS, e.g. n1:2,n2:2: run on the emulated cluster of scripts/cluster.sh
#                     (which must be up): mpiexec in node n1 (the script re-runs itself there)
#                     with -hosts HOSTS and the cluster as hydra's ssh, the work directory on
#                     the cluster's PFS, each leg's burst-buffer directory on every node's own
#                     burst buffer (checked and removed on every node)
#   MPITEST_LEGS      all (default): every leg; cross: only legs that cross nodes on the
#                     emulated cluster: no case of one process (it runs on one node, as in the
#                     single-node suite) and no force leg (ROMIO_FSTYPE_FORCE takes the prefix's
#                     path through the driver; ROMIO's programs check its reach to other nodes)
#   MPITEST_VALGRIND  "all": every leg through the driver by prefix (bblog, nested, t_errors)
#                     runs under valgrind memcheck with test/mpi/valgrind.supp, definite leaks
#                     counted as errors; the files must still equal the ufs leg's. "all+force":
#                     the force legs too (twice the time). Without PATTERN, the only background
#                     mode run is [proactive] (it has the drain thread). Slow (half an hour on
#                     2 cores), so not in make check:
#                       MPITEST_VALGRIND=all MPITEST_KEEP=1 test/mpi/run-diff.sh
# Exit: 0 all passed; 1 something failed; 77 skip: no bblog MPI and CI unset, or make check in
# a tree configured without --with-bblog-mpi.
set -u

# shellcheck source=../cluster-lib.sh
. "$(dirname "$0")/../cluster-lib.sh"
env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
tmo=${MPITEST_TIMEOUT:-120}
legs=${MPITEST_LEGS:-all}
case $legs in
all | cross) ;;
*) echo "run-diff: MPITEST_LEGS=$legs: expected all or cross" >&2; exit 1 ;;
esac
vg_all=
case ${MPITEST_VALGRIND:-} in
'') ;;
all) vg_all=bblog tmo=${MPITEST_TIMEOUT:-900} ;;
all+force) vg_all=force tmo=${MPITEST_TIMEOUT:-900} ;;
*)
    echo "run-diff: MPITEST_VALGRIND=$MPITEST_VALGRIND: expected all, all+force or unset" >&2
    exit 1
    ;;
esac

if [ "$env_script" = no ]; then
    # configure without --with-bblog-mpi: the MPI tests were not asked for in this build tree
    # (the sanitizer and distcheck builds of scripts/test-all.sh), whatever CI says.
    echo "run-diff: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
if [ ! -r "$env_script" ]; then
    if [ -n "${CI:-}" ]; then
        echo "run-diff: no bblog MPI: $env_script not found (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-diff: no bblog MPI: $env_script not found; skipping"
    exit 77
fi
# BBLOG_LAYER_MPI: set by the layer's environment script only (scripts/build-layer.sh).
unset BBLOG_LAYER_MPI
# shellcheck source=/dev/null
. "$env_script"
# The bblog tool of the build tree (make check runs from it), for t_durable's `bblog status`.
BBLOG_TOOL=${BBLOG_TOOL:-$PWD/tools/bblog}
if [ -x "$BBLOG_TOOL" ]; then
    export BBLOG_TOOL
elif [ -n "${CI:-}" ]; then
    echo "run-diff: $BBLOG_TOOL not built (CI is set, so this fails)" >&2
    exit 1
else
    echo "run-diff: NOTE $BBLOG_TOOL not built: t_durable does not run bblog status"
    unset BBLOG_TOOL
fi
for tool in mpicc mpiexec cmp ${vg_all:+valgrind}; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "run-diff: $tool not found after sourcing $env_script" >&2
        exit 1
    fi
done
# The MPI is MPICH (scripts/build-mpi.sh) or Open MPI (scripts/build-ompi.sh). Open MPI's
# mpiexec has no -launcher (it starts local processes itself), needs consent for more ranks than
# cores and, as root, to run at all; bblog lives in its ROMIO component, not in its default
# MPI-IO component (OMPIO).
launch=("${cl_launch[@]}")
ompi=no
if [ -n "$cl_nodes" ]; then
    export TMPDIR=$CLUSTER_PFS
    echo "run-diff: on the emulated cluster, -hosts $MPITEST_CLUSTER, nodes $cl_nodes"
fi
if is_ompi; then
    ompi=yes
    launch=()
    # Every leg through ROMIO, plain ones too: io/romio341 on Open MPI 5 (its PRRTE takes
    # oversubscription from its own variable), io/romio321 on 4.1.
    if mpiexec --version 2>&1 | grep -qE 'Open MPI\)? 5\.'; then
        export OMPI_MCA_io=romio341 PRTE_MCA_rmaps_default_mapping_policy=:oversubscribe
    else
        export OMPI_MCA_io=romio321
    fi
    export OMPI_MCA_rmaps_base_oversubscribe=1
    if [ "$(id -u)" = 0 ]; then
        export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    fi
fi

# Sources: $srcdir (set by automake's test harness) or this script's directory.
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/mpi/common.h" ]; then
    src=$(cd "$srcdir/test/mpi" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-mpitest.XXXXXX") || exit 1
ompi_sessions "$work/ompi" || exit 1
if [ -n "${MPITEST_BUILD:-}" ]; then
    bin=$MPITEST_BUILD
elif [ -n "${srcdir:-}" ]; then
    bin=$PWD/test/mpi/build
else
    bin=$work/bin
fi
mkdir -p "$bin" || exit 1

# Valgrind for the valgrind subset; with MPITEST_VALGRIND=all, vg_pre prefixes every driver leg
# (vg_tag names such legs in the report) and definite leaks are errors too.
vg_cmd=(valgrind -q --error-exitcode=1 --suppressions="$src/valgrind.supp")
if [ "$ompi" = yes ]; then
    # Open MPI: its own suppressions, and ours for what it uses (Debian's PMIx).
    vg_cmd+=(--suppressions="$src/valgrind-ompi.supp")
    ompi_supp=${BBLOG_MPI_PREFIX:-}/share/openmpi/openmpi-valgrind.supp
    [ -f "$ompi_supp" ] && vg_cmd+=(--suppressions="$ompi_supp")
fi
vg_pre=()
vg_tag=
if [ -n "$vg_all" ]; then
    vg_cmd+=(--leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
             --num-callers=30)
    vg_pre=("${vg_cmd[@]}")
    vg_tag=+valgrind
fi

programs="t_contig t_strided t_noncontig t_view t_overlap t_raw t_size t_atomic t_shared
          t_nonblock t_manyfiles t_delete t_empty t_bigdata t_hints t_errors t_collread t_capacity
          t_twofh t_xorder t_bgdrain t_selfsync t_selfgrow t_peerread t_subcomm t_merge
          t_durable t_planspace t_phases t_sieve t_closebb t_batchfh t_batchmix t_holes
          t_syncalone t_idlewait t_extent t_nodeasks t_errhan t_threads t_largecount t_ordered
          t_completion"
cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes
        -Wno-unused-parameter -Werror"

echo "run-diff: MPI: $(command -v mpicc) ($env_script)"
echo "run-diff: sources $src, programs in $bin, work in $work"
# shellcheck disable=SC2086
if ! mpicc $cflags -I"$src" -c "$src/common.c" -o "$bin/common.o"; then
    echo "run-diff: cannot compile common.c" >&2
    exit 1
fi
for p in $programs; do
    # shellcheck disable=SC2086
    if ! mpicc $cflags -I"$src" "$src/$p.c" "$bin/common.o" -o "$bin/$p"; then
        echo "run-diff: cannot compile $p.c" >&2
        exit 1
    fi
done

# The fault injector of test/faults, for the notrunc option of run_case.
if ! mpicc $cflags -shared -fPIC "$src/../faults/bbfault.c" -o "$bin/bbfault.so" -ldl; then
    echo "run-diff: cannot compile ../faults/bbfault.c" >&2
    exit 1
fi


passed=0
failed=0
failures=
harness_faults=
keep_work=${MPITEST_KEEP:-}

# Describes how two files differ (sizes, first differing bytes, count of differing bytes).
describe_diff() {
    local a=$1 b=$2 n
    n=$(cmp -l "$a" "$b" 2>/dev/null | wc -l)
    echo "    $(basename "$a"): $(stat -c %s "$a") bytes," \
        "$(basename "$b"): $(stat -c %s "$b") bytes, $n differing bytes in the common part;" \
        "cmp -l (offset+1, octal ufs, octal other):"
    cmp -l "$a" "$b" 2>&1 | head -n 8 | sed 's/^/    /'
}

# Burst-buffer directories go on /dev/shm (a RAM disk, as a node-local burst buffer is fast),
# else into the work directory.
bbroot=/dev/shm
[ -d "$bbroot" ] && [ -w "$bbroot" ] || bbroot=$work
[ -z "$cl_nodes" ] || bbroot=$CLUSTER_BB

# Whether a read-only directory can be prepared for t_errors: "mount" (root, in a private mount
# namespace), "chmod" (non-root: permissions apply), or "" (cannot: root without CAP_SYS_ADMIN).
ro_method=
if [ "$(id -u)" != 0 ]; then
    ro_method=chmod
elif [ -n "$cl_nodes" ]; then
    ro_method= # a private mount namespace would hold the ranks of this node only
elif command -v unshare >/dev/null 2>&1 &&
    unshare -m sh -c "mount -t tmpfs -o ro,size=64k bblog-ro '$work' && umount '$work'" \
        >/dev/null 2>&1; then
    ro_method=mount
fi

# run_leg DIR MODE [ENV=VAL...] -- MPIEXEC-ARGS...
# Runs one mpiexec (with MPICH: -launcher fork; under timeout) with a fresh burst-buffer
# directory as BBLOG_DIR and the given variables; sets leg_rc, leg_bb, leg_log. With leg_ro set and
# ro_method=mount, runs in a private mount namespace where leg_ro is a read-only tmpfs; with
# leg_small=SIZE, in one where the burst-buffer directory is a tmpfs of SIZE.
run_leg() {
    local dir=$1 mode=$2
    shift 2
    local -a envs=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do
        envs+=("$1")
        shift
    done
    shift
    leg_bb=$(mktemp -d "$bbroot/bblog-bb.XXXXXX") || return 1
    on_nodes mkdir -p "$leg_bb" || return 1
    leg_log=$dir/$mode.log
    local -a wrap=()
    if [ -n "${leg_ro:-}" ] && [ "$ro_method" = mount ]; then
        wrap=(unshare -m sh -c 'mount -t tmpfs -o ro,size=64k bblog-ro "$0" && exec "$@"'
              "$leg_ro")
    elif [ -n "${leg_small:-}" ]; then
        wrap=(unshare -m sh -c 'mount -t tmpfs -o "size=$1,mode=1777" bblog-small "$0" &&
              shift && exec "$@"' "$leg_bb" "$leg_small")
    fi
    local t0
    t0=$(date +%s%N)
    (
        unset ROMIO_FSTYPE_FORCE TEST_HINTS TEST_RO_DIR
        export BBLOG_DIR="$leg_bb"
        for e in "${envs[@]}"; do
            export "${e?}"
        done
        exec "${wrap[@]}" timeout -k 10 "$tmo" mpiexec "${launch[@]}" "$@"
    ) >"$leg_log" 2>&1
    leg_rc=$?
    echo "$(( ($(date +%s%N) - t0) / 1000000 )) $dir $mode" >>"$work/timings"
}

# Removes the leg's burst-buffer directory, on every node.
remove_bb() {
    all_nodes rm -rf "$leg_bb"
}

# Files of a leg, named by their suffix after the base name: "OUT" for the base file itself,
# "OUT.00" for base.00 and so on; one per line, sorted.
suffixes() {
    local dir=$1 base=$2 f
    for f in "$dir/$base" "$dir/$base".*; do
        [ -e "$f" ] && echo "OUT${f#"$dir/$base"}"
    done | sort
}

# check_leg DIR BASE KEEP: checks common to every leg; sets leg_why (empty if all is well).
check_leg() {
    local dir=$1 base=$2 keep=$3 why= left hidden
    if [ "$leg_rc" = 124 ] || [ "$leg_rc" = 137 ]; then
        why="timeout after $tmo s"
    elif [ "$leg_rc" != 0 ]; then
        why="exit status $leg_rc"
    fi
    left=$({ find "$leg_bb" -type f; on_nodes find "$leg_bb" -type f; } 2>/dev/null | head -n 5)
    if [ "$keep" = 0 ] && [ -n "$left" ]; then
        why="${why:+$why; }log files left in the burst buffer: $(echo $left)"
    fi
    hidden=$(cd "$dir" && ls -A | grep -F ".$base" | grep '^\.' | head -n 5)
    if [ -n "$hidden" ]; then
        why="${why:+$why; }hidden files left: $(echo $hidden)"
    fi
    leg_why=$why
}

# With bblog_keep_logs=true: logs must be there, in a 0700 per-user directory, files 0600
# (DESIGN.md section 4). Prints the problems, one per line.
check_kept_logs() {
    local bb=$1 udir bad
    udir=$bb/bblog-$(id -u)
    if [ ! -d "$udir" ]; then
        echo "bblog_keep_logs=true but no $udir"
        return
    fi
    [ "$(stat -c %a "$udir")" = 700 ] || echo "$udir has mode $(stat -c %a "$udir"), not 700"
    [ -n "$(find "$udir" -type f | head -n 1)" ] ||
        echo "bblog_keep_logs=true but no log file in $udir"
    bad=$(find "$udir" -type f ! -perm 0600 | head -n 3)
    [ -z "$bad" ] || echo "log files not mode 0600: $(echo $bad)"
}

# bblog_stats=FILE: one JSON object per file opened, appended by rank 0 (hint specification).
# WANT: N objects, or N:peers / N:nopeers: the drains did / did not read other processes' logs
# (bytes_from_peers summed over the objects; the node exchange, ad_bblog_drain_share.c); N:ext: no
# object has more extents drained than processes (t_merge: one range of the file per process);
# N:verified: every object whose file was drained says its last drain was verified, and the
# drains read back bytes (bblog_verify=true); N:alone: the drains read other processes' logs
# and made no collective write to the PFS file (each process wrote its chunks alone);
# N:fewplans: no background drain planned more than 20 times (t_bgdrain: 380 collective calls,
# 160 of them in one phase; spaced points stay under that, a point every 8 collective writes
# would make about 48; t_batchmix: 100 calls in phases that a sync ends);
# N:planned: every process's background drain planned at least twice (t_planspace: the
# set_size with nothing logged, then one of its 12 collective writes); N:through / N:nothrough:
# some bytes / no byte went straight to the PFS file (bytes_through; bblog_through_threshold);
# N:pairs: every process's log was a slot of its node's log pair (bblog_mapping=node);
# N:sieved / N:nosieve: some / no hole bytes were read and written back by a one-process
# drain (bytes_sieved; data sieving, t_sieve);
# N:closedrain / N:closealone: under bblog_close=bb the close of the first file (t_closebb: 4 KiB
# pieces interleaved) drained collectively and that of the second (1 MiB per rank) did not /
# neither did (bytes_drained of the first two objects; BBLOG_DEBUG_NO_BATCH=1 /
# BBLOG_DEBUG_CLOSE_ALONE=1); N:closebatch: neither close drained, and the drain threads wrote
# the first file's small pieces as a node batch (batch_chunks of its bblog_bg lines) and the
# second file's large extents each on its own (ad_bblog_bg_batch.c);
# N:syncalone / N:syncagree: the first object (t_syncalone's file) says syncs_alone 7 / 0;
# N:phased: no process planned more than 10 times (t_phases: 6 phases of 36 collective writes;
# with a point at each phase's end once their length is known 8, with phase-blind spacing 12),
# and at least 3 of its phases but the last ended at such a point, before the quiet gap.
# Prints the problem, if any.
check_stats() {
    local f=$1 want=$2
    if [ ! -s "$f" ]; then
        echo "bblog_stats=$f: no statistics written"
        return
    fi
    command -v python3 >/dev/null 2>&1 || return
    python3 - "$f" "$want" "$(dirname "$0")/../../man/bblog.7" <<'PY'
import json, sys
text = open(sys.argv[1]).read()
dec, pos, objs = json.JSONDecoder(), 0, []
try:
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        obj, pos = dec.raw_decode(text, pos)
        objs.append(obj)
except ValueError as e:
    print("bblog_stats: not a sequence of JSON objects (%s)" % e)
    sys.exit(0)
want = sys.argv[2].split(":")
bgobjs = [o for o in objs if isinstance(o, dict) and "bblog_bg" in o]     # background drains
objs = [o for o in objs if not (isinstance(o, dict) and "bblog_bg" in o)]
if len(objs) != int(want[0]) or not all(isinstance(o, dict) for o in objs):
    print("bblog_stats: %d JSON values, expected %s objects" % (len(objs), want[0]))
    sys.exit(0)
# Every key the driver prints is described in bblog(7), STATISTICS.
man = open(sys.argv[3]).read()
man = man[man.index(".SH STATISTICS"):man.index(".SH ENVIRONMENT")]
named = ("\\fB%s\\fR", "\\fB%s\n", ".B %s\\fR", ".B %s\n")
undoc = sorted({k for o in objs for k in o if not any(p % k in man for p in named)})
if undoc:
    print("bblog_stats: keys not described in bblog(7), STATISTICS: %s" % ", ".join(undoc))
peers = sum(o.get("bytes_from_peers", -1) for o in objs)
if want[1:] == ["peers"] and peers <= 0:
    print("bblog_stats: no drain read another process's log (bytes_from_peers %d)" % peers)
if want[1:] == ["nopeers"] and peers != 0:
    print("bblog_stats: bytes_from_peers %d, expected 0 (node exchange off)" % peers)
if want[1:] == ["verified"]:
    if sum(o.get("bytes_verified", 0) for o in objs) <= 0:
        print("bblog_stats: bytes_verified 0: no drain read back what it wrote")
    for o in objs:
        if o.get("drains", 0) > 0 and o.get("last_drain") != "verified":
            print("bblog_stats: last_drain %s after %s drains, expected verified"
                  % (o.get("last_drain"), o.get("drains")))
if want[1:] == ["cap"]:
    o = objs[0]
    if o.get("bytes_given_back", 0) <= 0:
        print("bblog_stats: bytes_given_back %s: no log space was given back while the file was "
              "open" % o.get("bytes_given_back"))
    if o.get("bytes_drained", 0) >= o.get("bytes_logged", 0):
        print("bblog_stats: the collective drains wrote %s of %s logged bytes: the background "
              "drain made no room" % (o.get("bytes_drained"), o.get("bytes_logged")))
if want[1:] == ["alone"]:
    if peers <= 0:
        print("bblog_stats: no drain read another process's log (bytes_from_peers %d)" % peers)
    for o in objs:
        coll = o.get("inner_write_calls", 0) - o.get("indep_writes", 0) - o.get("writes_through", 0)
        if o.get("drains", 0) > 0 and coll != 0:
            print("bblog_stats: %d collective write calls on the PFS file, expected none (the "
                  "drain's chunks written alone)" % coll)
if want[1:] in (["sieved"], ["nosieve"]):
    sieved = sum(o.get("bytes_sieved", 0) for o in objs)
    if want[1:] == ["sieved"] and sieved <= 0:
        print("bblog_stats: bytes_sieved 0: no one-process drain sieved the holes between "
              "its pieces")
    if want[1:] == ["nosieve"] and sieved != 0:
        print("bblog_stats: bytes_sieved %d with romio_ds_write=disable, expected 0" % sieved)
if want[1:] == ["pairs"]:
    for o in objs:
        if o.get("bytes_logged", 0) > 0 and o.get("logs_in_node_pairs") != o.get("nprocs"):
            print("bblog_stats: logs_in_node_pairs %s of %s processes, expected all (one log "
                  "pair per node)" % (o.get("logs_in_node_pairs"), o.get("nprocs")))
if want[1:] == ["fewplans"]:
    bg = [o for o in bgobjs if o.get("plans") is not None]
    if not bg:
        print("bblog_stats: no background drain reported its planning points")
    for o in bg:
        if o["plans"] > 20:
            print("bblog_stats: rank %s planned %s times, expected 20 at most (spaced points)"
                  % (o.get("rank"), o["plans"]))
if want[1:] == ["phased"]:
    if not bgobjs:
        print("bblog_stats: no background drain reported its planning points")
    for o in bgobjs:
        if o.get("plans", 0) > 10:
            print("bblog_stats: rank %s planned %s times, expected 10 at most (a point at each "
                  "phase's end)" % (o.get("rank"), o.get("plans")))
        # A phase ended by the quiet gap lasts 0.2 s at least; one ended by the point at its
        # last call lasts as long as its writes. The last phase ends at close either way.
        short = [p for p in o.get("phases", [])[:-1] if p[1] - p[0] < 0.2]
        if len(short) < 3:
            print("bblog_stats: rank %s: %d phases ended before the quiet gap, expected 3 at "
                  "least (the point at a phase's last call ends it): %s"
                  % (o.get("rank"), len(short), o.get("phases")))
if want[1:] == ["planned"]:
    most = {}
    for o in bgobjs:
        most[o.get("rank")] = max(most.get(o.get("rank"), 0), o.get("plans", 0))
    if not most:
        print("bblog_stats: no background drain reported its planning points")
    for rank, plans in sorted(most.items(), key=str):
        if plans < 2:
            print("bblog_stats: rank %s planned %s times, expected 2 (a point among the "
                  "collective writes after the empty one)" % (rank, plans))
if want[1:] in (["closedrain"], ["closealone"], ["closebatch"]):
    got = [o.get("bytes_drained", 0) for o in objs[:2]]
    if want[1:] == ["closebatch"]:
        chunks = [sum(o.get("batch_chunks", 0) for o in bgobjs
                      if str(o.get("file", "")).endswith(".big") == big) for big in (False, True)]
        if got != [0, 0] or chunks[0] <= 0 or chunks[1] != 0:
            print("bblog_stats: bytes_drained at the closes %s, batch chunks of the drains "
                  "after them %s: expected no drain at close, the small pieces in a node "
                  "batch and the large extents not (ad_bblog_bg_batch.c)" % (got, chunks))
    if want[1:] == ["closedrain"] and (got[0] <= 0 or got[1] != 0):
        print("bblog_stats: bytes_drained at the closes %s, expected the small pieces' close to "
              "drain and the large extents' not (ad_bblog_close.c)" % got)
    if want[1:] == ["closealone"] and got != [0, 0]:
        print("bblog_stats: bytes_drained at the closes %s, expected none "
              "(BBLOG_DEBUG_CLOSE_ALONE=1)" % got)
if want[1:] in (["syncalone"], ["syncagree"]):
    expect = 7 if want[1:] == ["syncalone"] else 0
    if objs[0].get("syncs_alone") != expect:
        print("bblog_stats: syncs_alone %s, expected %d (t_syncalone at 3 ranks: the syncs of "
              "phases 1, 2, 6, 8, 9 and both of 10 make no collective call%s)"
              % (objs[0].get("syncs_alone"), expect,
                 "" if expect else "; BBLOG_DEBUG_SYNC_AGREE=1"))
through = sum(o.get("bytes_through", 0) for o in objs)
if want[1:] == ["through"] and through <= 0:
    print("bblog_stats: bytes_through 0: no write went straight to the PFS file")
if want[1:] == ["nothrough"] and through != 0:
    print("bblog_stats: bytes_through %d, expected 0 (every write logged)" % through)
# oneask: the first object's reads (t_nodeasks' blocks; its reopen to check the file is the
# second) each had bytes on one other node only,
# and asked that node alone: at most one request per ask (none for a block of its own node),
# and some requests (every rank read a block of another node).
if want[1:] == ["oneask"]:
    o = objs[0]
    asks, reqs, n = o.get("other_node_asks", 0), o.get("other_node_requests", -1), o["nprocs"]
    if asks < n:
        print("bblog_stats: %s reads asked other nodes, expected %d at least" % (asks, n))
    if reqs < 1 or reqs > asks:
        print("bblog_stats: %s requests for %s asks, expected one at most each (only the node "
              "holding the range)" % (reqs, asks))
for o in objs:
    if want[1:] == ["ext"] and o.get("extents_drained", -1) > o.get("nprocs", 0):
        print("bblog_stats: %s extents drained by %s processes, expected one per process at most"
              % (o.get("extents_drained"), o.get("nprocs")))
PY
}

# bblog_max_size below the data: one warning on stderr for the whole job (one process, whichever
# fills the burst buffer first), naming the directory by its absolute path and what bblog does
# about it (bblog(7)). Prints the problem, if any.
check_warning() {
    local log=$1 bb=$2 count
    count=$(grep 'bblog: warning:' "$log" | grep -F "burst buffer $(realpath "$bb")/bblog-" |
        grep -c 'straight to the parallel file system')
    [ "$count" = 1 ] ||
        echo "$count warnings naming the burst buffer $bb and what bblog does (1 expected)"
}

# bblog_sync=bb: one note on stderr for the whole job that sync-barrier-sync no longer shows the
# data to other processes (bblog(7)); WANT 0: none (bblog_sync=pfs). Prints the problem, if any.
check_syncnote() {
    local log=$1 want=$2 count
    count=$(grep -c 'bblog: note: bblog_sync=bb .*sync-barrier-sync' "$log")
    [ "$count" = "$want" ] || echo "$count notes about bblog_sync=bb on stderr ($want expected)"
}

# The reference files of plain ROMIO depend on the program, its rank count and the hints ROMIO
# reads, not on the bblog_* hints (which ufs ignores): a case that repeats an earlier case's
# program, ranks and other hints (the background modes, the pseudo-nodes, ...) compares with that
# case's ufs files instead of running plain ROMIO again. MPITEST_REF=fresh runs every ufs leg;
# MPITEST_REF=check runs it as well and fails where its files differ from the reused ones.
declare -A ufs_ref=()
ref_mode=${MPITEST_REF:-reuse}
case $ref_mode in
reuse | fresh | check) ;;
*) echo "run-diff: MPITEST_REF=$ref_mode: expected reuse, fresh or check" >&2; exit 1 ;;
esac

# HINTS without its bblog_* keys, in a fixed order.
ufs_hints() {
    tr ';' '\n' <<<"$1" | grep -v '^bblog_' | LC_ALL=C sort | tr '\n' ';'
}

# reuse_ref NAME PROG N HINTS FROM DIR: FROM's ufs files become DIR's reference (hard links, or
# copies where the file system has none). With MPITEST_REF=check, runs plain ROMIO in DIR as
# well and compares. Prints the line of the leg.
reuse_ref() {
    local name=$1 prog=$2 n=$3 hints=$4 from=$5 dir=$6 s why=
    if [ "$ref_mode" = check ]; then
        run_leg "$dir" ufs ${hints:+"TEST_HINTS=$hints"} -- -n "$n" "$bin/$prog" "ufs:$dir/ufs.out"
        check_leg "$dir" ufs.out 0
        why=$leg_why
        remove_bb
        [ "$(suffixes "$dir" ufs.out)" = "$(suffixes "$from" ufs.out)" ] ||
            why="${why:+$why; }other files than ${from#"$work/"}'s"
        while IFS= read -r s; do
            s=${s#OUT}
            cmp -s "$from/ufs.out$s" "$dir/ufs.out$s" ||
                why="${why:+$why; }ufs.out$s differs from ${from#"$work/"}'s"
        done < <(suffixes "$from" ufs.out)
        rm -f "$dir"/ufs.out "$dir"/ufs.out.*
    fi
    while IFS= read -r s; do
        s=${s#OUT}
        ln "$from/ufs.out$s" "$dir/ufs.out$s" 2>/dev/null ||
            cp "$from/ufs.out$s" "$dir/ufs.out$s" || why="${why:+$why; }cannot copy ufs.out$s"
    done < <(suffixes "$from" ufs.out)
    if [ -n "$why" ]; then
        echo "FAIL $name $n ufs: reference of ${from#"$work/"}: $why"
        failures="$failures
  $name $n ufs: $why"
        keep_work=1
        return 1
    fi
    echo "REF  $name $n ufs: the files of ${from#"$work/"} (same program, ranks and ROMIO hints)"
}

# A differential case: run_case NAME PROG N HINTS [OPTIONS]
# OPTIONS, comma-separated: keep (bblog_keep_logs=true is in HINTS: logs must remain), stats=N
# (bblog_stats to a file, N objects expected; N:peers, N:nopeers, see check_stats), warn (HINTS
# set bblog_max_size below the data: exactly one warning about the full burst buffer in the
# job, see check_warning), syncnote=N (N notes about bblog_sync=bb, see check_syncnote),
# valgrind (the bblog leg runs under valgrind, no force leg), leaks (valgrind, and the definite
# leaks it finds are errors), nested (one more leg with the inner
# driver named: bblog:ufs:PATH), noforce (no force leg: the mode under test is in the hints),
# env=VAR=VALUE (set in the environment of the bblog legs), notrunc (in the bblog legs every
# ftruncate of the output file fails, through test/faults/bbfault.c, and none may be tried),
# noread (likewise every preadv of a data log, the drain's reads of the node's logs: a drain
# that writes from the mapped logs reads none), nopread (every pread and preadv of a data log:
# an independent drain writes from its own mapped log), nopfsread (every pread and preadv of
# the output file fails: the program reads nothing back, and a drain that writes runs of
# pieces alone reads nothing of the holes between them), nolock (every waiting fcntl lock of the
# output file fails, as without byte-range locks: data sieving must then not be used, and some
# lock must have been tried), noserver (every listen() after MPI_Init's
# fails: no read server starts, so processes write straight to the PFS file, each rank warns
# once per file, and the file and every read must still be right), sharedwarn (bblog_shared_bb
# =true where each node has a burst buffer of its own: one warning in the job that the logs of
# other nodes cannot be opened), smallbb=SIZE (the bblog legs' burst buffer is a tmpfs of SIZE,
# mounted in a private mount namespace: full, the logs cannot grow nor the lists of published
# writes; one node only, and the logs left are not looked for, the tmpfs going with the leg).
run_case() {
    local name=$1 prog=$2 n=$3 hints=$4 opts=${5:-}
    local dir=$work/$name.$n keep=0 stats= warn=0 syncnote= vg=0 nested=0 noforce=0 ref_ok=0
    local noserver=0 sharedwarn=0 nolock=0 small= leaks=0
    local mode target
    local base why s
    local want got
    local hint_leg o ref_key=
    local -a envs pre extra_env=()
    for o in ${opts//,/ }; do
        case $o in
        keep) keep=1 ;;
        stats=*) stats=${o#stats=} ;;
        warn) warn=1 ;;
        sharedwarn) sharedwarn=1 ;;
        smallbb=*) small=${o#smallbb=} ;;
        syncnote=*) syncnote=${o#syncnote=} ;;
        valgrind) vg=1 ;;
        leaks) vg=1 leaks=1 ;;
        nested) nested=1 ;;
        noforce) noforce=1 ;;
        env=*) extra_env+=("${o#env=}") ;;
        notrunc)
            extra_env+=(LD_PRELOAD="$bin/bbfault.so" BBFAULT_OP=ftruncate BBFAULT_TIMES=0
                        BBFAULT_PATH="$dir/" BBFAULT_LOG="$dir/truncs.log")
            ;;
        noread)
            extra_env+=(LD_PRELOAD="$bin/bbfault.so" BBFAULT_OP=preadv BBFAULT_TIMES=0
                        BBFAULT_PATH=.data BBFAULT_LOG="$dir/reads.log")
            ;;
        nopread)
            extra_env+=(LD_PRELOAD="$bin/bbfault.so" BBFAULT_OP=pread BBFAULT_TIMES=0
                        BBFAULT_PATH=.data BBFAULT_LOG="$dir/reads.log")
            ;;
        nopfsread)
            extra_env+=(LD_PRELOAD="$bin/bbfault.so" BBFAULT_OP=pread BBFAULT_TIMES=0
                        BBFAULT_PATH="$dir/" BBFAULT_LOG="$dir/pfsreads.log")
            ;;
        nolock)
            nolock=1
            extra_env+=(LD_PRELOAD="$bin/bbfault.so" BBFAULT_OP=lock BBFAULT_TIMES=0
                        BBFAULT_PATH="$dir/" BBFAULT_LOG="$dir/locks.log")
            ;;
        noserver)
            noserver=1
            extra_env+=(LD_PRELOAD="$bin/bbfault.so" BBFAULT_OP=listen BBFAULT_TIMES=0)
            ;;
        *) echo "run-diff: unknown option $o" >&2; exit 1 ;;
        esac
    done
    [ "$legs" = cross ] && [ "$n" -lt 2 ] && return
    [ "$legs" = cross ] && noforce=1
    mkdir -p "$dir"
    local modes="ufs bblog force"
    [ "$vg" = 1 ] || [ "$noforce" = 1 ] && modes="ufs bblog"
    [ "$nested" = 1 ] && modes="$modes nested"
    for mode in $modes; do
        pre=()
        hint_leg=$hints
        case $mode in
        ufs) base=ufs.out target=ufs:$dir/ufs.out envs=() ;;
        bblog) base=bb.out target=bblog:$dir/bb.out envs=() ;;
        force) base=force.out target=$dir/force.out envs=(ROMIO_FSTYPE_FORCE=bblog:) ;;
        nested) base=nested.out target=bblog:ufs:$dir/nested.out envs=() ;;
        esac
        if [ "$mode" != ufs ] && { [ "$vg" = 1 ] || [ "$vg_all" = force ] ||
            { [ "$vg_all" = bblog ] && [ "$mode" != force ]; }; }; then
            pre=("${vg_cmd[@]}")
            [ "$leaks" = 1 ] && [ -z "$vg_all" ] &&
                pre+=(--leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite
                      --num-callers=30)
            mode=$mode+valgrind
        fi
        [ -n "$stats" ] && hint_leg="${hints:+$hints;}bblog_stats=$dir/$mode.stats"
        [ -n "$hint_leg" ] && envs+=("TEST_HINTS=$hint_leg")
        [ "$mode" != ufs ] && envs+=("${extra_env[@]}")
        rm -f "$dir/$mode.diff"
        if [ "$mode" = ufs ]; then
            ref_key="$prog $n $(ufs_hints "$hints")"
            if [ -n "${ufs_ref[$ref_key]:-}" ] && [ "$ref_mode" != fresh ]; then
                reuse_ref "$name" "$prog" "$n" "$hint_leg" "${ufs_ref[$ref_key]}" "$dir" ||
                    failed=$((failed + 1))
                ref_ok=1
                continue
            fi
        fi
        leg_small=
        [ "$mode" != ufs ] && leg_small=$small
        run_leg "$dir" "$mode" "${envs[@]}" -- -n "$n" "${pre[@]}" "$bin/$prog" "$target"
        leg_small=
        check_leg "$dir" "$base" "$keep"
        why=$leg_why
        if [ "$mode" != ufs ]; then
            local extra=
            [ "$keep" = 1 ] && extra=$(check_kept_logs "$leg_bb")
            [ -n "$stats" ] && extra="$extra$(check_stats "$dir/$mode.stats" "$stats")"
            [ "$warn" = 1 ] && extra="$extra$(check_warning "$leg_log" "$leg_bb")"
            [ -n "$syncnote" ] && extra="$extra$(check_syncnote "$leg_log" "$syncnote")"
            [ "$sharedwarn" = 1 ] &&
                [ "$(grep -c 'bblog: warning: bblog_shared_bb=true, but' "$leg_log")" != 1 ] &&
                extra="$extra not one warning that bblog_shared_bb=true finds no shared logs"
            [ -s "$dir/truncs.log" ] && extra="$extra the driver resized the file (it must not \
here; bbfault made it fail): $(head -n 1 "$dir/truncs.log")"
            rm -f "$dir/truncs.log"
            [ -s "$dir/reads.log" ] && extra="$extra the drain read the logs instead of writing \
from their mappings (bbfault made the read fail): $(head -n 1 "$dir/reads.log")"
            rm -f "$dir/reads.log"
            [ -s "$dir/pfsreads.log" ] && extra="$extra the drain read the output file \
(read-modify-write of the holes between pieces; bbfault made the read fail): \
$(head -n 1 "$dir/pfsreads.log")"
            rm -f "$dir/pfsreads.log"
            [ "$nolock" = 1 ] && [ ! -s "$dir/locks.log" ] &&
                extra="$extra no byte-range lock of the file was tried (bbfault had nothing to fail)"
            rm -f "$dir/locks.log"
            [ "$noserver" = 1 ] && ! grep -q 'no read server' "$leg_log" &&
                extra="$extra no warning that the read servers could not start"
            [ -n "$extra" ] && why="${why:+$why; }$(echo $extra)"
        fi
        if [ "$mode" = ufs ]; then
            [ -z "$why" ] && ref_ok=1 && ufs_ref[$ref_key]=$dir
        elif [ "$ref_ok" = 1 ]; then
            want=$(suffixes "$dir" ufs.out)
            got=$(suffixes "$dir" "$base")
            if [ "$want" != "$got" ]; then
                why="${why:+$why; }files differ from ufs: ufs has [$(echo $want)],"
                why="$why $mode has [$(echo $got)]"
            else
                while IFS= read -r s; do
                    s=${s#OUT}
                    if ! cmp -s "$dir/ufs.out$s" "$dir/$base$s"; then
                        why="${why:+$why; }$base$s differs from ufs.out$s"
                        describe_diff "$dir/ufs.out$s" "$dir/$base$s" >>"$dir/$mode.diff"
                    fi
                done <<<"$want"
            fi
        else
            why="${why:+$why; }no reference (the ufs leg failed)"
        fi
        if [ -z "$why" ]; then
            report PASS "$name" "$n" "$mode"
        elif [ "$mode" = ufs ]; then
            # Plain ROMIO is the reference: when it fails, the test bed (the MPI, the file
            # system, the cluster) is broken, and nothing here says anything about bblog.
            harness_faults="$harness_faults
  $name $n: $why"
            report FAIL "$name" "$n" "$mode" "HARNESS FAULT: the reference leg (plain ROMIO," \
                "no bblog) failed: $why"
        else
            report FAIL "$name" "$n" "$mode" "$why"
            [ -s "$dir/$mode.diff" ] && head -n 40 "$dir/$mode.diff"
            show_log "$leg_log"
        fi
        remove_bb
    done
}

# An error-path case, through bblog only, by prefix (bblog leg) and by ROMIO_FSTYPE_FORCE=bblog:
# (force leg): run_err NAME N EXPECT VAR [ENV=VAL...]
# EXPECT empty: the built-in cases of t_errors (with a read-only directory if one can be made);
# else an MPI error class name the open must fail with, because of the given BBLOG_* variables,
# with a message naming the variable VAR and its value (VAR empty: nothing to name).
run_err() {
    local name=$1 n=$2 expect=$3 var=$4 mode base target tag
    shift 4
    local dir=$work/$name.$n
    local -a args=() envs pre
    local modes="bblog force"
    [ "$legs" = cross ] && [ "$n" -lt 2 ] && return
    [ "$legs" = cross ] && modes=bblog
    mkdir -p "$dir"
    [ -n "$expect" ] && args=("env:$expect" ${var:+"$var"})
    for mode in $modes; do
        envs=("$@")
        # Under MPITEST_VALGRIND=all the force leg runs plainly, as in run_case.
        pre=() tag=
        if [ -n "$vg_all" ] && { [ "$vg_all" = force ] || [ "$mode" = bblog ]; }; then
            pre=("${vg_pre[@]}") tag=$vg_tag
        fi
        leg_ro=
        if [ -z "$expect" ]; then
            if [ -n "$ro_method" ]; then
                leg_ro=$dir/ro
                mkdir -p "$leg_ro"
                [ "$ro_method" = chmod ] && chmod 0555 "$leg_ro"
                envs+=("TEST_RO_DIR=$leg_ro")
            elif [ "$mode" = bblog ]; then
                echo "NOTE $name $n: running as root without mount rights: read-only bblog_dir" \
                    "not checked"
            fi
        fi
        case $mode in
        bblog) base=bb.out target=bblog:$dir/bb.out ;;
        force) base=force.out target=$dir/force.out envs+=(ROMIO_FSTYPE_FORCE=bblog:) ;;
        esac
        run_leg "$dir" "$mode$tag" "${envs[@]}" -- -n "$n" "${pre[@]}" "$bin/t_errors" \
            "$target" "${args[@]}"
        leg_ro=
        check_leg "$dir" "$base" 0
        if [ -z "$leg_why" ]; then
            report PASS "$name" "$n" "$mode$tag"
        else
            report FAIL "$name" "$n" "$mode$tag" "$leg_why"
            show_log "$leg_log"
        fi
        grep -h '^t_errors: note' "$leg_log" | sed "s/^t_errors: note: /NOTE $name $n $mode: /"
        remove_bb
    done
}

# Hints differing between ranks through the environment: MPMD launch, one rank per value.
run_err_mpmd() {
    local name=$1 key=$2 v0=$3 v1=$4 expect=$5
    local dir=$work/$name.2
    mkdir -p "$dir"
    if [ "$ompi" = yes ]; then
        # Open MPI has no per-context -env: env(1) sets the variable and execs the program.
        run_leg "$dir" "bblog$vg_tag" -- -n 1 env "$key=$v0" "${vg_pre[@]}" "$bin/t_errors" \
            "bblog:$dir/bb.out" "env:$expect" : -n 1 env "$key=$v1" "${vg_pre[@]}" \
            "$bin/t_errors" "bblog:$dir/bb.out" "env:$expect"
    else
        run_leg "$dir" "bblog$vg_tag" -- -n 1 -env "$key" "$v0" "${vg_pre[@]}" "$bin/t_errors" \
            "bblog:$dir/bb.out" "env:$expect" : -n 1 -env "$key" "$v1" "${vg_pre[@]}" \
            "$bin/t_errors" "bblog:$dir/bb.out" "env:$expect"
    fi
    check_leg "$dir" bb.out 0
    if [ -z "$leg_why" ]; then
        report PASS "$name" 2 "bblog$vg_tag"
    else
        report FAIL "$name" 2 "bblog$vg_tag" "$leg_why"
        show_log "$leg_log"
    fi
    remove_bb
}

patterns=("$@")
small="bblog_flush_buffer_size=64k"
tiny="bblog_max_size=256k"

# name            program      ranks        hints / option
cases=(
    "t_contig        t_contig     1 2 4"
    "t_strided       t_strided    2 4 8"
    "t_noncontig     t_noncontig  1 2 3 4 8"
    "t_view          t_view       1 3"
    "t_overlap       t_overlap    2 3 4"
    "t_raw           t_raw        1 2 4"
    "t_size          t_size       1 2 3"
    "t_atomic        t_atomic     2 4"
    "t_shared        t_shared     1 2 4"
    "t_nonblock      t_nonblock   2 3"
    "t_manyfiles     t_manyfiles  2 3"
    "t_delete        t_delete     1 2"
    "t_empty         t_empty      1 3"
    "t_errhan        t_errhan     1 2"
    "t_threads       t_threads    1 2"
    "t_ordered       t_ordered    1 2 3 4"
    "t_completion    t_completion 1 2 3"
    "t_hints         t_hints      3 4"
    "t_collread      t_collread   2 3 4"
    "t_twofh         t_twofh      1 2 3"
    "t_xorder        t_xorder     1 2 3 4"
    "t_selfsync      t_selfsync   2 3 4"
    "t_selfgrow      t_selfgrow   1 2 4"
    "t_sieve         t_sieve      1 2 4"
    "t_closebb       t_closebb    2 4"
    "t_batchfh       t_batchfh    2 4"
    "t_batchmix      t_batchmix   2 4"
    "t_peerread      t_peerread   1 2 3 6"
    "t_subcomm       t_subcomm    1 2 4 6"
    "t_merge         t_merge      1 3 4"
    "t_holes         t_holes      1 2 4"
    "t_syncalone     t_syncalone  1 2 3 4"
    "t_durable       t_durable    1 2 3"
    "t_idlewait      t_idlewait   2 4"
    "t_extent        t_extent     1 2 4"
)
# Types of MPI 4's large-count constructors in views and memory types: the layer over a binary
# MPI decodes them (adio/layer/13-large-count-type-queries.patch); MPICH 4.0.2's own ROMIO, the
# graft's, aborts on them (it asks MPI_Type_get_envelope, which MPICH refuses for such types).
# (Open MPI 5 has no large-count constructors: no such types to test there.)
[ -n "${BBLOG_LAYER_MPI:-}" ] && grep -q MPI_Type_contiguous_c "$BBLOG_LAYER_MPI/include/mpi.h" &&
    cases+=("t_largecount    t_largecount 1 2 4")
for c in "${cases[@]}"; do
    read -r name prog ranks <<<"$c"
    selected "$name" || continue
    for n in $ranks; do
        run_case "$name" "$prog" "$n" ""
    done
done

# Background drains (ad_bblog_bg.c): the whole table again, at its middle rank count, in each
# mode, plus t_bgdrain (writes while the drain runs) at 1-4 ranks. closebb: close returns with
# the data on the burst buffer only; the runner compares files after the job (MPI_Finalize
# waits for the drains); the programs' own re-opens wait for them too. closebb and bgclosebb
# leave everything to the drain after close, small pieces too (BBLOG_DEBUG_CLOSE_ALONE=1);
# modebb and lognodebb take the close's rule (small leftovers drained at close where no node
# batch takes them). Where pieces are small, the one-node modes drain them in node batches
# (ad_bblog_bg_batch.c), lognodebb from the slots of the node's log pair, but bgclosebb
# (BBLOG_DEBUG_NO_BATCH=1: each process's thread writes its own pieces), nodempi (no batch
# without the node exchange) and lognode (no background drain). node2bb: bblog_mode=bb on nodes of two ranks (BBLOG_DEBUG_NODE_SIZE=2), each
# node's batches of its own processes' pieces beside the other nodes', at the largest rank
# count.
# nodempi is not a background mode: the drain's node exchange off (bblog_node_exchange=mpi), so
# that ROMIO's two-phase exchange moves all the data, as on nodes whose processes cannot read
# each other's logs. resyncbb and prsyncbb: syncs that only make the logs durable, so that
# the background drains alone bring the data to the file between the opens, while reads after
# sync-barrier-sync must still see the other processes' bytes (ad_bblog_peer_list.c).
bgmodes=(
    "nodempi    bblog_node_exchange=mpi"
    "reactive   bblog_drain=reactive"
    "proactive  bblog_drain=proactive;bblog_drain_interval=0.05;bblog_segment_size=64k"
    "closebb    bblog_close=bb  env=BBLOG_DEBUG_CLOSE_ALONE=1"
    "bgclosebb  bblog_drain=proactive;bblog_close=bb  env=BBLOG_DEBUG_CLOSE_ALONE=1,env=BBLOG_DEBUG_NO_BATCH=1"
    "modebb     bblog_mode=bb"
    "resyncbb   bblog_drain=reactive;bblog_sync=bb"
    "prsyncbb   bblog_drain=proactive;bblog_drain_interval=0.05;bblog_segment_size=64k;bblog_sync=bb"
    "lognode    bblog_mapping=node"
    "lognodebb  bblog_mapping=node;bblog_mode=bb"
    "node2bb    bblog_mode=bb  env=BBLOG_DEBUG_NODE_SIZE=2"
)
for m in "${bgmodes[@]}"; do
    read -r mode hints opts <<<"$m"
    if [ -n "$vg_all" ] && [ ${#patterns[@]} -eq 0 ] && [ "$mode" != proactive ]; then
        echo "NOTE MPITEST_VALGRIND=all: background mode $mode not run (name it in a pattern)"
        continue
    fi
    for c in "${cases[@]}" "t_bgdrain t_bgdrain 1 2 3 4"; do
        read -r name prog ranks <<<"$c"
        set -- $ranks
        if [ "$mode" = node2bb ]; then
            set -- "${!#}"
            [ "$1" -ge 3 ] || continue
        elif [ "$name" != t_bgdrain ]; then
            set -- "$(eval echo \${$(( ($# + 1) / 2 ))})"
        fi
        selected "$name[$mode]" || continue
        # With bblog_close=bb only the processes that closed a file wait for its drain at a
        # re-open (bblog(7)); t_subcomm re-opens a name that another group closed.
        case $name[$mode] in t_subcomm\[*closebb\] | t_subcomm\[modebb\] | t_subcomm\[lognodebb\]) continue ;; esac
        # Node log pairs under bblog_mode=bb: the programs whose drains and reads the background
        # drain changes (the whole table runs with lognode above; CI's time is counted).
        case $name[$mode] in
        *\[lognodebb\]) case $name in t_strided | t_overlap | t_xorder | t_peerread | t_durable | \
            t_selfsync | t_bgdrain) ;; *) continue ;; esac ;;
        *\[node2bb\]) case $name in t_strided | t_overlap | t_xorder | t_peerread | t_durable | \
            t_selfsync | t_bgdrain | t_phases | t_closebb | t_batchfh | t_batchmix | t_noncontig | \
            t_view) ;;
            *) continue ;; esac ;;
        esac
        for n in "$@"; do
            run_case "$name[$mode]" "$prog" "$n" "$hints" "noforce${opts:+,$opts}"
        done
    done
done

# Nodes of two ranks (BBLOG_DEBUG_NODE_SIZE=2, ad_bblog_drain_share.c): the node exchange inside each
# pseudo-node and ROMIO's two-phase exchange between them, as on a cluster; the whole table at
# its largest rank count, and small drain buffers (many rounds). Again with one log pair per
# node (bblog_mapping=node): the node exchange reads the node's slots of one pair.
for c in "${cases[@]}"; do
    read -r name prog ranks <<<"$c"
    set -- $ranks
    n=${!#}
    [ "$n" -ge 3 ] || continue
    selected "$name[node2]" &&
        run_case "$name[node2]" "$prog" "$n" "" "noforce,env=BBLOG_DEBUG_NODE_SIZE=2"
    selected "$name[lognode,node2]" &&
        run_case "$name[lognode,node2]" "$prog" "$n" "bblog_mapping=node" \
            "noforce,env=BBLOG_DEBUG_NODE_SIZE=2"
done
selected "t_strided[lognode,stats]" &&
    run_case "t_strided[lognode,stats]" t_strided 4 "bblog_mapping=node" stats=2:pairs
selected "t_bigdata[node2,flush64k]" &&
    run_case "t_bigdata[node2,flush64k]" t_bigdata 4 "$small" "noforce,env=BBLOG_DEBUG_NODE_SIZE=2"

# A burst buffer much smaller than the data and no sync: the background drain writes the oldest
# logged bytes and gives their space back while the file is open (ad_bblog_bg_cap.c).
for r in 2 4; do
    selected "t_capacity[max1m]" && run_case "t_capacity[max1m]" t_capacity $r \
        "bblog_max_size=1m" stats=2:cap
done
selected "t_capacity[max1m,reactive]" &&
    run_case "t_capacity[max1m,reactive]" t_capacity 3 "bblog_max_size=1m;bblog_drain=reactive" \
        stats=2:cap,noforce
selected "t_capacity[max1m,closebb]" &&
    run_case "t_capacity[max1m,closebb]" t_capacity 2 "bblog_max_size=1m;bblog_close=bb" \
        noforce
selected "t_capacity[max1m,node2]" &&
    run_case "t_capacity[max1m,node2]" t_capacity 4 "bblog_max_size=1m" \
        "stats=2:cap,noforce,env=BBLOG_DEBUG_NODE_SIZE=2"
selected "t_capacity[max1m,lognode]" &&
    run_case "t_capacity[max1m,lognode]" t_capacity 3 "bblog_max_size=1m;bblog_mapping=node" \
        stats=2:cap
selected "t_capacity[max1m,solo]" && run_case "t_capacity[max1m,solo]" t_capacity 1 \
    "bblog_max_size=1m" stats=2:cap

# Budgets smaller than the data: many drain rounds, burst buffer overflow, sync to the log only.
selected "t_bigdata[flush64k]" && run_case "t_bigdata[flush64k]" t_bigdata 2 "$small"
# Large writes (1 MiB, phase D) go straight to the PFS file while nothing drains in the
# background; with bblog_through_threshold=0, or a background drain, they are logged.
selected "t_bigdata[stats]" && run_case "t_bigdata[stats]" t_bigdata 2 "" stats=2:through
selected "t_bigdata[through0,stats]" &&
    run_case "t_bigdata[through0,stats]" t_bigdata 2 "bblog_through_threshold=0" stats=2:nothrough
selected "t_bigdata[proactive,stats]" &&
    run_case "t_bigdata[proactive,stats]" t_bigdata 2 "bblog_drain=proactive" stats=2:nothrough
selected "t_bigdata[max256k]" && run_case "t_bigdata[max256k]" t_bigdata 3 "$tiny" warn,syncnote=0
selected "t_bigdata[flush64k,max256k,syncbb]" &&
    run_case "t_bigdata[flush64k,max256k,syncbb]" t_bigdata 4 "$small;$tiny;bblog_sync=bb" \
        warn,syncnote=1
# bblog_sync=bb from the environment: the note once for the job, whatever the files opened.
selected "t_contig[syncbb-env]" &&
    run_case "t_contig[syncbb-env]" t_contig 4 "" env=BBLOG_SYNC=bb,syncnote=1
selected "t_strided[flush64k]" && run_case "t_strided[flush64k]" t_strided 4 "$small"
# One node: the chunks of a round in equal runs per process, as without shared memory for the
# chunk counter (ad_bblog_drain_share.c), instead of taken in turn.
selected "t_strided[flush64k,static]" &&
    run_case "t_strided[flush64k,static]" t_strided 4 "$small" "noforce,env=BBLOG_DEBUG_STATIC_CHUNKS=1"
selected "t_bigdata[flush64k,static]" &&
    run_case "t_bigdata[flush64k,static]" t_bigdata 3 "$small" "noforce,env=BBLOG_DEBUG_STATIC_CHUNKS=1"
# One node, burst buffer in memory (/dev/shm), ufs: the drain writes the PFS straight from the
# mapped logs and reads none (noread); BBLOG_DEBUG_NO_MAP=1 makes it read them into its buffer.
selected "t_strided[noread]" && run_case "t_strided[noread]" t_strided 4 "" noread
# An independent drain (bblog_indep_threshold=1) with the burst buffer in memory writes from
# its own mapped log and reads none of it (nopread; t_strided reads nothing from the logs in
# between); nomap makes it read, a buffer at a time. The [indep1,flush64k] cases below check
# the mapped drain's bytes on the other programs.
selected "t_strided[indep1,nopread]" &&
    run_case "t_strided[indep1,nopread]" t_strided 4 "bblog_indep_threshold=1" nopread
selected "t_strided[indep1,flush64k,nopread]" &&
    run_case "t_strided[indep1,flush64k,nopread]" t_strided 4 "bblog_indep_threshold=1;$small" \
        nopread
selected "t_strided[indep1,flush64k,nomap]" &&
    run_case "t_strided[indep1,flush64k,nomap]" t_strided 4 "bblog_indep_threshold=1;$small" \
        "noforce,env=BBLOG_DEBUG_NO_MAP=1"
selected "t_strided[flush64k,nomap]" &&
    run_case "t_strided[flush64k,nomap]" t_strided 4 "$small" "noforce,env=BBLOG_DEBUG_NO_MAP=1"
selected "t_bigdata[flush64k,nomap]" &&
    run_case "t_bigdata[flush64k,nomap]" t_bigdata 3 "$small" "noforce,env=BBLOG_DEBUG_NO_MAP=1"
# The inner driver named after the prefix (bblog:ufs:/path).
selected "t_noncontig[nested]" && run_case "t_noncontig[nested]" t_noncontig 2 "" nested
# Drains always collective (bblog_indep_threshold=0), with a burst buffer too small.
selected "t_bigdata[indep0,max256k]" &&
    run_case "t_bigdata[indep0,max256k]" t_bigdata 3 "bblog_indep_threshold=0;$tiny" warn
# Drains always independent (bblog_indep_threshold=1) through a small buffer: each process
# streams its pieces a buffer at a time in one round, after one exchange of what it holds.
for c in "t_xorder 3" "t_overlap 4" "t_bigdata 3" "t_peerread 3"; do
    set -- $c
    selected "$1[indep1,flush64k]" &&
        run_case "$1[indep1,flush64k]" "$1" "$2" "bblog_indep_threshold=1;$small"
done
# A burst buffer too small for the large writes (which it would take: through0): they go
# straight to the PFS file, over bytes other processes logged before (the order of the drain,
# and of their reads).
selected "t_xorder[max256k]" &&
    run_case "t_xorder[max256k]" t_xorder 3 "$tiny;bblog_through_threshold=0" warn
selected "t_peerread[max256k]" &&
    run_case "t_peerread[max256k]" t_peerread 3 "$tiny;bblog_through_threshold=0" warn
# The file's extent and pointers after every kind of write, in the fallbacks (t_extent.c): a
# burst buffer too small (bblog_max_size), one that is full (a 1 MiB tmpfs: the lists of
# published writes cannot grow), every write logged, pseudo-nodes of one rank (other ranks'
# bytes through the read servers), their servers unable to start, and bblog_mode=bb there.
if [ -z "$cl_nodes" ]; then
    selected "t_extent[smallbb]" && run_case "t_extent[smallbb]" t_extent 4 "" smallbb=1m,noforce
    selected "t_extent[smallbb,node1]" && run_case "t_extent[smallbb,node1]" t_extent 4 "" \
        "smallbb=1m,noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
fi
selected "t_extent[max256k]" && run_case "t_extent[max256k]" t_extent 3 "$tiny" noforce
selected "t_extent[through0]" &&
    run_case "t_extent[through0]" t_extent 4 "bblog_through_threshold=0" noforce
selected "t_extent[node1]" &&
    run_case "t_extent[node1]" t_extent 4 "" "noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
selected "t_extent[node1,noserver]" && run_case "t_extent[node1,noserver]" t_extent 4 "" \
    "noforce,noserver,env=BBLOG_DEBUG_NODE_SIZE=1"
selected "t_extent[node1,modebb]" && run_case "t_extent[node1,modebb]" t_extent 4 "bblog_mode=bb" \
    "noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
# Reads ask only the nodes that announced writes in their range (ad_bblog_peer_remote.c): on
# pseudo-nodes of one rank at 2, 4 and 8 nodes, on the cluster one rank per slot of its -hosts.
if [ -n "$cl_nodes" ]; then
    slots=0
    for h in ${MPITEST_CLUSTER//,/ }; do
        c=${h#*:}
        [ "$c" = "$h" ] && c=1
        slots=$((slots + c))
    done
    selected "t_nodeasks[stats]" && run_case "t_nodeasks[stats]" t_nodeasks "$slots" "" \
        stats=4:oneask
else
    for n in 2 4 8; do
        selected "t_nodeasks[node1,stats]" && run_case "t_nodeasks[node1,stats]" t_nodeasks "$n" \
            "" "stats=4:oneask,noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
    done
fi
# The read servers on the address or interface bblog_server_addr names (loopback here).
selected "t_peerread[node1,addr]" && run_case "t_peerread[node1,addr]" t_peerread 3 \
    "bblog_server_addr=127.0.0.1" "noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
selected "t_peerread[node1,iface]" && run_case "t_peerread[node1,iface]" t_peerread 3 \
    "bblog_server_addr=lo" "noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
# Nodes whose read server cannot start (pseudo-nodes of 2): their processes write straight to the
# PFS file, where the other nodes' reads find the bytes. (Not t_peerread: its case 7 reads a
# collective write's bytes before entering that call, and written straight through they show
# early; bblog(7) says so.)
selected "t_subcomm[node2,noserver]" &&
    run_case "t_subcomm[node2,noserver]" t_subcomm 6 "" \
        "noforce,noserver,env=BBLOG_DEBUG_NODE_SIZE=2"
# A burst buffer that every node sees (bblog_shared_bb=true; on the cluster up --shared-bb):
# each drain reads every process's log, whatever its node, and each process writes its chunks
# of the file alone, with no exchange between nodes. Off the cluster the hint changes nothing.
if [ "${CLUSTER_BB_KIND:-}" = shared ]; then
    for c in "t_strided 4" "t_overlap 4" "t_xorder 4" "t_merge 4" "t_bigdata 3" "t_peerread 4" \
        "t_collread 4" "t_extent 4"; do
        set -- $c
        selected "$1[sharedbb]" && run_case "$1[sharedbb]" "$1" "$2" "bblog_shared_bb=true"
    done
    selected "t_strided[sharedbb,flush64k]" &&
        run_case "t_strided[sharedbb,flush64k]" t_strided 4 "bblog_shared_bb=true;$small"
    selected "t_strided[sharedbb,stats]" &&
        run_case "t_strided[sharedbb,stats]" t_strided 4 "bblog_shared_bb=true" stats=2:alone
    # One log pair per node there too: each drain reads the slots of every node's pair.
    for c in "t_strided 4" "t_overlap 4" "t_xorder 4" "t_peerread 4"; do
        set -- $c
        selected "$1[sharedbb,lognode]" &&
            run_case "$1[sharedbb,lognode]" "$1" "$2" "bblog_shared_bb=true;bblog_mapping=node"
    done
    selected "t_strided[sharedbb,lognode,stats]" &&
        run_case "t_strided[sharedbb,lognode,stats]" t_strided 4 \
            "bblog_shared_bb=true;bblog_mapping=node" stats=2:alone
elif [ -n "$cl_nodes" ]; then
    # The hint where each node has a burst buffer of its own: a warning, and the MPI exchange.
    selected "t_strided[sharedbb,nodelocal]" &&
        run_case "t_strided[sharedbb,nodelocal]" t_strided 4 "bblog_shared_bb=true" sharedwarn
fi
# Kept logs; statistics (t_contig opens its file twice: write, then check).
selected "t_contig[keep]" && run_case "t_contig[keep]" t_contig 2 "bblog_keep_logs=true" keep
selected "t_contig[stats]" && run_case "t_contig[stats]" t_contig 2 "" stats=2
# The node exchange is on by default and reads the other ranks' logs; off, it reads none.
selected "t_strided[stats]" && run_case "t_strided[stats]" t_strided 4 "" stats=2:peers
# Writes that continue each other, by collective and independent calls: one extent per process
# on every drain path (node exchange on one node, ROMIO's two-phase exchange, independent).
selected "t_merge[stats]" && run_case "t_merge[stats]" t_merge 4 "" stats=2:ext
selected "t_merge[stats,nodempi]" &&
    run_case "t_merge[stats,nodempi]" t_merge 4 "bblog_node_exchange=mpi" stats=2:ext
selected "t_merge[stats,indep1]" &&
    run_case "t_merge[stats,indep1]" t_merge 3 "bblog_indep_threshold=1" stats=2:ext
selected "t_strided[stats,nodempi]" &&
    run_case "t_strided[stats,nodempi]" t_strided 4 "bblog_node_exchange=mpi" stats=2:nopeers
# Planning points of a background drain spaced over hundreds of small collective writes.
selected "t_bgdrain[stats,proactive]" &&
    run_case "t_bgdrain[stats,proactive]" t_bgdrain 4 "bblog_drain=proactive" stats=2:fewplans
# A planning point that brought no bytes (set_size at open) leaves the spacing as it was.
selected "t_phases[stats,proactive]" &&
    run_case "t_phases[stats,proactive]" t_phases 2 "bblog_drain=proactive" stats=2:phased
selected "t_planspace[stats,proactive]" &&
    run_case "t_planspace[stats,proactive]" t_planspace 2 "bblog_drain=proactive" stats=2:planned
# Phases that a sync ends, the first of one write: the phases' key predicts an end every 2
# calls, and the point at such an end, followed at once by more writes of the same phase,
# drops the prediction (before: a point every 2 of t_batchmix's 100 collective calls, 29-48).
selected "t_batchmix[stats,modebb]" &&
    run_case "t_batchmix[stats,modebb]" t_batchmix 4 "bblog_mode=bb" stats=2:fewplans

# Drains that read back what they wrote (bblog_verify=true) on every path: the node exchange on
# one node, ROMIO's two-phase exchange (nodempi; node2 with the Order exchange between
# pseudo-nodes), independent drains, and background drains; none may report a difference.
selected "t_strided[verify,stats]" &&
    run_case "t_strided[verify,stats]" t_strided 4 "bblog_verify=true" stats=2:verified
selected "t_merge[verify,stats,nodempi]" &&
    run_case "t_merge[verify,stats,nodempi]" t_merge 4 "bblog_verify=true;bblog_node_exchange=mpi" \
        stats=2:verified
selected "t_merge[verify,stats,indep1]" &&
    run_case "t_merge[verify,stats,indep1]" t_merge 3 "bblog_verify=true;bblog_indep_threshold=1" \
        stats=2:verified
selected "t_overlap[verify,node2]" &&
    run_case "t_overlap[verify,node2]" t_overlap 4 "bblog_verify=true" \
        "noforce,env=BBLOG_DEBUG_NODE_SIZE=2"
selected "t_bgdrain[verify,proactive]" &&
    run_case "t_bgdrain[verify,proactive]" t_bgdrain 3 \
        "bblog_verify=true;bblog_drain=proactive;bblog_drain_interval=0.05;bblog_segment_size=64k" \
        noforce

# One-process handles of a shared file drain at the same moment: none may resize the file.
selected "t_selfgrow[notrunc]" && run_case "t_selfgrow[notrunc]" t_selfgrow 4 "" notrunc
# Pieces of the node's processes with holes between them: each chunk's runs written alone, the
# holes neither read nor written (a read-modify-write of them read the PFS file back).
# Syncs without an agreement (ad_bblog_flush.c): the syncs of t_syncalone's phases 1, 2, 6, 8, 9
# and 10 make no collective call (syncs_alone), and none do under BBLOG_DEBUG_SYNC_AGREE=1.
selected "t_syncalone[stats]" && run_case "t_syncalone[stats]" t_syncalone 3 "" \
    stats=2:syncalone
selected "t_syncalone[stats,agree]" && run_case "t_syncalone[stats,agree]" t_syncalone 3 "" \
    "stats=2:syncagree,noforce,env=BBLOG_DEBUG_SYNC_AGREE=1"
selected "t_holes[nopfsread]" && run_case "t_holes[nopfsread]" t_holes 4 "" nopfsread,stats=1:alone
selected "t_holes[nopfsread,nomap]" &&
    run_case "t_holes[nopfsread,nomap]" t_holes 4 "" nopfsread,env=BBLOG_DEBUG_NO_MAP=1
# PnetCDF's independent data mode: the SELF handles' drains read and write back the holes
# between their blocks (data sieving, under byte-range locks), unless romio_ds_write=disable or
# the file system has no byte-range locks (nolock: every fcntl lock fails).
# stats: 4 SELF handles, the WORLD one and the check's read-back.
# bblog_close=bb: what is left at close in small interleaved pieces goes to the drain threads as
# a node batch (ad_bblog_bg_batch.c); where no batch can take it (BBLOG_DEBUG_NO_BATCH=1) the close
# drains it collectively; large extents are left to the background drain (ad_bblog_close.c).
# BBLOG_DEBUG_CLOSE_ALONE=1: the close never drains (as the closebb and bgclosebb modes above
# run the whole table). With bblog_drain=on_demand the thread writes nothing before close, so
# what is left does not depend on how fast it was.
selected "t_closebb[closebb,stats]" &&
    run_case "t_closebb[closebb,stats]" t_closebb 4 "bblog_close=bb" stats=4:closebatch,noforce
selected "t_closebb[closebb,nobatch,stats]" &&
    run_case "t_closebb[closebb,nobatch,stats]" t_closebb 4 "bblog_close=bb" \
        "stats=4:closedrain,noforce,env=BBLOG_DEBUG_NO_BATCH=1"
# Nodes of two ranks: each node's small pieces in a batch of its own; one log pair per node: the
# batch reads the pair's slots; nodes of one rank: a batch of one process writes its pieces one
# request each, so the close drains them collectively.
selected "t_closebb[closebb,node2,stats]" &&
    run_case "t_closebb[closebb,node2,stats]" t_closebb 4 "bblog_close=bb" \
        "stats=4:closebatch,noforce,env=BBLOG_DEBUG_NODE_SIZE=2"
selected "t_closebb[closebb,lognode,stats]" &&
    run_case "t_closebb[closebb,lognode,stats]" t_closebb 4 "bblog_close=bb;bblog_mapping=node" \
        "stats=4:closebatch,noforce"
selected "t_closebb[closebb,node1,stats]" &&
    run_case "t_closebb[closebb,node1,stats]" t_closebb 4 "bblog_close=bb" \
        "stats=4:closedrain,noforce,env=BBLOG_DEBUG_NODE_SIZE=1"
selected "t_closebb[closebb,alone,stats]" &&
    run_case "t_closebb[closebb,alone,stats]" t_closebb 4 "bblog_close=bb" \
        "stats=4:closealone,noforce,env=BBLOG_DEBUG_CLOSE_ALONE=1"
selected "t_sieve[stats]" && run_case "t_sieve[stats]" t_sieve 4 "" stats=6:sieved
selected "t_sieve[nolock,stats]" &&
    run_case "t_sieve[nolock,stats]" t_sieve 4 "" stats=6:nosieve,nolock
selected "t_sieve[nods,stats]" &&
    run_case "t_sieve[nods,stats]" t_sieve 4 "romio_ds_write=disable" stats=6:nosieve

# Error paths.
if selected t_errors; then
    run_err t_errors 2 "" ""
    run_err t_errors 3 "" ""
fi
# Bad values of BBLOG_* variables: hints' defaults and the tests' BBLOG_DEBUG_* switches alike
# fail the open with MPI_ERR_INFO_VALUE naming the variable and the value (a long value is
# shown cut short, after the name); valid ones as controls.
if selected "t_errors[env]"; then
    long=$(printf 'x%.0s' $(seq 300))
    for c in "flush-garbage BBLOG_FLUSH_BUFFER_SIZE 12q" "sync-bogus BBLOG_SYNC bogus" \
        "sync-long BBLOG_SYNC $long" "nodesize-word BBLOG_DEBUG_NODE_SIZE abc" \
        "nodesize-neg BBLOG_DEBUG_NODE_SIZE -2" "nodesize-huge BBLOG_DEBUG_NODE_SIZE 99999999999" \
        "static-2 BBLOG_DEBUG_STATIC_CHUNKS 2" "static-word BBLOG_DEBUG_STATIC_CHUNKS yes" \
        "nomap-1x BBLOG_DEBUG_NO_MAP 1x" "nomap-empty BBLOG_DEBUG_NO_MAP ''" \
        "server-addr-bad BBLOG_SERVER_ADDR 'eth0;reboot'" \
        "server-addr-long BBLOG_SERVER_ADDR averyveryverylonginterfacename"; do
        eval "set -- $c"
        run_err "t_errors[env-$1]" 2 MPI_ERR_INFO_VALUE "$2" "$2=$3"
    done
    run_err "t_errors[env-dir-missing]" 2 MPI_ERR_NO_SUCH_FILE "" "BBLOG_DIR=$work/no-such-dir"
    run_err "t_errors[env-flush-valid]" 2 MPI_SUCCESS "" BBLOG_FLUSH_BUFFER_SIZE=64k
    run_err "t_errors[env-debug-valid]" 2 MPI_SUCCESS "" BBLOG_DEBUG_NODE_SIZE=1 \
        BBLOG_DEBUG_STATIC_CHUNKS=0 BBLOG_DEBUG_NO_MAP=1
    run_err_mpmd "t_errors[env-flush-differs]" BBLOG_FLUSH_BUFFER_SIZE 64k 128k MPI_ERR_NOT_SAME
fi

# Valgrind on 2 ranks, bblog leg.
if selected valgrind; then
    if command -v valgrind >/dev/null 2>&1; then
        for p in t_noncontig t_raw t_size; do
            # 2 ranks under valgrind take 95 s on Open MPI at load 30 (its progress threads).
            tmo=${MPITEST_TIMEOUT:-$((tmo > 600 ? tmo : 600))} run_case "$p[valgrind]" "$p" 2 "" valgrind
        done
        # What a handle of one process keeps (its index by log offset, for giving log space
        # back: ad_bblog_bg_cap.c) goes with its last close: no definite leak.
        tmo=${MPITEST_TIMEOUT:-$((tmo > 600 ? tmo : 600))} run_case "t_size[valgrind,leaks]" \
            t_size 1 "" valgrind,leaks
    elif [ -n "${CI:-}" ]; then
        report FAIL valgrind - - "valgrind not installed (scripts/install-deps.sh)"
    else
        echo "NOTE valgrind not installed: valgrind subset not run"
    fi
fi

if [ -s "$work/timings" ]; then
    echo "run-diff: slowest runs (ms):"
    sort -rn "$work/timings" | head -n 8 | sed "s|$work/||; s/^/  /"
fi
if [ -n "$failures" ]; then
    echo "failed:$failures"
fi
if [ -n "$harness_faults" ]; then
    echo "run-diff: HARNESS FAULT: plain ROMIO's own legs failed, so the test bed is broken" \
        "(the file system is not coherent, or the MPI fails): fix the bed, never retry:" \
        "$harness_faults"
fi
if [ -z "$keep_work" ]; then
    rm -rf "$work"
else
    echo "run-diff: work directory kept: $work"
fi
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
