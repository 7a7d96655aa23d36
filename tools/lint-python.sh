#!/usr/bin/env bash
# The Python's habits over the whole tree (settings in pyproject.toml): ruff's lint, ruff's format
# and mypy, from .venv (tools/setup-python.sh installs the versions tools/requirements.txt pins).
# A few seconds: tools/test.sh runs it before ctest, .pre-commit-config.yaml before each commit.
#   tools/lint-python.sh          check; exit 1 on any finding
#   tools/lint-python.sh --fix    apply ruff's safe fixes and format first, then check
set -euo pipefail
cd "$(dirname "$0")/.."
fix=0
case "${1:-}" in
  --fix) fix=1 ;;
  "") ;;
  *) echo "lint-python.sh: unknown option '$1' (known: --fix)" >&2; exit 2 ;;
esac
for tool in ruff mypy; do
  if [ ! -x ".venv/bin/$tool" ]; then
    echo "lint-python.sh: .venv/bin/$tool missing; run tools/setup-python.sh" >&2
    exit 2
  fi
done
if ((fix)); then
  .venv/bin/ruff check --fix --quiet . || true
  .venv/bin/ruff format --quiet .
fi
rc=0
.venv/bin/ruff check --quiet . || rc=1
.venv/bin/ruff format --check . || rc=1
.venv/bin/mypy || rc=1
if ((rc)); then
  echo "lint-python.sh: findings above (tools/lint-python.sh --fix applies ruff's fixes and format)" >&2
fi
exit "$rc"
