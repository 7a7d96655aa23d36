"""The byte-level BPE tokenizer rebuilt from the GGUF metadata."""

import pytest

from conftest import CXX_HEADER, ENGLISH_PROSE

ROUND_TRIP_TEXTS = {
    "empty-ish": " ",
    "prose": ENGLISH_PROSE,
    "code": "template <typename T>\nvoid f(std::vector<T>& v) {\n\tv.push_back(T{42});\n}\n",
    "chinese-poetry": "床前明月光，疑是地上霜。\n举头望明月，低头思故乡。",
    "mixed-unicode": "naïve café — 3.14159 ≈ π; emoji 🙂 and tabs\t\tand  double  spaces",
}


@pytest.mark.parametrize("name", sorted(ROUND_TRIP_TEXTS))
def test_decode_of_encode_gives_back_the_text(tokenizer, name):
    text = ROUND_TRIP_TEXTS[name]
    ids = tokenizer.encode(text, add_special_tokens=False).ids
    assert tokenizer.decode(ids) == text


def test_real_cxx_header_round_trips(tokenizer):
    text = CXX_HEADER.read_text(encoding="utf-8")[:20000]
    assert tokenizer.decode(tokenizer.encode(text).ids) == text


def test_digits_are_split_one_per_token(tokenizer):
    # SmolLM's pre-tokenizer (llama.cpp 'smollm') puts every digit in its own token.
    encoding = tokenizer.encode("12345", add_special_tokens=False)
    assert encoding.tokens == ["1", "2", "3", "4", "5"]


def test_control_tokens_are_single_ids(tokenizer):
    assert tokenizer.encode("<|im_start|>", add_special_tokens=False).ids == [1]
    assert tokenizer.encode("<|endoftext|>", add_special_tokens=False).ids == [0]


def test_common_words_are_single_tokens(tokenizer):
    # A BPE without its merges would split these into characters.
    assert len(tokenizer.encode(" the lighthouse keeper", add_special_tokens=False).ids) <= 4
