#!/bin/bash
# run-mapping-bench.sh - one log pair per node (bblog_mapping=node) against one per process, on
# the emulated cluster (scripts/cluster.sh): what a file's open costs on the burst buffer, and
# the write phase and drain of IOR-like writes. Per shape NODESxRANKS it brings a cluster up and
# runs, with each mapping in turn (interleaved, --reps times):
#   - bench/scaling.c once: the burst-buffer files per node while the file is open;
#   - bench/openclose.c: 10 x (MPI_File_open, one 4 KiB MPI_File_write_at_all per rank, close),
#     mean ms of each step; the logs are made at the first write and removed at close, so
#     open + first write + close is what an open costs on the burst buffer;
#   - bench/ior.c strided 4 KiB collective writes, --size bytes per rank: write phase, close
#     (the drain) and end-to-end seconds.
# and prints one Markdown row per shape and mapping (medians).
#
# Usage: bench/run-mapping-bench.sh [--shapes "1x4 1x16 4x4"] [--reps N] [--size BYTES]
#                                   [--bb local|shared|pfs] [--out FILE]
#   --bb local   each node's burst buffer a tmpfs of its own (default);
#        shared  one tmpfs for all nodes (up --shared-bb), bblog_shared_bb=true;
#        pfs     bblog_dir on the cluster's GlusterFS volume, bblog_shared_bb=true: a burst
#                buffer that all nodes share through a file server over the network, where
#                each file created is a round trip to the server (as on DataWarp); with
#                bblog_consistency=mpi, since the list of published writes that POSIX reads
#                need is a shared mapping, which this FUSE mount refuses (ENODEV: every
#                write would go straight to the PFS)
# Environment: BBLOG_ENV_SCRIPT (default /var/cache/bblog/current/bin/bblog-env.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cluster=$here/scripts/cluster.sh
shapes="1x4 1x16 4x4"
reps=3
size=$((4 << 20))
bb=local
out=
while [ $# -gt 0 ]; do
    case $1 in
    --shapes) shapes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --bb) bb=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run-mapping-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
case $bb in
local) up_args= env=() ;;
shared) up_args=--shared-bb env=(BBLOG_SHARED_BB=true) ;;
pfs) up_args= env=(BBLOG_SHARED_BB=true BBLOG_CONSISTENCY=mpi) ;;
*) echo "run-mapping-bench: --bb local, shared or pfs, not $bb" >&2; exit 2 ;;
esac
# shellcheck source=/dev/null
. "${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}"
bin=$(mktemp -d /var/tmp/bblog-mbench.XXXXXX)
for p in ior openclose scaling; do mpicc -O2 -o "$bin/$p" "$here/bench/$p.c"; done
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$bin"' EXIT

median() { printf '%s\n' "$@" | sort -g | sed -n "$((($# + 1) / 2))p"; }
# field JSON KEY...: the values of KEYs in the JSON object.
field() {
    python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(*(d[k] for k in sys.argv[2:]))' \
        "$@"
}

k=$((4 << 10))
table="| shape | burst buffer | mapping | BB files per node | open ms | first write ms | close ms | open+write+close ms | IOR write s | IOR close (drain) s | IOR end-to-end s |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"
for shape in $shapes; do
    nodes=${shape%x*} per=${shape#*x}
    hosts=
    for ((i = 1; i <= nodes; i++)); do hosts=${hosts:+$hosts,}n$i:$per; done
    np=$((nodes * per))
    "$cluster" down >/dev/null 2>&1 || true
    # shellcheck disable=SC2086
    "$cluster" up "$nodes" --pfs gluster $up_args >/dev/null
    eval "$("$cluster" env)"
    bbdir=$CLUSTER_BB/mbench
    [ "$bb" = pfs ] && bbdir=$CLUSTER_PFS/mbench-bb
    for n in $CLUSTER_NODES; do "$cluster" exec "$n" mkdir -p "$bbdir"; done
    declare -A files=() op=() wr=() cl=() oc=() iw=() ic=() it=()
    for ((r = 1; r <= reps; r++)); do
        for mapping in process node; do
            run() {
                env BBLOG_DIR="$bbdir" BBLOG_MAPPING=$mapping "${env[@]}" \
                    "$cluster" mpiexec -hosts "$hosts" -n "$np" "$@" | grep '^{'
            }
            if [ "$r" = 1 ]; then
                j=$(run "$bin/scaling" 16 4096 "bblog:$CLUSTER_PFS/mbench.sc" "$bbdir")
                files[$mapping]=$(field "$j" bb_files_per_node_max)
                "$cluster" exec n1 rm -f "$CLUSTER_PFS/mbench.sc"
            fi
            j=$(run "$bin/openclose" -n 10 -b 4096 "bblog:$CLUSTER_PFS/mbench.oc")
            read -r o w c <<<"$(field "$j" open_ms write_ms close_ms)"
            op[$mapping]="${op[$mapping]:-} $o" wr[$mapping]="${wr[$mapping]:-} $w"
            cl[$mapping]="${cl[$mapping]:-} $c"
            oc[$mapping]="${oc[$mapping]:-} $(python3 -c "print($o + $w + $c)")"
            j=$(run "$bin/ior" -a strided -b $k -t $k -s $((size / k)) -c --json \
                -o "bblog:$CLUSTER_PFS/mbench.dat")
            read -r w c t <<<"$(field "$j" write_s close_s total_s)"
            iw[$mapping]="${iw[$mapping]:-} $w" ic[$mapping]="${ic[$mapping]:-} $c"
            it[$mapping]="${it[$mapping]:-} $t"
            "$cluster" exec n1 rm -f "$CLUSTER_PFS/mbench.oc" "$CLUSTER_PFS/mbench.dat"
            echo "run-mapping-bench: $shape $bb $mapping rep $r: open+write+close" \
                "$(median ${oc[$mapping]}) ms, IOR end-to-end $t s" >&2
        done
    done
    for mapping in process node; do
        # shellcheck disable=SC2086
        table="$table
| $shape | $bb | $mapping | ${files[$mapping]} | $(printf %.2f "$(median ${op[$mapping]})") | $(printf %.2f "$(median ${wr[$mapping]})") | $(printf %.2f "$(median ${cl[$mapping]})") | $(printf %.2f "$(median ${oc[$mapping]})") | $(printf %.3f "$(median ${iw[$mapping]})") | $(printf %.3f "$(median ${ic[$mapping]})") | $(printf %.3f "$(median ${it[$mapping]})") |"
    done
    unset files op wr cl oc iw ic it
    "$cluster" down >/dev/null
done
echo "$table"
[ -z "$out" ] || echo "$table" >"$out"
