#!/usr/bin/env bash
# The README's first command: set up, start the sidecar and drive one task from the CLI.
# With OPENAI_BASE_URL + OPENAI_MODEL (+ OPENAI_API_KEY) or ANTHROPIC_API_KEY set, the task runs
# against that model. Without them, a local scripted model (the test suite's model server,
# speaking the real OpenAI streaming format) plays a short demo, so the job runs offline too.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh

scratch=$(mktemp -d)
workspace="${DLINE_DEMO_WORKSPACE:-$scratch/demo-project}"
mkdir -p "$workspace"
[ -f "$workspace/hello.txt" ] || printf 'hello\n' > "$workspace/hello.txt"
prompt="${1:-Add a greeting to hello.txt so that it says hello, world.}"

cleanup() { [ -n "${model_pid:-}" ] && kill "$model_pid" 2>/dev/null || true; }
trap cleanup EXIT
if [ -z "${OPENAI_BASE_URL:-}${OPENAI_MODEL:-}${ANTHROPIC_API_KEY:-}" ]; then
  echo "quickstart: no model configured (OPENAI_BASE_URL/OPENAI_MODEL or ANTHROPIC_API_KEY); using the local scripted demo model"
  npx esbuild test/model-server/cli.ts --bundle --platform=node --format=esm --target=node20 \
    --outfile="$scratch/model-server.mjs" --log-level=warning
  coproc MODEL { node "$scratch/model-server.mjs" scripts/demo-model-script.json; }
  model_pid=$MODEL_PID
  read -r line <&"${MODEL[0]}"
  export OPENAI_BASE_URL=$(node -e 'console.log(JSON.parse(process.argv[1]).url)' "$line")
  export OPENAI_MODEL=scripted-demo
  # The demo keeps its data apart from a real ~/.dline unless told otherwise.
  export DLINE_DIR="${DLINE_DIR:-$scratch/dline}" DLINE_HOME_DIR="${DLINE_HOME_DIR:-$scratch/dline-home}" \
         DLINE_DOCS_DIR="${DLINE_DOCS_DIR:-$scratch/dline-docs}"
fi

echo "quickstart: running a task in $workspace"
dist/dline task --yes --workspace "$workspace" "$prompt"
echo "quickstart: $workspace/hello.txt now reads: $(cat "$workspace/hello.txt")"
dist/dline history --workspace "$workspace"
