#!/bin/bash
# cluster.sh - an emulated cluster on this one machine: N compute nodes, a storage node serving a
# GlusterFS volume as the parallel file system, MPI across the nodes over TCP. Needs root.
#
#   scripts/cluster.sh up N [--netem 'SPEC' | --rate RATE] [--shared-bb] [--slurm]
#                        [--pfs local|gluster]
#                               build nodes n1..nN and the storage node, the PFS on every
#                               node (--pfs, below); --netem adds `tc qdisc ... netem SPEC` on every node's link
#                               (e.g. 'delay 0.2ms rate 2gbit'; needs the kernel's sch_netem),
#                               --rate a token bucket (tbf) of RATE (e.g. 1gbit) instead;
#                               --shared-bb gives all nodes one burst-buffer directory instead
#                               of one tmpfs each; --slurm runs Slurm: munged and slurmctld
#                               on the storage node, slurmd on every node, partition "bb" of
#                               all nodes (SLURM_CONF from `env`); its Epilog runs every
#                               executable in $CLUSTER_ROOT/slurm/epilog.d, in name order
#   scripts/cluster.sh down     stop and remove everything `up` made (by PID and by name)
#   scripts/cluster.sh status   what runs (exit 1 when no cluster is up)
#   scripts/cluster.sh exec NODE CMD...
#                               run CMD on NODE (its network, mounts and hostname; same working
#                               directory and environment)
#   scripts/cluster.sh mpiexec [-hosts n1:2,n2:2] [MPIEXEC ARGS...] PROG...
#                               run hydra's mpiexec on n1 with this script as its ssh
#                               (default -hosts: every node, 1 rank each)
#   scripts/cluster.sh env      print CLUSTER_BB, CLUSTER_PFS, CLUSTER_NODES, CLUSTER_BB_KIND
#                               (node-local or shared), CLUSTER_USER and CLUSTER_UID (a user
#                               that exists inside the cluster only) and, with --slurm,
#                               SLURM_CONF as shell lines
#
# Every node is a network namespace (`ip netns`, veth to a bridge in a switch namespace, addresses
# in 10.213.0.0/24 inside these namespaces only), a mount namespace with its own /etc/hosts,
# /etc/passwd and /etc/group (with a user of the cluster's own, for jobs) and burst buffer (a
# tmpfs at $CLUSTER_ROOT/bb), and a UTS namespace (hostname nI), held open by one sleeping
# process per node. The storage node runs glusterd and its brick daemons in its own namespaces.
# The PFS at $CLUSTER_ROOT/pfs is made before the nodes, so that every node's mount namespace
# holds it (the host's too): with --pfs local (the default) a directory of the host's own file
# system, with --pfs gluster the FUSE mount of a GlusterFS volume that the storage node serves,
# one client (in the storage node's network namespace) for all nodes.
# RATIONALE: the tests across nodes need a PFS that orders and shows writes as Lustre and GPFS
# do, or a reference leg can fail and a bblog defect hide behind a flake. GlusterFS with one
# FUSE client per node did not, even with every client-side cache off (plain ROMIO's t_peerread
# read another node's older bytes after a barrier: once in some hundreds of runs, and in CI);
# GlusterFS's own issue tracker calls its consistency across clients best effort. A local file
# system is coherent by construction; the GlusterFS volume stays for measurements of a network
# file system (bench/results/cluster.md). hydra calls this script as `ssh -x HOST COMMAND`
# (-launcher ssh -launcher-exec): it enters HOST's namespaces with nsenter.
# Environment: CLUSTER_ROOT (state, mount points, logs; default /var/tmp/bblog-cluster) and
# CLUSTER_PFX (the namespaces' name prefix; default bbc): a second cluster beside the first
# (a developer's beside CI's) needs both of its own.
set -euo pipefail

CLUSTER_ROOT=${CLUSTER_ROOT:-/var/tmp/bblog-cluster}
NET=10.213.0
STORE_IP=$NET.100
VOL=bblogc
CLUSTER_USER=bbuser     # the cluster's own user, in its namespaces only (up)
CLUSTER_UID=4242
PFX=${CLUSTER_PFX:-bbc} # name prefix of namespaces: two clusters at once need two
RUN=$CLUSTER_ROOT/run
SELF=$(readlink -f "$0")

say() { echo "cluster: $*" >&2; }
die() {
    echo "cluster: $*" >&2
    exit 1
}

holder() { # NODE: PID of the process holding NODE's namespaces, or nothing
    local p
    [ -s "$RUN/$1.pid" ] || return 0
    p=$(cat "$RUN/$1.pid")
    # A recycled PID is not ours: the holder's command line names the cluster's root.
    tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null | grep -qF "bblog-cluster-holder $CLUSTER_ROOT" &&
        echo "$p"
    return 0
}

nodes() { [ -s "$RUN/nodes" ] && cat "$RUN/nodes"; }

enter() { # NODE CMD...: run CMD in NODE's namespaces, in the caller's working directory
    local node=$1 p
    shift
    p=$(holder "$node")
    [ -n "$p" ] || die "no node '$node' (nodes: $(nodes | tr '\n' ' '))"
    exec nsenter --target "$p" --net --mount --uts --wd="$PWD" -- "$@"
}

in_node() { # NODE CMD...: like enter, without replacing this shell
    local p
    p=$(holder "$1")
    [ -n "$p" ] || die "no node '$1'"
    shift
    nsenter --target "$p" --net --mount --uts -- "$@"
}

# start_holder NODE HOSTNAME SETUP: a process in new network (`ip netns` NAME), mount and UTS
# namespaces that runs SETUP (shell) and then sleeps until killed.
start_holder() {
    local node=$1 host=$2 setup=$3 i
    rm -f "$RUN/$node.ready"
    ip netns exec "$PFX-$node" unshare --mount --uts --propagation private -- \
        /bin/bash -c "hostname $host && mount --bind $RUN/hosts /etc/hosts &&
            mount --bind $RUN/passwd /etc/passwd && mount --bind $RUN/group /etc/group && $setup &&
            touch $RUN/$node.ready && exec -a 'bblog-cluster-holder $CLUSTER_ROOT' sleep infinity" \
        </dev/null >>"$CLUSTER_ROOT/log/$node.log" 2>&1 &
    echo $! >"$RUN/$node.pid"
    for i in $(seq 1 50); do
        [ -e "$RUN/$node.ready" ] && return 0
        kill -0 "$(cat "$RUN/$node.pid")" 2>/dev/null || break
        sleep 0.1
    done
    die "node $node did not start: see $CLUSTER_ROOT/log/$node.log"
}

add_link() { # NODE IP: veth from NODE's namespace to the bridge
    ip -n $PFX-sw link add "v-$1" type veth peer name eth0 netns "$PFX-$1"
    ip -n $PFX-sw link set "v-$1" master br0 up
    ip -n "$PFX-$1" addr add "$2/24" dev eth0
    ip -n "$PFX-$1" link set eth0 up
    ip -n "$PFX-$1" link set lo up
}

gluster_cli() { in_node st gluster --mode=script --glusterd-sock="$RUN/glusterd.socket" "$@"; }

# shellcheck source=gluster-lib.sh
. "$(dirname "$SELF")/gluster-lib.sh"

# The GlusterFS volume of --pfs gluster: glusterd and two bricks on the storage node, one FUSE
# client for every node (above) at $CLUSTER_ROOT/pfs.
gluster_up() {
    local ok=0 i
    cat >"$RUN/glusterd.vol" <<EOF
volume management
    type mgmt/glusterd
    option working-directory $CLUSTER_ROOT/wd
    option transport-type socket
    option transport.address-family inet
    option transport.socket.bind-address $STORE_IP
    option transport.socket.listen-port 24007
    option glusterd-sockfile $RUN/glusterd.socket
    option event-threads 1
    option ping-timeout 0
end-volume
EOF
    in_node st glusterd -f "$RUN/glusterd.vol" -p "$RUN/glusterd.pid" \
        -l "$CLUSTER_ROOT/log/glusterd.log"
    for _ in $(seq 1 60); do
        gluster_cli volume list >/dev/null 2>&1 && { ok=1; break; }
        sleep 0.5
    done
    [ $ok = 1 ] || die "glusterd did not answer within 30 s: see $CLUSTER_ROOT/log/glusterd.log"
    local bricks=()
    for i in 1 2; do
        mkdir -p "$CLUSTER_ROOT/bricks/b$i"
        bricks+=("$STORE_IP:$CLUSTER_ROOT/bricks/b$i")
    done
    gluster_cli volume create $VOL transport tcp "${bricks[@]}" force >/dev/null
    # Whole files on one brick of the two (no sharding: writes to one sharded file from several
    # clients at once left it twice its size here, the shard translator's size accounting).
    # No client-side caching of data or attributes (write-behind returns a write before the
    # brick has it).
    for i in write-behind io-cache quick-read stat-prefetch read-ahead open-behind \
        readdir-ahead; do
        gluster_cli volume set $VOL performance.$i off >/dev/null
    done
    gluster_cli volume start $VOL >/dev/null
    # One client for every node (above): FUSE I/O straight to the bricks, no attribute or
    # directory entry cached in the kernel.
    mkdir -p "$CLUSTER_ROOT/pfs"
    nsenter --net="/run/netns/$PFX-st" -- mount -t glusterfs -o \
        log-file=$CLUSTER_ROOT/log/client.log,direct-io-mode=enable,attribute-timeout=0,entry-timeout=0,negative-timeout=0 \
        "$STORE_IP:/$VOL" "$CLUSTER_ROOT/pfs"
}

up() {
    local n=${1:-} netem= rate= shared=0 slurm=0 pfs=local i
    [[ $n =~ ^[1-9][0-9]*$ ]] && [ "$n" -le 32 ] || die "up N: N nodes, 1 to 32 (got '${n}')"
    shift
    while [ $# -gt 0 ]; do
        case $1 in
        --netem) netem=${2:?--netem needs a netem spec}; shift ;;
        --rate) rate=${2:?--rate needs a rate, e.g. 1gbit}; shift ;;
        --shared-bb) shared=1 ;;
        --slurm) slurm=1 ;;
        --pfs) pfs=${2:?--pfs needs local or gluster}; shift ;;
        *) die "up: unknown option '$1'" ;;
        esac
        shift
    done
    [ "$(id -u)" = 0 ] || die "needs root (network, mount and UTS namespaces, FUSE mounts)"
    ip netns list >/dev/null 2>&1 || die "'ip netns' does not work here (iproute2, kernel netns)"
    command -v nsenter >/dev/null && command -v unshare >/dev/null ||
        die "nsenter and unshare (util-linux) are needed"
    case $pfs in
    local) ;;
    gluster)
        command -v glusterd >/dev/null && command -v mount.glusterfs >/dev/null ||
            die "glusterd or mount.glusterfs missing: apt-get install glusterfs-server glusterfs-client"
        [ -c /dev/fuse ] || die "/dev/fuse is missing: FUSE is needed for the GlusterFS client"
        ;;
    *) die "up: --pfs $pfs: expected local or gluster" ;;
    esac
    [ -n "$netem$rate" ] && ! command -v tc >/dev/null && die "--netem and --rate need tc (iproute2)"
    [ $slurm = 0 ] || { command -v slurmctld && command -v slurmd && command -v munged &&
        command -v sbatch; } >/dev/null ||
        die "--slurm: slurmctld, slurmd, munged or sbatch missing: apt-get install slurmd slurmctld slurm-client munge"
    if [ -n "$netem" ]; then
        # Tried on a namespace's loopback first: a kernel without sch_netem refuses the qdisc.
        ip netns add $PFX-probe
        if ! ip netns exec $PFX-probe tc qdisc add dev lo root netem delay 0ms 2>/dev/null; then
            ip netns del $PFX-probe
            die "--netem: this kernel has no netem qdisc (sch_netem); --rate (tbf) limits the links' bandwidth without it"
        fi
        ip netns del $PFX-probe
    fi
    [ -z "$(nodes 2>/dev/null)" ] || die "a cluster is up already ($CLUSTER_ROOT): down first"
    ip netns list | grep -q "^$PFX-" && die "namespaces $PFX-* exist: scripts/cluster.sh down"

    mkdir -p "$RUN" "$CLUSTER_ROOT"/{log,bb,pfs,bricks,wd}
    {
        echo "127.0.0.1 localhost"
        echo "$STORE_IP st"
        for i in $(seq 1 "$n"); do echo "$NET.$i n$i"; done
    } >"$RUN/hosts"
    # A user of the cluster's own (jobs run as a user, not as root), known inside its
    # namespaces only: the machine's users and groups, and this one.
    { cat /etc/passwd; echo "$CLUSTER_USER:x:$CLUSTER_UID:$CLUSTER_UID:bblog cluster user:/nonexistent:/bin/sh"; } >"$RUN/passwd"
    { cat /etc/group; echo "$CLUSTER_USER:x:$CLUSTER_UID:"; } >"$RUN/group"
    : >"$RUN/nodes"
    trap 'say "up failed: tearing down"; down' ERR

    ip netns add $PFX-sw
    ip -n $PFX-sw link add br0 type bridge
    ip -n $PFX-sw link set br0 up

    # Storage node: glusterd's sockets, runtime state and logs on tmpfs of its own.
    ip netns add $PFX-st
    add_link st "$STORE_IP"
    start_holder st st "mount -t tmpfs none /var/run/gluster 2>/dev/null ||
        { mkdir -p /var/run/gluster && mount -t tmpfs none /var/run/gluster; } &&
        mkdir -p /var/log/glusterfs && mount -t tmpfs none /var/log/glusterfs"
    if [ "$pfs" = gluster ]; then
        gluster_up
    else
        chmod 1777 "$CLUSTER_ROOT/pfs"
    fi
    echo "$pfs" >"$RUN/pfskind"

    # Compute nodes.
    local bbsetup="mount -t tmpfs -o size=4g,mode=1777 bblog-bb $CLUSTER_ROOT/bb"
    [ $shared = 0 ] || bbsetup="mount --bind $CLUSTER_ROOT/sharedbb $CLUSTER_ROOT/bb"
    [ $shared = 0 ] || { mkdir -p "$CLUSTER_ROOT/sharedbb" &&
        mount -t tmpfs -o size=4g,mode=1777 bblog-sharedbb "$CLUSTER_ROOT/sharedbb"; }
    for i in $(seq 1 "$n"); do
        ip netns add "$PFX-n$i"
        add_link "n$i" "$NET.$i"
        [ -z "$netem" ] || ip netns exec "$PFX-n$i" tc qdisc add dev eth0 root netem $netem
        [ -z "$rate" ] || ip netns exec "$PFX-n$i" tc qdisc add dev eth0 root tbf rate "$rate" \
            burst 256kb latency 50ms
        start_holder "n$i" "n$i" "$bbsetup"
        echo "n$i" >>"$RUN/nodes"
    done
    for i in $(seq 1 "$n"); do
        ok=0
        for _ in $(seq 1 40); do
            in_node "n$i" sh -c "echo x >$CLUSTER_ROOT/pfs/.probe-n$i" 2>/dev/null && { ok=1; break; }
            sleep 0.25
        done
        [ $ok = 1 ] || die "n$i: PFS not writable (--pfs $pfs; GlusterFS: $CLUSTER_ROOT/log/client.log)"
        in_node "n$i" rm -f "$CLUSTER_ROOT/pfs/.probe-n$i"
    done
    echo "$([ $shared = 1 ] && echo shared || echo node-local)" >"$RUN/bbkind"
    [ $slurm = 0 ] || slurm_up "$n"
    trap - ERR
    status
}

# Slurm on the cluster: a munge key and daemon of its own (its socket under $SLURM_DIR, which
# every namespace sees), slurmctld on the storage node, one slurmd per node, found by its node
# name (the UTS hostname). No accounting, no cgroups (proctrack/linuxproc, task/none).
SLURM_DIR=$CLUSTER_ROOT/slurm
slurm_up() {
    local n=$1 i s=$SLURM_DIR ok=0
    # The key private to root; the socket's directory open to every user (jobs authenticate).
    mkdir -p "$s"/{state,spool,epilog.d,munge,munge-run}
    chmod 700 "$s/munge"
    chmod 755 "$s" "$s/munge-run"
    head -c 1024 /dev/urandom >"$s/munge/munge.key"
    chmod 400 "$s/munge/munge.key"
    in_node st munged --force --key-file="$s/munge/munge.key" --socket="$s/munge-run/socket" \
        --pid-file="$s/munge/munged.pid" --log-file="$s/munge/munged.log" \
        --seed-file="$s/munge/munged.seed" || die "munged did not start: see $s/munge/munged.log"
    # The Epilog: every executable of epilog.d in name order; the first failure is its status.
    printf '%s\n' '#!/bin/sh' "for f in $s/epilog.d/*; do" \
        '    [ -x "$f" ] || continue' '    "$f" || exit $?' 'done' 'exit 0' >"$s/epilog"
    chmod 755 "$s/epilog"
    {
        echo "ClusterName=bblogc"
        echo "SlurmctldHost=st($STORE_IP)"
        echo "AuthType=auth/munge"
        echo "AuthInfo=socket=$s/munge-run/socket"
        echo "CredType=cred/munge"
        echo "SlurmUser=root"
        echo "SlurmdUser=root"
        echo "StateSaveLocation=$s/state"
        echo "SlurmdSpoolDir=$s/spool/%n"
        echo "SlurmctldPidFile=$s/slurmctld.pid"
        echo "SlurmdPidFile=$s/slurmd.%n.pid"
        echo "SlurmctldLogFile=$CLUSTER_ROOT/log/slurmctld.log"
        echo "SlurmdLogFile=$CLUSTER_ROOT/log/slurmd.%n.log"
        echo "ProctrackType=proctrack/linuxproc"
        echo "TaskPlugin=task/none"
        echo "JobAcctGatherType=jobacct_gather/none"
        echo "AccountingStorageType=accounting_storage/none"
        echo "JobCompType=jobcomp/none"
        echo "SchedulerType=sched/builtin"
        echo "SelectType=select/linear"
        echo "MpiDefault=none"
        echo "ReturnToService=2"
        echo "SlurmdParameters=config_overrides"
        echo "KillWait=5"
        echo "Epilog=$s/epilog"
        for i in $(seq 1 "$n"); do
            echo "NodeName=n$i NodeAddr=$NET.$i CPUs=8 RealMemory=1000 State=UNKNOWN"
        done
        echo "PartitionName=bb Nodes=ALL Default=YES MaxTime=INFINITE State=UP"
    } >"$s/slurm.conf"
    # slurmd initialises its cgroup plugin whatever the others are, and a node's /sys (sysfs of
    # its own network namespace) has no cgroup mount: an empty tmpfs there, per node, and the
    # v1 plugin (which finds nothing to mount, uses nothing, and touches no host cgroup).
    printf '%s\n' "CgroupPlugin=cgroup/v1" "CgroupMountpoint=/sys/fs/cgroup" >"$s/cgroup.conf"
    in_node st env SLURM_CONF="$s/slurm.conf" slurmctld -f "$s/slurm.conf" ||
        die "slurmctld did not start: see $CLUSTER_ROOT/log/slurmctld.log"
    for i in $(seq 1 "$n"); do
        mkdir -p "$s/spool/n$i"
        in_node "n$i" mount -t tmpfs bblog-cgroup /sys/fs/cgroup
        in_node "n$i" env SLURM_CONF="$s/slurm.conf" slurmd -f "$s/slurm.conf" ||
            die "slurmd on n$i did not start: see $CLUSTER_ROOT/log/slurmd.n$i.log"
    done
    for _ in $(seq 1 60); do
        [ "$(in_node n1 env SLURM_CONF="$s/slurm.conf" sinfo -h -N -o '%T' 2>/dev/null |
             grep -c '^idle')" = "$n" ] && { ok=1; break; }
        sleep 0.5
    done
    [ $ok = 1 ] || die "Slurm: the nodes did not come up idle: see $CLUSTER_ROOT/log/slurm*.log"
    say "slurm: slurmctld on st, slurmd on n1..n$n, SLURM_CONF=$s/slurm.conf"
}

# Slurm's daemons name $SLURM_DIR on their command lines; job steps run under slurmstepd, ours
# in the nodes' network namespaces.
slurm_pids() {
    local p c
    for p in $(pgrep -f -- "$SLURM_DIR/" 2>/dev/null); do
        c=$(cat "/proc/$p/comm" 2>/dev/null) || continue
        case $c in munged|slurmctld|slurmd) echo "$p" ;; esac
    done
    for p in $(pgrep -x slurmstepd 2>/dev/null); do
        case $(ip netns identify "$p" 2>/dev/null) in $PFX-*) echo "$p" ;; esac
    done
}

down() {
    local node p
    for p in $(slurm_pids); do stop_pid "$p"; done
    for node in $(nodes 2>/dev/null) st; do
        p=$(holder "$node")
        if [ -n "$p" ] && [ "$node" != st ]; then
            in_node "$node" umount "$CLUSTER_ROOT/pfs" 2>/dev/null ||
                in_node "$node" umount -l "$CLUSTER_ROOT/pfs" 2>/dev/null || true
        fi
    done
    if mountpoint -q "$CLUSTER_ROOT/pfs" 2>/dev/null; then
        umount "$CLUSTER_ROOT/pfs" 2>/dev/null || umount -l "$CLUSTER_ROOT/pfs" || true
    fi
    if [ -s "$RUN/glusterd.pid" ] && [ -n "$(holder st)" ]; then
        gluster_cli volume stop $VOL force >/dev/null 2>&1 || true
        gluster_cli volume delete $VOL >/dev/null 2>&1 || true
    fi
    # FUSE clients, brick daemons and glusterd name the cluster's root on their command lines.
    for p in $(gluster_pids "$CLUSTER_ROOT"); do stop_pid "$p"; done
    for node in $(nodes 2>/dev/null) st; do
        p=$(holder "$node")
        [ -z "$p" ] || stop_pid "$p"
        rm -f "$RUN/$node.pid" "$RUN/$node.ready"
    done
    for node in $(ip netns list | awk '{print $1}' | grep "^$PFX-" || true); do
        ip netns del "$node"
    done
    if mountpoint -q "$CLUSTER_ROOT/sharedbb" 2>/dev/null; then
        umount "$CLUSTER_ROOT/sharedbb" || umount -l "$CLUSTER_ROOT/sharedbb"
    fi
    p=$(gluster_pids "$CLUSTER_ROOT")
    [ -z "$p" ] || die "still running after down: $p"
    rm -rf "$CLUSTER_ROOT"
    say "down"
}

status() {
    local node p
    [ -n "$(nodes 2>/dev/null)" ] || { echo "cluster: not up ($CLUSTER_ROOT)"; return 1; }
    for node in st $(nodes); do
        p=$(holder "$node")
        [ -n "$p" ] || { echo "cluster: $node: holder gone"; return 1; }
        echo "cluster: $node: pid $p, $(in_node "$node" hostname)," \
            "$(ip -n "$PFX-$node" -4 -o addr show dev eth0 | awk '{print $4}')" \
            "$([ "$node" = st ] || in_node "$node" sh -c \
                "[ -w $CLUSTER_ROOT/pfs ] && echo pfs writable || echo PFS NOT WRITABLE")"
    done
    echo "cluster: burst buffer $(cat "$RUN/bbkind") at $CLUSTER_ROOT/bb, PFS ($(cat \
        "$RUN/pfskind")) at $CLUSTER_ROOT/pfs"
    [ ! -s "$SLURM_DIR/slurm.conf" ] || echo "cluster: slurm: $(in_node n1 env \
        SLURM_CONF="$SLURM_DIR/slurm.conf" sinfo -h -o '%P %D nodes %T' 2>&1 | paste -sd' ')"
}

# hydra's ssh: `cluster.sh -x HOST WORD...` runs the words as one shell command line on HOST,
# as ssh does.
if [ "${1:-}" = -x ] || [ "${1:-}" = -X ]; then
    shift
    host=${1:?no host}
    shift
    enter "$host" /bin/sh -c "$*"
fi

case ${1:-} in
up) shift; up "$@" ;;
down) down ;;
status) status ;;
exec)
    [ $# -ge 3 ] || die "exec NODE CMD..."
    node=$2
    shift 2
    enter "$node" "$@"
    ;;
mpiexec)
    shift
    hosts=$(nodes | sed 's/$/:1/' | paste -sd,)
    [ -n "$hosts" ] || die "no cluster is up"
    if [ "${1:-}" = -hosts ]; then
        hosts=$2
        shift 2
    fi
    enter n1 mpiexec -launcher ssh -launcher-exec "$SELF" -hosts "$hosts" "$@"
    ;;
env)
    echo "CLUSTER_BB=$CLUSTER_ROOT/bb"
    echo "CLUSTER_PFS=$CLUSTER_ROOT/pfs"
    echo "CLUSTER_NODES='$(nodes | paste -sd' ')'"
    echo "CLUSTER_BB_KIND=$(cat "$RUN/bbkind" 2>/dev/null)"
    echo "CLUSTER_USER=$CLUSTER_USER CLUSTER_UID=$CLUSTER_UID"
    [ ! -s "$SLURM_DIR/slurm.conf" ] || echo "SLURM_CONF=$SLURM_DIR/slurm.conf"
    ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
