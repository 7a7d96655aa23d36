#!/usr/bin/env bash
# Builds the four prompt texts for real traces from files that Debian packages install, so no
# copyrighted text is committed:
#   code   - C++ standard library headers (libstdc++-12-dev, /usr/include/c++/12)
#   legal  - the GNU GPL v3 (base-files, /usr/share/common-licenses/GPL-3)
#   poetry - 300 Tang poems (fortunes-zh, file tang300), terminal colour codes stripped
#   prose  - King James Bible, Genesis 1-20 (bible-kjv-text, read with the bible-kjv program)
# Usage: tools/prompts.sh [OUTDIR]   (default: out/prompts); writes OUTDIR/<kind>.txt
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
outdir="${1:-$repo_root/out/prompts}"
mkdir -p "$outdir"

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing=()
dpkg -s fortunes-zh >/dev/null 2>&1 || missing+=(fortunes-zh)
dpkg -s bible-kjv >/dev/null 2>&1 || missing+=(bible-kjv bible-kjv-text)
if [ ${#missing[@]} -gt 0 ]; then
  as_root apt-get update
  as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y "${missing[@]}"
fi

# Each prompt is written to X.partial and renamed, so an interrupted run leaves no short prompt.
publish() {  # publish KIND: moves OUTDIR/KIND.txt.partial into place after a sanity check
  local part="$outdir/$1.txt.partial"
  if [ "$(wc -c < "$part")" -lt 20000 ]; then
    echo "prompts.sh: $1 prompt is only $(wc -c < "$part") bytes; expected >= 20000" >&2
    rm -f "$part"
    exit 1
  fi
  mv "$part" "$outdir/$1.txt"
  echo "prompts.sh: $outdir/$1.txt ($(wc -c < "$outdir/$1.txt") bytes)"
}

cxx_headers=/usr/include/c++/12
for header in bits/stl_vector.h bits/stl_list.h bits/stl_deque.h bits/stl_algo.h; do
  if [ ! -f "$cxx_headers/$header" ]; then
    echo "prompts.sh: $cxx_headers/$header not found (apt-get install libstdc++-12-dev)" >&2
    exit 1
  fi
  cat "$cxx_headers/$header"
done > "$outdir/code.txt.partial"
publish code

cp /usr/share/common-licenses/GPL-3 "$outdir/legal.txt.partial"
publish legal

tang300="$(dpkg -L fortunes-zh | grep -E '/tang300$' | head -n 1)"
# Strip ANSI colour escapes (ESC [ ... m) and fortune's '%' record separators.
sed -E 's/\x1b\[[0-9;]*m//g; /^%$/d' "$tang300" > "$outdir/poetry.txt.partial"
publish poetry

# bible -f prints one verse per line as "Ge1:1 text"; drop the verse reference.
bible -f -l10000 Ge1:1-Ge20:18 | sed -E 's/^[A-Za-z0-9]+:[0-9]+ //' > "$outdir/prose.txt.partial"
publish prose
