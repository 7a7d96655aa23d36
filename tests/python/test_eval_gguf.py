"""`dgq eval --model FILE.gguf`: a GGUF read directly (sim/model/src/gguf/gguf_model.cpp) gives the model
that tools/export-model.py makes from it, bit for bit (docs/model-format.md, "Your own model").

- Every weight type dgq decodes (f32, f16, bf16, q4_0, q4_1, q5_0, q5_1, q8_0, q4_K, q5_K, q6_K),
  one per tensor of a tiny random llama GGUF (Q/K rows permuted as llama.cpp's converter writes
  them): the logits of the GGUF and of its exported model file are the same bytes. The exporter
  decodes with the gguf package's numpy port of ggml's rules, dgq with its own C++: two
  implementations agree.
- The shipped SmolLM2 (Q4_1 + Q8_0) and Gemma 3 (Q5_0, Q4_K, Q6_K, Q8_0) GGUFs give the logits of
  models/*.h5, bit for bit (needs tools/make-models.sh, which tools/setup.sh runs).
- The tokenizer identity: dgq's C++ and tools/dgqtools/tokenizer_id.py compute the same one.
- Refusals, one line each: unimplemented settings by their GGUF names (the exporter's list),
  weight types dgq does not decode, unknown architectures, truncated files.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k gguf
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from dgqtools.tiny_gguf import (
    K_QUANT_SCALE_OFFSETS,
    add_model_metadata,
    add_weight,
    random_k_quant_blocks,
    write_out,
    write_tiny_gguf,
)
from eval_support import SHIPPED_GGUF_NAMES, run_eval, shipped_gguf, write_token_file

EXPORTER = REPO_ROOT / "tools" / "export-model.py"
MODELS_DIR = Path(os.environ.get("DGQ_MODELS_DIR", REPO_ROOT / "models"))

# A tiny llama whose every row length is a multiple of 256 (the K-quants' super-block).
TYPES_CFG: dict[str, Any] = {
    "num_layers": 1,
    "hidden": 256,
    "ffn": 256,
    "num_q_heads": 4,
    "num_kv_heads": 2,
    "head_dim": 64,
    "vocab_size": 300,
    "rope_theta": 10000.0,
    "rms_eps": 1e-5,
    "context_length": 512,
    "bos_token_id": 1,
}
# tensor -> ggml type; the K-quant tensors get random blocks with small scales, the others are
# quantized from random fp32 values by the gguf package.
TENSOR_TYPES = {
    "token_embd": "Q5_K",
    "output": "Q4_1",
    "output_norm": "F32",
    "blk.0.attn_norm": "Q5_0",
    "blk.0.attn_q": "F16",
    "blk.0.attn_k": "BF16",
    "blk.0.attn_v": "Q4_0",
    "blk.0.attn_output": "Q5_1",
    "blk.0.ffn_norm": "F32",
    "blk.0.ffn_gate": "Q4_K",
    "blk.0.ffn_up": "Q6_K",
    "blk.0.ffn_down": "Q8_0",
}


def tensor_shapes(cfg):
    h, f, d = cfg["hidden"], cfg["ffn"], cfg["head_dim"]
    return {
        "token_embd": (cfg["vocab_size"], h),
        "output": (cfg["vocab_size"], h),
        "output_norm": (h,),
        "blk.0.attn_norm": (h,),
        "blk.0.attn_q": (cfg["num_q_heads"] * d, h),
        "blk.0.attn_k": (cfg["num_kv_heads"] * d, h),
        "blk.0.attn_v": (cfg["num_kv_heads"] * d, h),
        "blk.0.attn_output": (h, cfg["num_q_heads"] * d),
        "blk.0.ffn_norm": (h,),
        "blk.0.ffn_gate": (f, h),
        "blk.0.ffn_up": (f, h),
        "blk.0.ffn_down": (h, f),
    }


def write_types_gguf(path: Path, seed: int = 0) -> None:
    import gguf

    rng = np.random.default_rng(seed)
    cfg = TYPES_CFG
    writer = gguf.GGUFWriter(str(path), "llama")
    add_model_metadata(writer, cfg, "tiny-types-gguf", head_dim_keys=False, vocab_size_key=False)
    for name, shape in tensor_shapes(cfg).items():
        qtype = gguf.GGMLQuantizationType[TENSOR_TYPES[name]]
        if qtype.name in K_QUANT_SCALE_OFFSETS:
            # Small scales, so that the weights are of order 0.1.
            rows, cols = shape
            blocks = random_k_quant_blocks(rng, qtype, rows, cols, scale=2e-4 if qtype.name == "Q6_K" else 2e-3)
            writer.add_tensor(f"{name}.weight", blocks, raw_dtype=qtype)
            continue
        values = (
            1.0 + 0.1 * rng.standard_normal(shape)
            if len(shape) == 1
            else rng.standard_normal(shape) / np.sqrt(shape[-1])
        ).astype(np.float32)
        add_weight(writer, f"{name}.weight", values, qtype)
    write_out(writer)


def export(gguf_path: Path, out: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, str(EXPORTER), "gguf", "--gguf", str(gguf_path), "-o", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
    )


def eval_logits(dgq_bin, model: Path, text: Path, ctx: int, out: Path) -> np.ndarray:
    run_eval(
        dgq_bin,
        model=model,
        text=text,
        ctx=ctx,
        chunks=1,
        base="fp32",
        scheme="fp32",
        save_logits=True,
        threads=2,
        out=out,
    )
    with h5py.File(out, "r") as f:
        return np.asarray(f["runs"]["0"]["logits"])


def refusal(dgq_bin, model: Path, tmp_path: Path, name: str = "any") -> str:
    """dgq eval's one-line error for `model`; `name`: the model's, so that a model whose settings
    pass meets its tensors (the tokens are checked before the weights are read)."""
    text = tmp_path / "refusal-tokens.h5"
    write_token_file(text, np.arange(2, 66, dtype=np.int32), name)
    result = run_eval(dgq_bin, model=model, text=text, ctx=64, scheme="q8_0", out=tmp_path / "never.h5", check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith(f"dgq: error: {model}: "), result.stderr
    assert not (tmp_path / "never.h5").exists()
    return result.stderr


# ------------------------------------------------------------------------------------------------
# The same model, bit for bit
# ------------------------------------------------------------------------------------------------


@pytest.mark.needs_dgq
def test_every_weight_type_decodes_as_the_exporter_decodes_it(dgq_bin, tmp_path):
    gguf_path = tmp_path / "types.gguf"
    write_types_gguf(gguf_path)
    exported = tmp_path / "types.h5"
    result = export(gguf_path, exported)
    assert result.returncode == 0, result.stderr
    tokens = np.random.default_rng(1).integers(2, TYPES_CFG["vocab_size"], size=64).astype(np.int32)
    text = tmp_path / "tokens.h5"
    write_token_file(text, tokens, "tiny-types-gguf")
    from_gguf = eval_logits(dgq_bin, gguf_path, text, 64, tmp_path / "gguf.h5")
    from_file = eval_logits(dgq_bin, exported, text, 64, tmp_path / "file.h5")
    assert np.isfinite(from_gguf).all() and from_gguf.std() > 0.05  # a model that computes something
    assert from_gguf.tobytes() == from_file.tobytes()
    # The check can fail: one changed weight block changes the logits.
    import gguf

    reader = gguf.GGUFReader(str(gguf_path))
    tensor = next(t for t in reader.tensors if t.name == "blk.0.ffn_up.weight")
    with open(gguf_path, "r+b") as f:
        f.seek(int(tensor.data_offset))
        f.write(bytes(16))
    changed = eval_logits(dgq_bin, gguf_path, text, 64, tmp_path / "changed.h5")
    assert changed.tobytes() != from_file.tobytes()


@pytest.mark.needs_dgq
@pytest.mark.parametrize("arch", ["qwen2", "qwen3"])
def test_a_qwen_gguf_evaluates_as_its_exported_model(dgq_bin, tmp_path, arch):
    gguf_path = tmp_path / f"tiny-{arch}.gguf"
    cfg, _ = write_tiny_gguf(gguf_path, arch, seed=2)
    exported = tmp_path / f"tiny-{arch}.h5"
    assert export(gguf_path, exported).returncode == 0
    text = tmp_path / "tokens.h5"
    write_token_file(text, np.random.default_rng(3).integers(2, cfg["vocab_size"], size=64), f"tiny-{arch}-gguf")
    from_gguf = eval_logits(dgq_bin, gguf_path, text, 64, tmp_path / "gguf.h5")
    assert from_gguf.tobytes() == eval_logits(dgq_bin, exported, text, 64, tmp_path / "file.h5").tobytes()


# The model file of each shipped model and the name the exporter gives it (tools/export-model.py).
SHIPPED = {
    "smollm2": ("smollm2-135m.h5", "SmolLM2-135M-Instruct-Q4_1"),
    "gemma3": ("gemma3-270m.h5", "gemma-3-270m-Q4_K_M"),
}


@pytest.mark.needs_dgq
@pytest.mark.parametrize("model", sorted(SHIPPED))
def test_a_shipped_gguf_gives_the_logits_of_its_model_file(dgq_bin, tmp_path, model):
    file_name, exported_name = SHIPPED[model]
    gguf_name = SHIPPED_GGUF_NAMES[model]
    model_file = MODELS_DIR / file_name
    if not model_file.is_file():
        pytest.fail(f"{model_file} missing: run tools/make-models.sh (tools/setup.sh does)")
    tokens = np.random.default_rng(5).integers(3, 32000, size=48).astype(np.int32)
    logits = {}
    for source, path, name in (("gguf", shipped_gguf(model), gguf_name), ("file", model_file, exported_name)):
        text = tmp_path / f"{source}-tokens.h5"
        write_token_file(text, tokens, name)
        logits[source] = eval_logits(dgq_bin, path, text, 48, tmp_path / f"{source}.h5")
    assert logits["gguf"].tobytes() == logits["file"].tobytes()


# ------------------------------------------------------------------------------------------------
# The tokenizer identity
# ------------------------------------------------------------------------------------------------


@pytest.mark.needs_dgq
def test_dgq_and_tokenizer_id_py_compute_the_same_identity(dgq_bin, tmp_path):
    import gguf

    from dgqtools.tokenizer_id import tokenizer_id

    path = shipped_gguf("smollm2")  # a real vocabulary with BPE merges
    expected = tokenizer_id(gguf.GGUFReader(str(path)))
    assert expected.startswith("fnv1a64:") and len(expected) == 24
    text = tmp_path / "tokens.h5"
    write_token_file(text, np.arange(2, 66, dtype=np.int32), "any name", tokenizer_id="fnv1a64:0000000000000000")
    result = run_eval(dgq_bin, model=path, text=text, ctx=64, scheme="q8_0", out=tmp_path / "never.h5", check=False)
    assert result.returncode == 2
    assert f"the model's is '{SHIPPED_GGUF_NAMES['smollm2']}' ({expected})" in result.stderr, result.stderr
    # The right identity is accepted under any name.
    write_token_file(text, np.arange(2, 66, dtype=np.int32), "any name", tokenizer_id=expected)
    run_eval(dgq_bin, model=path, text=text, ctx=64, chunks=1, scheme="q8_0", out=tmp_path / "r.h5")


# ------------------------------------------------------------------------------------------------
# Refusals
# ------------------------------------------------------------------------------------------------


@pytest.mark.needs_dgq
def test_unimplemented_settings_are_refused_by_the_exporters_names(dgq_bin, tmp_path):
    gguf_path = tmp_path / "scaled.gguf"
    write_tiny_gguf(
        gguf_path,
        "qwen2",
        seed=2,
        extra_metadata=[
            ("qwen2.rope.scaling.type", "yarn"),
            ("qwen2.rope.scaling.factor", 4.0),
            ("qwen2.final_logit_softcapping", 30.0),
        ],
    )
    stderr = refusal(dgq_bin, gguf_path, tmp_path)
    exported = export(gguf_path, tmp_path / "never.h5")
    listed = exported.stderr.split("does not implement ", 1)[1].strip()
    assert listed == (
        "qwen2.rope.scaling.type=yarn (factor 4): RoPE scaling; qwen2.final_logit_softcapping: logit soft-capping"
    )
    assert stderr.rstrip("\n").endswith(f"the model runner does not implement {listed}")


@pytest.mark.needs_dgq
def test_a_weight_type_dgq_does_not_decode_is_named(dgq_bin, tmp_path):
    import gguf

    path = tmp_path / "q2k.gguf"
    writer = gguf.GGUFWriter(str(path), "llama")
    cfg = TYPES_CFG
    add_model_metadata(writer, cfg, head_dim_keys=False, vocab_size_key=False)
    block_values, block_bytes = gguf.GGML_QUANT_SIZES[gguf.GGMLQuantizationType.Q2_K]
    embd = np.zeros((cfg["vocab_size"], cfg["hidden"] // block_values * block_bytes), dtype=np.uint8)
    writer.add_tensor("token_embd.weight", embd, raw_dtype=gguf.GGMLQuantizationType.Q2_K)
    for name in ("attn_norm", "attn_q", "attn_k", "attn_v", "attn_output", "ffn_norm", "ffn_gate", "ffn_up"):
        writer.add_tensor(f"blk.0.{name}.weight", np.ones(4, dtype=np.float32))  # a layer's count of tensors
    write_out(writer)
    stderr = refusal(dgq_bin, path, tmp_path, name="q2k")
    assert "GGUF tensor token_embd.weight: type q2_K (ggml type 10) is not decoded by dgq (f32, f16, bf16," in stderr


@pytest.mark.needs_dgq
def test_an_unknown_architecture_and_a_truncated_file_are_refused(dgq_bin, tmp_path):
    import gguf

    phi = tmp_path / "phi.gguf"
    writer = gguf.GGUFWriter(str(phi), "phi3")
    writer.add_block_count(1)
    write_out(writer)
    assert "GGUF architecture 'phi3' is not supported (llama, gemma3, qwen2, qwen3)" in refusal(dgq_bin, phi, tmp_path)
    whole = tmp_path / "whole.gguf"
    write_tiny_gguf(whole, "qwen3", seed=2)
    data = whole.read_bytes()
    for cut, expected in ((len(data) - 1000, "run past the end of the file"), (200, "(byte ")):
        truncated = tmp_path / f"cut-{cut}.gguf"
        truncated.write_bytes(data[:cut])
        assert expected in refusal(dgq_bin, truncated, tmp_path, name="tiny-qwen3-gguf")
