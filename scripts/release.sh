#!/usr/bin/env bash
# Build the release tarballs and smoke-test each one:
#   dist/parley-linux-x64.tar.gz     PCs and servers (x86-64 from Nehalem on, glibc: Debian, Ubuntu)
#   dist/parley-linux-arm64.tar.gz   Raspberry Pi 4/5 with a 64-bit OS, arm64 servers
# plus dist/SHA256SUMS. Each holds a directory parley-linux-<cpu>/ with the executable `parley`,
# `pyodide/` beside it (the code interpreter's Python, the same for every CPU: not embedded, to
# keep Parley's share of the binary within 25 MB), install.sh and the packaging it renders.
# The executables are also left as dist/parley-linux-x64 and dist/parley-linux-arm64.
#
#   ./scripts/release.sh              build both, smoke-test both
#   ./scripts/release.sh --no-smoke   build only
#
# The binary for the other CPU is built from that CPU's Bun runtime and @napi-rs/image binding
# (fetched once from the npm registry into .cache/cross/) and smoke-tested under QEMU user-mode
# emulation with the matching cross libc; missing Debian packages are installed with apt-get
# (as root), otherwise the script says which ones to install.
set -euo pipefail
cd "$(dirname "$0")/.."
smoke=1
[ "${1:-}" = --no-smoke ] && smoke=0

./install.sh --deps-only
bun=node_modules/.bin/bun

for arch in x64 arm64; do
  echo "==> building dist/parley-linux-$arch"
  $bun run scripts/build.ts --target "bun-linux-$arch" --outfile "dist/parley-linux-$arch"
  # Parley's share against the floor (an empty program on the same runtime, built now): it fails
  # past 25 MB, where it was once without anyone noticing (bench/RESULTS.md).
  $bun run scripts/binary-share.ts --target "bun-linux-$arch" "dist/parley-linux-$arch"
  stage=dist/release/parley-linux-$arch
  rm -rf "$stage" && mkdir -p "$stage/packaging"
  cp "dist/parley-linux-$arch" "$stage/parley"
  cp -R dist/pyodide "$stage/pyodide"
  cp install.sh "$stage/"
  cp packaging/*.in "$stage/packaging/"
  tar -C dist/release --owner=0 --group=0 --numeric-owner -czf "dist/parley-linux-$arch.tar.gz" "parley-linux-$arch"
done
(cd dist && sha256sum parley-linux-x64.tar.gz parley-linux-arm64.tar.gz > SHA256SUMS)

[ "$smoke" = 1 ] || exit 0

host=$(uname -m)
# What runs a binary under emulation: qemu-<cpu>-static with the cross libc as its library root
# (none is needed, nor passed, for the host's own architecture), and optionally a CPU model
# (QEMU's default "max" has every extension; a real board has fewer).
emulator_for() {
  local qemu=$1 triple=$2 cpu=$3; shift 3
  local missing=()
  command -v "qemu-$qemu-static" >/dev/null || command -v "qemu-$qemu" >/dev/null || missing+=(qemu-user-static)
  [ -e "/usr/$triple/lib/libc.so.6" ] || missing+=("$@")
  if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
      echo "==> installing ${missing[*]}" >&2
      apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >&2
    else
      echo "release.sh: to smoke-test under emulation, install: ${missing[*]} (apt-get install ...)" >&2
      exit 1
    fi
  fi
  local bin
  bin=$(command -v "qemu-$qemu-static" || command -v "qemu-$qemu")
  local root=""
  [ -d "/usr/$triple" ] && root="-L /usr/$triple"
  echo "$bin ${cpu:+-cpu $cpu }$root"
}

# The x64 binary must also run on CPUs without AVX or AVX2 (Nehalem to Ivy Bridge, Silvermont
# Atoms and Celerons, VMs with a conservative CPU model): Nehalem (x86-64-v2, SSE4.2) is the
# oldest model it runs on and is tested on. QEMU raises SIGILL for any instruction the model lacks.
x64_old_cpu=Nehalem
for arch in x64 arm64; do
  emulator=""
  case "$arch:$host" in
    x64:x86_64|arm64:aarch64) ;;
    # The Raspberry Pi 4's Cortex-A72 (ARMv8.0): what runs there runs on a Pi 5 (Cortex-A76) too.
    arm64:*) emulator=$(emulator_for aarch64 aarch64-linux-gnu cortex-a72 libc6-arm64-cross libgcc-s1-arm64-cross) ;;
    x64:*) emulator=$(emulator_for x86_64 x86_64-linux-gnu "$x64_old_cpu" libc6-amd64-cross libgcc-s1-amd64-cross) ;;
  esac
  # What ships: the tarball unpacked, its executable finding Pyodide beside it.
  unpacked=dist/smoke/parley-linux-$arch
  rm -rf "$unpacked" && mkdir -p dist/smoke && tar -C dist/smoke -xzf "dist/parley-linux-$arch.tar.gz"
  echo "==> smoke test dist/parley-linux-$arch.tar.gz${emulator:+ (emulated)}"
  $bun run scripts/smoke.ts ${emulator:+--emulator "$emulator"} "$unpacked/parley"
  if [ "$arch:$host" = x64:x86_64 ]; then
    # The native run above is on this machine's CPU; this one is on the oldest model supported.
    emulator=$(emulator_for x86_64 x86_64-linux-gnu "$x64_old_cpu")
    echo "==> smoke test dist/parley-linux-x64.tar.gz on a $x64_old_cpu CPU (no AVX, no AVX2), emulated"
    $bun run scripts/smoke.ts --emulator "$emulator" "$unpacked/parley"
  fi
done
rm -rf dist/smoke
echo "==> release tarballs ready:"
cat dist/SHA256SUMS
