#!/bin/sh
# test-all.sh: builds everything from nothing and runs every test bblog has.
#   1. Debian packages (scripts/install-deps.sh);
#   2. MPICH 4.0.2 with the bblog driver grafted in (scripts/build-mpi.sh, cached), and PnetCDF
#      1.12.3 on it (scripts/build-pnetcdf.sh, cached);
#   2a. the graft as a site's patch series (adio/graft/mkpatch-mpich.sh) on a clean tree of
#      that MPICH source package: it applies without fuzz, makes the graft's sources, and ROMIO's
#      build system regenerates from it (test/graft/run-mkpatch.sh);
#   2b. ROMIO's own test programs (src/mpi/romio/test of that MPICH, unchanged) through ufs:,
#      bblog: and ROMIO_FSTYPE_FORCE=bblog: (test/romio/run-romio-tests.sh --quick: large_array
#      and large_file at 256 MiB); BBLOG_ROMIO_TESTS=full runs them at their 4 GiB (15 minutes
#      more on 2 cores), BBLOG_ROMIO_TESTS=0 skips the step;
#   2c. mpi4py 4.1.2 built from its sdist on that MPI, in a virtual environment
#      (scripts/build-mpi4py.sh, cached), and mpi4py's own I/O tests (test_io, test_file) at 1, 2
#      and 4 processes through ufs: and ROMIO_FSTYPE_FORCE=bblog: (test/apps/run-mpi4py.sh);
#      BBLOG_MPI4PY=0 skips the step;
#   3. the core with warnings as errors: `make check` (unit tests, the bblog tool test, the
#      MPI differential suite on the MPI of step 2, the HDF5 and PnetCDF application tests);
#   3b. PnetCDF's own `make check`, plain and through bblog (test/apps/run-pnetcdf-suite.sh);
#      BBLOG_PNC_SUITES="check ptest" adds its `make ptest` (4 processes; 12 minutes or more
#      per run on 2 cores, too slow for CI's 45 minutes), "" skips both;
#   3c. HDF5 1.10.8 with --enable-parallel on the MPI of step 2 (scripts/build-hdf5.sh, cached)
#      and HDF5's own parallel tests (its testpar programs, 6 processes) through bblog:, and
#      through ufs: only if one fails, for reference (test/apps/run-hdf5-testpar.sh
#      --ufs-if-failed, CI subset; its --all runs every program);
#      BBLOG_HDF5_TESTPAR=0 skips the step;
#   3d. the tests across nodes of an emulated cluster (scripts/cluster.sh): a fixed part of the
#      differential suite, ROMIO's test programs and crash recovery, at 2 nodes x 2 ranks and
#      4 x 1, HDF5's t_mpi and t_filters_parallel across 2 nodes when step 3c built HDF5, and
#      the drains and crash recovery of a burst buffer the nodes share (bblog_shared_bb), with
#      Slurm jobs (test/cluster/run-cluster.sh --quick); BBLOG_CLUSTER=0 skips the step;
#   3e. bblog's layer over a binary MPI (scripts/build-layer.sh: ROMIO with the driver, built
#      standalone against PyPI's MPICH 5.0.2 wheel, then its Open MPI 5.0.11 wheel, preloaded):
#      for each, how programs reach it and the
#      message where they would not (test/layer/run-layer-checks.sh), the whole differential
#      suite, ROMIO's test programs and crash/replay through it; BBLOG_LAYER=0 skips the step;
#   4. the core again under AddressSanitizer + UBSan: `make check` of the unit tests, the
#      fuzz corpus replay (test/fuzz) and the log security tests (test/security);
#   5. `make distcheck` (the tarball builds and passes its checks).
# Build trees go under ${BBLOG_BUILD:-/var/tmp/bblog-build}; the MPI under ${BBLOG_CACHE:-/var/cache/bblog}.
# Exits non-zero as soon as a step fails; the last line says what passed.
set -eu

here=$(cd "$(dirname "$0")/.." && pwd -P)
build=${BBLOG_BUILD:-/var/tmp/bblog-build}
jobs=${BBLOG_JOBS:-2}

# Each step's header says when it starts, in seconds since the start (what CI's time goes to).
# A runner piped into tee writes its exit status to a file: "cmd && echo 0 || echo $?", since
# under set -e a failing command would end the pipeline's subshell before a plain "echo $?".
t_start=$(date +%s)
step() { printf '\n==== [%ss] %s\n' "$(( $(date +%s) - t_start ))" "$*"; }

step "packages"
"$here/scripts/install-deps.sh"

step "MPICH with bblog"
mkdir -p "$build"
"$here/scripts/build-mpi.sh" --env-out "$build/mpi-env"
mpi_env=$(cat "$build/mpi-env")

step "the graft as a site's patch series, on a clean MPICH source tree (test/graft/run-mkpatch.sh)"
"$here/test/graft/run-mkpatch.sh" \
    "$(ls "${BBLOG_CACHE:-/var/cache/bblog}"/downloads/mpich_*.dsc | sort -V | tail -n 1)"

rm -rf "$build/romio"
romio_tests=${BBLOG_ROMIO_TESTS-1}
if [ "$romio_tests" != 0 ]; then
    step "ROMIO's test programs through ufs:, bblog: and ROMIO_FSTYPE_FORCE=bblog:"
    # The log goes under a tree the summary reads (its last line: romio-tests: N passed, ...).
    mkdir -p "$build/romio/test"
    romio_size=--quick
    [ "$romio_tests" = full ] && romio_size=
    # shellcheck disable=SC2086
    { "$here/test/romio/run-romio-tests.sh" --mpi-env "$build/mpi-env" $romio_size \
        --work "$build/romio/work" 2>&1 && echo 0 >"$build/romio/rc" ||
        echo $? >"$build/romio/rc"; } |
        tee "$build/romio/test/run-romio-tests.log"
    [ "$(cat "$build/romio/rc")" = 0 ] || { echo "test-all: ROMIO's test programs failed"; exit 1; }
fi

rm -rf "$build/mpi4py"
if [ "${BBLOG_MPI4PY:-1}" != 0 ]; then
    step "mpi4py on that MPI, and mpi4py's I/O tests through ufs: and ROMIO_FSTYPE_FORCE=bblog:"
    "$here/scripts/build-mpi4py.sh" --mpi-env "$build/mpi-env" --prefix-out "$build/mpi4py-dir"
    # The log goes under a tree the summary reads (its last line: mpi4py-io: N passed, ...).
    mkdir -p "$build/mpi4py/test"
    { "$here/test/apps/run-mpi4py.sh" --mpi-env "$build/mpi-env" --prefix "$build/mpi4py-dir" \
        --work "$build/mpi4py/work" 2>&1 && echo 0 >"$build/mpi4py/rc" ||
        echo $? >"$build/mpi4py/rc"; } |
        tee "$build/mpi4py/test/run-mpi4py.log"
    [ "$(cat "$build/mpi4py/rc")" = 0 ] || { echo "test-all: mpi4py's I/O tests failed"; exit 1; }
fi

step "PnetCDF on that MPI"
"$here/scripts/build-pnetcdf.sh" --mpi-env "$build/mpi-env" --prefix-out "$build/pnetcdf-dir" \
    -j"$jobs"
pnc_dir=$(cat "$build/pnetcdf-dir")

step "autogen"
(cd "$here" && ./autogen.sh >/dev/null 2>&1) || (cd "$here" && ./autogen.sh)

step "core: build and make check (-Werror; unit, tool and MPI tests)"
rm -rf "$build/werror" && mkdir -p "$build/werror"
cd "$build/werror"
"$here/configure" -q --enable-werror --with-bblog-mpi="$mpi_env" --with-pnetcdf="$pnc_dir"
make -s -j"$jobs"
make -s -j"$jobs" check || { cat test-suite.log 2>/dev/null | tail -100; exit 1; }

pnc_suites=${BBLOG_PNC_SUITES-check}
if [ -n "$pnc_suites" ]; then
    step "PnetCDF's own suites ($pnc_suites), plain and with ROMIO_FSTYPE_FORCE=bblog:"
    rm -rf "$build/pnetcdf-suite"
    # shellcheck disable=SC2086
    BBLOG_ENV_SCRIPT=$mpi_env PNETCDF_DIR=$pnc_dir PNCSUITE_WORK=$build/pnetcdf-suite \
        "$here/test/apps/run-pnetcdf-suite.sh" $pnc_suites
fi

rm -rf "$build/hdf5-testpar"
hdf5_built=
if [ "${BBLOG_HDF5_TESTPAR:-1}" != 0 ]; then
    step "HDF5 on that MPI, and HDF5's testpar programs through bblog: (and ufs: if one fails)"
    "$here/scripts/build-hdf5.sh" --mpi-env "$build/mpi-env" --prefix-out "$build/hdf5-dir" \
        -j"$jobs"
    hdf5_built=1
    # The log goes under a tree the summary reads (its last line: hdf5-testpar: N passed, ...).
    mkdir -p "$build/hdf5-testpar/test"
    { "$here/test/apps/run-hdf5-testpar.sh" --mpi-env "$build/mpi-env" \
        --build-dir "$(cat "$build/hdf5-dir")" --work "$build/hdf5-testpar/work" \
        --ufs-if-failed 2>&1 && echo 0 >"$build/hdf5-testpar/rc" ||
        echo $? >"$build/hdf5-testpar/rc"; } | tee "$build/hdf5-testpar/test/run-hdf5-testpar.log"
    [ "$(cat "$build/hdf5-testpar/rc")" = 0 ] ||
        { echo "test-all: HDF5's testpar programs failed"; exit 1; }
fi

rm -rf "$build/cluster"
if [ "${BBLOG_CLUSTER:-1}" != 0 ]; then
    step "the emulated cluster: differential, ROMIO and crash tests across nodes (2x2, 4x1)"
    # Each runner's log goes under a tree the summary reads (run-cluster --logs).
    mkdir -p "$build/cluster/test"
    { BBLOG_ENV_SCRIPT=$mpi_env BBLOG_TOOL=$build/werror/tools/bblog \
        "$here/test/cluster/run-cluster.sh" --quick --logs "$build/cluster/test" \
        ${hdf5_built:+--hdf5-dir "$(cat "$build/hdf5-dir")"} 2>&1 &&
        echo 0 >"$build/cluster/rc" || echo $? >"$build/cluster/rc"; } |
        tee "$build/cluster/run-cluster.log"
    [ "$(cat "$build/cluster/rc")" = 0 ] || { echo "test-all: the cluster tests failed"; exit 1; }
fi

# layer_tests NAME DIR ROMIO-EXCLUDE BUILD-LAYER-ARGS...: the layer over one binary MPI, its
# tests' logs in DIR; ROMIO-EXCLUDE: "PROGRAM: REASON" for run-romio-tests.sh --exclude, or "".
layer_tests() {
    local name=$1 dir=$2 exclude=$3 layer_env
    shift 3
    step "bblog's layer over PyPI's binary $name: link checks, differential, ROMIO, crash tests"
    "$here/scripts/build-layer.sh" "$@" --env-out "$dir.env"
    layer_env=$(cat "$dir.env")
    mkdir -p "$dir/test"
    { "$here/test/layer/run-layer-checks.sh" "$layer_env" 2>&1 && echo 0 >"$dir/rc" ||
        echo $? >"$dir/rc"; } | tee "$dir/test/run-layer-checks.log"
    [ "$(cat "$dir/rc")" = 0 ] || { echo "test-all: the layer's link checks failed"; exit 1; }
    { BBLOG_ENV_SCRIPT=$layer_env BBLOG_TOOL=$build/werror/tools/bblog \
        MPITEST_BUILD=$dir/mpitest "$here/test/mpi/run-diff.sh" 2>&1 &&
        echo 0 >"$dir/rc" || echo $? >"$dir/rc"; } |
        tee "$dir/test/run-diff.log"
    [ "$(cat "$dir/rc")" = 0 ] ||
        { echo "test-all: the differential suite through the layer failed"; exit 1; }
    { "$here/test/romio/run-romio-tests.sh" --mpi-env "$layer_env" --quick \
        ${exclude:+--exclude "$exclude"} --work "$dir/romio" 2>&1 && echo 0 >"$dir/rc" ||
        echo $? >"$dir/rc"; } | tee "$dir/test/run-romio-tests.log"
    [ "$(cat "$dir/rc")" = 0 ] ||
        { echo "test-all: ROMIO's test programs through the layer failed"; exit 1; }
    # 12 killed runs: each sync mode, kill and log mapping together once (the core run has 24).
    { BBLOG_ENV_SCRIPT=$layer_env BBLOG_TOOL=$build/werror/tools/bblog \
        "$here/test/crash/run-crash.sh" --runs 12 2>&1 && echo 0 >"$dir/rc" ||
        echo $? >"$dir/rc"; } | tee "$dir/test/run-crash.log"
    [ "$(cat "$dir/rc")" = 0 ] ||
        { echo "test-all: crash and replay through the layer failed"; exit 1; }
}
rm -rf "$build/layer" "$build/layer-ompi"
if [ "${BBLOG_LAYER:-1}" != 0 ]; then
    layer_tests "MPICH 5.0.2" "$build/layer" "" --mpi mpich
    # noncontig_coll2 crashes in its own MPI_Gatherv of the processor names on the plain Open
    # MPI wheel too, no layer loaded, as built here (not under gdb or valgrind, nor with
    # address randomization off): a reference that cannot pass (doc/mpi-versions.md).
    layer_tests "Open MPI 5.0.11" "$build/layer-ompi" \
        "noncontig_coll2: crashes without bblog on this Open MPI (doc/mpi-versions.md)" \
        --mpi openmpi
fi

step "core: make check under AddressSanitizer + UBSan"
rm -rf "$build/san" && mkdir -p "$build/san"
cd "$build/san"
"$here/configure" -q --enable-werror --enable-sanitizers
make -s -j"$jobs"
make -s -j"$jobs" check || { cat test-suite.log 2>/dev/null | tail -100; exit 1; }

step "make distcheck"
cd "$build/werror"
make -s distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror >distcheck.log 2>&1 ||
    { tail -60 distcheck.log; exit 1; }

# One closing line over everything that ran: CMocka cases, tool checks, MPI legs.
step "summary"
python3 - "$build/werror" "$build/san" "$build/romio" "$build/mpi4py" \
    "$build/hdf5-testpar" "$build/cluster" "$build/layer" "$build/layer-ompi" <<'EOF'
import glob, os, re, sys

passed = failed = 0
for tree in sys.argv[1:]:
    for log in glob.glob(os.path.join(tree, "test", "**", "*.log"), recursive=True):
        text = open(log, errors="replace").read()
        passed += sum(map(int, re.findall(r"^\[  PASSED  \] (\d+) test", text, re.M)))
        failed += sum(map(int, re.findall(r"^\[  FAILED  \] (\d+) test", text, re.M)))
        for p, f in re.findall(r"^(?:\S+: )?(\d+) passed, (\d+) failed", text, re.M):
            passed, failed = passed + int(p), failed + int(f)
print("unit (plain + sanitizer builds), tool and MPI tests, in all:")
print(f"tests: {passed} passed, {failed} failed")
sys.exit(1 if failed or not passed else 0)
EOF
