#!/bin/sh
# Installs the Debian 12 packages bblog needs to build and test everything (run as root).
# Idempotent: packages already present are left alone, apt is not even updated then.
set -eu

pkgs="autoconf automake libtool pkg-config make gcc libaio-dev libcmocka-dev
      dpkg-dev file bison flex python3 libhwloc-dev valgrind strace"
missing=
for p in $pkgs; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
        missing="$missing $p"
done
[ -z "$missing" ] && exit 0
if [ "$(id -u)" != 0 ]; then
    echo "install-deps: missing packages:$missing; run this script as root" >&2
    exit 1
fi
export DEBIAN_FRONTEND=noninteractive
apt-get update -q
apt-get install -y -q --no-install-recommends $missing
