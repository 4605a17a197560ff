# Shared by the MPI test runners (test/mpi/run-diff.sh, test/apps/run-apps.sh), sourced by bash.
# They keep passed, failed, failures and keep_work; patterns holds the case patterns asked for.

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
