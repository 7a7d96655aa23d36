#!/usr/bin/env bash
# DGQ v3's compress and decompress speed against q4_0 in the same dgq-bench run (GitHub issue
# 25's speed target: dgq3 compresses at least as fast as q4_0, at 1 and 2 threads;
# docs/benchmarks.md "DGQ v3 compress against q4_0"). Writes a Markdown fragment (machine,
# load, date, command, commit; the times; each dgq3 configuration's ratio to q4_0 and to
# q4_0+rotation of the same run and thread count; the verdict) to OUT_DIR/dgq3-speed.md, and
# with --update-docs splices it into docs/benchmarks.md between "<!-- BEGIN dgq3-speed -->" and
# "<!-- END dgq3-speed -->". Not in CI (a timing; about a minute).
# Usage: tools/bench-dgq3.sh [--update-docs] [BUILD_DIR]   (default build; needs bench/dgq-bench)
# Env: OUT_DIR (default /tmp/dgq-bench-dgq3), TOKENS (default 32768), REPS (default 5).
set -euo pipefail
repo="$(cd "$(dirname "$0")/.." && pwd)"
update_docs=0
[ "${1:-}" = --update-docs ] && { update_docs=1; shift; }
bench="${1:-$repo/build}/bench/dgq-bench"
[ -x "$bench" ] || { echo "bench-dgq3: $bench not found; build the dgq-bench target first" >&2; exit 1; }
out="${OUT_DIR:-/tmp/dgq-bench-dgq3}"
mkdir -p "$out"
schemes=(q4_0 q4_0:rot=hadamard q5_0:rot=hadamard dgq3 dgq3:center=none dgq3:kbits=5,center=kv,hi_frac=0.05
  dgq3:vbits=3,center=kv,hi_frac=0.05 dgq3:vbits=3,center=kv,hi_frac=0.05,nl=kv)
args=(--tokens "${TOKENS:-32768}" --heads 8 --head-dim 128 --reps "${REPS:-5}" --threads 1,2)
for s in "${schemes[@]}"; do args+=(--scheme "$s"); done
commit="$(git -C "$repo" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
git -C "$repo" diff --quiet HEAD 2>/dev/null || commit="$commit+dirty"
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
"$bench" "${args[@]}" --json "$out/dgq3-speed.json" >"$out/dgq-bench.log"
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$out/dgq3-speed.json" "$out/dgq3-speed.md" "$commit" "$load_before" "$load_after" \
  "$(lscpu | sed -n 's/^Model name: *//p'), $(nproc) CPUs" "${args[*]}" <<'PY'
import json, sys, datetime
src, dst, commit, before, after, machine, args = sys.argv[1:]
rows = json.load(open(src))["figures"]
ms = {(r["scheme"], r["op"], r["threads"]): r["seconds"] * 1e3 for r in rows}
threads = sorted({r["threads"] for r in rows})
dgq3 = [s for s in dict.fromkeys(r["scheme"] for r in rows) if s.startswith("dgq3")]
peers = ["q4_0", "q4_0:rot=hadamard", "q5_0:rot=hadamard"]
lines = [
    "<!-- written by tools/bench-dgq3.sh; do not edit by hand -->",
    f"Date: {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC. Machine: {machine}. "
    f"Load average (1/5/15 min) before: {before}, after: {after}.",
    f"Command: `tools/bench-dgq3.sh --update-docs` (`dgq-bench {args} ...`), commit {commit}.",
    "Layer: one fp16 tensor of 8 heads; medians; ratio = the peer's time / dgq3's time "
    "(above 1: dgq3 is faster).",
    "",
    "| scheme | op | threads | ms | / q4_0 | / q4_0+rot | / q5_0+rot |",
    "| :--- | :--- | ---: | ---: | ---: | ---: | ---: |",
]
for t in threads:
    for s in peers + dgq3:
        for op in ("compress", "decompress"):
            if (s, op, t) not in ms:
                continue
            ratios = [f"{ms[(p, op, t)] / ms[(s, op, t)]:.2f}" if s in dgq3 else "" for p in peers]
            lines.append(f"| `{s}` | {op} | {t} | {ms[(s, op, t)]:.1f} | " + " | ".join(ratios) + " |")
lines.append("")
for s in dgq3:
    verdicts = [f"{t} thread{'s' if t > 1 else ''}: {ms[('q4_0', 'compress', t)] / ms[(s, 'compress', t)]:.2f}x q4_0's speed"
                for t in threads]
    met = all(ms[(s, "compress", t)] <= ms[("q4_0", "compress", t)] for t in threads)
    lines.append(f"- `{s}` compress: {'; '.join(verdicts)}: **{'met' if met else 'not met'}**")
open(dst, "w").write("\n".join(lines) + "\n")
PY
cat "$out/dgq3-speed.md"
if [ "$update_docs" = 1 ]; then
  doc="$repo/docs/benchmarks.md"
  awk -v table="$out/dgq3-speed.md" '
    $0 == "<!-- BEGIN dgq3-speed -->" { print; while ((getline line < table) > 0) print line; skip = 1; next }
    $0 == "<!-- END dgq3-speed -->" { skip = 0 }
    !skip { print }' "$doc" >"$doc.partial"
  mv "$doc.partial" "$doc"
  echo "bench-dgq3: updated $doc"
fi
