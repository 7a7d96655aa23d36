#!/usr/bin/env bash
# Builds the full set of real SmolLM2-135M traces: 4 prompt kinds (code, legal, poetry, prose) x
# (clean, 10% inserted random characters), all 30 layers. Installs what it needs (Python env,
# Debian packages for the prompts). Traces already present are kept, so a rerun only fills gaps.
# Usage: tools/make-real-traces.sh OUTDIR [--quick] [--tokens N]
#   default 4096 tokens per trace; --quick: 512 tokens (a smoke run); --tokens: 2..8192.
# Writes OUTDIR/smollm2-<kind>-<N>-{clean,noise10}.h5 and OUTDIR/summary.tsv (perplexity, top-1).
set -euo pipefail

usage() { echo "usage: $0 OUTDIR [--quick] [--tokens N]" >&2; exit 2; }
[ $# -ge 1 ] || usage
outdir="$1"; shift
tokens=4096
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) tokens=512 ;;
    --tokens) [ $# -ge 2 ] || usage; tokens="$2"; shift ;;
    *) usage ;;
  esac
  shift
done

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
python="$repo_root/.venv/bin/python"
mkdir -p "$outdir"

"$repo_root/tools/setup-python.sh"
"$repo_root/tools/prompts.sh" "$outdir/prompts"

noise_seed=1  # fixed: the noisy traces are reproducible
for kind in code legal poetry prose; do
  for variant in clean noise10; do
    trace="$outdir/smollm2-$kind-$tokens-$variant.h5"
    if [ -f "$trace" ]; then
      echo "make-real-traces.sh: $trace exists, kept"
      continue
    fi
    rate=0
    [ "$variant" = noise10 ] && rate=0.1
    "$python" "$repo_root/tools/export-trace.py" --prompt-file "$outdir/prompts/$kind.txt" \
      --kind "$kind" --max-tokens "$tokens" --noise-rate "$rate" --seed "$noise_seed" -o "$trace"
  done
done

# The summary is read back from the traces' own attributes, so it always matches the files.
"$python" - "$outdir" "$tokens" > "$outdir/summary.tsv.partial" <<'PY'
import sys
from pathlib import Path
import h5py
outdir, tokens = Path(sys.argv[1]), sys.argv[2]
print("kind\tvariant\ttokens\tnoisy_tokens\tppl\ttop1_acc\tdecode_rel_err\tfile")
for kind in ("code", "legal", "poetry", "prose"):
    for variant in ("clean", "noise10"):
        path = outdir / f"smollm2-{kind}-{tokens}-{variant}.h5"
        with h5py.File(path, "r") as f:
            print(f"{kind}\t{variant}\t{len(f['tokens'])}\t{int(f['noise_mask'][...].sum())}\t"
                  f"{f.attrs['ppl']:.3f}\t{f.attrs['top1_acc']:.4f}\t{f.attrs['decode_rel_err']:.1e}\t{path.name}")
PY
mv "$outdir/summary.tsv.partial" "$outdir/summary.tsv"
column -t -s $'\t' "$outdir/summary.tsv"
