"""Tiny random models written as GGUF files, as llama.cpp's converter names their keys and
tensors: the Qwen models of the tests (tests/python/test_eval_qwen.py) and of llama.cpp's tiny
fixture (tools/make-llama-fixture.sh --tiny). The weights are export_model.random_model's (numpy's
seeded PCG64), stored as F32, so that a GGUF made again from the same arguments is the same file
byte for byte (the fixture records its sha256 and the test checks it).

The vocabulary is llama.cpp's `no_vocab` (dummy tokens, no BOS added): the models are fed token
ids, never text. `tokenizer.ggml.tokens` and `bos_token_id` are still written because
tools/export-model.py reads the vocabulary size and BOS id from them.

Usage: tools/tiny-gguf.py qwen2|qwen3 -o FILE.gguf [--seed S]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dgqtools.export_model import random_model

if TYPE_CHECKING:
    from collections.abc import Iterable

    from gguf import GGMLQuantizationType, GGUFWriter

# Only the architectures whose GGUF Q/K rows are in Hugging Face order (NEOX RoPE in llama.cpp):
# a llama GGUF would need the converter's row permutation, which the exporter undoes.
ARCHITECTURES = ("qwen2", "qwen3")


def add_model_metadata(
    writer: GGUFWriter, cfg: dict, name: str | None = None, head_dim_keys: bool = True, vocab_size_key: bool = True
) -> None:
    """The keys llama.cpp's converter writes for a model of export_model's cfg, in its order, with a
    no_vocab vocabulary of cfg["vocab_size"] dummy tokens (write_tiny_gguf's file is pinned by its
    sha256: the order and the keys are part of it). head_dim_keys: key_length and value_length;
    vocab_size_key: {arch}.vocab_size."""
    if name is not None:
        writer.add_name(name)
    writer.add_block_count(cfg["num_layers"])
    writer.add_embedding_length(cfg["hidden"])
    writer.add_feed_forward_length(cfg["ffn"])
    writer.add_head_count(cfg["num_q_heads"])
    writer.add_head_count_kv(cfg["num_kv_heads"])
    if head_dim_keys:
        writer.add_key_length(cfg["head_dim"])
        writer.add_value_length(cfg["head_dim"])
    writer.add_rope_freq_base(cfg["rope_theta"])
    writer.add_layer_norm_rms_eps(cfg["rms_eps"])
    writer.add_context_length(cfg["context_length"])
    if vocab_size_key:
        writer.add_vocab_size(cfg["vocab_size"])
    writer.add_tokenizer_model("no_vocab")
    writer.add_token_list([f"t{i}" for i in range(cfg["vocab_size"])])
    writer.add_bos_token_id(cfg["bos_token_id"])


# Where a K-quant super-block keeps its fp16 scales (ggml-common.h): Q4_K/Q5_K d and dmin at bytes
# 0 and 2, Q6_K d at byte 208.
K_QUANT_SCALE_OFFSETS = {"Q4_K": (0, 2), "Q5_K": (0, 2), "Q6_K": (208,)}


def random_k_quant_blocks(
    rng: np.random.Generator, qtype: GGMLQuantizationType, rows: int, cols: int, scale: float
) -> np.ndarray:
    """rows x (cols / 256) super-blocks of qtype (Q4_K, Q5_K or Q6_K) as uint8 [rows, bytes]:
    random bytes with every fp16 scale set to `scale` (finite and small). The gguf package does not
    quantize K-quants, so tests and fuzz seeds make such tensors this way."""
    import gguf

    block_values, block_bytes = gguf.GGML_QUANT_SIZES[qtype]
    data = rng.integers(0, 256, size=(rows, cols // block_values, block_bytes), dtype=np.uint8)
    for offset in K_QUANT_SCALE_OFFSETS[qtype.name]:
        data[:, :, offset : offset + 2] = np.frombuffer(np.float16(scale).tobytes(), dtype=np.uint8)
    return data.reshape(rows, -1)


def add_weight(writer: GGUFWriter, name: str, values: np.ndarray, qtype: GGMLQuantizationType) -> None:
    """Tensor `name` of the fp32 `values`, stored as qtype: F32 as it is, any other type quantized
    by the gguf package (which does not do K-quants: random_k_quant_blocks)."""
    import gguf

    if qtype == gguf.GGMLQuantizationType.F32:
        writer.add_tensor(name, values)
    else:
        writer.add_tensor(name, gguf.quants.quantize(values, qtype), raw_dtype=qtype)


def write_out(writer: GGUFWriter) -> None:
    """The GGUFWriter's closing sequence: header, metadata, tensors, close."""
    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


def write_tiny_gguf(
    path: Path, arch: str, seed: int = 0, extra_metadata: Iterable[tuple[str, str | float]] = ()
) -> tuple[dict, dict]:
    """Writes random_model(arch, seed) to path; returns its (cfg, tensors). extra_metadata:
    (key, value) pairs added as they are (str or float), e.g. settings the exporter refuses."""
    import gguf

    if arch not in ARCHITECTURES:
        raise ValueError(f"tiny_gguf: architecture {arch!r} is not one of {', '.join(ARCHITECTURES)}")
    cfg, tensors = random_model(arch, seed)
    writer = gguf.GGUFWriter(str(path), arch)
    add_model_metadata(writer, cfg, f"tiny-{arch}-gguf")
    for key, value in extra_metadata:
        if isinstance(value, float):
            writer.add_float32(key, value)
        else:
            writer.add_string(key, value)
    for name, values in tensors.items():
        gguf_name = name if name.endswith(".bias") else f"{name}.weight"
        writer.add_tensor(gguf_name, np.ascontiguousarray(values, dtype=np.float32))
    write_out(writer)
    return cfg, tensors


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("arch", choices=ARCHITECTURES)
    parser.add_argument("-o", "--output", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    write_tiny_gguf(args.output, args.arch, args.seed)
    print(f"tiny-gguf.py: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
