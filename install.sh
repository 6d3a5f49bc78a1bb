#!/usr/bin/env bash
# Parley's set-up: installs the pinned Bun and the locked dependencies (npm ci), builds the
# executable dist/parley and, beside it, dist/pyodide (the code interpreter's Python), and
# optionally installs both, a data directory and a systemd unit. Running it again is harmless: it
# replaces the binary and its pyodide directory and re-renders the unit, and never touches the
# data or an existing settings file.
#
#   ./install.sh                       set up and build dist/parley and dist/pyodide
#   ./install.sh --deps-only           set up only (enough to run the tests)
#   ./install.sh --prefix /usr/local   set up, build, install to /usr/local/bin/parley (and bin/pyodide)
#   ./install.sh --binary FILE         install FILE (e.g. parley from a release tarball) and the pyodide
#                                      directory beside it instead of building; no Node.js needed;
#                                      prefix defaults to /usr/local
#   ./install.sh --data-dir DIR        create the data directory (with --systemd: /var/lib/parley)
#   ./install.sh --systemd             also install a hardened systemd service (as root); options:
#       --user NAME                    the service's system user, created if missing (default parley)
#       --env-file FILE                its settings, written once (default /etc/parley/parley.env)
#       --systemd-dir DIR              write the unit there (default /etc/systemd/system); when given,
#                                      only files are written: no user, no chown, no systemctl
#
# Example, a Raspberry Pi 4/5 with a release tarball (parley-linux-arm64.tar.gz, unpacked):
#   cd parley-linux-arm64 && sudo ./install.sh --binary parley --systemd && sudo systemctl enable --now parley
set -euo pipefail
cd "$(dirname "$0")"
repo=$(pwd)

prefix="" deps_only=0 binary="" data_dir="" systemd=0 user=parley env_file=/etc/parley/parley.env systemd_dir=""
need() { [ -n "${2:-}" ] || { echo "install.sh: $1 needs a value" >&2; exit 2; }; }
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix|--binary|--data-dir|--user|--env-file|--systemd-dir) need "$1" "${2:-}" ;;&
    --prefix) prefix=$2; shift 2 ;;
    --binary) binary=$2; shift 2 ;;
    --data-dir) data_dir=$2; shift 2 ;;
    --user) user=$2; shift 2 ;;
    --env-file) env_file=$2; shift 2 ;;
    --systemd-dir) systemd_dir=$2; shift 2 ;;
    --prefix=*|--binary=*|--data-dir=*|--user=*|--env-file=*|--systemd-dir=*)
      name=${1%%=*}; set -- "$name" "${1#*=}" "${@:2}" ;;
    --systemd) systemd=1; shift ;;
    --deps-only) deps_only=1; shift ;;
    -h|--help) awk 'NR > 1 && /^#/ { sub(/^# ?/, ""); print; next } NR > 1 { exit }' "$0"; exit 0 ;;
    *) echo "install.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

abs() { realpath -m -- "$1"; }
# The unit only makes sense with absolute, space-free paths.
plain() { case "$1" in *[[:space:]]*) echo "install.sh: $2 must not contain spaces: $1" >&2; exit 2 ;; esac; }

# Writing the unit into the real systemd directory means managing a service: that needs root.
system=0
if [ "$systemd" = 1 ] && [ -z "$systemd_dir" ]; then
  system=1
  systemd_dir=/etc/systemd/system
  [ "$(id -u)" = 0 ] || { echo "install.sh: --systemd needs root (sudo), or --systemd-dir DIR to only write the files" >&2; exit 1; }
fi
if [ "$systemd" = 1 ]; then
  [ -n "$data_dir" ] || data_dir=/var/lib/parley
  [ -n "$prefix" ] || prefix=/usr/local
fi
[ -n "$binary" ] && [ -z "$prefix" ] && prefix=/usr/local

if [ -n "$binary" ]; then
  [ -f "$binary" ] || { echo "install.sh: no such file: $binary" >&2; exit 1; }
  src=$(abs "$binary")
  # Refuse a binary this machine cannot run (e.g. the x64 build on a Raspberry Pi) before installing it.
  version=$("$src" --version 2>/dev/null) || { echo "install.sh: $binary does not run here (built for another CPU? this one is $(uname -m))" >&2; exit 1; }
  echo "==> using $binary: $version"
else
  command -v node >/dev/null || { echo "install.sh: Node.js with npm is needed (apt-get install nodejs npm), or pass --binary FILE" >&2; exit 1; }
  # Bun is pinned in package.json and comes from the npm registry with the other dependencies.
  # Skip `npm ci` when node_modules already matches the lockfile.
  stamp=node_modules/.parley-lock
  want=$(sha256sum package-lock.json | cut -d' ' -f1)
  if [ -L node_modules ] && [ -x node_modules/.bin/bun ]; then
    # A link to an install shared between checkouts: `npm ci` would empty the shared directory
    # under every other checkout, so use it as it is.
    [ "$(cat "$stamp" 2>/dev/null)" = "$want" ] || echo "==> note: node_modules is a shared link and may not match package-lock.json; not reinstalling it"
  elif [ ! -x node_modules/.bin/bun ] || [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
    echo "==> installing dependencies (npm ci)"
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > "$stamp"
  fi
  bun=node_modules/.bin/bun
  echo "==> bun $($bun --version)"

  [ "$deps_only" = 1 ] && exit 0

  echo "==> building dist/parley"
  $bun run scripts/build.ts
  src=$repo/dist/parley
fi

# Pyodide's files, which the executable looks for in a `pyodide` directory beside itself
# (docs/code-interpreter.md): the build writes dist/pyodide, a release tarball carries it.
pyodide=$(dirname "$src")/pyodide
[ -f "$pyodide/pyodide.asm.wasm" ] || pyodide=""

bin=$src
if [ -n "$prefix" ]; then
  prefix=$(abs "$prefix")
  bin=$prefix/bin/parley
  install -d "$prefix/bin"
  # Copy beside, then rename: a running service keeps its old file and the swap is atomic.
  install -m 0755 "$src" "$prefix/bin/.parley.new"
  mv -f "$prefix/bin/.parley.new" "$bin"
  echo "==> installed $bin"
  if [ -n "$pyodide" ] && [ "$(abs "$pyodide")" != "$prefix/bin/pyodide" ]; then
    # The same for the directory: copied beside, then swapped with the old one (left by an older
    # Parley, whose Pyodide version this binary may not load; doctor names a stale one).
    rm -rf "$prefix/bin/.pyodide.new" "$prefix/bin/.pyodide.old"
    cp -R "$pyodide" "$prefix/bin/.pyodide.new"
    chmod -R u=rwX,go=rX "$prefix/bin/.pyodide.new"
    [ -e "$prefix/bin/pyodide" ] && mv -f "$prefix/bin/pyodide" "$prefix/bin/.pyodide.old"
    mv -f "$prefix/bin/.pyodide.new" "$prefix/bin/pyodide"
    rm -rf "$prefix/bin/.pyodide.old"
    echo "==> installed $prefix/bin/pyodide (the code interpreter's Python)"
  fi
fi
if [ -z "$pyodide" ]; then
  echo "==> note: no pyodide directory beside $src: the code interpreter (off by default) will lack Python until one is beside $bin or PARLEY_PYODIDE_DIR names one (docs/code-interpreter.md)"
fi

if [ -n "$data_dir" ]; then
  data_dir=$(abs "$data_dir")
  # Private: the database holds every account and conversation (doctor warns otherwise).
  install -d -m 0700 "$data_dir"
  echo "==> data directory $data_dir"
fi

if [ "$systemd" = 1 ]; then
  systemd_dir=$(abs "$systemd_dir")
  env_file=$(abs "$env_file")
  for v in bin data_dir env_file; do plain "${!v}" "$v"; done
  case "$user" in ''|*[!a-z0-9_-]*) echo "install.sh: --user must be a plain user name: $user" >&2; exit 2 ;; esac

  if [ "$system" = 1 ]; then
    if ! id -u "$user" >/dev/null 2>&1; then
      useradd --system --home-dir "$data_dir" --no-create-home --shell /usr/sbin/nologin --user-group "$user"
      echo "==> created system user $user"
    fi
    chown -R "$user:$user" "$data_dir"
  fi

  # Literal substitution: paths may hold characters that sed or bash patterns would interpret.
  shopt -u patsub_replacement 2>/dev/null || true
  render() {
    local text
    text=$(cat "$1")
    text=${text//@BIN@/"$bin"}
    text=${text//@USER@/"$user"}
    text=${text//@DATA_DIR@/"$data_dir"}
    text=${text//@ENV_FILE@/"$env_file"}
    printf '%s\n' "$text"
  }

  install -d "$systemd_dir"
  unit=$systemd_dir/parley.service
  render packaging/parley.service.in > "$unit.new"
  if cmp -s "$unit.new" "$unit"; then rm -f "$unit.new"; echo "==> $unit unchanged"
  else mv -f "$unit.new" "$unit"; chmod 0644 "$unit"; echo "==> wrote $unit"; fi

  if [ -e "$env_file" ]; then
    echo "==> kept your settings in $env_file"
  else
    install -d "$(dirname "$env_file")"
    render packaging/parley.env.in > "$env_file"
    chmod 0640 "$env_file"
    [ "$system" = 1 ] && chgrp "$user" "$env_file"
    echo "==> wrote $env_file"
  fi

  if [ "$system" = 1 ] && [ -d /run/systemd/system ] && command -v systemctl >/dev/null; then
    systemctl daemon-reload
  fi
fi

echo
echo "Next steps:"
if [ "$systemd" = 1 ]; then
  cat <<STEPS
  1. Settings (AI provider, search, TLS): edit $env_file (docs/configuration.md).
  2. Start now and at boot:      systemctl enable --now parley
     After an upgrade:           systemctl restart parley   (migrations run at start)
  3. Check it:                   sudo -u $user $bin doctor --data-dir $data_dir --env-file $env_file
                                 journalctl -u parley -f
  4. First user and API key:     sudo -u $user $bin user create --email you@example.org --data-dir $data_dir
                                 sudo -u $user $bin apikey create --email you@example.org --data-dir $data_dir
  5. Put a reverse proxy with TLS in front, and back up on a timer: docs/self-hosting.md
STEPS
else
  dd=${data_dir:+ --data-dir $data_dir}
  cat <<STEPS
  Start:        $bin serve$dd
  Check:        $bin doctor$dd
  First user:   $bin user create --email you@example.org$dd
  Self-hosting (systemd, reverse proxy, backups): docs/self-hosting.md
STEPS
fi
