#!/usr/bin/env bash
# Installs what pgokit needs to build, test and benchmark, when it is missing.
# Idempotent: a second run installs nothing. Debian 12 (bookworm) packages.
set -euo pipefail

PACKAGES=(
  build-essential gcc-12 make pkg-config libstdc++-12-dev
  clang-19 llvm-19 llvm-19-tools lld-19 clang-14 libclang-rt-19-dev
  autofdo linux-perf qemu-user valgrind
  libc6-dev-arm64-cross libgcc-12-dev-arm64-cross binutils-aarch64-linux-gnu
  gcc-12-aarch64-linux-gnu libcapstone-dev
  libzydis-dev zlib1g-dev libzstd-dev
  binutils python3 time bc dpkg-dev man-db groff-base
  libdebuginfod-dev debuginfod dwz debhelper quilt libtool autoconf libreadline-dev curl
  libprotobuf-c-dev protobuf-c-compiler golang-go
  libsqlite3-dev libpq-dev postgresql-15 postgresql
  chromium chromium-driver
  stress-ng cmake
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
else
  echo "setup: installing ${missing[*]}"
  $SUDO apt-get update -qq
  $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi

# The aarch64 profile runtime (libclang_rt.profile-aarch64.a), for
# instrumentation PGO of aarch64 programs (bench/a64_sqlite.sh, test
# a64_sqlite_pgo): only that file, out of Debian's libclang-rt-19-dev:arm64,
# into clang-19's resource directory. Installing the package itself would
# pull in libc6:arm64, whose loader and libc (at /lib) qemu-aarch64 -L
# /usr/aarch64-linux-gnu then pairs with the cross package's: two glibc
# builds in one guest, and a forked child hangs.
rt_dir=$(clang-19 -print-resource-dir)/lib/linux
if [ ! -f "$rt_dir/libclang_rt.profile-aarch64.a" ]; then
  echo "setup: adding the aarch64 profile runtime to $rt_dir"
  dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
  $SUDO apt-get update -qq
  deb_dir=$(mktemp -d); chmod 755 "$deb_dir"   # apt downloads as _apt
  (cd "$deb_dir" && apt-get download -qq libclang-rt-19-dev:arm64)
  dpkg-deb -x "$deb_dir"/libclang-rt-19-dev_*_arm64.deb "$deb_dir/x"
  $SUDO install -m 644 "$(find "$deb_dir/x" -name libclang_rt.profile-aarch64.a)" "$rt_dir/"
  rm -rf "$deb_dir"
fi
echo "setup: done"
