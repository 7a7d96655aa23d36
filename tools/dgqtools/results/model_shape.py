"""Model-shape arithmetic for the claims ledger and the memory table: FP16 sizes by hand, DGQ's
stored bytes from the bindings (the registry's planned_bytes, the same figure `dgq memory` prints).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ModelShape:
    name: str
    layers: int
    kv_heads: int
    head_dim: int


LLAMA3_8B = ModelShape("Llama-3-8B / 3.1-8B", 32, 8, 128)
LLAMA3_70B = ModelShape("Llama-3-70B", 80, 8, 128)
CONTEXTS = (8192, 32768, 131072)


def fp16_kv_bytes(shape: ModelShape, tokens: int) -> int:
    """FP16 KV cache: K and V, every layer and KV head, head_dim values of 2 bytes per token."""
    return 2 * tokens * shape.layers * shape.kv_heads * shape.head_dim * 2


def segment_id_bits(shape: ModelShape, tokens: int, tensors: int = 2) -> int:
    """The article's 1-bit segment id per token, per KV head, per layer, per tensor (K, V)."""
    return tokens * shape.kv_heads * shape.layers * tensors


def tokens_for_fp16_bytes(shape: ModelShape, nbytes: float) -> float:
    """How many tokens an FP16 KV cache of this shape holds in nbytes (to place 2.17 GB)."""
    return nbytes / fp16_kv_bytes(shape, 1)


def int8_ratio_with_overhead(elements: int, overhead_bytes: int) -> float:
    """FP16 -> INT8 compression when `overhead_bytes` of ranges/markers come with `elements`
    one-byte codes: 2x at best, never more."""
    return (2 * elements) / (elements + overhead_bytes)


def dgq_kv_bytes(shape: ModelShape, tokens: int, spec: str = "dgq") -> int:
    """A scheme's stored bytes for a whole FP16 KV cache: every layer and KV head, K and V, each
    tensor as the registry plans it (the bindings' Scheme.planned_bytes: exact, or the bound of a
    family whose data decides its size, DGQ's at its rule-4 budget of segments), the figure
    `dgq memory` prints."""
    import dgq  # the compiled bindings: only this function needs a build

    scheme = dgq.Scheme(spec)
    per_head = sum(scheme.planned_bytes(tokens, shape.head_dim, "f16", role) for role in ("k", "v"))
    return int(shape.layers * shape.kv_heads * per_head)


def dgq_segment_budget(tokens: int, max_groups: int = 5, win: int = 16) -> int:
    """The most segments a head can get (docs/spec.md, rule 4)."""
    if tokens <= 0:
        return 0
    if tokens < 2 * win:
        return 1
    if tokens < 2048:
        rule = 2
    elif tokens < 16384:
        rule = 3
    else:
        rule = (tokens // 1024).bit_length() - 1 + 2  # floor(log2(L / 1024)) + 2
    return min(rule, max_groups)
