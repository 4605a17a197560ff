#!/bin/sh
# The driver's structure and documentation lists: test/check-driver.py on this tree must pass,
# and on copies with a call from a lower file back up to a higher one (a cycle), with an
# over-long function (in the driver or in logfs/), with a collective call whose result is
# dropped, with a hint missing from bblog(7), and with a driver file missing from DESIGN.md's
# table of the driver's files it must fail, naming what it found.
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
py=$src/test/check-driver.py
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail=0

if python3 "$py" "$src"; then
    echo "PASS: the driver's files call each other without a cycle, bblog(7) lists its hints"
else
    echo "FAIL: test/check-driver.py on the driver"
    fail=1
fi

mutant() {     # NAME: a copy of adio/ad_bblog, logfs/, tools/, man/ and DESIGN.md for one mutation
    mkdir -p "$tmp/$1/adio" && cp -r "$src/adio/ad_bblog" "$tmp/$1/adio/" &&
        cp -r "$src/logfs" "$src/tools" "$src/man" "$src/DESIGN.md" "$tmp/$1/"
}

# expect NAME PATTERN WHAT: check-driver.py on the mutant NAME must fail and print PATTERN.
expect() {
    out=$(python3 "$py" "$tmp/$1")
    if [ $? -ne 0 ] && echo "$out" | grep -q "$2"; then
        echo "PASS: $3 is found"
    else
        echo "FAIL: $3 went unnoticed: $out"
        fail=1
    fi
}

# base_err.c calls nothing of the drain; a call from it to the drain closes a cycle through drain.c.
mutant cycle
printf '\nvoid bblog_mutant(ADIO_File fd)\n{\n    ADIOI_BBLOG_Drain(fd, 0);\n}\n' \
    >>"$tmp/cycle/adio/ad_bblog/ad_bblog_base_err.c"
expect cycle "ad_bblog_base_err.c -> ad_bblog_drain.c: ADIOI_BBLOG_Drain" "a cycle through ad_bblog_base_err.c"

# long_function NAME FILE: appends a 96-line function NAME to FILE.
long_function() {
    {
        printf '\nstatic int %s(void)\n{\n    int x = 0;\n\n' "$1"
        i=0
        while [ $i -lt 90 ]; do printf '    x += %d;\n' $i; i=$((i + 1)); done
        printf '    return x;\n}\n'
    } >>"$2"
}

mutant long
long_function bblog_mutant_long "$tmp/long/adio/ad_bblog/ad_bblog_base_err.c"
expect long "bblog_mutant_long(void) is 96 lines" "a 96-line function without a reason"

# The same rule in the core's log layer.
mutant longcore
long_function bblog_mutant_core "$tmp/longcore/logfs/replay.c"
expect longcore "logfs/replay.c:.*bblog_mutant_core(void) is 96 lines" \
    "a 96-line function in logfs/ without a reason"

# A collective call whose result is dropped.
mutant coll
printf '\nvoid bblog_mutant(ADIO_File fd)\n{\n    ADIOI_BBLOG_Barrier(fd->comm);\n}\n' \
    >>"$tmp/coll/adio/ad_bblog/ad_bblog_close.c"
expect coll "ad_bblog_close.c:[0-9]*: ADIOI_BBLOG_Barrier's result is dropped" \
    "a collective call whose result is dropped"

mutant doc
sed 's/^\.B bblog_verify /.B bblog_verity /' "$src/man/bblog.7" >"$tmp/doc/man/bblog.7"
expect doc "does not describe the hint bblog_verify" "a hint missing from bblog(7)"

mutant table
printf '/* a new driver file */\n' >"$tmp/table/adio/ad_bblog/ad_bblog_mutant.c"
expect table "table of the driver's files does not name ad_bblog_mutant.c" "a driver file missing from DESIGN.md"
exit $fail
