#!/usr/bin/env python3
"""The closing table of the 2026 baselines: scheme, bits per element, attention KL (mean over layers, heads and
probes) on the shipped real SmolLM2 traces, and compress G elements/s at 1 thread.

KL and bits come from the baseline experiment's results file (experiments/run.sh --quick
baseline -> out/experiments/baseline.h5); speed from a dgq-bench JSON (layer 8 heads x 32768
tokens x 128 channels, fp16; head_dim 128, while the real traces have head_dim 64, so bits per
element differ for TurboQuant's per-token norm: 32/D).

    .venv/bin/python tools/baselines-table.py out/experiments/baseline.h5 BENCH.json [MORE_BENCH.json ...]

(a scheme found in several bench files takes its figure from the first).
"""

import json
import sys
from pathlib import Path
from typing import Any

from dgqtools import results as R

DGQ_DEFAULTS = "win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table"
REAL = ("smollm2-code-1k", "smollm2-prose-1k-noise10")


def short(spec):
    """The spec as the bench was given it: defaults that the canonical spec spells out dropped."""
    spec = spec.replace(":" + DGQ_DEFAULTS + ",", ":").replace(":" + DGQ_DEFAULTS, "").replace(",seed=0", "")
    spec = spec.replace("win=16,group_ratio=0.75,min_var=0.05,max_groups=5,", "").replace(",markers=table", "")
    spec = spec.replace(":group=32,residual=32,", ":").replace(":group=32,residual=32", "")  # kivi defaults
    return spec


def main(results, *benches):
    runs = [r for r in R.load_runs(Path(results)) if r.trace in REAL]
    speed: dict[str, tuple[float, float]] = {}
    for bench in benches:
        for f in json.load(open(bench))["figures"]:
            if f["op"] == "compress" and f["threads"] == 1:
                elements = f["g_elements_per_s"] * f["seconds"]  # G elements per run
                speed.setdefault(f["scheme"], (f["g_elements_per_s"], elements / f["cpu_seconds"]))
    rows: dict[str, dict[str, Any]] = {}
    for r in runs:
        key = short(r.attrs["scheme"])
        rows.setdefault(key, {"bits": r.attrs["bits_per_element"], "kl": {}})["kl"][r.trace] = r.metric("attn_kl")
    print(
        "| scheme | bits/element (D = 64) | KL mean, code | KL mean, prose | compress G elem/s, 1 thread (D = 128) "
        "| G elem per CPU-s |"
    )
    print("|---|---:|---:|---:|---:|---:|")
    for key, row in sorted(rows.items(), key=lambda kv: (-kv[1]["bits"], kv[0])):
        g = speed.get(key)
        print(
            f"| {key} | {row['bits']:.3f} | {R.fmt(row['kl'].get(REAL[0], float('nan')))} | "
            f"{R.fmt(row['kl'].get(REAL[1], float('nan')))} | {'' if g is None else f'{g[0]:.2f}'} | "
            f"{'' if g is None else f'{g[1]:.2f}'} |"
        )


if __name__ == "__main__":
    main(*sys.argv[1:])
