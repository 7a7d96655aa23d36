"""`dgq eval`'s Qwen2 and Qwen3 paths pinned to llama.cpp (docs/model-format.md, "Your own model").

tests/fixtures/llama-cpp/tiny-<arch>.json holds what llama.cpp (the pinned llama-cpp-python sdist,
tools/make-llama-fixture.sh --tiny-only; never in CI) computes on the tiny random Qwen2 and Qwen3
GGUFs of tools/tiny-gguf.py with an F32 cache: per scored token of 2 chunks of 128 seeded random
token ids the target's log-probability and the top-8. Here the same GGUF is made again (its
sha256 must be the fixture's), and `dgq eval --model` on it with the exact (fp32) cache must give
the same log-probabilities. Tiny Qwen2 has Q/K/V biases and an untied
output; tiny Qwen3 per-head Q/K RMSNorm, head_dim 32 on a hidden of 64 and an untied output.
"""

from __future__ import annotations

import hashlib
import json

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from dgqtools.tiny_gguf import ARCHITECTURES, write_tiny_gguf
from eval_support import run_eval, write_token_file
from llama_fixture_support import differences, log_softmax

FIXTURES = REPO_ROOT / "tests" / "fixtures" / "llama-cpp"
# Both sides compute in fp32 with an F32 cache; two layers. Measured (2026-12-03, 2 threads):
# Qwen2 target max |d log p| 1.9e-6, mean 5.5e-7, top-8 max 3.1e-6, top-8 KLD 2.6e-13; Qwen3
# 2.4e-6 / 5.8e-7 / 3.4e-6 / 2.5e-13. Allowed: 1e-4 / 1e-5 / 1e-4 / 1e-10 (about 40x, so another
# CPU's summation order passes). A 0.1 % change of one tensor fails them (measured the same day
# on the exported model file): Qwen2's blk.0.attn_k.bias x1.001 gives target max 5.3e-4, mean
# 1.1e-4; Qwen3's blk.0.attn_q_norm x1.001 (a 0.1 % attention scale on layer 0) 2.8e-3 / 6.0e-4.
TOLERANCES = {"target": 1e-4, "mean_target": 1e-5, "top": 1e-4, "kld": 1e-10}


def load(arch: str) -> dict:
    return json.loads((FIXTURES / f"tiny-{arch}.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_the_gguf_made_again_is_the_one_llama_cpp_read(arch, tmp_path):
    doc = load(arch)
    path = tmp_path / "tiny.gguf"
    write_tiny_gguf(path, arch, seed=0)
    # The command as the fixture recorded it: its script was tools/tiny_gguf.py then, tools/tiny-gguf.py now.
    assert doc["gguf"].split()[1:] == [arch, "--seed", "0"]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == doc["gguf_sha256"]
    rows = doc["scored"]
    ctx, chunks, first = doc["ctx"], doc["chunks"], doc["first_scored"]
    assert [(r["chunk"], r["pos"]) for r in rows] == [(c, p) for c in range(chunks) for p in range(first, ctx - 1)]
    for r in rows:
        assert r["target"] == doc["tokens"][r["chunk"] * ctx + r["pos"] + 1]
        assert len(set(r["top_ids"])) == 8 and r["target_logprob"] <= r["top_logprobs"][0] <= 0


@pytest.mark.needs_dgq
@pytest.mark.parametrize("arch", ARCHITECTURES)
def test_eval_log_probabilities_match_llama_cpp(dgq_bin, arch, tmp_path):
    doc = load(arch)
    # `dgq eval` reads the GGUF itself (its exported model file gives the same logits bit for bit:
    # test_eval_gguf.py).
    model = tmp_path / "tiny.gguf"
    write_tiny_gguf(model, arch, seed=0)
    text = tmp_path / "tokens.h5"
    write_token_file(text, doc["tokens"], f"tiny-{arch}-gguf", kind="llama-fixture")
    out = tmp_path / "r.h5"
    run_eval(
        dgq_bin,
        model=model,
        text=text,
        ctx=doc["ctx"],
        chunks=doc["chunks"],
        base="fp32",
        scheme="fp32",
        save_logits=True,
        out=out,
    )
    with h5py.File(out, "r") as f:
        assert f.attrs["add_bos"] == 0  # no_vocab: llama.cpp adds no BOS either
        lp = log_softmax(np.asarray(f["runs"]["0"]["logits"]))
    rows = doc["scored"]
    assert lp.shape == (len(rows), doc["vocab_size"])
    diff = differences(lp, rows)
    d_target, d_top, kld, top_ids = diff["target"], diff["top"], diff["kld"], diff["top_ids"]
    summary = (
        f"tiny {arch}: target max |d| {d_target.max():.3g}, mean {d_target.mean():.3g}; "
        f"top-8 max |d| {d_top.max():.3g}; top-8 KLD mean {kld.mean():.3g}"
    )
    print(summary)
    assert d_target.max() <= TOLERANCES["target"], summary
    assert d_target.mean() <= TOLERANCES["mean_target"], summary
    assert d_top.max() <= TOLERANCES["top"], summary
    assert kld.mean() <= TOLERANCES["kld"], summary
    assert (lp.argmax(axis=1) == top_ids[:, 0]).all(), summary
