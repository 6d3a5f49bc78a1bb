#!/usr/bin/env bash
# The web app in a real browser: Debian's Chromium, driven by playwright-core (no browser is
# downloaded), against the compiled binary and the fake AI server. Sign-in with a login link,
# chat, reload and a dropped network mid-answer, stop, keyboard-only use, a phone in dark mode,
# and an axe-core check of every page. A couple of minutes on 2 cores.
#
#   scripts/web/run.sh            (PARLEY_CHROMIUM=/path/to/chromium to use another build)
set -euo pipefail
cd "$(dirname "$0")/../.."

chromium=${PARLEY_CHROMIUM:-/usr/bin/chromium}
if [[ ! -x $chromium ]]; then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "web: installing Debian's chromium" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
  else
    echo "web: no browser at $chromium: install Debian's chromium (apt-get install chromium) or set PARLEY_CHROMIUM" >&2
    exit 1
  fi
fi

# The app's own type check (DOM types; the server's tsconfig leaves web/ out).
node_modules/.bin/tsc --noEmit -p web
# A path, not a name filter: bunfig.toml's root keeps the plain `bun test` to test/.
node_modules/.bin/bun test --timeout 120000 ./web/test/*.test.ts
