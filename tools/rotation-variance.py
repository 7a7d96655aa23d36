#!/usr/bin/env python3
"""What llama.cpp's Hadamard rotation does to the per-token variance curve DGQ segments on.

For every layer and KV head of the given traces, K is rotated as `rot=hadamard` does
(blocks of the largest power of two >= 64 dividing head_dim, orthonormal Sylvester
Walsh-Hadamard; docs/spec.md) and DGQ's token variance (rule 1: population variance over the
channels) is computed for the original and the rotated K (float64 here; DGQ's canonical fp32
sum changes nothing at this precision). Printed per trace: the mean over heads of the
Pearson correlation of the two curves, of their mean relative difference, and of the
16-token block means' ratio changes (rule 3 compares neighbouring block means: the candidates
move when those ratios move), plus the share of the rotated curve's energy that the removed
channel mean represents before and after.

    .venv/bin/python tools/rotation-variance.py data/smollm2-*.h5
    .venv/bin/python tools/rotation-variance.py --fragment      # the shipped SmolLM2 traces

--fragment also writes the table to docs/results/rotation-variance.md with its provenance line
and splices it into docs/results.md (<!-- BEGIN rotation-variance -->), where §1 quotes it.
"""

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path

import h5py
import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
DEFAULT_TRACES = ["data/smollm2-code-1k.h5", "data/smollm2-prose-1k-noise10.h5"]


def hadamard(n):
    h = np.array([[1.0]])
    while h.shape[0] < n:
        h = np.block([[h, h], [h, -h]])
    return h / np.sqrt(n)


def k_block(d):
    n = 64
    while d % (2 * n) == 0:
        n *= 2
    return n


def rotate(k):
    n = k_block(k.shape[-1])
    h = hadamard(n)
    blocks = k.reshape(k.shape[0], -1, n)
    return (blocks @ h.T).reshape(k.shape)


def block_ratios(v, win=16):
    m = np.array([v[i : i + win].mean() for i in range(0, len(v), win)])
    lo, hi = np.minimum(m[:-1], m[1:]), np.maximum(m[:-1], m[1:])
    return lo / hi


def trace_row(path):
    """Means over the trace's K heads: correlation of the variance curves (and its minimum), mean
    relative difference, mean change of the neighbouring block-mean ratios, and the channel mean's
    share of the energy before and after the rotation."""
    corr, rel, ratio_change, mean_share, mean_share_rot = [], [], [], [], []
    with h5py.File(path) as f:
        for layer in f["layers"].values():
            for k in np.asarray(layer["k"], dtype=np.float64):
                kr = rotate(k)
                v, vr = k.var(axis=1), kr.var(axis=1)
                corr.append(np.corrcoef(v, vr)[0, 1])
                rel.append(np.mean(np.abs(vr - v) / v))
                ratio_change.append(np.mean(np.abs(block_ratios(vr) - block_ratios(v))))
                energy = (k * k).mean(axis=1)
                mean_share.append(np.mean(k.mean(axis=1) ** 2 / energy))
                mean_share_rot.append(np.mean(kr.mean(axis=1) ** 2 / energy))
    return {
        "trace": Path(path).stem,
        "heads": len(corr),
        "head_dim": k.shape[-1],
        "block": k_block(k.shape[-1]),
        "corr": np.mean(corr),
        "corr_min": np.min(corr),
        "rel": np.mean(rel),
        "ratio": np.mean(ratio_change),
        "share": np.mean(mean_share),
        "share_rot": np.mean(mean_share_rot),
    }


def fragment(rows, paths):
    commit = (
        subprocess.run(
            ["git", "rev-parse", "--short=12", "HEAD"], cwd=REPO_ROOT, capture_output=True, text=True
        ).stdout.strip()
        or "?"
    )
    dirty = subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=no"], cwd=REPO_ROOT, capture_output=True, text=True
    ).stdout.strip()
    date = datetime.now(UTC).date().isoformat()
    lines = [
        f"Measured by `.venv/bin/python tools/rotation-variance.py --fragment {' '.join(paths)}` "
        f"(commit {commit}{'-dirty' if dirty else ''}; {date}).",
        "",
        "| trace | K heads | block | corr(var, var rotated) mean (min) | mean relative difference "
        "| mean change of block-mean ratio | channel mean² / energy before → after |",
        "| :--- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for r in rows:
        lines.append(
            f"| {r['trace']} | {r['heads']} | {r['block']} | {r['corr']:.3f} ({r['corr_min']:.3f}) | "
            f"{r['rel']:.3f} | {r['ratio']:.3f} | {r['share']:.3f} → {r['share_rot']:.3f} |"
        )
    return "\n".join(lines) + "\n"


def main(argv):
    write = "--fragment" in argv
    paths = [a for a in argv if a != "--fragment"] or DEFAULT_TRACES
    rows = []
    for path in paths:
        r = trace_row(path)
        rows.append(r)
        print(
            f"{path}: {r['heads']} K heads, head_dim {r['head_dim']} (block {r['block']}): "
            f"corr(var, var_rot) = {r['corr']:.3f} (min {r['corr_min']:.3f}), "
            f"mean |var_rot - var|/var = {r['rel']:.3f}, "
            f"mean |change of block-mean ratio| = {r['ratio']:.3f}, "
            f"channel mean^2 / energy: {r['share']:.3f} -> {r['share_rot']:.3f}"
        )
    if write:
        from dgqtools import (
            results,  # the report's fragment writer: docs/results/<name>.md + the splice
        )

        print(f"wrote {results.publish_fragment('rotation-variance', fragment(rows, paths))}")


if __name__ == "__main__":
    main(sys.argv[1:])
