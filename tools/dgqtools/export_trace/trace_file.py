"""Writing a trace (dgq trace format v1, docs/trace-format.md) as HDF5."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from dgqtools.export_trace.model_file import MODEL_NAME, ModelConfig
from dgqtools.export_trace.prompt import Prompt


@dataclass
class TraceContent:
    config: ModelConfig
    layer_ids: list
    records: dict  # original layer index -> LayerRecord
    q_pos: np.ndarray
    prompt: Prompt
    prompt_kind: str
    quality: dict  # root attributes: ppl, top1_acc, decode_rel_err


def dataset_options(shape: tuple[int, ...]) -> dict:
    """One chunk per (head, up to 1024 tokens): reading one head of one layer touches only its chunks."""
    chunk = (1, min(shape[1], 1024), shape[2])
    return dict(chunks=chunk, shuffle=True, compression="gzip", compression_opts=4)


def write_trace(path: Path, content: TraceContent) -> None:
    """Writes trace format v1 to PATH.partial, then renames it to PATH: an interrupted export
    never leaves a file that looks complete."""
    import h5py

    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    cfg = content.config
    try:
        with h5py.File(partial, "w") as f:
            f.attrs["format"] = "dgq-trace"
            f.attrs["version"] = np.int64(1)
            f.attrs["model"] = MODEL_NAME
            f.attrs["num_layers"] = np.int64(len(content.layer_ids))
            f.attrs["num_q_heads"] = np.int64(cfg.num_q_heads)
            f.attrs["num_kv_heads"] = np.int64(cfg.num_kv_heads)
            f.attrs["head_dim"] = np.int64(cfg.head_dim)
            f.attrs["rope_applied"] = np.int64(1)
            f.attrs["source"] = "model"
            f.attrs["prompt_kind"] = content.prompt_kind
            f.attrs["layer_ids"] = np.array(content.layer_ids, dtype=np.int64)
            for name, value in content.quality.items():
                f.attrs[name] = np.float64(value)
            for stored_index, layer_id in enumerate(content.layer_ids):
                record = content.records[layer_id]
                group = f.create_group(f"layers/{stored_index}")
                for name in ("k", "v", "q"):
                    data = getattr(record, name).astype(np.float16)
                    group.create_dataset(name, data=data, **dataset_options(data.shape))
            f.create_dataset("q_pos", data=content.q_pos.astype(np.int32))
            f.create_dataset(
                "tokens",
                data=content.prompt.tokens.astype(np.int32),
                chunks=True,
                shuffle=True,
                compression="gzip",
                compression_opts=4,
            )
            f.create_dataset(
                "noise_mask",
                data=content.prompt.noise_mask.astype(np.uint8),
                chunks=True,
                shuffle=True,
                compression="gzip",
                compression_opts=4,
            )
            f.create_dataset("text", data=content.prompt.text, dtype=h5py.string_dtype("utf-8"))
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
