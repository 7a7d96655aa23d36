"""A Hugging Face transformers cache on dgq's schemes (docs/python.md, "Hugging Face").

    >>> import dgq.hf
    >>> cache = dgq.hf.Cache("q8_0/q4_0")                  # keys q8_0, values q4_0, causal
    >>> out = model(input_ids, cache=cache)                # or model.generate(..., cache=cache)
    >>> cache.bits_per_element()

Every layer x batch row x KV head x role is one dgq.CausalCache: the C++ object `dgq eval --cache
causal` appends to, so the keys and values attention reads are the ones dgq's runner reads when it
appends the same rows (docs/spec.md, "Causal caches"). Feeding the tokens one at a time is
`dgq eval --cache causal` (its one pass equals its token-by-token decoder); one forward over a
chunk appends the chunk as one micro-batch (`--ubatch N`). mode="prefill" stores the raw rows and
hands attention decompress(compress(all rows so far)), re-quantized at every forward: what
`dgq eval --cache prefill` computes for a chunk given in one forward, a cache that sees the whole
chunk first (no decoder writes one).

raw_dtype ("f16", the default; "bf16"; "f32") is the dtype in which a role whose scheme keeps rows
raw (KIVI's residual, DGQ's open segment, KVarN's sink and open tile, sink=N) holds them, in both
modes: rounded on append, coded from there and counted at its size (docs/spec.md rule C9), as
`dgq eval --raw-dtype`. The per-token formats code the rows in the model's dtype.

Beam search, assisted decoding and crop work in both modes: each layer keeps every row the model
gave it and rebuilds a cache from the rows kept (a causal cache's state does not depend on how
its rows were split into appends), so a crop or a batch reshuffle leaves the cache that saw only
the tokens and rows kept. The rows kept cost a DynamicCache's memory and are not in held_bytes.

The spec is a registry spec ("q8_0", "dgq2:bits=3", ...) or a pair "K_SPEC/V_SPEC"; "fp32" (or
"f32") as a side keeps that role exactly as the model computed it, as `dgq eval`'s fp32 cache.
Keys are cached after RoPE, as transformers, llama.cpp and dgq's runner cache them.

Needs torch and transformers (`tools/setup-python.sh --hf`); `import dgq` does not import them.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from transformers.cache_utils import Cache as _HfCache
from transformers.cache_utils import DynamicLayer

from . import CausalCache, ParameterError, Scheme

__all__ = ["Cache", "Layer"]

MODES = ("causal", "prefill")
EXACT_SPECS = ("fp32", "f32")

# torch dtype -> dgq's name of it (bf16 is handed over as its bits, _rows).
_DTYPES = {torch.float32: "f32", torch.float16: "f16", torch.bfloat16: "bf16"}
_TORCH_DTYPES = {name: dtype for dtype, name in _DTYPES.items()}
RAW_DTYPES = {"f16": "f16", "fp16": "f16", "bf16": "bf16", "f32": "f32", "fp32": "f32"}


def raw_dtype_name(raw_dtype: str) -> str:
    """dgq's name of a raw dtype ("f16", "bf16", "f32"); ParameterError for anything else."""
    if raw_dtype not in RAW_DTYPES:
        raise ParameterError(f"dgq.hf.Cache: raw_dtype must be one of fp16, bf16, fp32, got {raw_dtype!r}")
    return RAW_DTYPES[raw_dtype]


def split_spec(spec: str) -> tuple[str, str]:
    """(K spec, V spec) of "K/V", or (spec, spec); each side checked by the registry (its
    ParameterError says what is known) unless it names the exact cache."""
    if not isinstance(spec, str) or not spec:
        raise ParameterError(f"dgq.hf.Cache: spec must be a non-empty string, got {spec!r}")
    sides = spec.split("/")
    if len(sides) > 2 or not all(sides):
        raise ParameterError(f"dgq.hf.Cache: spec {spec!r} must be one scheme or 'K_SPEC/V_SPEC'")
    k, v = (sides[0], sides[0]) if len(sides) == 1 else sides
    k_spec: str = k if k in EXACT_SPECS else Scheme(k).spec
    v_spec: str = v if v in EXACT_SPECS else Scheme(v).spec
    return k_spec, v_spec


def _rows(x: torch.Tensor) -> np.ndarray:
    """One head's rows (tokens x head_dim) as the C-contiguous numpy array dgq reads."""
    x = x.detach().to("cpu").contiguous()
    rows: np.ndarray = x.view(torch.int16).numpy().view(np.uint16) if x.dtype == torch.bfloat16 else x.numpy()
    return rows


class _Role:
    """One role (keys or values) of one layer: a dgq cache per batch row x KV head, or the exact
    rows. Returns what attention reads, [batch, heads, tokens, head_dim] in the model's dtype.

    Every row appended is kept as the model gave it (self.rows), in every mode: the exact side and
    prefill mode read from it, and causal mode rebuilds a cache from it when generate crops or
    reorders the batch. A causal cache's state after T rows does not depend on how the rows were
    batched into appends (tests/python/test_causal_cache_bindings.py checks every family), so a
    cache rebuilt by appending the kept rows at once is the cache that saw them one by one."""

    def __init__(self, spec: str, role: str, mode: str, raw_dtype: str = "f16"):
        self.spec, self.role, self.mode, self.raw_dtype = spec, role, mode, raw_dtype
        self.exact = spec in EXACT_SPECS
        self.caches: list[list[CausalCache]] | None = None  # causal mode: [batch row][KV head]
        self.rows: torch.Tensor | None = None  # every row appended, [batch, heads, tokens, head_dim]
        self.scheme = None if self.exact or mode == "causal" else Scheme(spec)
        # Prefill: rule C9's input, the rows in the raw dtype when the scheme keeps rows raw.
        self.keeps_raw = self.scheme is not None and self.scheme.keeps_raw_rows(role)
        self.held = 0  # prefill mode: bytes of the last compression

    @property
    def is_causal(self) -> bool:
        return not self.exact and self.mode == "causal"

    def update(self, x: torch.Tensor) -> torch.Tensor:
        if x.dtype not in _DTYPES:
            raise ParameterError(
                f"dgq.hf.Cache: {self.role} states of dtype {x.dtype}; dgq takes float32, float16, bfloat16"
            )
        if self.is_causal:
            self._append_causal(x)
        self.rows = x if self.rows is None else torch.cat([self.rows, x], dim=-2)
        return self.read()

    def read(self) -> torch.Tensor:
        """What attention reads now: the rows (exact), their compression (prefill), the caches' reads."""
        assert self.rows is not None, "read after the first update"
        if self.exact:
            return self.rows
        return self._prefill() if self.mode == "prefill" else self._read_causal()

    def keep_tokens(self, tokens: int) -> None:
        """Drop every token from `tokens` on (crop): the causal caches rebuilt from the rows kept."""
        assert self.rows is not None, "crop after the first update"
        self.rows = self.rows[..., :tokens, :]
        if self.is_causal:
            batch, heads = self.rows.shape[:2]
            self.caches = [[self._rebuilt(b, h) for h in range(heads)] for b in range(batch)]

    def select_batch_rows(self, sources: list[int]) -> None:
        """Make row i of the batch the old row sources[i] (beam search, repeat, select). A causal
        cache is moved to its first new row; a repeated source gets a cache rebuilt from its rows,
        as a CausalCache cannot be copied and two rows must not share one."""
        assert self.rows is not None, "a batch reshuffle after the first update"
        self.rows = self.rows[sources]
        if self.caches is None:
            return
        moved: set[int] = set()
        caches = []
        for new, old in enumerate(sources):
            if old in moved:
                caches.append([self._rebuilt(new, h) for h in range(self.rows.shape[1])])
            else:
                caches.append(self.caches[old])
                moved.add(old)
        self.caches = caches

    def _new_cache(self, head_dim: int, dtype: torch.dtype) -> CausalCache:
        return CausalCache(self.spec, self.role, head_dim, _DTYPES[dtype], self.raw_dtype)

    def _rebuilt(self, b: int, h: int) -> CausalCache:
        """A fresh cache holding self.rows[b, h], appended at once."""
        assert self.rows is not None
        cache = self._new_cache(self.rows.shape[-1], self.rows.dtype)
        if self.rows.shape[-2]:
            cache.append(_rows(self.rows[b, h]))
        return cache

    def _append_causal(self, x: torch.Tensor) -> None:
        batch, heads, _, head_dim = x.shape
        if self.caches is None:
            self.caches = [[self._new_cache(head_dim, x.dtype) for _ in range(heads)] for _ in range(batch)]
        if len(self.caches) != batch or len(self.caches[0]) != heads:
            raise ParameterError(
                f"dgq.hf.Cache: {self.role} states of {batch} rows x {heads} heads, the cache holds "
                f"{len(self.caches)} x {len(self.caches[0])}"
            )
        for b in range(batch):
            for h in range(heads):
                self.caches[b][h].append(_rows(x[b, h]))

    def _read_causal(self) -> torch.Tensor:
        rows, caches = self.rows, self.caches
        assert rows is not None and caches is not None, "causal mode holds the rows and the caches"
        out = np.empty(tuple(rows.shape), np.float32)
        for b, row in enumerate(caches):
            for h, cache in enumerate(row):
                cache.read(out=out[b, h])
        # The final values decode in the row dtype and the raw tail is held in it: exact back when
        # the model's dtype holds the row dtype (f16 in f32), rounded as the model computes otherwise.
        return torch.from_numpy(out).to(device=rows.device, dtype=rows.dtype)

    def _prefill(self) -> torch.Tensor:
        raw, scheme = self.rows, self.scheme
        assert raw is not None and scheme is not None, "prefill mode holds the rows and the scheme"
        batch, heads, tokens, head_dim = raw.shape
        self.held = 0
        if tokens == 0:  # cropped to nothing: nothing to compress
            return raw.clone()
        rows = raw.to(_TORCH_DTYPES[self.raw_dtype]) if self.keeps_raw else raw  # rule C9 (round to nearest even)
        name = _DTYPES[rows.dtype]
        out = np.empty((batch, heads, tokens, head_dim), np.float32)
        for b in range(batch):
            for h in range(heads):
                c = scheme.compress(_rows(rows[b, h]), self.role, name)
                c.decompress("f32", out=out[b, h])
                self.held += c.bytes
        return torch.from_numpy(out).to(device=raw.device, dtype=raw.dtype)

    def held_bytes(self) -> int:
        """What the cache's format holds; the rows kept to rebuild a causal cache are not counted."""
        if self.exact:
            held: int = 0 if self.rows is None else self.rows.numel() * self.rows.element_size()
            return held
        if self.mode == "prefill":
            return self.held
        return sum(c.held_bytes for row in (self.caches or []) for c in row)

    def elements(self) -> int:
        elements: int = 0 if self.rows is None else self.rows.numel()
        return elements


class Layer(DynamicLayer):
    """One model layer's cache (a transformers cache layer): keys and values each through dgq.
    crop, reorder_cache and the batch reshuffles give the cache that saw only the tokens kept, in
    the rows kept: rebuilt from the rows the layer keeps (see _Role)."""

    def __init__(self, k_spec: str, v_spec: str, mode: str, raw_dtype: str = "f16"):
        super().__init__()
        self.k, self.v = _Role(k_spec, "k", mode, raw_dtype), _Role(v_spec, "v", mode, raw_dtype)

    def update(
        self, key_states: torch.Tensor, value_states: torch.Tensor, *args: Any, **kwargs: Any
    ) -> tuple[torch.Tensor, torch.Tensor]:
        if not self.is_initialized:
            self.lazy_initialization(key_states, value_states)
        # Every token held, as DynamicLayer's keys are: its get_seq_length reads the length here.
        self.keys = self.k.update(key_states)
        self.values = self.v.update(value_states)
        return self.keys, self.values

    def reset(self) -> None:
        mode, raw_dtype = self.k.mode, self.k.raw_dtype
        self.k, self.v = _Role(self.k.spec, "k", mode, raw_dtype), _Role(self.v.spec, "v", mode, raw_dtype)
        super().reset()

    def crop(self, tokens_to_remove: int) -> None:
        """Remove the last -tokens_to_remove tokens (transformers 5's DynamicLayer.crop: a
        positive count is refused, 0 keeps everything, more than held leaves nothing)."""
        if tokens_to_remove > 0:
            raise ValueError(
                f"Calling `crop` with a positive value (`{tokens_to_remove}`) is not supported. "
                "Please use a negative integer to remove that number of tokens from the cache instead."
            )
        if tokens_to_remove == 0 or not self.is_initialized:
            return
        kept = max(self.get_seq_length() + tokens_to_remove, 0)
        self.k.keep_tokens(kept)
        self.v.keep_tokens(kept)
        self._read_again()

    def reorder_cache(self, beam_idx: torch.Tensor) -> None:
        self._select_batch_rows(beam_idx)

    def batch_repeat_interleave(self, repeats: int) -> None:
        if self.is_initialized:
            self._select_batch_rows(torch.arange(self.keys.shape[0]).repeat_interleave(repeats))

    def batch_select_indices(self, indices: torch.Tensor) -> None:
        self._select_batch_rows(indices)

    def _select_batch_rows(self, indices: torch.Tensor) -> None:
        # Unlike DynamicLayer, an initialized layer holding no token is reshuffled too: its caches
        # are per batch row, and the next update must find the batch it brings.
        if not self.is_initialized:
            return
        sources = torch.arange(self.keys.shape[0])[torch.as_tensor(indices).to("cpu")].tolist()
        self.k.select_batch_rows(sources)
        self.v.select_batch_rows(sources)
        self._read_again()

    def _read_again(self) -> None:
        self.keys, self.values = self.k.read(), self.v.read()


class Cache(_HfCache):
    """A transformers cache whose keys and values go through dgq's schemes: pass it as `cache`
    to a decoder's forward or to generate (transformers 5's name; `past_key_values` still works,
    deprecated). spec: "q8_0", "dgq2:bits=3",
    "K_SPEC/V_SPEC", with "fp32" for an exact side; mode: "causal" (written as a decoder writes
    it, the default) or "prefill" (re-quantized whole at every forward); raw_dtype: the dtype of
    the rows a scheme keeps raw ("f16", the default, "bf16" or "f32"; docs/spec.md rule C9). Layers
    are made as the model reaches them."""

    def __init__(self, spec: str = "fp16", mode: str = "causal", raw_dtype: str = "f16"):
        if mode not in MODES:
            raise ParameterError(f"dgq.hf.Cache: mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.k_spec, self.v_spec = split_spec(spec)
        self.mode = mode
        self.raw_dtype = raw_dtype_name(raw_dtype)
        if mode == "causal":  # refuse a scheme without a causal rule now, not at the first forward
            for side, role in ((self.k_spec, "k"), (self.v_spec, "v")):
                if side not in EXACT_SPECS:
                    CausalCache(side, role, 1)
        super().__init__(layer_class_to_replicate=lambda: Layer(self.k_spec, self.v_spec, self.mode, self.raw_dtype))

    @property
    def spec(self) -> str:
        return self.k_spec if self.k_spec == self.v_spec else f"{self.k_spec}/{self.v_spec}"

    def held_bytes(self) -> int:
        """Bytes the cache holds now, every layer, row, head and role: the final values as stored
        plus the raw rows in raw_dtype (causal), the last compression (prefill, raw rows in
        raw_dtype too), the rows themselves in the model's dtype (an exact side). Not the rows a
        layer keeps beside a causal cache to rebuild it (crop, beam search)."""
        return sum(layer.k.held_bytes() + layer.v.held_bytes() for layer in self.layers)

    def bits_per_element(self) -> float:
        """8 x held_bytes() over the elements held (keys and values); NaN when empty."""
        elements = sum(layer.k.elements() + layer.v.elements() for layer in self.layers)
        return 8.0 * self.held_bytes() / elements if elements else float("nan")

    def __repr__(self) -> str:
        return (
            f"dgq.hf.Cache({self.spec!r}, mode={self.mode!r}, raw_dtype={self.raw_dtype!r}, layers={len(self.layers)}, "
            f"tokens={self.get_seq_length()})"
        )
