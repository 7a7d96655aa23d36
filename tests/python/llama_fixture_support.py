"""What the llama.cpp fixture tests compare (test_llama_fixture.py, test_tiny_llama_fixture.py):
dgq's log-probabilities against llama.cpp's recorded target and top-8 log-probabilities."""

from __future__ import annotations

import numpy as np


def log_softmax(z: np.ndarray) -> np.ndarray:
    z = z.astype(np.float64)
    m = z.max(axis=-1, keepdims=True)
    return z - (m + np.log(np.exp(z - m).sum(axis=-1, keepdims=True)))


def differences(lp: np.ndarray, rows: list[dict]) -> dict:
    """Per scored row (lp: dgq's log-probabilities, one row per fixture row): |d log p| of the
    target, |d log p| of llama.cpp's top-8 ids, and KL(llama || dgq) of the top-8 renormalized."""
    d_target = np.abs(np.array([lp[i, r["target"]] - r["target_logprob"] for i, r in enumerate(rows)]))
    top_ids = np.array([r["top_ids"] for r in rows])
    theirs_top = np.array([r["top_logprobs"] for r in rows])
    ours_top = np.take_along_axis(lp, top_ids, axis=1)
    p = np.exp(theirs_top - np.log(np.exp(theirs_top).sum(axis=1, keepdims=True)))
    q_log = ours_top - np.log(np.exp(ours_top).sum(axis=1, keepdims=True))
    return {
        "target": d_target,
        "top": np.abs(ours_top - theirs_top),
        "kld": np.sum(p * (np.log(p) - q_log), axis=1),
        "top_ids": top_ids,
    }
