"""The token file of `dgq eval` (format "dgq-tokens" v1, docs/eval.md), and its one writer.

The attributes are written in one order and with one set of types (int64 version and seed,
float64 noise rate, variable-length UTF-8 strings), so that two files of the same tokens are the
same bytes whichever tool wrote them.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import numpy.typing as npt

FORMAT = "dgq-tokens"
VERSION = 1


def write_token_file(
    path: Path,
    tokens: npt.ArrayLike,
    model: str,
    kind: str,
    noise_rate: float = 0.0,
    *,
    seed: int | None = None,
    tokenizer_id: str = "",
    noise_mask: npt.ArrayLike | None = None,
    text: str | None = None,
) -> None:
    """Writes the token ids of `model`'s tokenizer as a token file. kind: what the text is
    ("prose", "code", ...); tokenizer_id: the tokenizer's identity (dgqtools.tokenizer_id), matched
    by `dgq eval` against the model's (empty: none recorded, the model is matched by name);
    seed, noise_mask and text: the generator's seed, the inserted-noise mask (one byte per token)
    and the text, each written only when given. The file appears whole or not at all: it is
    written as PATH.partial and renamed."""
    import h5py  # imported here so that the package imports without h5py

    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        with h5py.File(partial, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["version"] = np.int64(VERSION)
            f.attrs["model"] = model
            if tokenizer_id:
                f.attrs["tokenizer_id"] = tokenizer_id
            f.attrs["kind"] = kind
            f.attrs["noise_rate"] = np.float64(noise_rate)
            if seed is not None:
                f.attrs["seed"] = np.int64(seed)
            f.create_dataset("tokens", data=np.asarray(tokens, dtype=np.int32))
            if noise_mask is not None:
                f.create_dataset("noise_mask", data=np.asarray(noise_mask, dtype=np.uint8))
            if text is not None:
                f.create_dataset("text", data=text, dtype=h5py.string_dtype("utf-8"))
        os.replace(partial, path)
    finally:
        if partial.exists():
            partial.unlink()
