#!/usr/bin/env bash
# Build llama.cpp's `llama-server` (CPU only) for the real-model tests, once, and cache it outside
# the clone: the build takes about 10 minutes on 2 cores, so only the first run pays it.
#
#   scripts/real-models/build-llama-server.sh           # prints the cache folder: bin/llama-server, templates/
#   scripts/real-models/build-llama-server.sh --cached  # the same when already built; never builds (exit 3 otherwise)
#
# The source is llama.cpp's own, as the npm package node-llama-cpp ships it (a git bundle inside
# the package): fetched with `npm pack`, which runs none of the package's install scripts (they
# would try to download prebuilt binaries). The cache is keyed by that package's version, so a
# new version builds anew. PARLEY_CACHE_DIR moves the cache (default: $XDG_CACHE_HOME/parley or
# ~/.cache/parley).
set -euo pipefail

NLC_VERSION=3.22.1
# HOME may be unset under a bare CI runner or a service manager: the system temp dir then.
cache_root="${PARLEY_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-${TMPDIR:-/tmp}}/.cache}/parley}"
dest="$cache_root/llama-server-nlc$NLC_VERSION"

if [[ -x "$dest/bin/llama-server" && -d "$dest/templates" ]]; then
  echo "$dest"
  exit 0
fi
# For callers that must stay quick (the benchmark): say it is not built rather than spend 10 minutes.
if [[ "${1:-}" == "--cached" ]]; then
  echo "build-llama-server: not built yet (cache: $dest)" >&2
  exit 3
fi

for tool in cmake g++ git npm tar; do
  command -v "$tool" >/dev/null || { echo "build-llama-server: $tool is needed (Debian: apt-get install cmake g++ git)" >&2; exit 1; }
done

work="$(mktemp -d "${TMPDIR:-/tmp}/parley-llama-build.XXXXXX")"
trap 'rm -rf "$work"' EXIT
log="$work/build.log"
echo "build-llama-server: building llama-server from node-llama-cpp $NLC_VERSION's llama.cpp source (about 10 minutes the first time)" >&2

( cd "$work" && npm pack --silent "node-llama-cpp@$NLC_VERSION" >/dev/null )
tar -xzf "$work"/node-llama-cpp-*.tgz -C "$work" package/llama/gitRelease.bundle
git -c advice.detachedHead=false clone --quiet "$work/package/llama/gitRelease.bundle" "$work/llama.cpp"
tag="$(git -C "$work/llama.cpp" describe --tags --always 2>/dev/null || echo unknown)"

jobs="$(nproc 2>/dev/null || echo 2)"
if ! {
  cmake -S "$work/llama.cpp" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
    -DLLAMA_CURL=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF \
    -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DGGML_NATIVE=OFF &&
  cmake --build "$work/build" --target llama-server -j "$jobs"
} >"$log" 2>&1; then
  tail -n 40 "$log" >&2
  echo "build-llama-server: the build failed (last lines above)" >&2
  exit 1
fi

# Into place only when complete: a build killed half-way leaves no cache behind.
staged="$dest.partial.$$"
rm -rf "$staged"
mkdir -p "$staged/bin"
cp "$work/build/bin/llama-server" "$staged/bin/"
cp -r "$work/llama.cpp/models/templates" "$staged/templates"
echo "$tag" >"$staged/LLAMA_CPP_VERSION"
rm -rf "$dest"
mv "$staged" "$dest"
echo "$dest"
