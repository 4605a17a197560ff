#!/bin/bash
# run-layer-parity.sh: what bblog costs preloaded over a binary MPI instead of grafted into a
# rebuilt one (issue 69; doc/mpi-versions.md). The same workloads, in the same run, through
#   graft-bblog  bblog in MPICH 4.0.2 rebuilt with the graft (scripts/build-mpi.sh), bblog: names
#   layer-bblog  bblog preloaded over PyPI's binary MPICH 5.0.2 (scripts/build-layer.sh)
#   graft-ufs    plain ROMIO of that rebuilt MPICH 4.0.2 (ufs:)
#   wheel-ufs    MPICH 5.0.2's own MPI-IO, no layer (what a site has without bblog)
# Workloads, each compiled with each MPI's mpicc:
#   ior-4k, ior-1m  bench/ior.c strided (transfer i of rank r at (i*P + r)*t), collective
#                   MPI_File_write_at_all, --size bytes per rank (default 16 MiB), 4 KiB and
#                   1 MiB transfers: per write call costs show at 4 KiB
#   nc-4k           bench/ior_nc.c, IOR's PnetCDF pattern, collective puts of 4 KiB, when a
#                   PnetCDF for each MPI is given (PNC_GRAFT, PNC_LAYER: install prefixes)
# --reps runs per point (default 5), the legs interleaved (each repetition starts one leg
# later); prints the median end-to-end (open to close) MiB/s per leg and point, and the ratios
# layer-bblog / graft-bblog and layer-bblog / wheel-ufs. Burst buffer in /dev/shm, the files in
# --dir (default /var/tmp, a local file system: the PFS's own speed would hide a per-call cost).
#
# Usage: bench/run-layer-parity.sh [--np N] [--reps N] [--size BYTES] [--dir DIR]
# Environment: GRAFT_ENV (default <cache>/current/bin/bblog-env.sh), LAYER_ENV (default
# <cache>/layer-current/bin/layer-env.sh), PNC_GRAFT, PNC_LAYER.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
cache=${BBLOG_CACHE:-/var/cache/bblog}
graft_env=${GRAFT_ENV:-$cache/current/bin/bblog-env.sh}
layer_env=${LAYER_ENV:-$cache/layer-current/bin/layer-env.sh}
np=4 reps=5 size=16777216 dir=/var/tmp
while [ $# -gt 0 ]; do
    case $1 in
    --np) np=$2; shift 2 ;;
    --reps) reps=$2; shift 2 ;;
    --size) size=$2; shift 2 ;;
    --dir) dir=$2; shift 2 ;;
    *) echo "usage: $0 [--np N] [--reps N] [--size BYTES] [--dir DIR]" >&2; exit 2 ;;
    esac
done
work=$(mktemp -d "$dir/bblog-parity.XXXXXX")
bb=$(mktemp -d /dev/shm/bblog-parity-bb.XXXXXX)
trap 'rm -rf "$bb"' EXIT

# build SIDE ENV: the programs with that MPI's mpicc into $work/SIDE
build() {
    local side=$1 env=$2 pnc=$3
    mkdir -p "$work/$side"
    (
        # shellcheck disable=SC1090
        . "$env"
        mpicc -O2 -o "$work/$side/ior" "$here/bench/ior.c" || exit 1
        if [ -n "$pnc" ]; then
            mpicc -O2 -o "$work/$side/ior_nc" "$here/bench/ior_nc.c" -I"$pnc/include" \
                -L"$pnc/lib" -Wl,-rpath,"$pnc/lib" -lpnetcdf || exit 1
        fi
    ) || { echo "run-layer-parity: cannot build the $side programs" >&2; exit 1; }
}
build graft "$graft_env" "${PNC_GRAFT:-}"
build layer "$layer_env" "${PNC_LAYER:-}"
wheel_mpiexec=$(. "$layer_env" && echo "$BBLOG_LAYER_MPI/bin/mpiexec")

points="ior-4k ior-1m"
[ -n "${PNC_GRAFT:-}" ] && [ -n "${PNC_LAYER:-}" ] && points="$points nc-4k"
legs="graft-bblog layer-bblog graft-ufs wheel-ufs"
read -r -a legarr <<<"$legs"

# one POINT LEG: prints the run's total_MiBps (empty on failure)
one() {
    local point=$1 leg=$2 side prefix launch prog args out
    case $leg in
    graft-*) side=graft ;;
    *) side=layer ;;
    esac
    case $leg in
    *-bblog) prefix=bblog: ;;
    graft-ufs) prefix=ufs: ;;
    wheel-ufs) prefix= ;;
    esac
    case $point in
    ior-4k) prog=ior args=(-a strided -b "$size" -t 4096 -s 1 -c) ;;
    ior-1m) prog=ior args=(-a strided -b "$size" -t 1048576 -s 1 -c) ;;
    nc-4k) prog=ior_nc args=(-b "$size" -t 4096) ;;
    esac
    rm -rf "${work:?}/out" "${bb:?}"/*
    mkdir -p "$work/out"
    out=$(
        if [ "$leg" = wheel-ufs ]; then
            # shellcheck disable=SC1090
            . "$layer_env"
            launch=("$wheel_mpiexec")
        elif [ "$side" = layer ]; then
            # shellcheck disable=SC1090
            . "$layer_env"
            launch=(mpiexec)
        else
            # shellcheck disable=SC1090
            . "$graft_env"
            launch=(mpiexec)
        fi
        BBLOG_DIR=$bb "${launch[@]}" -n "$np" "$work/$side/$prog" "${args[@]}" \
            -o "$prefix$work/out/f" --json 2>>"$work/errors.log"
    )
    printf '%s\n' "$out" | grep -o '"total_MiBps": [0-9.]*' | awk '{print $2}'
}

declare -A res=()
i=0
for r in $(seq 1 "$reps"); do
    for p in $points; do
        for k in 0 1 2 3; do
            l=${legarr[$(((k + i) % 4))]}
            v=$(one "$p" "$l")
            res[$p.$l]="${res[$p.$l]:-} ${v:-fail}"
        done
        i=$((i + 1))
    done
done

median() { tr ' ' '\n' | grep -E '^[0-9.]+$' | sort -n | awk '{a[NR]=$1} END {if (NR) print a[int((NR+1)/2)]; else print "fail"}'; }
printf '%s ranks, %s bytes per rank, %s runs per point (median end-to-end MiB/s), files in %s\n' \
    "$np" "$size" "$reps" "$dir"
printf '| point | %s | layer/graft bblog | layer bblog/wheel ufs |\n' "$(echo $legs | sed 's/ / | /g')"
printf '|---|---|---|---|---|---|---|\n'
for p in $points; do
    row="| $p"
    declare -A m=()
    for l in $legs; do
        m[$l]=$(echo "${res[$p.$l]}" | median)
        row="$row | ${m[$l]}"
    done
    ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f", a / b; else print "n/a" }'; }
    row="$row | $(ratio "${m[layer-bblog]}" "${m[graft-bblog]}") | $(ratio "${m[layer-bblog]}" "${m[wheel-ufs]}") |"
    echo "$row"
done
echo "single runs:"
for p in $points; do for l in $legs; do echo "  $p $l:${res[$p.$l]}"; done; done
[ -s "$work/errors.log" ] && echo "stderr of the runs: $work/errors.log"
rm -rf "$work/out"
