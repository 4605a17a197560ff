# gluster-lib.sh - what bench/pfs.sh and scripts/cluster.sh share to find and stop the GlusterFS
# processes they started. Sourced by bash.

# PIDs of gluster processes (glusterd, glusterfsd bricks, glusterfs clients) whose command line
# names the fixed string $1. Never matches by process name alone.
gluster_pids() {
    local p exe
    for p in /proc/[0-9]*; do
        exe=$(readlink "$p/exe" 2>/dev/null) || continue
        case $exe in
        /usr/sbin/glusterfsd | /usr/sbin/glusterd | /usr/sbin/glusterfs) ;;
        *) continue ;;
        esac
        tr '\0' ' ' <"$p/cmdline" 2>/dev/null | grep -qF -- "$1" && echo "${p#/proc/}"
    done
    return 0
}

# stop_pid PID [WHAT]: SIGTERM, then SIGKILL after 10 s; says so on stderr when WHAT is given.
stop_pid() {
    kill -0 "$1" 2>/dev/null || return 0
    [ -z "${2:-}" ] || echo "${prog:-gluster}: stopping $2 (pid $1)" >&2
    kill -TERM "$1" 2>/dev/null || return 0
    for _ in $(seq 1 40); do
        kill -0 "$1" 2>/dev/null || return 0
        sleep 0.25
    done
    [ -z "${2:-}" ] || echo "${prog:-gluster}: pid $1 ignored SIGTERM for 10 s: SIGKILL" >&2
    kill -KILL "$1" 2>/dev/null || true
}
