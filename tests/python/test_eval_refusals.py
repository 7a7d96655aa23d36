"""`dgq eval` (docs/eval.md) refusing what it cannot run: malformed and truncated model files,
malformed token files, an absurd context, an unknown scheme; each one clear error, exit code 2,
nothing written. The tiny random model of test_eval.py, so they take seconds.
"""

from pathlib import Path

import h5py
import numpy as np
import pytest

from eval_support import run_eval, tiny_llama_in_chunks, write_token_file

pytestmark = pytest.mark.needs_dgq


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_llama_in_chunks(tmp_path_factory.mktemp("tiny"))


def corrupt_model(source: Path, target: Path, edit) -> Path:
    target.write_bytes(source.read_bytes())
    with h5py.File(target, "a") as f:
        edit(f)
    return target


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda f: f["tensors"].__delitem__("blk.1.attn_k"), "tensor blk.1.attn_k: dataset is missing"),
        (
            lambda f: (
                f["tensors"].__delitem__("blk.0.ffn_up"),
                f["tensors"].create_dataset("blk.0.ffn_up", data=np.zeros((96, 63), np.float32)),
            ),
            "tensor blk.0.ffn_up: shape [96, 63], expected [96, 64]",
        ),
        (lambda f: f.attrs.__setitem__("architecture", "mamba"), "unknown architecture 'mamba'"),
        (lambda f: f.attrs.__setitem__("version", np.int64(7)), "model format version 7"),
        (lambda f: f.attrs.__delitem__("num_kv_heads"), "attribute 'num_kv_heads' is missing"),
        # An array where one number belongs: read into one double, it overflowed the stack (SIGSEGV).
        (
            lambda f: f.attrs.__setitem__("embedding_scale", np.arange(1000.0)),
            "attribute 'embedding_scale' must hold a single value",
        ),
        (lambda f: f.attrs.__setitem__("rms_eps", np.zeros(0)), "attribute 'rms_eps' must hold a single value"),
    ],
)
def test_malformed_model_files_get_one_clear_error(dgq_bin, tiny, tmp_path, edit, message):
    bad = corrupt_model(tiny["model"], tmp_path / "bad.h5", edit)
    result = run_eval(dgq_bin, model=bad, text=tiny["text"], ctx=32, schemes="q8_0", out=tmp_path / "r.h5", check=False)
    assert result.returncode == 2
    assert result.stderr.startswith("dgq: error: ") and message in result.stderr, result.stderr
    assert str(bad) in result.stderr
    assert not (tmp_path / "r.h5").exists()


def test_truncated_model_file_is_named(dgq_bin, tiny, tmp_path):
    data = tiny["model"].read_bytes()
    for cut in (len(data) // 2, 1000):
        bad = tmp_path / "truncated.h5"
        bad.write_bytes(data[:cut])
        result = run_eval(
            dgq_bin, model=bad, text=tiny["text"], ctx=32, schemes="q8_0", out=tmp_path / "r.h5", check=False
        )
        assert result.returncode == 2 and str(bad) in result.stderr, result.stderr
        assert "truncated" in result.stderr or "read failed" in result.stderr, result.stderr


@pytest.mark.parametrize(
    "tokens, model, message",
    [
        ([1, 2, 300, 4] * 20, "tiny-llama", "index 2 holds 300, outside the vocabulary of 300"),
        ([1, 2, -1, 4] * 20, "tiny-llama", "index 2 holds -1, not a token id"),
        ([1, 2, 3, 4] * 20, "SmolLM2", "tokens were made with the tokenizer of 'SmolLM2', the model is 'tiny-llama'"),
        ([1, 2, 3], "tiny-llama", "3 tokens, fewer than one chunk of --ctx 32"),
        # A quoted value with a newline stays on the one error line (it made two lines before).
        (
            [1, 2, 3, 4] * 20,
            "tiny\nllama",
            "tokens were made with the tokenizer of 'tiny llama', the model is 'tiny-llama'",
        ),
    ],
)
def test_malformed_token_files_get_clear_errors(dgq_bin, tiny, tmp_path, tokens, model, message):
    text = tmp_path / "t.h5"
    write_token_file(text, tokens, model)
    result = run_eval(
        dgq_bin, model=tiny["model"], text=text, ctx=32, schemes="q8_0", out=tmp_path / "r.h5", check=False
    )
    assert result.returncode == 2 and message in result.stderr and str(text) in result.stderr, result.stderr


def test_token_file_without_format_or_tokens_is_rejected(dgq_bin, tiny, tmp_path):
    text = tmp_path / "t.h5"
    write_token_file(text, [1, 2, 3] * 40, "tiny-llama")
    with h5py.File(text, "a") as f:
        del f["tokens"]
    result = run_eval(
        dgq_bin, model=tiny["model"], text=text, ctx=32, schemes="q8_0", out=tmp_path / "r.h5", check=False
    )
    assert result.returncode == 2 and "dataset /tokens: dataset is missing" in result.stderr, result.stderr


# Below 4 when the command line is read (as every numeric option, sim/cli/number_options.hpp);
# above the model's context length once the model is read.
@pytest.mark.parametrize(
    "ctx, message",
    [
        (0, "eval: --ctx: must be >= 4, got 0"),
        (3, "eval: --ctx: must be >= 4, got 3"),
        (-5, "eval: --ctx: must be >= 4, got -5"),
        (5000, "--ctx 5000: must be in [4, 4096]"),
        (1000000000, "--ctx 1000000000: must be in [4, 4096]"),
    ],
)
def test_absurd_ctx_is_refused(dgq_bin, tiny, tmp_path, ctx, message):
    result = run_eval(
        dgq_bin, model=tiny["model"], text=tiny["text"], ctx=ctx, schemes="q8_0", out=tmp_path / "r.h5", check=False
    )
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_unknown_scheme_is_refused_before_any_work(dgq_bin, tiny, tmp_path):
    result = run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=32,
        schemes="q8_0,nonsense",
        out=tmp_path / "r.h5",
        check=False,
    )
    assert result.returncode == 2 and "nonsense" in result.stderr
    assert not (tmp_path / "r.h5.partial.d").exists()
