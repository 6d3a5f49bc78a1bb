#!/usr/bin/env bash
# Parley against a real model server: llama.cpp's llama-server (built once and cached, see
# build-llama-server.sh) running the tiny stories260K model. First the real-model suite through
# the compiled binary, then the chat-template matrix, which writes its table into
# docs/ai-providers.md.
#
#   scripts/real-models/run.sh [--model FILE.gguf] [--suite-only] [--matrix-only]
#
# The model defaults to ../shared/models/stories260K.gguf beside the clone (PARLEY_TEST_MODEL or
# --model: any GGUF). Exits non-zero when a test fails or a matrix cell fails that
# scripts/real-models/known-failures.ts does not list.
set -euo pipefail
cd "$(dirname "$0")/../.."

suite=1 matrix=1
while [[ $# -gt 0 ]]; do
  case "$1" in
    --model) export PARLEY_TEST_MODEL="$(realpath "$2")"; shift 2 ;;
    --suite-only) matrix=0; shift ;;
    --matrix-only) suite=0; shift ;;
    *) echo "run.sh: unknown option $1" >&2; exit 2 ;;
  esac
done

PARLEY_LLAMA_SERVER_DIR="$(scripts/real-models/build-llama-server.sh)"
export PARLEY_LLAMA_SERVER_DIR
echo "real models: llama-server from $PARLEY_LLAMA_SERVER_DIR ($(cat "$PARLEY_LLAMA_SERVER_DIR/LLAMA_CPP_VERSION"))" >&2

# A path, not a name filter: bunfig.toml's root keeps the plain `bun test` to test/, and only a
# path starting with ./ reaches a test file outside it.
# The web app against the model needs a browser (scripts/web/run.sh installs Debian's chromium).
web_test=./scripts/real-models/real-models-web.test.ts
if [[ ! -x ${PARLEY_CHROMIUM:-/usr/bin/chromium} ]]; then
  echo "real models: no browser, so the web app's real-model test is left out (apt-get install chromium, or set PARLEY_CHROMIUM)" >&2
  web_test=
fi
if [[ $suite == 1 ]]; then node_modules/.bin/bun test ./scripts/real-models/real-models.test.ts ./scripts/real-models/real-models-capabilities.test.ts ./scripts/real-models/real-models-endings.test.ts ./scripts/real-models/real-models-group-resume.test.ts ./scripts/real-models/real-models-budget.test.ts ./scripts/real-models/real-models-bound.test.ts ./scripts/real-models/real-models-files.test.ts ./scripts/real-models/real-models-v1.test.ts ./scripts/real-models/real-models-mcp.test.ts ./scripts/real-models/real-models-connections.test.ts ./scripts/real-models/real-models-code.test.ts $web_test; fi
if [[ $matrix == 1 ]]; then node_modules/.bin/bun run scripts/real-models/template-matrix.ts; fi
