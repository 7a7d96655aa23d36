"""The numpy fp32 forward pass of SmolLM2 (RMSNorm, RoPE, grouped-query attention, SwiGLU, tied
embeddings) that records each layer's post-RoPE keys, values and probe queries, and the checks
that prove it: perplexity, top-1 accuracy and one decode step against the prefill.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dgqtools.export_trace.model_file import (
    ExportError,
    GgufTensors,
    LayerWeights,
    ModelConfig,
    bundled_gguf_path,
    unpermute_rope_rows,
)

if TYPE_CHECKING:
    from collections.abc import Callable

ATTENTION_QUERY_CHUNK = 256  # bounds the score matrix at 8K tokens: 9 x 256 x 8192 fp32 = 75 MB
LOGITS_ROW_CHUNK = 512  # bounds the logits block: 512 x 49152 fp32 = 100 MB


def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    mean_square = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return (x / np.sqrt(mean_square + np.float32(eps))) * weight


def silu(x: np.ndarray) -> np.ndarray:
    return x / (np.float32(1) + np.exp(-x))


def rope_tables(positions: np.ndarray, head_dim: int, theta: float) -> tuple[np.ndarray, np.ndarray]:
    """cos/sin [n, head_dim] for rotate-half RoPE (HF layout), angles computed in float64 then
    rounded, so long positions keep their precision."""
    inv_freq = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    angles = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x [heads, n, head_dim]; rotate-half: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


# exp() below this is under 1.8e-35: far below one fp32 ulp of the row sum (>= 1), so dropping it
# changes nothing visible, while leaving it makes exp() and the probs @ V product produce
# subnormals, which x86 handles ~5x slower (peaky real attention rows are full of them).
SOFTMAX_NEGLIGIBLE_LOGIT = -80.0


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    scores = scores - scores.max(axis=-1, keepdims=True)
    scores[scores < SOFTMAX_NEGLIGIBLE_LOGIT] = -np.inf
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


@dataclass
class KVCache:
    """Post-RoPE keys and values per layer: lists of [num_kv_heads, n, head_dim] fp32."""

    keys: list
    values: list

    @property
    def length(self) -> int:
        return self.keys[0].shape[1] if self.keys else 0

    def truncated(self, n: int) -> KVCache:
        return KVCache([k[:, :n] for k in self.keys], [v[:, :n] for v in self.values])


@dataclass
class LayerRecord:
    """What a trace keeps of one layer: K and V of every token, Q at the probe positions."""

    k: np.ndarray  # [num_kv_heads, n, head_dim] fp32, post-RoPE
    v: np.ndarray
    q: np.ndarray  # [num_q_heads, T, head_dim] fp32, post-RoPE


class SmolLM2:
    """Llama-architecture decoder in numpy fp32."""

    def __init__(self, gguf_path: Path | None = None, undo_gguf_qk_permutation: bool = True):
        """undo_gguf_qk_permutation=False keeps GGUF's q/k row order under rotate-half RoPE: the
        wrong pairing, kept only so a test can show it wrecks the perplexity."""
        import gguf

        path = Path(gguf_path) if gguf_path else bundled_gguf_path()
        if not path.is_file():
            raise ExportError(f"{path}: model file not found")
        try:
            reader = gguf.GGUFReader(str(path))
        except Exception as err:  # gguf raises ValueError, KeyError, struct errors... on bad files
            raise ExportError(f"{path}: not a readable GGUF file: {err}") from err
        self.gguf_path = path
        self.reader = reader
        self.config = cfg = ModelConfig.from_gguf(reader)
        tensors = GgufTensors(reader)
        q_rows = cfg.num_q_heads * cfg.head_dim
        kv_rows = cfg.num_kv_heads * cfg.head_dim
        self.embedding = tensors.get("token_embd.weight", (cfg.vocab_size, cfg.hidden))
        self.output_norm = tensors.get("output_norm.weight", (cfg.hidden,))
        self.layers = []
        for i in range(cfg.num_layers):
            wq = tensors.get(f"blk.{i}.attn_q.weight", (q_rows, cfg.hidden))
            wk = tensors.get(f"blk.{i}.attn_k.weight", (kv_rows, cfg.hidden))
            if undo_gguf_qk_permutation:
                wq = unpermute_rope_rows(wq, cfg.num_q_heads)
                wk = unpermute_rope_rows(wk, cfg.num_kv_heads)
            self.layers.append(
                LayerWeights(
                    attn_norm=tensors.get(f"blk.{i}.attn_norm.weight", (cfg.hidden,)),
                    # Stored transposed so every projection is one row-major x @ W product.
                    wq=np.ascontiguousarray(wq.T),
                    wk=np.ascontiguousarray(wk.T),
                    wv=np.ascontiguousarray(tensors.get(f"blk.{i}.attn_v.weight", (kv_rows, cfg.hidden)).T),
                    wo=np.ascontiguousarray(tensors.get(f"blk.{i}.attn_output.weight", (cfg.hidden, q_rows)).T),
                    ffn_norm=tensors.get(f"blk.{i}.ffn_norm.weight", (cfg.hidden,)),
                    w_gate=np.ascontiguousarray(tensors.get(f"blk.{i}.ffn_gate.weight", (cfg.ffn, cfg.hidden)).T),
                    w_up=np.ascontiguousarray(tensors.get(f"blk.{i}.ffn_up.weight", (cfg.ffn, cfg.hidden)).T),
                    w_down=np.ascontiguousarray(tensors.get(f"blk.{i}.ffn_down.weight", (cfg.hidden, cfg.ffn)).T),
                )
            )

    def _split_heads(self, x: np.ndarray, num_heads: int) -> np.ndarray:
        return np.ascontiguousarray(x.reshape(x.shape[0], num_heads, self.config.head_dim).transpose(1, 0, 2))

    def _attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, start: int) -> np.ndarray:
        """q [Hq, n, d] at positions start..start+n-1; k, v [Hkv, start+n, d]. Causal GQA:
        query head h reads KV head h // (Hq / Hkv). Returns [n, Hq * d]."""
        cfg = self.config
        group = cfg.num_q_heads // cfg.num_kv_heads
        n = q.shape[1]
        scale = np.float32(1.0 / np.sqrt(cfg.head_dim))
        out = np.empty((n, cfg.num_q_heads, cfg.head_dim), dtype=np.float32)
        for kv_head in range(cfg.num_kv_heads):
            heads = slice(kv_head * group, (kv_head + 1) * group)
            for lo in range(0, n, ATTENTION_QUERY_CHUNK):
                hi = min(n, lo + ATTENTION_QUERY_CHUNK)
                visible = start + hi  # keys 0..start+hi-1 can be seen by some query of the chunk
                scores = (q[heads, lo:hi] * scale) @ k[kv_head, :visible].T  # [group, hi-lo, visible]
                # Only the last hi-lo keys can lie in a query's future: mask that square block.
                future = np.triu(np.ones((hi - lo, hi - lo), dtype=bool), k=1)
                scores[:, :, start + lo : visible][:, future] = -np.inf
                probs = softmax_rows(scores)
                out[lo:hi, heads] = (probs @ v[kv_head, :visible]).transpose(1, 0, 2)
        return out.reshape(n, cfg.num_q_heads * cfg.head_dim)

    def forward(
        self,
        tokens: np.ndarray,
        cache: KVCache | None = None,
        record_layers: dict | None = None,
        probe_positions: np.ndarray | None = None,
        progress: Callable[[int], None] | None = None,
    ) -> tuple[np.ndarray, KVCache]:
        """Runs tokens (at positions cache.length onward) through the model.

        Returns (final hidden states [n, hidden] after the output norm, the new KVCache).
        record_layers, if given, maps layer index -> None and is filled with LayerRecord, with Q
        kept at probe_positions (absolute positions within this call's range)."""
        cfg = self.config
        start = cache.length if cache else 0
        n = len(tokens)
        positions = np.arange(start, start + n)
        cos, sin = rope_tables(positions, cfg.head_dim, cfg.rope_theta)
        x = self.embedding[np.asarray(tokens, dtype=np.int64)]
        new_cache = KVCache([], [])
        for i, layer in enumerate(self.layers):
            h = rms_norm(x, layer.attn_norm, cfg.rms_eps)
            q = apply_rope(self._split_heads(h @ layer.wq, cfg.num_q_heads), cos, sin)
            k = apply_rope(self._split_heads(h @ layer.wk, cfg.num_kv_heads), cos, sin)
            v = self._split_heads(h @ layer.wv, cfg.num_kv_heads)
            if cache:
                k = np.concatenate([cache.keys[i], k], axis=1)
                v = np.concatenate([cache.values[i], v], axis=1)
            new_cache.keys.append(k)
            new_cache.values.append(v)
            if record_layers is not None and i in record_layers:
                probes = np.asarray(probe_positions, dtype=np.int64) - start
                record_layers[i] = LayerRecord(k=k, v=v, q=np.ascontiguousarray(q[:, probes]))
            x = x + self._attention(q, k, v, start) @ layer.wo
            h = rms_norm(x, layer.ffn_norm, cfg.rms_eps)
            x = x + (silu(h @ layer.w_gate) * (h @ layer.w_up)) @ layer.w_down
            if progress:
                progress(i)
        return rms_norm(x, self.output_norm, cfg.rms_eps), new_cache

    def logits(self, hidden: np.ndarray) -> np.ndarray:
        """Tied embeddings: the output projection is the token embedding matrix."""
        return hidden @ self.embedding.T


def next_token_quality(model: SmolLM2, hidden: np.ndarray, tokens: np.ndarray) -> tuple[float, float]:
    """Perplexity and top-1 accuracy of predicting tokens[1:] from hidden[:-1], computed in row
    chunks so the full [L, vocab] logits matrix never exists."""
    targets = np.asarray(tokens[1:], dtype=np.int64)
    nll_sum = 0.0
    correct = 0
    for lo in range(0, len(targets), LOGITS_ROW_CHUNK):
        hi = min(len(targets), lo + LOGITS_ROW_CHUNK)
        logits = model.logits(hidden[lo:hi]).astype(np.float64)
        peak = logits.max(axis=1, keepdims=True)
        log_z = peak[:, 0] + np.log(np.exp(logits - peak).sum(axis=1))
        nll_sum += float(np.sum(log_z - logits[np.arange(hi - lo), targets[lo:hi]]))
        correct += int(np.sum(np.argmax(logits, axis=1) == targets[lo:hi]))
    n = len(targets)
    return float(np.exp(nll_sum / n)), correct / n


def decode_step_relative_error(model: SmolLM2, tokens: np.ndarray, prefill_last_hidden: np.ndarray) -> float:
    """Prefills tokens[:-1], runs tokens[-1] as one decode step on that KV cache, and returns
    max|decode logits - prefill logits| / max|prefill logits| for the last position."""
    _, cache = model.forward(tokens[:-1])
    decode_hidden, _ = model.forward(tokens[-1:], cache=cache)
    expected = model.logits(prefill_last_hidden[None, :])[0]
    got = model.logits(decode_hidden)[0]
    return float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))
