"""The identity of a GGUF's tokenizer (sim/model/include/dgq/sim/model/tokenizer_id.hpp gives the rule): written as
the attribute `tokenizer_id` into token files (make-eval-texts.py), passkey task files
(make-passkey.py) and exported model files (export-model.py), so that `dgq eval` accepts a token
file for any model with the same tokenizer, whether read from its GGUF or from a model file."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dgqtools.gguf_metadata import GGUFMetadata

FNV_OFFSET = 1469598103934665603
FNV_PRIME = 1099511628211
MASK = (1 << 64) - 1


def _strings(reader: GGUFMetadata, key: str) -> list[bytes]:
    field = reader.fields.get(key)
    if field is None:
        return []
    return [bytes(field.parts[i]) for i in field.data]


def tokenizer_id(reader: GGUFMetadata) -> str:
    """ "fnv1a64:" + 16 hex digits of FNV-1a 64 over tokenizer.ggml.model, tokenizer.ggml.pre,
    tokenizer.ggml.tokens and tokenizer.ggml.merges, each string as its length (uint64 LE) and
    its raw bytes; absent keys contribute nothing (a scalar absent: the empty string)."""
    h = FNV_OFFSET
    strings = (
        (_strings(reader, "tokenizer.ggml.model")[:1] or [b""])
        + (_strings(reader, "tokenizer.ggml.pre")[:1] or [b""])
        + _strings(reader, "tokenizer.ggml.tokens")
        + _strings(reader, "tokenizer.ggml.merges")
    )
    for s in strings:
        for byte in len(s).to_bytes(8, "little") + s:
            h = ((h ^ byte) * FNV_PRIME) & MASK
    return f"fnv1a64:{h:016x}"
