"""`dgq eval` on Gemma 3 (docs/eval.md): the C++ model runner against the numpy forward pass,
on a tiny random Gemma 3 and on the real model file (made by tools/make-models.sh, part of the
setup), and the sliding window of its local layers.
"""

import h5py
import numpy as np
import pytest

from eval_support import (
    LOGITS_REL_TOL,
    MODELS_DIR,
    numpy_gemma3_logits,
    relative_error,
    run_eval,
    saved_logits,
    write_tiny_model,
    write_token_file,
)

pytestmark = pytest.mark.needs_dgq


def test_tiny_gemma3_logits_match_the_numpy_forward_pass(dgq_bin, tmp_path):

    model = tmp_path / "tiny-gemma3.h5"
    cfg, _ = write_tiny_model(model, "gemma3")
    rng = np.random.default_rng(3)
    tokens = rng.integers(3, cfg["vocab_size"], size=150).astype(np.int32)
    tokens[0] = cfg["bos_token_id"]
    text = tmp_path / "t.h5"
    write_token_file(text, tokens, "tiny-gemma3")
    out = tmp_path / "r.h5"
    # 150 tokens with a window of 8: the local layers really drop keys, and the runner's query
    # blocks of 64 start past the window.
    run_eval(dgq_bin, model=model, text=text, ctx=150, base="fp32", schemes="fp32", save_logits=True, out=out)
    expected = numpy_gemma3_logits(model, tokens)[75:149]
    assert relative_error(saved_logits(out, 0), expected) <= LOGITS_REL_TOL


def test_gemma3_window_matters(tmp_path):
    """Control for the test above: without the sliding window the numpy logits change."""

    model = tmp_path / "tiny-gemma3.h5"
    cfg, _ = write_tiny_model(model, "gemma3")
    tokens = np.random.default_rng(3).integers(3, cfg["vocab_size"], size=24)
    windowed = numpy_gemma3_logits(model, tokens)
    with h5py.File(model, "a") as f:
        f.attrs["sliding_window"] = np.int64(4096)
    assert relative_error(numpy_gemma3_logits(model, tokens)[-1], windowed[-1]) > 1e-3
    assert np.array_equal(numpy_gemma3_logits(model, tokens)[:8], windowed[:8])


GEMMA3_FILE = MODELS_DIR / "gemma3-270m.h5"
# "In the beginning God created the heaven and the earth." twice, Gemma 3's ids, BOS first.
GEMMA3_SENTENCE = [902, 506, 6534, 3803, 4464, 506, 20808, 532, 506, 7764, 236761]


def test_gemma3_logits_match_the_numpy_forward_pass(dgq_bin, tmp_path):

    if not GEMMA3_FILE.is_file():
        pytest.fail(f"{GEMMA3_FILE} missing: run tools/make-models.sh (tools/setup.sh does)")
    tokens = np.array([2] + GEMMA3_SENTENCE * 2 + [506], dtype=np.int32)
    text = tmp_path / "t.h5"
    write_token_file(text, tokens, "gemma-3-270m-Q4_K_M")
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=GEMMA3_FILE, text=text, ctx=24, base="fp32", schemes="fp32", save_logits=True, out=out)
    logits = saved_logits(out, 0)
    expected = numpy_gemma3_logits(GEMMA3_FILE, tokens)[12:23]
    assert relative_error(logits, expected) <= LOGITS_REL_TOL
    # The repeated sentence is predicted: the model works, not just agrees with its twin.
    predicted = np.argmax(logits, axis=1)
    assert np.mean(predicted == tokens[13:24]) >= 0.8
