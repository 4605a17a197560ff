# Shared by the MPI test runners (test/mpi/run-diff.sh, test/apps/run-apps.sh, and through
# test/cluster-lib.sh the crash and ROMIO runners), sourced by bash. They keep passed, failed,
# failures and keep_work; patterns holds the case patterns asked for.

# is_ompi: whether the mpiexec on PATH is Open MPI's (it starts local processes itself: no
# -launcher; -x passes variables).
is_ompi() {
    mpiexec --version 2>&1 | grep -qE 'Open MPI|OpenRTE'
}

# ompi_sessions DIR: with Open MPI, puts its launcher's session directories in DIR (made here)
# instead of /tmp; sets ompi_base to DIR (empty with another MPI). mpiexec names its directory
# by its own pid (ompi.PID) and refuses to start ("The PMIx server's listener thread failed to
# start") when a directory of that name is left by an earlier mpiexec killed with SIGKILL (as the
# crash tests kill jobs) whose pid has come round again. DIR is the runner's own: no earlier
# run's directory is in it.
ompi_sessions() {
    ompi_base=
    is_ompi || return 0
    mkdir -p "$1" || return 1
    ompi_base=$1
    # PRTE's name (Open MPI 5), ORTE's (Open MPI 4.1).
    export PRTE_MCA_prte_tmpdir_base=$1 OMPI_MCA_orte_tmpdir_base=$1
    # An Open MPI that took neither name would leave the runner open to the old directories.
    local got
    got=$(mpiexec -n 1 printenv PMIX_SERVER_TMPDIR 2>&1)
    case $got in
    "$1"/*) ;;
    *) echo "ompi_sessions: Open MPI's mpiexec did not put its session directory in $1:" \
        "PMIX_SERVER_TMPDIR is '$got'" >&2; return 1 ;;
    esac
}

report() { # STATUS NAME RANKS MODE [REASON]
    local status=$1 name=$2 ranks=$3 mode=$4
    shift 4
    if [ "$status" = PASS ]; then
        passed=$((passed + 1))
        echo "PASS $name $ranks $mode"
    else
        failed=$((failed + 1))
        failures="$failures
  $name $ranks $mode: $*"
        keep_work=1
        echo "FAIL $name $ranks $mode: $*"
    fi
}

# Prints the last lines of a log, indented.
show_log() {
    [ -s "$1" ] && tail -n 25 "$1" | sed 's/^/    | /'
}

# Whether case $1 matches one of the shell patterns given on the command line (all if none).
selected() {
    local pat
    [ ${#patterns[@]} -eq 0 ] && return 0
    for pat in "${patterns[@]}"; do
        # shellcheck disable=SC2053
        [[ $1 == $pat ]] && return 0
    done
    return 1
}
