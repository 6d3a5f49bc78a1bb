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
# A path, not a name filter: bunfig.toml's root keeps the plain `bun test` to test/. One file at a
# time; a file that fails is run once more and must pass then, and the first failure stays in the
# output with a line naming the file: a real browser on 2 shared cores sometimes loses a race
# that a test waits on, which a second run tells apart from a broken page.
failed=()
for file in ./web/test/*.test.ts; do
  if ! node_modules/.bin/bun test --timeout 120000 "$file"; then failed+=("$file"); fi
done
for file in "${failed[@]}"; do
  echo "web: $file failed; running it once more" >&2
  node_modules/.bin/bun test --timeout 120000 "$file"
  echo "web: $file passed on its second run (its first failure is above)" >&2
done
