#!/bin/bash
# run-cluster.sh - bblog's MPI tests across the nodes of the emulated cluster (scripts/cluster.sh),
# at two shapes: 2 nodes x 2 ranks (-hosts n1:2,n2:2) and 4 nodes x 1 rank (n1:1,...,n4:1).
# For each shape it brings a cluster up, runs
#   - the MPI differential suite (test/mpi/run-diff.sh): a fixed part of it, or all with --all;
#   - ROMIO's own test programs (test/romio/run-romio-tests.sh --quick): a fixed part, or all
#     with --all;
#   - crash recovery across nodes (test/crash/run-crash.sh): a complete run per sync mode, then
#     killed runs, the whole job or one node's ranks, `bblog replay` on every node after each;
#   - at the first shape, the read servers of a job on n1 and n2 attacked by a process on n1
#     (test/mpi/run-srvattack.sh);
#   - at the first shape, with --hdf5-dir, HDF5's t_mpi and t_filters_parallel through bblog
#     (test/apps/run-hdf5-testpar.sh): processes read what processes of other nodes wrote, a
#     compressed chunk among it;
#   - at the first shape, Slurm (test/cluster/run-slurm.sh): jobs submitted with sbatch, one
#     run to its end and one killed with scancel, recovered by tools/bblog-slurm-epilog;
#   - then on 2 nodes x 2 ranks that share one burst buffer: the differential suite's sharedbb
#     cases (bblog_shared_bb=true: the drain reads every node's logs), crash recovery with that
#     hint, replayed in place by one node, and Slurm again (the epilog's other configuration);
# and takes the cluster down again, also when something failed. Files are compared with the ufs
# run's on the same cluster, and every node's burst buffer must be empty after a clean close.
#
# Usage: run-cluster.sh [--all | --quick] [--shapes "2x2 4x1"] [--crash-runs N] [--logs DIR]
#                       [--hdf5-dir DIR] [--keep-up]
#   --all           every case of the differential suite and every ROMIO program (about an
#                   hour per shape on 2 cores)
#   --quick         CI's part: the fixed part at the first shape, fewer cases, 12 ROMIO
#                   programs and half the killed runs at the others, and of the differential
#                   suite only the legs that cross nodes (MPITEST_LEGS=cross: no one-process
#                   case, no force leg); without it: the fixed part, every leg, and 28 ROMIO
#                   programs at every shape, about 7 minutes a shape
#   --shapes        which shapes (NODESxRANKS), default "2x2 4x1"
#   --crash-runs N  killed runs per shape (default 4)
#   --logs DIR      where each runner's output goes, as TEST.SHAPE.log (default
#                   /tmp/run-cluster); the last line of each is its "N passed, M failed"
#   --hdf5-dir DIR  the HDF5 build of scripts/build-hdf5.sh (what its --prefix-out names)
#   --keep-up       leave the last cluster up (scripts/cluster.sh down takes it away)
# Environment: BBLOG_ENV_SCRIPT (the bblog MPI's environment script; default
# /var/cache/bblog/current/bin/bblog-env.sh), BBLOG_TOOL (the bblog command: default
# tools/bblog of the build directory, $PWD), CLUSTER_ROOT (scripts/cluster.sh).
# Needs root, iproute2, util-linux's nsenter and unshare, GlusterFS, Slurm and munge
# (scripts/install-deps.sh).
# Exit: 0 all passed; 1 something failed or the cluster could not be built.
set -u

here=$(cd "$(dirname "$0")/../.." && pwd)
cluster=$here/scripts/cluster.sh
all=0
shapes="2x2 4x1"
crash_runs=4
keep_up=0
quick=0
logs=/tmp/run-cluster
hdf5_dir=
while [ $# -gt 0 ]; do
    case $1 in
    --all) all=1; shift ;;
    --quick) quick=1; shift ;;
    --shapes) shapes=$2; shift 2 ;;
    --crash-runs) crash_runs=$2; shift 2 ;;
    --keep-up) keep_up=1; shift ;;
    --logs) logs=$2; shift 2 ;;
    --hdf5-dir) hdf5_dir=$2; shift 2 ;;
    *) echo "run-cluster: unknown argument $1" >&2; exit 1 ;;
    esac
done
export BBLOG_ENV_SCRIPT=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
export BBLOG_TOOL=${BBLOG_TOOL:-$PWD/tools/bblog}
[ -r "$BBLOG_ENV_SCRIPT" ] || { echo "run-cluster: no bblog MPI: $BBLOG_ENV_SCRIPT" >&2; exit 1; }
[ -x "$BBLOG_TOOL" ] || { echo "run-cluster: no bblog tool: $BBLOG_TOOL (set BBLOG_TOOL)" >&2; exit 1; }

# The fixed part of the differential suite: the programs at their rank counts (4 at most fill
# both shapes), and the background modes, small drain buffers and the node exchange where the
# ranks of a node share logs and the drain crosses nodes, each node's batches of the background
# drain (node2bb at 4 ranks: the nodes of the first shape; the closebb stats case asserts that
# the close left the small pieces to them), and the reads of what processes of
# other nodes logged (t_peerread, t_subcomm: through the read servers), and the flags of a
# syncs without an agreement between nodes (t_syncalone[stats]). Not here, and why (issue
# notes): t_delete expects
# MPI_File_delete, which one process calls, to remove kept logs on every node (it removes
# those of its own node); t_strided[noread] and t_strided[stats] are one-node cases (the drain
# writes from the node's mapped logs; it reads other processes' logs, with one rank a node
# there are none).
diff_cases=(t_contig t_strided t_noncontig t_overlap t_raw t_size t_atomic t_shared t_nonblock
    t_manyfiles t_empty t_hints t_collread t_twofh t_xorder t_selfsync t_selfgrow t_sieve
    t_merge t_durable t_peerread t_subcomm 't_bgdrain?proactive?' 't_strided?flush64k?'
    't_strided?nodempi?' 't_strided?proactive?' 't_strided?modebb?' 't_bigdata?flush64k?'
    't_merge?stats?' 't_strided?lognode?' 't_overlap?lognode?' 't_collread?lognode?'
    't_peerread?lognode?' 't_bgdrain?lognodebb?' 't_closebb?modebb?' 't_batchfh?node2bb?'
    't_xorder?node2bb?' 't_closebb?closebb,stats?' 't_syncalone?stats?' t_extent
    't_extent?modebb?' 't_extent?lognode?' 't_extent?through0?' 't_extent?max256k?'
    't_nodeasks?stats?')
# ROMIO's programs but the 4 GiB ones (large_array, large_file: the single-node run has them).
romio_programs="simple async async-multiple atomicity coll_test excl file_info misc shared_fp
    noncontig_coll2 ordered_fp split_coll psimple creat_excl perf i_noncontig noncontig
    noncontig_coll error status aggregation2 hindexed darray_read big_extents types_with_zeros
    aggregation1 syshints external32 coll_perf"
# --quick: at the shapes after the first, and ROMIO's programs at every shape.
quick_cases=(t_contig t_strided t_noncontig t_overlap t_collread t_xorder t_merge t_peerread
    't_strided?flush64k?' 't_strided?nodempi?' 't_bgdrain?proactive?' 't_strided?lognode?'
    't_peerread?lognode?' t_extent 't_nodeasks?stats?')
quick_romio="simple async atomicity coll_test noncontig_coll2 split_coll aggregation1 shared_fp
    aggregation2 darray_read i_noncontig noncontig_coll types_with_zeros"
[ "$all" = 1 ] && diff_cases=() romio_programs= quick=0
[ "$quick" = 1 ] && romio_programs=$quick_romio
export MPITEST_LEGS=all
[ "$quick" = 1 ] && MPITEST_LEGS=cross

mkdir -p "$logs" || exit 1
failed=0
summary=
trap '[ "$keep_up" = 1 ] || "$cluster" down >/dev/null 2>&1' EXIT
for shape in $shapes; do
    nodes=${shape%x*} per=${shape#*x}
    case $nodes$per in *[!0-9]*|'') echo "run-cluster: bad shape $shape" >&2; exit 1 ;; esac
    hosts=
    for ((i = 1; i <= nodes; i++)); do hosts=${hosts:+$hosts,}n$i:$per; done
    echo "==== run-cluster: $nodes nodes x $per ranks (-hosts $hosts)"
    "$cluster" down >/dev/null 2>&1
    slurm= hdf5=
    [ "$shape" = "${shapes%% *}" ] && slurm=--slurm && hdf5=${hdf5_dir:+hdf5}
    if ! "$cluster" up "$nodes" $slurm; then
        echo "run-cluster: FAIL: the cluster of $nodes nodes did not come up" >&2
        exit 1
    fi
    export MPITEST_CLUSTER=$hosts
    cases=("${diff_cases[@]}") runs=$crash_runs
    if [ "$quick" = 1 ] && [ "$shape" != "${shapes%% *}" ]; then
        cases=("${quick_cases[@]}") runs=$(((crash_runs + 1) / 2))
    fi
    srvattack=
    [ "$shape" = "${shapes%% *}" ] && srvattack=srvattack
    for t in diff romio crash $srvattack $hdf5 ${slurm:+slurm}; do
        case $t in
        diff) "$here/test/mpi/run-diff.sh" "${cases[@]}" ;;
        srvattack) MPITEST_CLUSTER=n1:1,n2:1 "$here/test/mpi/run-srvattack.sh" ;;
        romio) "$here/test/romio/run-romio-tests.sh" --mpi-env "$BBLOG_ENV_SCRIPT" --quick \
            ${romio_programs:+--programs "$romio_programs"} ;;
        crash) "$here/test/crash/run-crash.sh" --runs "$runs" ;;
        hdf5) "$here/test/apps/run-hdf5-testpar.sh" --mpi-env "$BBLOG_ENV_SCRIPT" \
            --build-dir "$hdf5_dir" --modes bblog --np $((nodes * per)) \
            --programs "t_mpi t_filters_parallel" ;;
        slurm) "$here/test/cluster/run-slurm.sh" ;;
        esac 2>&1 | tee "$logs/$t.$shape.log" | grep -E '^(FAIL|ERROR)|passed, '
        rc=${PIPESTATUS[0]}
        line=$(grep -E 'passed, [0-9]+ failed' "$logs/$t.$shape.log" | tail -n 1)
        summary="$summary
  $shape $t: ${line:-no result line} (exit $rc)"
        [ "$rc" = 0 ] || { failed=1; echo "run-cluster: $t at $shape failed: $logs/$t.$shape.log"; }
    done
    unset MPITEST_CLUSTER
    [ "$keep_up" = 1 ] && [ "$shape" = "${shapes##* }" ] || "$cluster" down
done
# One burst buffer that all nodes share: the drains of bblog_shared_bb=true (run-diff's
# sharedbb cases), and the Slurm epilog's other configuration.
if [ "$keep_up" = 0 ]; then
    echo "==== run-cluster: one burst buffer for 2 nodes x 2 ranks, and Slurm"
    "$cluster" down >/dev/null 2>&1
    if "$cluster" up 2 --shared-bb --slurm; then
        MPITEST_CLUSTER=n1:2,n2:2 "$here/test/mpi/run-diff.sh" '*sharedbb*' 2>&1 |
            tee "$logs/diff.shared.log" | grep -E '^(FAIL|ERROR)|passed, '
        drc=${PIPESTATUS[0]}
        MPITEST_CLUSTER=n1:2,n2:2 "$here/test/crash/run-crash.sh" --runs 2 2>&1 |
            tee "$logs/crash.shared.log" | grep -E '^(FAIL|ERROR)|passed, '
        crc=${PIPESTATUS[0]}
        "$here/test/cluster/run-slurm.sh" 2>&1 | tee "$logs/slurm.shared.log" |
            grep -E '^(FAIL|ERROR)|passed, '
        rc=${PIPESTATUS[0]}
    else
        rc=1 drc=1 crc=1
    fi
    line=$(grep -E 'passed, [0-9]+ failed' "$logs/diff.shared.log" 2>/dev/null | tail -n 1)
    summary="$summary
  2x2 shared-bb diff: ${line:-no result line} (exit $drc)"
    [ "$drc" = 0 ] || { failed=1; echo "run-cluster: diff with a shared burst buffer failed"; }
    line=$(grep -E 'passed, [0-9]+ failed' "$logs/crash.shared.log" 2>/dev/null | tail -n 1)
    summary="$summary
  2x2 shared-bb crash: ${line:-no result line} (exit $crc)"
    [ "$crc" = 0 ] || { failed=1; echo "run-cluster: crash with a shared burst buffer failed"; }
    line=$(grep -E 'passed, [0-9]+ failed' "$logs/slurm.shared.log" 2>/dev/null | tail -n 1)
    summary="$summary
  2x2 shared-bb slurm: ${line:-no result line} (exit $rc)"
    [ "$rc" = 0 ] || { failed=1; echo "run-cluster: slurm with a shared burst buffer failed"; }
    "$cluster" down
fi
echo "run-cluster:$summary"
[ "$failed" = 0 ]
