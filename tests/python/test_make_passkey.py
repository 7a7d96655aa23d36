"""tools/make-passkey.py (docs/eval.md, "The passkey task"): exact prompt lengths, needle placement
by depth, the answer as the question's continuation, seeded keys, the file layout. A fake
character-level tokenizer stands in for the model's (no GGUF, no network).
By hand: tests/python/run_pytest.sh -k passkey
"""

import h5py
import numpy as np
import pytest

from dgqtools import make_passkey as mp
from dgqtools.export_trace import ExportError


def char_encode(text):
    """One token per character: every piece tokenizes the same alone or joined."""
    return [ord(c) for c in text]


HAYSTACK = [1000 + i for i in range(5000)]  # distinct ids, so every slice is recognisable


@pytest.mark.parametrize("length", [400, 512, 1023])
@pytest.mark.parametrize("depth", [0.0, 25.0, 50.0, 75.0, 100.0, 33.3])
def test_a_prompt_has_its_exact_length_and_the_needle_at_its_depth(length, depth):
    p = mp.build_prompt(char_encode, HAYSTACK, length, depth, 123456)
    intro, question = char_encode(mp.INTRO), char_encode(mp.QUESTION + " ")  # the space joins the question
    needle = char_encode(mp.NEEDLE.format(key=123456))
    fill = length - len(intro) - len(needle) - len(question)
    cut = int(np.floor(depth / 100 * fill + 0.5))
    assert len(p.tokens) == p.length == length
    assert p.needle_position == len(intro) + cut
    assert p.tokens[: len(intro)] == intro and p.tokens[-len(question) :] == question
    assert p.tokens[p.needle_position : p.needle_position + len(needle)] == needle
    # The haystack, cut to fill, in order around the needle.
    assert p.tokens[len(intro) : p.needle_position] == HAYSTACK[:cut]
    assert p.tokens[p.needle_position + len(needle) : -len(question)] == HAYSTACK[cut:fill]


def test_depth_0_and_100_put_the_needle_after_the_intro_and_before_the_question():
    intro, question = char_encode(mp.INTRO), char_encode(mp.QUESTION + " ")  # the space joins the question
    needle = char_encode(mp.NEEDLE.format(key=55555))
    first = mp.build_prompt(char_encode, HAYSTACK, 600, 0, 55555)
    last = mp.build_prompt(char_encode, HAYSTACK, 600, 100, 55555)
    assert first.needle_position == len(intro)
    assert last.needle_position + len(needle) == 600 - len(question)


def test_the_answer_is_the_keys_digits_and_the_space_before_them_ends_the_prompt():
    p = mp.build_prompt(char_encode, HAYSTACK, 500, 50, 9876543)
    assert p.answer == char_encode("9876543") and p.key == 9876543


def test_an_answer_that_merges_with_the_question_is_refused():
    def merging(text):  # "is" and " 1" become one token when they meet, as a BPE merge may
        ids, i = [], 0
        while i < len(text):
            if text.startswith("s 1", i):
                ids.extend([7, ord("1")])
                i += 3
            else:
                ids.append(ord(text[i]))
                i += 1
        return ids

    with pytest.raises(ExportError, match="not a prefix of question"):
        mp.answer_tokens(merging, 12345)
    assert mp.answer_tokens(merging, 23456) == char_encode("23456")


def test_keys_have_5_to_7_digits_and_follow_the_seed():
    keys = mp.draw_keys(0, 300)
    assert all(10_000 <= k <= 9_999_999 for k in keys)
    assert {len(str(k)) for k in keys} == {5, 6, 7}
    assert keys == mp.draw_keys(0, 300) and keys != mp.draw_keys(1, 300)


def test_the_grid_is_length_major_then_depth_then_key():
    prompts = mp.build_prompts(char_encode, HAYSTACK, [400, 800], [0, 50, 100], 3, seed=4)
    assert [p.length for p in prompts] == [400] * 9 + [800] * 9
    assert [p.depth for p in prompts[:9]] == [0] * 3 + [50] * 3 + [100] * 3
    assert [p.key for p in prompts] == mp.draw_keys(4, 18)


@pytest.mark.parametrize(
    "length, haystack, message",
    [
        (100, HAYSTACK, "intro, needle and question alone take"),
        (6000, HAYSTACK, "needs .* haystack tokens, the haystack has 5000"),
    ],
)
def test_impossible_lengths_are_refused(length, haystack, message):
    with pytest.raises(ExportError, match=message):
        mp.build_prompt(char_encode, haystack, length, 50, 12345)


def test_the_file_holds_every_prompt_and_answer_by_offsets(tmp_path):
    prompts = mp.build_prompts(char_encode, HAYSTACK, [400, 700], [0, 100], 2, seed=0)
    out = tmp_path / "task.h5"
    mp.write_task(out, "tiny-llama", 0, prompts)
    assert not (tmp_path / "task.h5.partial").exists()
    with h5py.File(out, "r") as f:
        assert f.attrs["format"] == "dgq-passkey" and f.attrs["version"] == 1
        assert f.attrs["model"] == "tiny-llama" and f.attrs["seed"] == 0
        po, ao = f["prompt_offsets"][:], f["answer_offsets"][:]
        assert po.dtype == np.int64 and f["tokens"].dtype == np.int32 and f["depth"].dtype == np.float64
        for i, p in enumerate(prompts):
            assert list(f["tokens"][po[i] : po[i + 1]]) == p.tokens
            assert list(f["answer_tokens"][ao[i] : ao[i + 1]]) == p.answer
            assert f["key"][i] == p.key and f["length"][i] == p.length == po[i + 1] - po[i]
            assert f["depth"][i] == p.depth and f["needle_position"][i] == p.needle_position


def test_with_smollm2s_tokenizer_the_pieces_join_to_the_exact_length_and_the_key_is_its_digits(tokenizer):
    """The real tokenizer (conftest's, from the GGUF): SmolLM2 splits digits: the prompt ends with the
    space token, the answer is one token per digit, and the needle spells the key the same way."""

    def encode(text):
        return tokenizer.encode(text, add_special_tokens=False).ids

    haystack = encode(mp.INTRO * 200)  # any natural text will do here
    for key in mp.draw_keys(7, 3):
        p = mp.build_prompt(encode, haystack, 700, 40, key)
        assert len(p.tokens) == 700
        assert tokenizer.decode(p.answer) == str(key) and len(p.answer) == len(str(key))
        needle = encode(mp.NEEDLE.format(key=key))
        assert p.tokens[p.needle_position : p.needle_position + len(needle)] == needle
        assert p.answer == needle[needle.index(p.answer[0]) :][: len(str(key))]  # the same digit ids
