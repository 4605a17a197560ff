#!/bin/bash
# crash-replay-long.sh - the long run of the crash/replay harness (issue 8): 500 killed jobs by
# default instead of the 24 of make check. Same checks, same output (one PASS/FAIL line per
# kill, a closing "N passed, M failed"); see test/crash/run-crash.sh.
#
# Usage: bench/crash-replay-long.sh [--runs N] [--seed S] [--steps N] [--keep]
# Environment: BBLOG_ENV_SCRIPT (the bblog MPI, default /var/cache/bblog/current/bin/bblog-env.sh),
# BBLOG_TOOL (the bblog command; default tools/bblog of the build directory named by
# BBLOG_BUILDDIR, else of $PWD).
# 2.5 to 6 s per killed run on 2 cores (4 ranks), by the load: 500 runs take 25 to 50 minutes.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
export BBLOG_TOOL=${BBLOG_TOOL:-${BBLOG_BUILDDIR:-$PWD}/tools/bblog}
exec "$here/test/crash/run-crash.sh" --runs 500 "$@"
