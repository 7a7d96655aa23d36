"""Independent numpy check of the replay's attention metrics (docs/results.md, "Cross-check").

For one replayed layer of a results file, recomputes for every query head and probe, from the
original trace and the decompressed K/V the replay stored (`dgq replay --save-decompressed`):

    p  = softmax(q·k_j / sqrt(d)) over keys 0..pos,   p̂ likewise with the decompressed keys
    KL(p‖p̂) = max(0, Σ_{p_j>1e-300} p_j (ln p_j − ln max(p̂_j, 1e-300)))
    out error = ‖o − ô‖ / ‖o‖,  o = Σ p_j v_j,  ô = Σ p̂_j v̂_j

with numpy's own fp64 arithmetic (its dot products, exp and sums, not the replay's fixed
orders), and compares with the per-probe values in /runs/<run>/attn/probes/{kl,out_rel_l2}.

Agreement: |ours − replay| ≤ rel · max(|ours|, |replay|) + abs_floor. rel is 1e-9; the
absolute floor (default 1e-15) exists because KL is a sum of p_j times differences of two
logarithms that each carry ~1e-16 rounding; for a KL near 1e-8 that alone is ~1e-8 relative,
whichever implementation is right.

Exit status: 0 when every probe agrees, 1 when some does not (the worst ones are printed),
2 for bad input (missing file, run, layer or dataset).
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass

import h5py
import numpy as np

KL_PROBABILITY_FLOOR = 1e-300


@dataclass
class Check:
    metric: str
    ours: np.ndarray  # [q_heads, probes]
    theirs: np.ndarray  # same

    def excess(self, rel: float, abs_floor: float) -> np.ndarray:
        """How far each value is outside the tolerance (<= 0 inside)."""
        allowed = rel * np.maximum(np.abs(self.ours), np.abs(self.theirs)) + abs_floor
        return np.abs(self.ours - self.theirs) - allowed

    def max_relative(self) -> float:
        scale = np.maximum(np.abs(self.ours), np.abs(self.theirs))
        diff = np.abs(self.ours - self.theirs)
        with np.errstate(invalid="ignore", divide="ignore"):
            rel = np.where(scale > 0, diff / scale, 0.0)
        return float(np.nanmax(rel)) if rel.size else 0.0


class InputError(Exception):
    pass


def _dataset(f: h5py.File, path: str, where: str) -> np.ndarray:
    if path not in f:
        raise InputError(f"{where}: dataset {path} is missing")
    return f[path][()]


def softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max())
    return e / e.sum()


def kl_divergence(p: np.ndarray, p_hat: np.ndarray) -> float:
    m = p > KL_PROBABILITY_FLOOR
    return max(0.0, float(np.sum(p[m] * (np.log(p[m]) - np.log(np.maximum(p_hat[m], KL_PROBABILITY_FLOOR))))))


def relative_l2(o: np.ndarray, o_hat: np.ndarray) -> float:
    norm = np.linalg.norm(o)
    diff = np.linalg.norm(o - o_hat)
    if norm == 0:
        return 0.0 if diff == 0 else float("inf")
    return float(diff / norm)


def recompute_layer(
    q: np.ndarray, k: np.ndarray, v: np.ndarray, k_hat: np.ndarray, v_hat: np.ndarray, q_pos: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """KL and output error for every (q head, probe). q: [q_heads, T, d]; k, v: [kv_heads, L, d]."""
    q_heads, probes, d = q.shape
    group = q_heads // k.shape[0]  # GQA: q head h reads kv head h // group
    scale = np.sqrt(float(d))
    kl = np.empty((q_heads, probes))
    err = np.empty((q_heads, probes))
    for h in range(q_heads):
        kv = h // group
        for t, pos in enumerate(q_pos):
            n = int(pos) + 1
            p = softmax(k[kv, :n] @ q[h, t] / scale)
            p_hat = softmax(k_hat[kv, :n] @ q[h, t] / scale)
            kl[h, t] = kl_divergence(p, p_hat)
            err[h, t] = relative_l2(p @ v[kv, :n], p_hat @ v_hat[kv, :n])
    return kl, err


def crosscheck(results: str, run: str, trace: str, layer: int) -> list[Check]:
    with h5py.File(results, "r") as rf:
        base = f"runs/{run}"
        if base not in rf:
            raise InputError(f"{results}: run /{base} is missing (runs: {', '.join(rf.get('runs', {}))})")
        layers = list(_dataset(rf, f"{base}/layers", results))
        if layer not in layers:
            raise InputError(f"{results}: layer {layer} was not replayed in /{base} (layers {layers})")
        row = layers.index(layer)
        q_pos = _dataset(rf, f"{base}/q_pos", results)
        k_hat = _dataset(rf, f"{base}/decompressed/{layer}/k", results).astype(np.float64)
        v_hat = _dataset(rf, f"{base}/decompressed/{layer}/v", results).astype(np.float64)
        kl_theirs = _dataset(rf, f"{base}/attn/probes/kl", results)[row]
        err_theirs = _dataset(rf, f"{base}/attn/probes/out_rel_l2", results)[row]
    with h5py.File(trace, "r") as tf:
        q = _dataset(tf, f"layers/{layer}/q", trace).astype(np.float64)
        k = _dataset(tf, f"layers/{layer}/k", trace).astype(np.float64)
        v = _dataset(tf, f"layers/{layer}/v", trace).astype(np.float64)
    if k.shape != k_hat.shape or v.shape != v_hat.shape:
        raise InputError(
            f"{results}: decompressed shapes {k_hat.shape}, {v_hat.shape} differ from the trace's "
            f"{k.shape}, {v.shape} ({trace}, layer {layer})"
        )
    kl_ours, err_ours = recompute_layer(q, k, v, k_hat, v_hat, q_pos)
    return [Check("kl", kl_ours, kl_theirs), Check("out_rel_l2", err_ours, err_theirs)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("results", help="results file of `dgq replay --save-decompressed`")
    ap.add_argument("--run", required=True, help="run name under /runs")
    ap.add_argument("--trace", required=True, help="the trace that run replayed")
    ap.add_argument("--layer", type=int, default=0)
    ap.add_argument("--rel", type=float, default=1e-9, help="relative tolerance (default 1e-9)")
    ap.add_argument("--abs-floor", type=float, default=1e-15, help="absolute floor (default 1e-15)")
    args = ap.parse_args(argv)
    try:
        checks = crosscheck(args.results, args.run, args.trace, args.layer)
    except (InputError, OSError) as e:
        print(f"crosscheck: error: {e}", file=sys.stderr)
        return 2
    failed = False
    for c in checks:
        excess = c.excess(args.rel, args.abs_floor)
        bad = np.argwhere(~(excess <= 0))  # NaN counts as a failure
        print(
            f"{c.metric}: {c.ours.size} probes, max relative difference {c.max_relative():.3e}, "
            f"{len(bad)} outside rel {args.rel:g} + abs {args.abs_floor:g}"
        )
        for h, t in bad[:5]:
            print(f"  q head {h}, probe {t}: numpy {c.ours[h, t]!r}, replay {c.theirs[h, t]!r}")
        failed |= len(bad) > 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
