#!/bin/sh
# Installs what rheap needs to build and test, on Debian 12, as root. Idempotent: packages
# already present are not touched and the package index is refreshed only when something is
# missing.
set -eu
PKGS="build-essential cmake pkg-config liblz4-dev lz4 libunwind-dev libdw-dev libelf-dev
libiberty-dev libsqlite3-dev sqlite3 python3 perl clang llvm elfutils
protobuf-c-compiler libprotobuf-c-dev golang-github-google-pprof-dev libdeflate-dev
golang-go chromium chromium-driver python3-selenium curl libjemalloc-dev libgoogle-perftools-dev libmimalloc-dev
libcapstone-dev rustc"
missing=""
for p in $PKGS; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
    echo "setup: installing$missing"
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
