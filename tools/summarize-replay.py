#!/usr/bin/env python3
"""Markdown table of a `dgq replay --json` summary: one row per run.

    tools/summarize-replay.py SUMMARY.json

Columns: trace, scheme family (+ non-default granularity), bits/element, ratio, mean KL,
p95 KL, mean segments per head, and, for traces with a noise mask, the attention mass on
noise tokens before -> after and the KL over clean tokens. Standard library only.
"""

import json
import sys


def scheme_label(spec: str) -> str:
    family, _, params = spec.partition(":")
    if family == "dgq" and "granularity=segment-channel" in params:
        return "dgq segment-channel"
    return family


def main(path: str) -> None:
    with open(path, encoding="utf-8") as f:
        summary = json.load(f)
    print(
        "| trace | scheme | bits/elem | ratio | KL mean | KL p95 | segments/head | noise mass before -> after | clean KL mean |"
    )
    print("|---|---|---:|---:|---:|---:|---:|---:|---:|")
    for run in summary["runs"]:
        m = run["metrics"]
        trace = run["name"].split("@", 1)[1]
        noise = clean = ""
        if "noise_mass" in m:
            noise = f"{m['noise_mass']['mean']:.4f} -> {m['noise_mass_hat']['mean']:.4f}"
            clean = f"{m['clean_kl']['mean']:.3e}"
        print(
            f"| {trace} | {scheme_label(run['scheme'])} | {run['bits_per_element']:.3f} | {run['ratio']:.4f} "
            f"| {m['attn_kl']['mean']:.3e} | {m['attn_kl']['p95']:.3e} | {run['mean_segments']:.2f} | {noise} | {clean} |"
        )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
