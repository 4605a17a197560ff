# Sourced by the shell tests of the bblog tool (test/unit/test_tool.sh, test_damage.sh,
# test/security/test_replay_target.sh): finding the programs, running commands, and checking
# their status and output. The caller sets OUT and ERR (files for the last command's output)
# and may set row (a label printed with each failure).

failures=0
checks=0

# toolcheck_programs NAME: BBLOG and MKLOGS from BBLOG_BUILDDIR (default: the current
# directory, as make check runs the tests), or exit 99 saying what to do.
toolcheck_programs() {
    builddir=${BBLOG_BUILDDIR:-.}
    BBLOG=$builddir/tools/bblog
    MKLOGS=$builddir/test/unit/mklogs
    for p in "$BBLOG" "$MKLOGS"; do
        if [ ! -x "$p" ]; then
            echo "$1: $p not built: run 'make check' in the build directory," \
                 "or set BBLOG_BUILDDIR to it" >&2
            exit 99
        fi
    done
}

fail() {
    echo "FAIL${row:+ [$row]}: $*"
    echo "--- stdout:"; cat "$OUT"
    echo "--- stderr:"; cat "$ERR"
    failures=$((failures + 1))
}

# run WANT_STATUS CMD...: runs CMD with its output in $OUT and $ERR, checks the exit status.
run() {
    want=$1
    shift
    checks=$((checks + 1))
    "$@" >"$OUT" 2>"$ERR"
    got=$?
    [ "$got" -eq "$want" ] || fail "'$*' exited $got, expected $want"
}

# has FILE PATTERN: FILE has a line with the fixed string PATTERN; hasnt: it has none.
has() {
    checks=$((checks + 1))
    grep -qF -- "$2" "$1" || fail "no line with '$2' in the $(basename "$1") of the last command"
}

hasnt() {
    checks=$((checks + 1))
    grep -qF -- "$2" "$1" && fail "a line with '$2' in the $(basename "$1") of the last command"
}

# same A B: the two files are byte for byte the same; differs: they are not.
same() {
    checks=$((checks + 1))
    cmp -s "$1" "$2" || fail "$1 differs from $2"
}

differs() {
    checks=$((checks + 1))
    cmp -s "$1" "$2" && fail "$1 is the same as $2"
}

# toolcheck_end NAME: the summary line; exits 0 when nothing failed, else 1.
toolcheck_end() {
    echo "$1: $((checks - failures)) passed, $failures failed"
    [ "$failures" -eq 0 ] && exit 0
    exit 1
}
