#!/bin/sh
# build-mpi4py.sh [--mpi-env FILE] [--cache DIR] [--prefix-out FILE]
#
# mpi4py (a pinned PyPI release, built from its source) in a Python virtual environment, linked
# against the bblog MPI of scripts/build-mpi.sh, with mpi4py's own test suite (the test/ directory
# of its sdist) beside it, for test/apps/run-mpi4py.sh (issue 22).
#   --mpi-env FILE     the MPI to build against: the file written by `build-mpi.sh --env-out`
#                      (it holds the path of the MPI's bblog-env.sh), or that bblog-env.sh itself.
#                      Default: $cache/current/bin/bblog-env.sh (the MPI built last, by anyone).
#   --prefix-out FILE  write the directory of this build (venv/, src/ below it) to FILE, for
#                      test/apps/run-mpi4py.sh --prefix.
# The Python is Debian's /usr/bin/python3 (BBLOG_PYTHON overrides); its venv and headers
# (python3-venv, python3-dev) are installed with apt-get when missing. pip fetches the sdist and
# mpi4py's build requirements (setuptools, build, Cython: binary wheels) from PyPI.
# Cached under ${BBLOG_CACHE:-/var/cache/bblog}:
#   downloads/mpi4py/mpi4py-<version>.tar.gz   the sdist (`pip download`, sha256 checked)
#   mpi4py-<version>-<key>/           one build, keyed by the mpi4py version, the Python (its
#       venv/ src/ logs/              path and version), the compiler flags and the MPI (its
#                                     prefix, which holds build-mpi.sh's build key; a driver
#                                     change relinks libmpi.so in place and needs no rebuild of
#                                     mpi4py, which loads it at run time); venv/ has mpi4py
#                                     installed, src/ is the unpacked sdist (its test/ is
#                                     mpi4py's test suite)
#   mpi4py-current -> mpi4py-<version>-<key>
# A rerun with the same key does nothing. Exits non-zero on failure, after printing the tail of
# the log that shows it.
set -eu

prog=build-mpi4py
cache=${BBLOG_CACHE:-/var/cache/bblog}
mpi_env=
prefix_out=
# The pinned release (current in 2025; builds with MPICH 4.0.2 and Python 3.11) and the sha256
# of its sdist as PyPI lists it.
version=4.1.2
sdist_sha256=56860286dc45f20e8821e93cb06669e30462348bf866f685553fa4b712d58d02

# shellcheck source=scripts/lib.sh
. "$(dirname "$0")/lib.sh"

while [ $# -gt 0 ]; do
    case $1 in
    --cache) [ $# -ge 2 ] || die "--cache needs a directory"; cache=$2; shift 2 ;;
    --cache=*) cache=${1#*=}; shift ;;
    --mpi-env) [ $# -ge 2 ] || die "--mpi-env needs a file"; mpi_env=$2; shift 2 ;;
    --mpi-env=*) mpi_env=${1#*=}; shift ;;
    --prefix-out) [ $# -ge 2 ] || die "--prefix-out needs a file"; prefix_out=$2; shift 2 ;;
    --prefix-out=*) prefix_out=${1#*=}; shift ;;
    -h|--help) sed -n '2,26p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
    *) die "unknown argument $1" ;;
    esac
done

load_mpi_env "$mpi_env"

# Debian's Python, with what `python3 -m venv` and building a C extension need.
python=${BBLOG_PYTHON:-/usr/bin/python3}
if [ "$python" = /usr/bin/python3 ]; then
    missing=
    for p in python3-venv python3-dev; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing="$missing $p"
    done
    if [ -n "$missing" ]; then
        [ "$(id -u)" = 0 ] || die "missing packages:$missing; install them as root"
        echo "$prog: installing$missing"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing ||
            { apt-get update -q && DEBIAN_FRONTEND=noninteractive \
                apt-get install -y -q --no-install-recommends $missing; } ||
            die "apt-get install$missing failed"
    fi
fi
[ -x "$python" ] || python=$(command -v "$python") || die "no Python '$python'"
py_id=$("$python" -c 'import sys; print(sys.version.split()[0], sys.executable)') ||
    die "$python does not run"

mkdir -p "$cache"
exec 9>"$cache/.mpi4py.lock"
flock 9

# -O0: MPI.c (Cython's output, 280,000 lines) takes 9 s to compile instead of 2.5 minutes of
# CPU at Python's -O2 (6.5 minutes on the loaded 2-core VM); these builds test MPI-IO through
# mpi4py, not mpi4py's speed.
cflags="-O0 -g0"
# The directory of the libmpi that mpicc links (scripts/lib.sh: over a binary MPI with bblog's
# layer, the binary MPI's lib/, not the layer's prefix).
ldflags="-L$mpi_libdir"
key=$(printf '%s\n%s\n%s\n%s\n' "mpi4py==$version" "$py_id" "$mpi_prefix" "$cflags $ldflags" |
    sha256sum | cut -c1-12)
kdir=$cache/mpi4py-$version-$key
venv=$kdir/venv
done_out() {
    ln -sfn "$kdir" "$cache/mpi4py-current"
    if [ -n "$prefix_out" ]; then
        echo "$kdir" >"$prefix_out.tmp" && mv "$prefix_out.tmp" "$prefix_out"
    fi
}
if [ -f "$kdir/.done" ] && [ -x "$venv/bin/python" ]; then
    done_out
    step "mpi4py $version already built in $kdir"
    exit 0
fi

rm -rf "$kdir"
mkdir -p "$kdir/logs"
step "virtual environment ($py_id) in $venv"
run "$kdir/logs/venv.log" "$python" -m venv "$venv"

# The sdist: what pip builds and where mpi4py's tests are. --no-binary mpi4py, not :all: (that
# builds Cython from source too: many minutes).
dl=$cache/downloads/mpi4py
sdist=$dl/mpi4py-$version.tar.gz
mkdir -p "$dl"
if [ ! -f "$sdist" ] || [ "$(sha256sum <"$sdist" | cut -d' ' -f1)" != "$sdist_sha256" ]; then
    rm -f "$sdist"
    step "downloading the mpi4py $version sdist into $dl"
    run "$kdir/logs/download.log" "$venv/bin/python" -m pip download --no-deps \
        --no-binary mpi4py -d "$dl" "mpi4py==$version"
    [ -f "$sdist" ] || die "pip download left no $sdist (log: $kdir/logs/download.log)"
fi
sum=$(sha256sum <"$sdist" | cut -d' ' -f1)
[ "$sum" = "$sdist_sha256" ] ||
    die "$sdist: sha256 $sum, expected $sdist_sha256 (PyPI's for mpi4py $version)"

step "unpacking the sdist into $kdir/src (mpi4py's tests: src/test)"
mkdir -p "$kdir/src"
run "$kdir/logs/unpack.log" tar -xzf "$sdist" -C "$kdir/src" --strip-components=1
[ -f "$kdir/src/test/main.py" ] || die "no test/main.py in $sdist"

# From the verified sdist; --no-cache-dir: no wheel that pip built earlier, against another MPI.
# MPICC alone is not enough: setuptools puts -L/usr/lib/<triplet> (Debian Python's LIBDIR) before
# mpicc's own -L, so -lmpi found Debian's libmpich (which has the Fortran symbols our
# --disable-fortran MPICH lacks: "undefined symbol: MPI_Type_create_f90_integer" at import, and
# mpi4py's checks for them passed against the wrong library). $ldflags puts the bblog MPI first.
step "pip install --no-binary mpi4py mpi4py==$version (that sdist), MPICC=$mpicc CFLAGS='$cflags'"
run "$kdir/logs/pip-install.log" env MPICC="$mpicc" CFLAGS="$cflags" LDFLAGS="$ldflags" \
    "$venv/bin/python" -m pip install -v --no-cache-dir --no-binary mpi4py "$sdist"

# It must load the bblog MPI's libmpi (Debian's libmpich.so.12 is installed too, same version),
# by its own RUNPATH (mpicc's -rpath): without the LD_LIBRARY_PATH of bblog-env.sh. Over a
# binary MPI, bblog is not in its libmpi but in the layer that its mpiexec preloads: checked
# under the layer's bblog-run, which preloads it the same way (run-mpi4py.sh checks that the
# files went through bblog).
step "checking that mpi4py loads $mpi_libdir/libmpi${mpi_layer:+ (and the layer, preloaded)}"
run "$kdir/logs/verify.log" env -u LD_LIBRARY_PATH ${mpi_layer:+"$mpi_prefix/bin/bblog-run"} \
    "$venv/bin/python" -c '
import sys
from mpi4py import MPI
print(MPI.Get_library_version().strip())
print("mpi4py", __import__("mpi4py").__version__, "MPI", MPI.Get_version())
libs = sorted({l.split()[-1] for l in open("/proc/self/maps")
               if "/libmpi" in l or "/libmpich" in l})
print("loaded:", *libs)
if sys.argv[2]:
    if not any(l.split()[-1] == sys.argv[2] for l in open("/proc/self/maps")):
        sys.exit("the bblog layer " + sys.argv[2] + " is not loaded")
elif "bblog" not in MPI.Get_library_version():
    sys.exit("the MPI library was not configured with the bblog driver")
want = sys.argv[1] + "/"
bad = [l for l in libs if not l.startswith(want)]
if bad or not libs:
    sys.exit("mpi4py did not load the MPI of " + want + ": " + " ".join(bad or ["no libmpi"]))
' "$mpi_libdir" "${mpi_layer:+$mpi_prefix/lib/libbblog-mpiio.so}"
sed -n '1p;$p' "$kdir/logs/verify.log" | sed "s|^|$prog: |"
touch "$kdir/.done"
done_out
step "mpi4py $version in $venv (tests: $kdir/src/test)"
