#!/usr/bin/env bash
# Installs what pgokit needs to build, test and benchmark, when it is missing.
# Idempotent: a second run installs nothing. Debian 12 (bookworm) packages.
set -euo pipefail

PACKAGES=(
  build-essential gcc-12 make pkg-config
  clang-19 llvm-19 lld-19 clang-14 libclang-rt-19-dev
  autofdo linux-perf qemu-user valgrind
  libc6-dev-arm64-cross libgcc-12-dev-arm64-cross binutils-aarch64-linux-gnu
  gcc-12-aarch64-linux-gnu libcapstone-dev
  libzydis-dev zlib1g-dev libzstd-dev
  binutils python3 time bc dpkg-dev man-db groff-base
  libprotobuf-c-dev protobuf-c-compiler golang-go
  libsqlite3-dev libpq-dev postgresql-15 postgresql
  chromium chromium-driver
  # the aarch64 profile runtime (libclang_rt.profile-aarch64.a) for the
  # instrumentation-PGO column of bench/a64_sqlite.sh and test a64_sqlite_pgo; a
  # Multi-Arch: same package, so dpkg must know the arm64 architecture
  libclang-rt-19-dev:arm64
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all packages present"
  exit 0
fi

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
dpkg --print-foreign-architectures | grep -qx arm64 || $SUDO dpkg --add-architecture arm64
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
