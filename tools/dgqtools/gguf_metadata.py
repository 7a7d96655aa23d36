"""What the exporter and the tokenizer identity read of a GGUF: its metadata fields and tensor
list, as gguf.GGUFReader holds them (the tests hand in a reader with keys or tensors added)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol


class GGUFMetadata(Protocol):
    @property
    def fields(self) -> Mapping[str, Any]: ...

    @property
    def tensors(self) -> Sequence[Any]: ...
