#!/bin/bash
# pfs.sh - a GlusterFS stand-in for a parallel file system on this one machine, loopback only.
#
#   bench/pfs.sh setup      start a private glusterd on 127.0.0.1, create and start a volume of
#                           local-directory bricks, mount it with the FUSE client
#   bench/pfs.sh status     say what runs and what is mounted (exit 1 when not mounted)
#   bench/pfs.sh teardown   unmount, stop and delete the volume, stop the daemons this script
#                           started (by PID, from their pid files and command lines naming the
#                           state directory), delete the state directory
#
# Small writes are expensive on it (each one is a FUSE round trip, an RPC to a brick daemon and
# a write there), large ones are not: the property of Lustre/GPFS the benchmarks need.
# Layout: a distributed volume of PFS_NBRICKS bricks (default 4) with sharding on
# (PFS_SHARD_SIZE, default 4MB): a shared file is cut in shards spread over the bricks, as a
# Lustre file is striped over OSTs. PFS_LAYOUT=dist turns sharding off.
# Environment: PFS_ROOT (state, bricks, logs; default /var/tmp/bblog-pfs), PFS_MNT (/mnt/pfs),
# PFS_VOL (bblogpfs). Needs root, /dev/fuse and Debian's glusterfs-server and glusterfs-client
# (scripts/install-deps.sh installs them without starting Debian's own glusterd; where another
# install started it on all interfaces, stop it with `systemctl disable --now glusterd` before
# `setup`, which refuses a busy port 24007).
set -euo pipefail

PFS_ROOT=${PFS_ROOT:-/var/tmp/bblog-pfs}
PFS_MNT=${PFS_MNT:-/mnt/pfs}
PFS_VOL=${PFS_VOL:-bblogpfs}
PFS_NBRICKS=${PFS_NBRICKS:-4}
PFS_LAYOUT=${PFS_LAYOUT:-shard}
PFS_SHARD_SIZE=${PFS_SHARD_SIZE:-4MB}
HOSTALIAS=bblog-pfs-lo # an /etc/hosts name for 127.0.0.1: gluster refuses "localhost" bricks
PIDFILE=$PFS_ROOT/run/glusterd.pid

say() { echo "pfs: $*" >&2; }
die() {
    echo "pfs: $*" >&2
    exit 1
}

prog=pfs
# shellcheck source=../scripts/gluster-lib.sh
. "$(dirname "$0")/../scripts/gluster-lib.sh"

gluster_cli() { gluster --mode=script --glusterd-sock="$PFS_ROOT/run/glusterd.socket" "$@"; }

setup() {
    [ "$(id -u)" = 0 ] || die "setup needs root (glusterd, FUSE mount)"
    [ -c /dev/fuse ] || die "/dev/fuse is missing: FUSE is needed for the GlusterFS client"
    command -v glusterd >/dev/null && command -v mount.glusterfs >/dev/null ||
        die "glusterd or mount.glusterfs missing: apt-get install glusterfs-server" \
            "glusterfs-client, then systemctl disable --now glusterd (see bench/pfs.sh)"
    if ! grep -q "[[:space:]]$HOSTALIAS\$" /etc/hosts; then
        echo "127.0.0.1 $HOSTALIAS" >>/etc/hosts
    fi
    [ "$(getent ahostsv4 "$HOSTALIAS" | awk 'NR==1{print $1}')" = 127.0.0.1 ] ||
        die "$HOSTALIAS does not resolve to 127.0.0.1 (check /etc/hosts, nsswitch.conf)"
    mkdir -p "$PFS_ROOT"/{wd,bricks,log,run}

    if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        say "glusterd already running (pid $(cat "$PIDFILE"))"
    else
        ss -ltn | grep -q '127.0.0.1:24007 \|\*:24007 \|0.0.0.0:24007 ' &&
            die "port 24007 is taken by another glusterd: stop it first (or its teardown)"
        # Management daemon: private working directory, listens on loopback only; brick
        # daemons inherit the bind address.
        cat >"$PFS_ROOT/glusterd.vol" <<EOF
volume management
    type mgmt/glusterd
    option working-directory $PFS_ROOT/wd
    option transport-type socket
    option transport.address-family inet
    option transport.socket.bind-address 127.0.0.1
    option transport.socket.listen-port 24007
    option glusterd-sockfile $PFS_ROOT/run/glusterd.socket
    option event-threads 1
    option ping-timeout 0
end-volume
EOF
        glusterd -f "$PFS_ROOT/glusterd.vol" -p "$PIDFILE" -l "$PFS_ROOT/log/glusterd.log"
    fi
    local ok=0
    for _ in $(seq 1 60); do
        if gluster_cli volume list >/dev/null 2>&1; then
            ok=1
            break
        fi
        sleep 0.5
    done
    [ $ok = 1 ] || die "glusterd did not answer within 30 s: see $PFS_ROOT/log/glusterd.log"

    if ! gluster_cli volume info "$PFS_VOL" >/dev/null 2>&1; then
        local bricks=() i
        for i in $(seq 1 "$PFS_NBRICKS"); do
            mkdir -p "$PFS_ROOT/bricks/b$i"
            bricks+=("$HOSTALIAS:$PFS_ROOT/bricks/b$i")
        done
        # force: the bricks are on the root file system, which gluster warns about.
        gluster_cli volume create "$PFS_VOL" transport tcp "${bricks[@]}" force >/dev/null
        if [ "$PFS_LAYOUT" = shard ]; then
            gluster_cli volume set "$PFS_VOL" features.shard on >/dev/null
            gluster_cli volume set "$PFS_VOL" features.shard-block-size "$PFS_SHARD_SIZE" >/dev/null
        fi
    fi
    gluster_cli volume info "$PFS_VOL" | grep -q '^Status: Started' ||
        gluster_cli volume start "$PFS_VOL" >/dev/null

    mkdir -p "$PFS_MNT"
    if ! mountpoint -q "$PFS_MNT"; then
        mount -t glusterfs -o "log-file=$PFS_ROOT/log/client.log" "$HOSTALIAS:/$PFS_VOL" "$PFS_MNT"
    fi
    ok=0
    for _ in $(seq 1 40); do
        if echo probe >"$PFS_MNT/.pfs-probe" 2>/dev/null; then
            ok=1
            break
        fi
        sleep 0.25
    done
    rm -f "$PFS_MNT/.pfs-probe"
    [ $ok = 1 ] || die "$PFS_MNT is not writable: see $PFS_ROOT/log/client.log"
    check_loopback
    status
}

# Every TCP socket a gluster process of ours listens on must be bound to 127.0.0.1.
check_loopback() {
    local bad
    bad=$(ss -ltnpH 2>/dev/null | awk '/gluster/ && $4 !~ /^127\.0\.0\.1:/ {print $4, $6}')
    if [ -n "$bad" ]; then
        say "gluster listens beyond loopback: $bad"
        teardown
        die "refusing to run a file system reachable from the network"
    fi
}

status() {
    local pids
    pids=$(gluster_pids "$PFS_ROOT")
    echo "pfs: state $PFS_ROOT, volume $PFS_VOL, mount $PFS_MNT"
    echo "pfs: processes: ${pids:-none}" | tr '\n' ' '
    echo
    ss -ltnpH 2>/dev/null | awk '/gluster/ {print "pfs: listening " $4}'
    if mountpoint -q "$PFS_MNT" && grep -q " $PFS_MNT fuse.glusterfs " /proc/mounts; then
        echo "pfs: mounted: $(grep " $PFS_MNT fuse.glusterfs " /proc/mounts | cut -d' ' -f1-3)"
        return 0
    fi
    echo "pfs: $PFS_MNT is not a GlusterFS mount"
    return 1
}

teardown() {
    local p client
    if grep -q " $PFS_MNT fuse.glusterfs " /proc/mounts; then
        client=$(gluster_pids "--volfile-id=/$PFS_VOL $PFS_MNT")
        [ -n "$client" ] || client=$(gluster_pids "$PFS_MNT")
        say "unmounting $PFS_MNT"
        umount "$PFS_MNT" || umount -l "$PFS_MNT"
        for p in $client; do stop_pid "$p" "FUSE client"; done
    fi
    if [ -s "$PIDFILE" ] && kill -0 "$(cat "$PIDFILE")" 2>/dev/null; then
        say "stopping and deleting volume $PFS_VOL"
        gluster_cli volume stop "$PFS_VOL" force >/dev/null 2>&1 || true
        gluster_cli volume delete "$PFS_VOL" >/dev/null 2>&1 || true
        stop_pid "$(cat "$PIDFILE")" glusterd
    fi
    # Brick and self-heal daemons left behind name our state directory or volume.
    for p in $(gluster_pids "$PFS_ROOT") $(gluster_pids "shd/$PFS_VOL ") \
        $(gluster_pids "--volfile-id=/$PFS_VOL "); do
        stop_pid "$p" "gluster daemon of this setup"
    done
    rm -rf "/var/run/gluster/vols/$PFS_VOL" "/var/run/gluster/shd/$PFS_VOL"
    rm -f /var/log/glusterfs/bricks/"$(echo "${PFS_ROOT#/}" | tr / -)"-bricks-*.log
    rm -rf "$PFS_ROOT"
    sed -i "/[[:space:]]$HOSTALIAS\$/d" /etc/hosts
    mountpoint -q "$PFS_MNT" 2>/dev/null || rmdir "$PFS_MNT" 2>/dev/null || true
    p=$(gluster_pids "$PFS_ROOT")
    [ -z "$p" ] || die "still running after teardown: $p"
    say "torn down"
}

case ${1:-} in
setup) setup ;;
status) status ;;
teardown) teardown ;;
*)
    sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
    exit 2
    ;;
esac
