# cluster-lib.sh - what the MPI runners (test/mpi/run-diff.sh, test/crash/run-crash.sh,
# test/romio/run-romio-tests.sh) share to run on the emulated cluster of scripts/cluster.sh.
# Sourced, with no arguments, before the runner parses its own. Off the cluster it sets
# cl_nodes empty and cl_launch to hydra's fork launcher.
#
# With MPITEST_CLUSTER=HOSTS (hydra's -hosts list, e.g. n1:2,n2:2; the cluster must be up): the
# runner re-runs itself inside node n1, where mpiexec starts, and then
#   cl_nodes     the cluster's nodes ("n1 n2 ...")
#   cl_launch    mpiexec's arguments: the cluster as hydra's ssh, -hosts HOSTS
#   CLUSTER_BB   the burst buffer's path, the same on every node (each node its own tmpfs)
#   CLUSTER_PFS  the PFS mount, the same file system on every node
cluster_sh=$(cd "$(dirname "${BASH_SOURCE[0]}")/../scripts" && pwd)/cluster.sh
# shellcheck source=runner-lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/runner-lib.sh"
cl_nodes=
cl_launch=(-launcher fork)
if [ -n "${MPITEST_CLUSTER:-}" ]; then
    if [ "$(ip netns identify $$ 2>/dev/null)" != "${CLUSTER_PFX:-bbc}-n1" ]; then
        exec "$cluster_sh" exec n1 "$0" "$@"
    fi
    eval "$("$cluster_sh" env)" || exit 1
    cl_nodes=$CLUSTER_NODES
    cl_launch=(-launcher ssh -launcher-exec "$cluster_sh" -hosts "$MPITEST_CLUSTER")
fi

# cl_mpi: called by a runner once its MPI's environment is sourced. Open MPI's mpiexec starts
# the local processes itself and has no -launcher (the cluster runs with hydra only).
cl_mpi() {
    if [ -z "$cl_nodes" ] && is_ompi; then
        cl_launch=()
    fi
}

# on_nodes CMD...: CMD on every node of the cluster but n1, the one the runner is on (nothing
# off the cluster). Fails when CMD fails on a node.
on_nodes() {
    local node
    for node in $cl_nodes; do
        [ "$node" = n1 ] || "$cluster_sh" exec "$node" "$@" || return 1
    done
}

# all_nodes CMD...: CMD here, then on every other node of the cluster.
all_nodes() {
    "$@" && on_nodes "$@"
}

# node_of_rank R N: the node that hydra places rank R of N on with -hosts $MPITEST_CLUSTER
# (hosts filled in order, each up to its count, round and round).
node_of_rank() {
    local r=$1 slots=() h c i
    for h in ${MPITEST_CLUSTER//,/ }; do
        c=${h#*:}
        [ "$c" = "$h" ] && c=1
        for ((i = 0; i < c; i++)); do slots+=("${h%%:*}"); done
    done
    echo "${slots[$((r % ${#slots[@]}))]}"
}
