"""dgq's KV-cache compression schemes from Python, computed by the same C++ library as the `dgq`
CLI (bit for bit: the same bytes for the same input and spec). docs/python.md is the API page.

    >>> import numpy as np, dgq
    >>> c = dgq.compress(np.ones((4, 64), np.float16), "q8_0")
    >>> c.bytes, c.bits_per_element, list(c.parts)
    (272, 8.5, ['blocks'])

Arrays are 2-D, tokens x channels (one KV head), in float16, float32, or bf16 given as its bits:
a uint16 array with dtype="bf16" (numpy has no bf16 type), or an ml_dtypes bfloat16 array
(viewed as its bits). C-contiguous arrays are read in place; any other layout is copied once.
Errors are the C++ library's, with its messages: dgq.ParameterError (a spec or argument) and
dgq.InputError (the data: NaN/Inf, shape, dtype), both dgq.Error, a ValueError.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from ._dgq import CausalCache, Compressed, Error, InputError, ParameterError, Scheme, scheme_help
from ._dgq import decode_attention as _decode_attention
from ._dgq import families as _families
from ._dgq import modifiers as _modifiers
from .results import Group, Results, open_results

__all__ = [
    "CausalCache",
    "Compressed",
    "Error",
    "Group",
    "InputError",
    "ParameterError",
    "Results",
    "Scheme",
    "compress",
    "decode_attention",
    "modifiers",
    "open_results",
    "scheme_help",
    "schemes",
]


def schemes() -> list[dict[str, Any]]:
    """Every registered family, in the CLI's listing order (`dgq schemes`): a dict per family
    with name, summary, params (each: key, kind, default, min and max or range, help),
    stored_size ('exact' or 'at_most') and fast_cpu (whether cpu/ has a fast path)."""
    families: list[dict[str, Any]] = _families()
    return families


def modifiers() -> list[dict[str, Any]]:
    """The keys every family accepts around its scheme (rot=hadamard, sink=...): key, default,
    values, help."""
    keys: list[dict[str, Any]] = _modifiers()
    return keys


def _as_matrix(array: ArrayLike) -> np.ndarray:
    a = np.asarray(array)
    # Only a 2-D array is made contiguous: any other rank is refused with dgq's message.
    return np.ascontiguousarray(a) if a.ndim == 2 else a


def compress(array: ArrayLike, spec: str, role: str = "k", dtype: str | None = None) -> Compressed:
    """Compress one tokens x channels array with the scheme of `spec` ("q8_0",
    "dgq2:bits=3", ...; `dgq.schemes()` lists them) as keys (role "k") or values ("v").
    dtype: None (the array's: float16 or float32), or "f16", "f32", "bf16" (a uint16 array of bf16
    bits). Returns a dgq.Compressed: .bytes, .bits_per_element, .parts, .scheme, .decompress().
    To compress many arrays with one spec, make the scheme once: dgq.Scheme(spec).compress(...)."""
    return Scheme(spec).compress(_as_matrix(array), role, dtype)


def decode_attention(
    q: ArrayLike,
    keys: Iterable[Compressed],
    values: Iterable[Compressed],
    scale: float | None = None,
    threads: int = 1,
) -> np.ndarray:
    """One decode step of softmax attention read straight from compressed heads, by the CPU
    kernel that `bench/ggml/run.sh --decode` times (docs/benchmarks.md, "Decode attention"): no
    decompressed copy. q: query_heads x head_dim (converted to float32); keys, values: lists of
    dgq.Compressed, one per KV head, compressed with role "k" and "v" by a family the kernel reads
    (q8_0, q4_0, iq4_nl, dgq, dgq2, kivi-2/4, turboquant, vLLM's Lloyd-Max presets); query head h
    reads KV head h // (query_heads // kv_heads). scale: 1/sqrt(head_dim) by default. Returns
    query_heads x head_dim float32, within rounding of attention on the decompressed heads."""
    out: np.ndarray = _decode_attention(
        np.ascontiguousarray(q, dtype=np.float32), list(keys), list(values), scale, threads
    )
    return out
