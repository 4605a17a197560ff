#!/bin/bash
# run-cluster-bench.sh - IOR-like writes (bench/ior.c) across the nodes of the emulated cluster
# (scripts/cluster.sh), plain ROMIO beside bblog, with default hints. Per shape NODESxRANKS it
# brings a cluster up (node-local burst buffers in memory, the PFS a GlusterFS volume served by
# the storage node over the emulated network), runs every case --reps times with the cases
# interleaved, takes the cluster down, and prints one Markdown row per case: median end-to-end
# (open to close, drain included) and write-phase seconds, min-max of the end-to-end times, and
# the end-to-end ratio against plain ROMIO's contiguous 4 MiB writes of the same bytes.
#
# Cases, SIZE bytes per rank: plain-contig-4m (the reference: each rank one block in 4 MiB
# collective writes), plain-strided-4k-indep (4 KiB transfers interleaved across ranks,
# independent; plain collective is 20-60 times slower still on this PFS), bblog-strided-4k
# (collective), bblog-segmented-4k (each rank one block in 4 KiB collective writes),
# bblog-contig-4m.
#
# Usage: bench/run-cluster-bench.sh [--shapes "2x2 4x1"] [--reps N] [--size BYTES]
#                                   [--netem SPEC] [--shared-bb] [--out FILE]
#   --netem SPEC  tc netem on every node's link, e.g. 'delay 0.1ms rate 2gbit'
#   --shared-bb   one burst buffer for all nodes (up --shared-bb), and each bblog case twice:
#                 as above (each node's drain reads its own node's logs, ROMIO's two-phase
#                 write between nodes), and with bblog_shared_bb=true (NAME-shared: the drain
#                 reads every node's logs, each process writes its chunks alone)
#   --out FILE    also write the table there
# Environment: BBLOG_ENV_SCRIPT (default /var/cache/bblog/current/bin/bblog-env.sh).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
cluster=$here/scripts/cluster.sh
shapes="2x2 4x1"
reps=3
size=$((16 << 20))
netem=
shared=
out=
while [ $# -gt 0 ]; do
    case $1 in
    --shapes) shapes=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --netem) netem=$2; shift 2 ;;
    --shared-bb) shared=--shared-bb; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "run-cluster-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
# shellcheck source=/dev/null
. "${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}"
bin=$(mktemp -d /var/tmp/bblog-cbench.XXXXXX)
mpicc -O2 -o "$bin/ior" "$here/bench/ior.c"
trap '"$cluster" down >/dev/null 2>&1 || true; rm -rf "$bin"' EXIT

k=$((4 << 10)) m4=$((4 << 20))
cases=(
    "plain-contig-4m ufs -a contiguous -b $size -t $m4 -s 1 -c"
    "plain-strided-4k-indep ufs -a strided -b $k -t $k -s $((size / k))"
    "bblog-strided-4k bblog -a strided -b $k -t $k -s $((size / k)) -c"
    "bblog-segmented-4k bblog -a contiguous -b $size -t $k -s 1 -c"
    "bblog-contig-4m bblog -a contiguous -b $size -t $m4 -s 1 -c"
)
if [ -n "$shared" ]; then
    for c in "${cases[@]}"; do
        read -r name fs args <<<"$c"
        [ "$fs" = bblog ] && cases+=("$name-shared $fs $args -H bblog_shared_bb=true")
    done
fi
table="| shape | case | end-to-end s (median) | min-max | write phase s | vs plain contiguous 4 MiB |
| --- | --- | --- | --- | --- | --- |"
for shape in $shapes; do
    nodes=${shape%x*} per=${shape#*x}
    hosts=
    for ((i = 1; i <= nodes; i++)); do hosts=${hosts:+$hosts,}n$i:$per; done
    np=$((nodes * per))
    "$cluster" down >/dev/null 2>&1 || true
    "$cluster" up "$nodes" --pfs gluster ${netem:+--netem "$netem"} $shared >/dev/null
    eval "$("$cluster" env)"
    declare -A tot=() wr=()
    for ((r = 1; r <= reps; r++)); do
        for c in "${cases[@]}"; do
            read -r name fs args <<<"$c"
            bbdir=$CLUSTER_BB/cbench
            for n in $CLUSTER_NODES; do "$cluster" exec "$n" mkdir -p "$bbdir"; done
            # shellcheck disable=SC2086
            json=$(BBLOG_DIR=$bbdir "$cluster" mpiexec -hosts "$hosts" -n "$np" "$bin/ior" \
                $args --json -o "$fs:$CLUSTER_PFS/cbench.dat" | grep '^{')
            "$cluster" exec n1 rm -f "$CLUSTER_PFS/cbench.dat"
            t=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print(d["total_s"], d["write_s"])' "$json")
            tot[$name]="${tot[$name]:-} ${t% *}"
            wr[$name]="${wr[$name]:-} ${t#* }"
            echo "run-cluster-bench: $shape $name rep $r: end-to-end ${t% *} s, write ${t#* } s" >&2
        done
    done
    ref=$(printf '%s\n' ${tot[plain-contig-4m]} | sort -g | sed -n "$(((reps + 1) / 2))p")
    for c in "${cases[@]}"; do
        read -r name _ <<<"$c"
        med=$(printf '%s\n' ${tot[$name]} | sort -g | sed -n "$(((reps + 1) / 2))p")
        lo=$(printf '%s\n' ${tot[$name]} | sort -g | head -n 1)
        hi=$(printf '%s\n' ${tot[$name]} | sort -g | tail -n 1)
        wmed=$(printf '%s\n' ${wr[$name]} | sort -g | sed -n "$(((reps + 1) / 2))p")
        table="$table
| $shape | $name | $(printf %.3f "$med") | $(printf %.3f "$lo")-$(printf %.3f "$hi") | $(printf %.3f "$wmed") | $(python3 -c "print('%.2f' % ($ref / $med))") |"
    done
    unset tot wr
    "$cluster" down >/dev/null
done
echo "$table"
[ -z "$out" ] || echo "$table" >"$out"
