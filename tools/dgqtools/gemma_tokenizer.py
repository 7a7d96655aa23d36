"""Gemma 3's tokenizer rebuilt from its GGUF metadata with the `tokenizers` library.

Gemma's vocabulary is a SentencePiece BPE model (GGUF tokenizer.ggml.model "llama": tokens,
scores, token types, no merge list). SentencePiece BPE merges the adjacent pair whose merged piece
has the highest score; a `tokenizers` BPE reproduces that when its merges are every split of every
piece into two pieces of the vocabulary, ranked by the merged piece's score (what Hugging Face's
SentencePieceExtractor does to convert Gemma's tokenizer). Spaces become U+2581; no space prefix
(tokenizer.ggml.add_space_prefix is false); unknown characters fall back to <0xXX> byte tokens.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Sequence

CONTROL, USER_DEFINED, BYTE = 3, 4, 6  # llama.cpp token types


def spm_merges(tokens: Sequence[str], scores: Sequence[float], types: Sequence[int]) -> list[tuple[str, str]]:
    index = {t: i for i, t in enumerate(tokens)}
    ranked = []
    for piece, score, kind in zip(tokens, scores, types):
        if kind != 1 or len(piece) < 2:  # only normal pieces are merge results
            continue
        for cut in range(1, len(piece)):
            left, right = piece[:cut], piece[cut:]
            if left in index and right in index:
                ranked.append((-score, index[piece], left, right))
    ranked.sort()
    return [(left, right) for _, _, left, right in ranked]


def load_gemma_tokenizer(reader):
    from tokenizers import AddedToken, Tokenizer, decoders, models, normalizers

    def field(name):
        return reader.fields[name].contents()

    if field("tokenizer.ggml.model") != "llama":
        raise ValueError(f"tokenizer.ggml.model is {field('tokenizer.ggml.model')!r}, expected 'llama' (SentencePiece)")
    tokens = field("tokenizer.ggml.tokens")
    scores = field("tokenizer.ggml.scores")
    types = field("tokenizer.ggml.token_type")
    vocab = {t: i for i, t in enumerate(tokens)}
    tokenizer = Tokenizer(
        models.BPE(
            vocab=vocab, merges=spm_merges(tokens, scores, types), unk_token="<unk>", byte_fallback=True, fuse_unk=True
        )
    )
    tokenizer.normalizer = normalizers.Replace(" ", "\u2581")
    tokenizer.decoder = decoders.Sequence([decoders.Replace("\u2581", " "), decoders.ByteFallback(), decoders.Fuse()])
    tokenizer.add_special_tokens(
        [AddedToken(t, special=True, normalized=False) for t, kind in zip(tokens, types) if kind == CONTROL]
    )
    tokenizer.add_tokens(
        [AddedToken(t, special=False, normalized=False) for t, kind in zip(tokens, types) if kind == USER_DEFINED]
    )
    return tokenizer
