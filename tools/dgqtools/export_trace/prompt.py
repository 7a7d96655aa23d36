"""The prompt of a trace: the GGUF's tokenizer, noise characters inserted into the text, the tokens
with their noise mask, and the probe positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

from dgqtools.export_trace.model_file import ExportError

if TYPE_CHECKING:
    from tokenizers import Tokenizer

# Inserted noise characters: printable ASCII without whitespace, so the noise never creates or
# merges words by itself and token offsets stay unambiguous.
NOISE_ALPHABET = "".join(chr(c) for c in range(0x21, 0x7F))

CONTROL_TOKEN_TYPE = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL


def load_tokenizer(reader):
    """GPT-2 style byte-level BPE from the GGUF metadata. SmolLM's pre-tokenizer (llama.cpp
    'smollm') splits every digit on its own, then applies the GPT-2 regex."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    def field(name):
        return reader.fields[name].contents()

    if field("tokenizer.ggml.model") != "gpt2":
        raise ExportError(f"tokenizer.ggml.model is {field('tokenizer.ggml.model')!r}, expected 'gpt2'")
    tokens = field("tokenizer.ggml.tokens")
    token_types = field("tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ")) for m in field("tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([t for t, kind in zip(tokens, token_types) if kind == CONTROL_TOKEN_TYPE])
    return tokenizer


def inject_noise(
    text: str, rate: float, rng: np.random.Generator, alphabet: str = NOISE_ALPHABET
) -> tuple[str, np.ndarray]:
    """Inserts a random character from alphabet before each character of text with probability
    rate. Returns (noisy text, bool array over the noisy text: True where a character was inserted)."""
    if not 0.0 <= rate <= 1.0:
        raise ExportError(f"--noise-rate {rate}: must be in [0, 1]")
    insert_before = rng.random(len(text)) < rate
    picks = rng.integers(0, len(alphabet), size=int(insert_before.sum()))
    pieces, inserted = [], []
    next_pick = 0
    for ch, insert in zip(text, insert_before):
        if insert:
            pieces.append(alphabet[picks[next_pick]])
            inserted.append(True)
            next_pick += 1
        pieces.append(ch)
        inserted.append(False)
    return "".join(pieces), np.array(inserted, dtype=bool)


@dataclass
class Prompt:
    text: str  # exactly the text the tokens spell
    tokens: np.ndarray  # int32 [L]
    noise_mask: np.ndarray  # uint8 [L], 1 = the token contains an inserted character


def tokenize_prompt(tokenizer: Tokenizer, text: str, inserted: np.ndarray, max_tokens: int) -> Prompt:
    """Tokenizes text, keeps at most max_tokens tokens, marks tokens that cover an inserted
    character. The kept prefix must round-trip (decode == text prefix); a cut inside a multi-byte
    character is avoided by dropping the partial tokens at the end."""
    encoding = tokenizer.encode(text, add_special_tokens=False)
    ids = list(encoding.ids)
    offsets = list(encoding.offsets)
    n = min(len(ids), max_tokens)
    while n > 1:
        end = offsets[n - 1][1]
        if tokenizer.decode(ids[:n]) == text[:end]:
            break
        n -= 1
    if n < 2:
        raise ExportError("the prompt must tokenize to at least 2 tokens that round-trip")
    kept_text = text[: offsets[n - 1][1]]
    inserted_prefix = np.concatenate([[0], np.cumsum(inserted, dtype=np.int64)])
    mask = np.array([inserted_prefix[e] - inserted_prefix[s] > 0 for s, e in offsets[:n]], dtype=np.uint8)
    return Prompt(text=kept_text, tokens=np.array(ids[:n], dtype=np.int32), noise_mask=mask)


def probe_positions(length: int, stride: int, last: int) -> np.ndarray:
    """Every stride-th position (stride-1, 2*stride-1, ...) plus the last `last` positions."""
    if stride < 1:
        raise ExportError(f"--probe-stride {stride}: must be >= 1")
    if last < 0:
        raise ExportError(f"--probe-last {last}: must be >= 0")
    strided = np.arange(stride - 1, length, stride)
    tail = np.arange(max(0, length - last), length)
    positions = np.union1d(strided, tail).astype(np.int32)
    if positions.size == 0:
        raise ExportError(f"no probe position: {length} tokens, stride {stride}, last {last}")
    return positions
