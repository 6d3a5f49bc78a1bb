#!/usr/bin/env bash
# Several instances on one PostgreSQL, through the compiled binary and nginx (round-robin, no
# sticky sessions): group events across instances, a research and a chat turn taken over when
# their owner is SIGKILLed, revocations, the per-user turn and stream caps, cancel from another
# instance, acknowledged writes surviving a SIGKILL. Runs the suite twice: the cluster bus over PostgreSQL LISTEN/NOTIFY, then over Redis.
# A few minutes on 2 cores.
#
#   scripts/cluster/run.sh            (PARLEY_CLUSTER_BUS=postgres or redis: that run alone)
set -euo pipefail
cd "$(dirname "$0")/../.."

# Debian's PostgreSQL 15+, redis-server and nginx; test/support/postgres.ts and redis.ts find the first two.
missing=()
ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1 || missing+=(postgresql)
command -v redis-server >/dev/null || missing+=(redis-server)
command -v nginx >/dev/null || [[ -x /usr/sbin/nginx ]] || missing+=(nginx)
if ((${#missing[@]})); then
  if [[ $(id -u) == 0 ]] && command -v apt-get >/dev/null; then
    echo "cluster: installing ${missing[*]}" >&2
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
    # Debian starts the packages' own services; the suite runs its own on free ports instead.
    for service in nginx redis-server postgresql; do
      if command -v systemctl >/dev/null; then systemctl stop "$service" >/dev/null 2>&1 || true; fi
    done
  else
    echo "cluster: missing ${missing[*]}: install Debian's packages (apt-get install ${missing[*]})" >&2
    exit 1
  fi
fi
export PATH="$PATH:/usr/sbin"

# One binary for both runs, in a directory removed at the end.
work=$(mktemp -d "${TMPDIR:-/tmp}/parley-cluster-bin-XXXXXX")
trap 'rm -rf "$work"' EXIT
node_modules/.bin/bun run scripts/build.ts --outfile "$work/parley" >/dev/null
export PARLEY_CLUSTER_BINARY="$work/parley"

# A path, not a name filter: bunfig.toml's root keeps the plain `bun test` to test/.
# Both runs go ahead whatever the first gives; the exit status says whether either failed.
failed=()
for bus in ${PARLEY_CLUSTER_BUS:-postgres redis}; do
  echo "cluster: the suite with the cluster bus over $bus" >&2
  PARLEY_CLUSTER_BUS=$bus node_modules/.bin/bun test --timeout 180000 ./scripts/cluster/cluster.test.ts || failed+=("$bus")
done
if ((${#failed[@]})); then
  echo "cluster: the suite failed with the bus over: ${failed[*]}" >&2
  exit 1
fi
