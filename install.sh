#!/usr/bin/env bash
# Parley's set-up: installs the pinned Bun and the locked dependencies (npm ci), builds the
# single executable dist/parley, and optionally installs it under a prefix.
#
#   ./install.sh                     set up and build dist/parley
#   ./install.sh --deps-only         set up only (enough to run the tests)
#   ./install.sh --prefix /usr/local set up, build, install to /usr/local/bin/parley
set -euo pipefail
cd "$(dirname "$0")"

prefix=""
deps_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
    --prefix=*) prefix="${1#--prefix=}"; shift ;;
    --deps-only) deps_only=1; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

command -v node >/dev/null || { echo "install.sh: Node.js with npm is needed (apt-get install nodejs npm)" >&2; exit 1; }

# Bun is pinned in package.json and comes from the npm registry with the other dependencies.
# Skip `npm ci` when node_modules already matches the lockfile.
stamp=node_modules/.parley-lock
want=$(sha256sum package-lock.json | cut -d' ' -f1)
if [ ! -x node_modules/.bin/bun ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "==> installing dependencies (npm ci)"
  npm ci --no-audit --no-fund --loglevel=error
  echo "$want" > "$stamp"
fi
bun=node_modules/.bin/bun
echo "==> bun $($bun --version)"

[ "$deps_only" = 1 ] && exit 0

echo "==> building dist/parley"
$bun run scripts/build.ts

if [ -n "$prefix" ]; then
  install -d "$prefix/bin"
  install -m 0755 dist/parley "$prefix/bin/parley"
  echo "==> installed $prefix/bin/parley"
fi
