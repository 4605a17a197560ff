#!/bin/bash
# bblog_dir on a different device per rank (issue 8, "Burst buffer full and I/O errors"): even
# ranks log to a directory on /dev/shm (tmpfs), odd ranks to one on the root disk (/var/tmp), set
# per rank with the bblog_dir hint by test/mpi/devdir.c. At 2 and 4 ranks:
#   devdir[N]       the file through bblog: equals plain ROMIO's (ufs:) byte for byte, and both
#                   directories hold no file afterwards;
#   devdir-bb[N]    the same under bblog_mode=bb (background drains: no node batch across two
#                   directories, and no hang);
#   devdir-keep[N]  the same with bblog_keep_logs=true: the kept logs of even ranks are in the
#                   tmpfs directory and those of odd ranks on the disk (the hint was obeyed);
#   devdir-crash[N] bblog_sync=bb, the job killed (SIGKILL to its process group) once every rank
#                   returned from MPI_File_sync: `bblog replay TMPFS_DIR DISK_DIR` (one replay
#                   naming both directories) gives the file plain ROMIO had at that point (the
#                   ufs: leg is killed at the same point). Control: replaying the two
#                   directories one after the other must NOT give it (the ranks of each
#                   directory overwrote bytes of ranks of the other, so only one replay that
#                   orders all records is right): otherwise the case would not test that order.
# First it checks with stat that the two directories are on different devices (and that
# /dev/shm is a tmpfs): otherwise the test fails, saying why.
#
# Usage: run-devdir.sh [PATTERN...]   only cases matching a shell pattern (devdir-crash*, ...)
# Environment: BBLOG_ENV_SCRIPT (the bblog MPI's environment script; "no": not configured, skip
# 77), BBLOG_TOOL (the bblog command; default tools/bblog of the build directory, $PWD), CI (a
# missing MPI or tool fails instead of skipping), DEVDIR_DISK (the disk directory's parent,
# default /var/tmp), MPITEST_TIMEOUT (seconds per job, default 60).
# Exit: 0 all passed; 1 something failed; 77 skipped.
set -u

env_script=${BBLOG_ENV_SCRIPT:-/var/cache/bblog/current/bin/bblog-env.sh}
tmo=${MPITEST_TIMEOUT:-60}
patterns=("$@")

if [ "$env_script" = no ]; then
    echo "run-devdir: MPI tests not configured (configure --with-bblog-mpi); skipping"
    exit 77
fi
if [ ! -r "$env_script" ]; then
    if [ -n "${CI:-}" ]; then
        echo "run-devdir: no bblog MPI: $env_script not found (CI is set, so this fails)" >&2
        exit 1
    fi
    echo "run-devdir: no bblog MPI: $env_script not found; skipping"
    exit 77
fi
# shellcheck source=/dev/null
. "$env_script"
tool=${BBLOG_TOOL:-$PWD/tools/bblog}
for t in mpicc mpiexec setsid timeout cmp stat "$tool"; do
    if ! command -v "$t" >/dev/null 2>&1; then
        echo "run-devdir: $t not found (the bblog command: build the core and run from its" \
             "build directory, or set BBLOG_TOOL)" >&2
        exit 1
    fi
done
if [ -n "${srcdir:-}" ] && [ -f "$srcdir/test/mpi/devdir.c" ]; then
    src=$(cd "$srcdir/test/mpi" && pwd)
else
    src=$(cd "$(dirname "$0")" && pwd)
fi

passed=0 failed=0 failures= keep_work=
# shellcheck source=../runner-lib.sh
. "$src/../runner-lib.sh"

work=$(mktemp -d "${TMPDIR:-/tmp}/bblog-devdir.XXXXXX") || exit 1
shm=$(mktemp -d /dev/shm/bblog-devdir.XXXXXX) || exit 1
disk=$(mktemp -d "${DEVDIR_DISK:-/var/tmp}/bblog-devdir.XXXXXX") || exit 1
job_pid=
cleanup() {
    [ -n "$job_pid" ] && kill -KILL -- "-$job_pid" 2>/dev/null
    if [ -n "$keep_work" ]; then
        echo "run-devdir: kept $work $shm $disk"
    else
        rm -rf "$work" "$shm" "$disk"
    fi
}
trap cleanup EXIT

# The premise: two devices, the even ranks' on tmpfs.
dev_shm=$(stat -c %d "$shm") dev_disk=$(stat -c %d "$disk")
fstype=$(stat -f -c %T "$shm")
if [ "$dev_shm" = "$dev_disk" ] || [ "$fstype" != tmpfs ]; then
    echo "run-devdir: FAIL: $shm (device $dev_shm, $fstype) and $disk (device $dev_disk) must" \
         "be two devices, the first a tmpfs: set DEVDIR_DISK to a directory on a disk" >&2
    keep_work=
    exit 1
fi
echo "run-devdir: even ranks log to $shm (device $dev_shm, tmpfs), odd ranks to $disk" \
     "(device $dev_disk, $(stat -f -c %T "$disk"))"

cflags="-std=gnu11 -O2 -g -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes -Werror"
# shellcheck disable=SC2086
if ! mpicc $cflags "$src/devdir.c" -o "$work/devdir"; then
    echo "run-devdir: cannot compile $src/devdir.c" >&2
    exit 1
fi

# Files (not directories) left under the two log directories.
left_files() { find "$shm" "$disk" -type f | sort; }
clear_logs() { rm -rf "$shm"/bblog-* "$disk"/bblog-*; }

# run NP NAME LOG ARGS...: runs devdir to completion; returns its status.
run() {
    local np=$1 log=$2
    shift 2
    timeout -k 5 "$tmo" mpiexec -launcher fork -n "$np" "$work/devdir" "$@" >"$log" 2>&1
}

# run_killed NP LOG FILE: runs devdir with a side directory, waits until every rank created
# its acked.RANK (it returned from MPI_File_sync), then kills the whole job with SIGKILL.
# Returns 1 (with the reason in $why) when the job ended or hung before that.
run_killed() {
    local np=$1 log=$2 file=$3 r t0
    rm -rf "$work/side"
    mkdir -p "$work/side"
    setsid mpiexec -launcher fork -n "$np" "$work/devdir" "$file" "$shm" "$disk" \
        "$work/side" >"$log" 2>&1 &
    job_pid=$!
    t0=$(date +%s)
    for ((r = 0; r < np; r++)); do
        while [ ! -e "$work/side/acked.$r" ]; do
            if ! kill -0 "$job_pid" 2>/dev/null; then
                why="the job ended before rank $r acknowledged its sync"
                break 2
            fi
            if [ $(($(date +%s) - t0)) -ge "$tmo" ]; then
                why="rank $r did not return from MPI_File_sync in $tmo s"
                break 2
            fi
            sleep 0.02
        done
    done
    kill -KILL -- "-$job_pid" 2>/dev/null
    wait "$job_pid" 2>/dev/null
    while pgrep -g "$job_pid" >/dev/null 2>&1; do
        kill -KILL -- "-$job_pid" 2>/dev/null
        sleep 0.01
    done
    job_pid=
    [ -z "$why" ]
}

# ufs_ref NP: the plain ROMIO file of a complete run at NP ranks, $work/ufs.out (made once).
ufs_np=
ufs_ref() {
    [ "$ufs_np" = "$1" ] && return 0
    rm -f "$work/ufs.out"
    run "$1" "$work/ufs.log" "ufs:$work/ufs.out" "$shm" "$disk" || return 1
    ufs_np=$1
}

for np in 2 4; do
    name="devdir[$np]"
    if selected "$name"; then
        why=
        clear_logs
        rm -f "$work/bb.out"
        if ! ufs_ref "$np"; then
            why="the ufs: run failed: $(tail -n 3 "$work/ufs.log")"
        elif ! run "$np" "$work/bb.log" "bblog:$work/bb.out" "$shm" "$disk"; then
            why="the bblog: run failed: $(tail -n 3 "$work/bb.log")"
        elif ! cmp "$work/ufs.out" "$work/bb.out" >"$work/cmp.log" 2>&1; then
            why="the bblog: file differs from the ufs: one: $(cat "$work/cmp.log")"
        fi
        left=$(left_files)
        [ -n "$left" ] && why="${why:+$why; }files left in the log directories: $(echo $left)"
        report "$( [ -z "$why" ] && echo PASS || echo FAIL)" "$name" "$np" bblog "$why"
    fi

    # bblog_mode=bb: background drains, whose node batches need every process of the node to
    # see the same directory (ad_bblog_bg_batch.c); with two they must drain without, not hang.
    name="devdir-bb[$np]"
    if selected "$name"; then
        why=
        clear_logs
        rm -f "$work/bgbb.out"
        if ! ufs_ref "$np"; then
            why="the ufs: run failed: $(tail -n 3 "$work/ufs.log")"
        elif ! BBLOG_MODE=bb run "$np" "$work/bgbb.log" "bblog:$work/bgbb.out" "$shm" "$disk"; then
            why="the bblog: run failed or hung: $(tail -n 3 "$work/bgbb.log")"
        elif ! cmp "$work/ufs.out" "$work/bgbb.out" >"$work/cmp.log" 2>&1; then
            why="the bblog: file differs from the ufs: one: $(cat "$work/cmp.log")"
        fi
        left=$(left_files)
        [ -n "$left" ] && why="${why:+$why; }files left in the log directories: $(echo $left)"
        report "$( [ -z "$why" ] && echo PASS || echo FAIL)" "$name" "$np" bblog "$why"
    fi

    name="devdir-keep[$np]"
    if selected "$name"; then
        why=
        clear_logs
        rm -f "$work/keep.out"
        if ! ufs_ref "$np"; then
            why="the ufs: run failed: $(tail -n 3 "$work/ufs.log")"
        elif ! BBLOG_KEEP_LOGS=true run "$np" "$work/keep.log" "bblog:$work/keep.out" "$shm" \
            "$disk"; then
            why="the bblog: run failed: $(tail -n 3 "$work/keep.log")"
        elif ! cmp "$work/ufs.out" "$work/keep.out" >"$work/cmp.log" 2>&1; then
            why="the bblog: file differs from the ufs: one: $(cat "$work/cmp.log")"
        else
            for ((r = 0; r < np; r++)); do
                d=$shm other=$disk
                [ $((r % 2)) = 1 ] && d=$disk other=$shm
                if ! find "$d" -name "*.r$r.meta" | grep -q .; then
                    why="${why:+$why; }no log of rank $r in $d"
                fi
                if find "$other" -name "*.r$r.meta" | grep -q .; then
                    why="${why:+$why; }a log of rank $r in $other, not its bblog_dir $d"
                fi
            done
        fi
        report "$( [ -z "$why" ] && echo PASS || echo FAIL)" "$name" "$np" keep_logs "$why"
        clear_logs
    fi

    name="devdir-crash[$np]"
    if selected "$name"; then
        why=
        clear_logs
        rm -f "$work/cu.out" "$work/cb.out"
        if ! run_killed "$np" "$work/cu.log" "ufs:$work/cu.out"; then
            why="ufs: leg: $why"
        elif ! BBLOG_SYNC=bb BBLOG_JOB_ID="devdir-$np-$$" run_killed "$np" "$work/cb.log" \
            "bblog:$work/cb.out"; then
            why="bblog: leg: $why"
        else
            [ -e "$work/cb.out" ] || : >"$work/cb.out"
            # One replay naming both directories orders the records of all ranks.
            cp "$work/cb.out" "$work/cb.separate"
            if ! "$tool" replay "$shm" "$disk" --file "$work/cb.out" >"$work/replay.log" 2>&1
            then
                why="bblog replay $shm $disk failed: $(tail -n 3 "$work/replay.log")"
            elif ! cmp "$work/cu.out" "$work/cb.out" >"$work/cmp.log" 2>&1; then
                why="after bblog replay of both directories the file differs from the ufs: one"
                why="$why killed at the same point: $(cat "$work/cmp.log")"
            fi
            # Control: each directory replayed on its own, one after the other, into a copy,
            # cannot order writes across the directories; the case is one where that matters
            # (else it would not test the ordering of the replay above).
            sep_why=
            for d in "$shm" "$disk"; do
                if ! "$tool" replay "$d" --file "$work/cb.out" --output "$work/cb.separate" \
                    >>"$work/replay.log" 2>&1; then
                    sep_why="bblog replay $d failed: $(tail -n 3 "$work/replay.log")"
                    break
                fi
            done
            if [ -n "$sep_why" ]; then
                why="${why:+$why; }$sep_why"
            elif cmp -s "$work/cu.out" "$work/cb.separate"; then
                why="${why:+$why; }control: replaying the directories one after the other gave"
                why="$why the right file too, so this case does not test cross-directory order"
            fi
        fi
        report "$( [ -z "$why" ] && echo PASS || echo FAIL)" "$name" "$np" sync=bb "$why"
        clear_logs
    fi
done

echo "run-devdir: $passed passed, $failed failed${failures:+
failures:$failures}"
[ "$failed" = 0 ]
