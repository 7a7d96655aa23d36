#!/usr/bin/env python3
"""The HDF5 seeds of the eval fuzz targets that dgq does not write itself (make_seeds.sh runs this).

  model   two minimal model files (docs/model-format.md) in tools/export-model.py's layout: a
          1-layer llama stored in fp16 and a 2-layer gemma3 (one local layer, one global;
          Q/K norms and post norms) stored in fp32, both with a 16-token vocabulary.
  gguf    two minimal GGUF files (the pinned gguf package's writer): a 1-layer llama whose tensors
          use the 32-value block types (q8_0, q4_0, q4_1, q5_0, q5_1, f16, bf16, f32) and a
          1-layer qwen3 on a 256-wide hidden state whose tensors use the K-quants (q4_K, q5_K,
          q6_K), both with a 16-token vocabulary.
  tokens  two token files (docs/eval.md, "dgq-tokens"): 24 int32 tokens with variable-length
          string attributes, as h5py writes them, and the same as uint16 with fixed-length ones.

tools/export-model.py's tiny-llama / tiny-gemma3 are 0.4 MB and 1.3 MB: too big for a fuzz seed,
whose bytes are mutated at random (most of a model file is weights; the readers' decisions are
in the few KB of metadata). So the shapes here are as small as the readers allow, and the weights
are written with export_model.write_model, the same writer as the real models.

Usage: write_seed_files.py model|gguf|tokens OUTPUT_DIR
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from dgqtools import export_model
from dgqtools.tiny_gguf import (
    add_model_metadata,
    add_weight,
    random_k_quant_blocks,
    write_out,
)
from dgqtools.token_file import write_token_file

TOKENS = [(7 * i + 3) % 16 for i in range(24)]  # three chunks of --ctx 8, ids < 16


def micro_model(arch: str, seed: int) -> tuple[dict, dict]:
    cfg = {
        "architecture": arch,
        "num_layers": 1,
        "hidden": 8,
        "ffn": 8,
        "num_q_heads": 2,
        "num_kv_heads": 1,
        "head_dim": 32,
        "vocab_size": 16,
        "rope_theta": 10000.0,
        "rms_eps": 1e-5,
        "context_length": 64,
        "bos_token_id": 1,
        "add_bos": 1,
    }
    if arch == "gemma3":
        cfg.update(export_model.gemma3_extras(cfg, sliding_window=4))
        cfg.update(num_layers=2, sliding_window_pattern=2)  # layer 0 local, layer 1 global
    else:
        cfg.update(export_model.llama_extras())
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, shape in export_model.tensor_shapes(cfg).items():
        values = 0.3 * rng.standard_normal(shape) + (1.0 if len(shape) == 1 else 0.0)
        if arch == "llama":  # exact in fp16, so write_model stores fp16 (the other dtype path)
            values = values.astype(np.float16)
        tensors[name] = values.astype(np.float32)
    return cfg, tensors


def write_models(out: Path) -> None:
    for arch in ("llama", "gemma3"):
        cfg, tensors = micro_model(arch, seed=0)
        export_model.write_model(out / f"seed-{arch}.h5", f"fuzz-{arch}", "random, seed 0", cfg, tensors)


GGUF_SEEDS = {
    "llama": (
        {"hidden": 32, "ffn": 32, "heads": 2, "kv_heads": 1, "head_dim": 16},
        {
            "token_embd": "Q8_0",
            "output_norm": "F32",
            "blk.0.attn_norm": "F16",
            "blk.0.attn_q": "Q4_0",
            "blk.0.attn_k": "Q4_1",
            "blk.0.attn_v": "Q5_0",
            "blk.0.attn_output": "Q5_1",
            "blk.0.ffn_norm": "BF16",
            "blk.0.ffn_gate": "Q8_0",
            "blk.0.ffn_up": "F16",
            "blk.0.ffn_down": "F32",
        },
    ),
    "qwen3": (
        {"hidden": 256, "ffn": 8, "heads": 2, "kv_heads": 1, "head_dim": 16},
        {
            "token_embd": "Q4_K",
            "output_norm": "F32",
            "blk.0.attn_norm": "F32",
            "blk.0.attn_q": "Q5_K",
            "blk.0.attn_k": "Q6_K",
            "blk.0.attn_v": "Q4_K",
            "blk.0.attn_output": "F32",
            "blk.0.ffn_norm": "F32",
            "blk.0.ffn_gate": "Q6_K",
            "blk.0.ffn_up": "Q4_K",
            "blk.0.ffn_down": "F32",
            "blk.0.attn_q_norm": "F32",
            "blk.0.attn_k_norm": "F32",
        },
    ),
}


def gguf_shapes(arch: str, d: dict) -> dict:
    h, f, q, kv = d["hidden"], d["ffn"], d["heads"] * d["head_dim"], d["kv_heads"] * d["head_dim"]
    shapes = {
        "token_embd": (16, h),
        "output_norm": (h,),
        "blk.0.attn_norm": (h,),
        "blk.0.attn_q": (q, h),
        "blk.0.attn_k": (kv, h),
        "blk.0.attn_v": (kv, h),
        "blk.0.attn_output": (h, q),
        "blk.0.ffn_norm": (h,),
        "blk.0.ffn_gate": (f, h),
        "blk.0.ffn_up": (f, h),
        "blk.0.ffn_down": (h, f),
    }
    if arch == "qwen3":
        shapes.update({"blk.0.attn_q_norm": (d["head_dim"],), "blk.0.attn_k_norm": (d["head_dim"],)})
    return shapes


def write_ggufs(out: Path) -> None:
    import gguf

    for arch, (dims, types) in GGUF_SEEDS.items():
        rng = np.random.default_rng(0)
        writer = gguf.GGUFWriter(str(out / f"seed-{arch}.gguf"), arch)
        cfg = {
            "num_layers": 1,
            "hidden": dims["hidden"],
            "ffn": dims["ffn"],
            "num_q_heads": dims["heads"],
            "num_kv_heads": dims["kv_heads"],
            "head_dim": dims["head_dim"],
            "rope_theta": 10000.0,
            "rms_eps": 1e-5,
            "context_length": 64,
            "vocab_size": 16,
            "bos_token_id": 1,
        }
        add_model_metadata(writer, cfg, f"fuzz-{arch}")
        for name, shape in gguf_shapes(arch, dims).items():
            qtype = gguf.GGMLQuantizationType[types[name]]
            values = (0.3 * rng.standard_normal(shape) + (1.0 if len(shape) == 1 else 0.0)).astype(np.float32)
            if qtype.name.endswith("_K"):  # the gguf package does not quantize K-quants: random blocks
                blocks = random_k_quant_blocks(rng, qtype, shape[0] if len(shape) == 2 else 1, shape[-1], 1e-3)
                writer.add_tensor(f"{name}.weight", blocks if len(shape) == 2 else blocks[0], raw_dtype=qtype)
            else:
                add_weight(writer, f"{name}.weight", values, qtype)
        write_out(writer)


def write_tokens(out: Path) -> None:
    import h5py

    write_token_file(out / "seed-tokens-int32.h5", TOKENS, "fuzz-llama", "fuzz", 0.1)
    # The same tokens in the encodings the writer never uses but the format allows (uint16 ids,
    # fixed-length strings, int32 version, float32 rate), written by hand for the reader to meet.
    with h5py.File(out / "seed-tokens-uint16-fixed-strings.h5", "w") as f:
        f.attrs["format"] = np.bytes_(b"dgq-tokens")
        f.attrs["version"] = np.int32(1)
        f.attrs["model"] = np.bytes_(b"fuzz-llama")
        f.attrs["kind"] = np.bytes_(b"fuzz")
        f.attrs["noise_rate"] = np.float32(0)
        f.create_dataset("tokens", data=np.asarray(TOKENS, dtype=np.uint16))


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("model", "gguf", "tokens"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    {"model": write_models, "gguf": write_ggufs, "tokens": write_tokens}[argv[1]](out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
