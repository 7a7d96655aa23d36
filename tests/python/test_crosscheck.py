"""tools/crosscheck-attention.py: an independent numpy recomputation of the replay's KL and
output error. First on hand-made files (so we know the check can fail, and fails clearly),
then on a shipped trace replayed by the real `dgq replay` ($DGQ_BIN)."""

import math
import subprocess
from pathlib import Path

import h5py
import numpy as np
import pytest

from dgqtools import crosscheck_attention as cc

REPO_ROOT = Path(__file__).resolve().parents[2]

RUN = "tiny"


def attention_probs(query, keys, n):
    """softmax(query . keys[j] / sqrt(d)) over the first n keys, in plain Python floats."""
    d = len(query)
    logits = [sum(float(a) * float(b) for a, b in zip(query, keys[j])) / math.sqrt(d) for j in range(n)]
    top = max(logits)
    e = [math.exp(x - top) for x in logits]
    z = sum(e)
    return [x / z for x in e]


def scalar_metrics(q, k, v, k_hat, v_hat, q_pos):
    """KL and output error with plain Python floats and math.exp/log: a third, loop-by-loop
    implementation to stand in for the replay in the hand-made files."""
    q_heads, probes, d = q.shape
    group = q_heads // k.shape[0]
    kl = np.zeros((q_heads, probes))
    err = np.zeros((q_heads, probes))
    for h in range(q_heads):
        for t, pos in enumerate(q_pos):
            kv = h // group
            n = pos + 1

            p, ph = attention_probs(q[h, t], k[kv], n), attention_probs(q[h, t], k_hat[kv], n)
            kl[h, t] = max(0.0, sum(a * (math.log(a) - math.log(max(b, 1e-300))) for a, b in zip(p, ph) if a > 1e-300))
            o = [sum(p[j] * float(v[kv, j, c]) for j in range(n)) for c in range(d)]
            oh = [sum(ph[j] * float(v_hat[kv, j, c]) for j in range(n)) for c in range(d)]
            err[h, t] = math.sqrt(sum((a - b) ** 2 for a, b in zip(o, oh))) / math.sqrt(sum(a * a for a in o))
    return kl, err


@pytest.fixture
def tiny_files(tmp_path):
    """A 1-layer trace (4 q heads over 2 KV heads, 12 tokens, d = 8) and a results file whose
    decompressed K/V are the trace rounded to 2 decimals, with metrics from scalar_metrics."""
    rng = np.random.default_rng(20240501)
    q = rng.normal(size=(4, 3, 8)).astype(np.float16)
    k = rng.normal(size=(2, 12, 8)).astype(np.float16)
    v = rng.normal(size=(2, 12, 8)).astype(np.float16)
    k_hat = np.round(k.astype(np.float32), 2).astype(np.float16)
    v_hat = np.round(v.astype(np.float32), 2).astype(np.float16)
    q_pos = np.array([0, 5, 11], dtype=np.int32)
    trace = tmp_path / "tiny-trace.h5"
    with h5py.File(trace, "w") as f:
        f["q_pos"] = q_pos
        for name, x in (("q", q), ("k", k), ("v", v)):
            f[f"layers/0/{name}"] = x
    kl, err = scalar_metrics(q, k, v, k_hat, v_hat, q_pos)
    results = tmp_path / "tiny-results.h5"
    with h5py.File(results, "w") as f:
        run = f.create_group(f"runs/{RUN}")
        run["layers"] = np.array([0], dtype=np.int32)
        run["q_pos"] = q_pos
        run["decompressed/0/k"] = k_hat
        run["decompressed/0/v"] = v_hat
        run["attn/probes/kl"] = kl[None]
        run["attn/probes/out_rel_l2"] = err[None]
    return trace, results


def test_a_missing_run_is_an_input_error_naming_the_file_and_run(tiny_files, capsys):
    trace, results = tiny_files
    assert cc.main([str(results), "--run", "absent", "--trace", str(trace)]) == 2
    message = capsys.readouterr().err
    assert "runs/absent is missing" in message and str(results) in message


def test_a_layer_that_was_not_replayed_is_an_input_error(tiny_files, capsys):
    trace, results = tiny_files
    assert cc.main([str(results), "--run", RUN, "--trace", str(trace), "--layer", "3"]) == 2
    assert "layer 3 was not replayed" in capsys.readouterr().err


def test_numpy_agrees_with_an_independent_scalar_implementation(tiny_files, capsys):
    trace, results = tiny_files
    assert cc.main([str(results), "--run", RUN, "--trace", str(trace)]) == 0
    out = capsys.readouterr().out
    assert "kl: 12 probes" in out and "0 outside" in out


def test_a_replay_value_off_by_1e_minus_7_relative_is_reported(tiny_files, capsys):
    trace, results = tiny_files
    with h5py.File(results, "r+") as f:
        err = f[f"runs/{RUN}/attn/probes/out_rel_l2"]
        values = err[()]
        values[0, 2, 1] *= 1 + 1e-7
        err[...] = values
    assert cc.main([str(results), "--run", RUN, "--trace", str(trace)]) == 1
    out = capsys.readouterr().out
    assert "out_rel_l2" in out and "q head 2, probe 1" in out


def shipped_trace():
    traces = sorted((REPO_ROOT / "data").glob("*.h5"), key=lambda p: p.stat().st_size)
    if not traces:
        pytest.fail("no shipped trace in data/ (data/README.md lists them)")
    return traces[0]  # the smallest keeps the test quick


@pytest.mark.needs_dgq
@pytest.mark.parametrize("scheme", ["dgq", "int4-group64", "kivi-2"])
def test_replay_metrics_agree_with_numpy_on_a_shipped_trace(tmp_path, scheme, dgq_bin):
    trace = shipped_trace()
    results = tmp_path / "replay.h5"
    run = "crosscheck"
    # conftest's dgq_bin fails on a wrong DGQ_BIN: a skip here would pass a broken setup.
    subprocess.run(
        [
            dgq_bin,
            "replay",
            str(trace),
            "--scheme",
            scheme,
            "--name",
            run,
            "--layers",
            "0",
            "--save-decompressed",
            "-o",
            str(results),
        ],
        check=True,
        capture_output=True,
        text=True,
    )
    checks = cc.crosscheck(str(results), run, str(trace), 0)
    for c in checks:
        excess = c.excess(1e-9, 1e-15)
        worst = np.unravel_index(np.argmax(excess), excess.shape)
        assert (excess <= 0).all(), (
            f"{scheme} {c.metric}: numpy {c.ours[worst]!r} vs replay "
            f"{c.theirs[worst]!r} at q head {worst[0]}, probe {worst[1]}"
        )
        # A lossy scheme has nonzero error: the comparison is not of zeros with zeros.
        assert c.theirs.max() > 0
