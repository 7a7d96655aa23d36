"""Noise injection and its token-level mask (/noise_mask)."""

import numpy as np
import pytest

from conftest import ENGLISH_PROSE
from dgqtools import export_trace

MARKER = "~"  # absent from ENGLISH_PROSE, so every '~' in the noisy text was inserted


def rng(seed=11):
    return np.random.Generator(np.random.PCG64(seed))


def test_rate_zero_inserts_nothing():
    noisy, inserted = export_trace.inject_noise(ENGLISH_PROSE, 0.0, rng())
    assert noisy == ENGLISH_PROSE
    assert not inserted.any()


def test_rate_outside_zero_one_is_rejected():
    with pytest.raises(export_trace.ExportError, match="noise-rate"):
        export_trace.inject_noise(ENGLISH_PROSE, 1.5, rng())


def test_removing_inserted_characters_gives_back_the_text():
    noisy, inserted = export_trace.inject_noise(ENGLISH_PROSE, 0.1, rng())
    kept = "".join(ch for ch, was_inserted in zip(noisy, inserted) if not was_inserted)
    assert kept == ENGLISH_PROSE
    assert len(noisy) == len(inserted)


def test_insertion_count_follows_the_rate():
    text = ENGLISH_PROSE * 10
    _, inserted = export_trace.inject_noise(text, 0.1, rng())
    fraction = inserted.sum() / len(text)
    assert 0.085 < fraction < 0.115  # 8000+ Bernoulli draws: 5 standard deviations is ~0.017


def test_inserted_characters_are_printable_non_space_ascii():
    noisy, inserted = export_trace.inject_noise(ENGLISH_PROSE, 0.3, rng())
    chars = {ch for ch, was_inserted in zip(noisy, inserted) if was_inserted}
    assert chars and all(0x21 <= ord(ch) <= 0x7E for ch in chars)


def test_same_seed_same_noise_other_seed_other_noise():
    a = export_trace.inject_noise(ENGLISH_PROSE, 0.1, rng(5))[0]
    b = export_trace.inject_noise(ENGLISH_PROSE, 0.1, rng(5))[0]
    c = export_trace.inject_noise(ENGLISH_PROSE, 0.1, rng(6))[0]
    assert a == b
    assert a != c


def test_noise_mask_marks_exactly_the_tokens_that_contain_an_inserted_character(tokenizer):
    # An independent oracle: with a one-character alphabet absent from the text, a token is noise
    # iff its own decoded text contains that character.
    assert MARKER not in ENGLISH_PROSE
    noisy, inserted = export_trace.inject_noise(ENGLISH_PROSE, 0.1, rng(), alphabet=MARKER)
    prompt = export_trace.tokenize_prompt(tokenizer, noisy, inserted, max_tokens=8192)
    expected = np.array([MARKER in tokenizer.decode([t]) for t in prompt.tokens], dtype=np.uint8)
    assert prompt.noise_mask.sum() > 10
    np.testing.assert_array_equal(prompt.noise_mask, expected)


def test_clean_prompt_has_an_all_zero_mask(tokenizer):
    prompt = export_trace.tokenize_prompt(
        tokenizer, ENGLISH_PROSE, np.zeros(len(ENGLISH_PROSE), dtype=bool), max_tokens=8192
    )
    assert prompt.noise_mask.dtype == np.uint8
    assert len(prompt.noise_mask) == len(prompt.tokens)
    assert not prompt.noise_mask.any()


def test_truncated_prompt_text_is_exactly_what_the_kept_tokens_spell(tokenizer):
    # The cut lands inside multi-byte characters for some lengths; the kept text must still match.
    text = "床前明月光，疑是地上霜。举头望明月，低头思故乡。" * 4
    for max_tokens in range(5, 40):
        prompt = export_trace.tokenize_prompt(tokenizer, text, np.zeros(len(text), dtype=bool), max_tokens)
        assert len(prompt.tokens) <= max_tokens
        assert tokenizer.decode(prompt.tokens.tolist()) == prompt.text
        assert text.startswith(prompt.text)
