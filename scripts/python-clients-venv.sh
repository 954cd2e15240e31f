#!/usr/bin/env bash
# Creates (once) the virtual environment the Python client tests run in: openai-python at a pinned
# version, installed by pip from its configured index. Prints the environment's python on the last line.
set -euo pipefail
cd "$(dirname "$0")/.."

OPENAI_VERSION="2.54.0"
VENV=".cache/python-clients/venv"
STAMP="$VENV/.openai-$OPENAI_VERSION"

if [ ! -f "$STAMP" ]; then
  rm -rf "$VENV"
  python3 -m venv "$VENV"
  "$VENV/bin/python" -m pip install --quiet "openai==$OPENAI_VERSION"
  touch "$STAMP"
fi
echo "$PWD/$VENV/bin/python"
