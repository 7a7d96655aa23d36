#!/usr/bin/env python3
"""The HDF5 seeds of the eval fuzz targets that dgq does not write itself (make_seeds.sh runs this).

  model   two minimal model files (docs/model-format.md) in tools/export_model.py's layout: a
          1-layer llama stored in fp16 and a 2-layer gemma3 (one local layer, one global;
          Q/K norms and post norms) stored in fp32, both with a 16-token vocabulary.
  tokens  two token files (docs/eval.md, "dgq-tokens"): 24 int32 tokens with variable-length
          string attributes, as h5py writes them, and the same as uint16 with fixed-length ones.

tools/export_model.py's tiny-llama / tiny-gemma3 are 0.4 MB and 1.3 MB: too big for a fuzz seed,
whose bytes are mutated at random (most of a model file is weights; the readers' decisions are
in the few KB of metadata). So the shapes here are as small as the readers allow, and the weights
are written with export_model.write_model, the same writer as the real models.

Usage: write_seed_files.py model|tokens OUTPUT_DIR
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tools"))
import export_model  # noqa: E402

TOKENS = [(7 * i + 3) % 16 for i in range(24)]  # three chunks of --ctx 8, ids < 16


def micro_model(arch: str, seed: int) -> tuple[dict, dict]:
    cfg = {"architecture": arch, "num_layers": 1, "hidden": 8, "ffn": 8, "num_q_heads": 2,
           "num_kv_heads": 1, "head_dim": 32, "vocab_size": 16, "rope_theta": 10000.0,
           "rms_eps": 1e-5, "context_length": 64, "bos_token_id": 1, "add_bos": 1}
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


def write_tokens(out: Path) -> None:
    import h5py
    with h5py.File(out / "seed-tokens-int32.h5", "w") as f:
        f.attrs["format"] = "dgq-tokens"
        f.attrs["version"] = np.int64(1)
        f.attrs["model"] = "fuzz-llama"
        f.attrs["kind"] = "fuzz"
        f.attrs["noise_rate"] = np.float64(0.1)
        f.create_dataset("tokens", data=np.asarray(TOKENS, dtype=np.int32))
    with h5py.File(out / "seed-tokens-uint16-fixed-strings.h5", "w") as f:
        f.attrs["format"] = np.bytes_(b"dgq-tokens")
        f.attrs["version"] = np.int32(1)
        f.attrs["model"] = np.bytes_(b"fuzz-llama")
        f.attrs["kind"] = np.bytes_(b"fuzz")
        f.attrs["noise_rate"] = np.float32(0)
        f.create_dataset("tokens", data=np.asarray(TOKENS, dtype=np.uint16))


def main(argv: list[str]) -> int:
    if len(argv) != 3 or argv[1] not in ("model", "tokens"):
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[2])
    out.mkdir(parents=True, exist_ok=True)
    (write_models if argv[1] == "model" else write_tokens)(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
