"""Qwen2 and Qwen3 in `dgq eval`, and any GGUF through `tools/export-model.py gguf --gguf FILE`.

- The runner's logits for tiny random Qwen2 (Q/K/V biases, untied output) and Qwen3 (Q/K
  RMSNorm, untied output) models, head_dim apart from hidden / heads, match an independent numpy
  forward pass written from Hugging Face's modeling code (eval_support.numpy_qwen_logits).
- A GGUF of each architecture, written with the pinned `gguf` package from the same random
  weights (tools/tiny-gguf.py), exports to the same model file tensors (rows not permuted: NEOX RoPE in llama.cpp),
  named by its general.name; its settings the runner does not implement are refused by name.
- `dgq eval --model` reads such a GGUF directly: tests/python/test_eval_gguf.py.
Not checked here: logits against llama.cpp's on a real Qwen GGUF (none ships in a PyPI package
this project pins; docs/model-format.md says so).
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k qwen
"""

import subprocess
import sys

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from dgqtools.tiny_gguf import write_out, write_tiny_gguf
from eval_support import numpy_qwen_logits, run_eval, write_tiny_model, write_token_file

LOGITS_REL_TOL = 1e-4
EXPORTER = REPO_ROOT / "tools" / "export-model.py"


def relative_error(got, expected):
    return float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))


def export_gguf(gguf_path, out):
    return subprocess.run(
        [sys.executable, str(EXPORTER), "gguf", "--gguf", str(gguf_path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.mark.needs_dgq
@pytest.mark.parametrize("arch", ["qwen2", "qwen3"])
def test_tiny_qwen_logits_match_the_numpy_forward_pass(dgq_bin, tmp_path, arch):
    model = tmp_path / f"tiny-{arch}.h5"
    cfg, _ = write_tiny_model(model, arch)
    assert cfg["tied_output"] == 0
    assert (cfg["head_dim"] * cfg["num_q_heads"] != cfg["hidden"]) == (arch == "qwen3")
    tokens = np.random.default_rng(4).integers(2, cfg["vocab_size"], size=96).astype(np.int32)
    tokens[0] = cfg["bos_token_id"]  # the runner puts BOS first in a chunk (add_bos), as llama-perplexity
    text = tmp_path / "t.h5"
    write_token_file(text, tokens, f"tiny-{arch}")
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=model, text=text, ctx=96, chunks=1, base="fp32", scheme="fp32", save_logits=True, out=out)
    with h5py.File(out, "r") as f:
        got = np.asarray(f["runs"]["0"]["logits"])
    expected = numpy_qwen_logits(model, tokens)
    assert relative_error(got, expected[48:95]) <= LOGITS_REL_TOL
    # Each Qwen ingredient matters: without its biases / its Q/K norm the numpy pass is far off.
    with h5py.File(model, "r+") as f:
        for name in list(f["tensors"]):
            if name.endswith(("attn_q.bias", "attn_q_norm")):
                f["tensors"][name][...] = np.zeros_like(f["tensors"][name]) + (0 if "bias" in name else 1)
    assert relative_error(got, numpy_qwen_logits(model, tokens)[48:95]) > 1e-3


@pytest.mark.parametrize("arch", ["qwen2", "qwen3"])
def test_a_qwen_gguf_exports_to_the_same_model(tmp_path, arch):
    gguf_path = tmp_path / f"tiny-{arch}.gguf"
    cfg, tensors = write_tiny_gguf(gguf_path, arch, seed=2)
    out = tmp_path / "exported.h5"
    result = export_gguf(gguf_path, out)
    assert result.returncode == 0, result.stderr
    with h5py.File(out, "r") as f:
        assert f.attrs["model"] == f"tiny-{arch}-gguf" and f.attrs["architecture"] == arch
        assert f.attrs["attn_bias"] == (arch == "qwen2") and f.attrs["qk_norm"] == (arch == "qwen3")
        assert f.attrs["tied_output"] == 0 and f.attrs["head_dim"] == cfg["head_dim"]
        assert sorted(f["tensors"]) == sorted(tensors)
        for name, values in tensors.items():
            assert np.array_equal(np.asarray(f["tensors"][name], dtype=np.float32), values), name


def test_a_qwen_gguf_with_rope_scaling_is_refused_by_name(tmp_path):
    gguf_path = tmp_path / "scaled.gguf"
    write_tiny_gguf(
        gguf_path,
        "qwen2",
        seed=2,
        extra_metadata=[("qwen2.rope.scaling.type", "yarn"), ("qwen2.rope.scaling.factor", 4.0)],
    )
    out = tmp_path / "never.h5"
    result = export_gguf(gguf_path, out)
    assert result.returncode == 1
    assert "qwen2.rope.scaling.type=yarn (factor 4): RoPE scaling" in result.stderr
    assert not out.exists()


def test_an_unsupported_architecture_is_named(tmp_path):
    import gguf

    gguf_path = tmp_path / "phi.gguf"
    writer = gguf.GGUFWriter(str(gguf_path), "phi3")
    writer.add_block_count(1)
    write_out(writer)
    result = export_gguf(gguf_path, tmp_path / "never.h5")
    assert (
        result.returncode == 1
        and "GGUF architecture 'phi3' is not supported (llama, gemma3, qwen2, qwen3)" in result.stderr
    )
