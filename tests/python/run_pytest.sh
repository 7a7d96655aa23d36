#!/usr/bin/env bash
# Runs the Python tests with the project's environment (.venv, made by tools/setup-python.sh).
# Without it the tests fail, loudly: a missing environment must never look like a pass.
# Usage: tests/python/run_pytest.sh [pytest args...]   (from anywhere)
set -euo pipefail
repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
python="$repo_root/.venv/bin/python"
# This checkout's dgqtools (tools/dgqtools) before any other on the path: .venv may be shared.
export PYTHONPATH="$repo_root/tools${PYTHONPATH:+:$PYTHONPATH}"
if [ ! -x "$python" ]; then
  echo "run_pytest.sh: $python not found: run tools/setup-python.sh first" >&2
  exit 1
fi
cd "$repo_root"
exec "$python" -m pytest tests/python -q -p no:cacheprovider "$@"
