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

    .venv/bin/python tools/rotation_variance.py data/smollm2-*.h5
"""
import sys

import h5py
import numpy as np


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
    m = np.array([v[i:i + win].mean() for i in range(0, len(v), win)])
    lo, hi = np.minimum(m[:-1], m[1:]), np.maximum(m[:-1], m[1:])
    return lo / hi


def main(paths):
    for path in paths:
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
        print(f"{path}: {len(corr)} K heads, head_dim {k.shape[-1]} (block {k_block(k.shape[-1])}): "
              f"corr(var, var_rot) = {np.mean(corr):.3f} (min {np.min(corr):.3f}), "
              f"mean |var_rot - var|/var = {np.mean(rel):.3f}, "
              f"mean |change of block-mean ratio| = {np.mean(ratio_change):.3f}, "
              f"channel mean^2 / energy: {np.mean(mean_share):.3f} -> {np.mean(mean_share_rot):.3f}")


if __name__ == "__main__":
    main(sys.argv[1:] or ["data/smollm2-code-1k.h5", "data/smollm2-prose-1k-noise10.h5"])
