"""`dgq tokenize` and `dgq eval --text-file`: text tokenized in C++ with a GGUF's own tokenizer
(sim/model/src/tokenizer; docs/eval.md, "Text files").

- On the shipped SmolLM2 (byte-level BPE, pre-tokenizer "smollm") and Gemma 3 (SentencePiece BPE
  with user-defined whitespace tokens) GGUFs, the ids equal llama.cpp's on the fixture's texts
  (tests/fixtures/llama-cpp/texts.json), and those of the Python tokenizers (tools/make-eval-texts.py,
  themselves pinned to llama.cpp) on the whole texts of data/'s real traces and on a text of
  Chinese, accents, emoji, digits, tabs, space and newline runs.
- `dgq eval --text-file T.txt` scores what `dgq eval --text` scores with the token file
  `dgq tokenize -o` writes, the same bytes.
- Refusals, one line each: a model file (no vocabulary), a vocabulary dgq does not tokenize,
  --text-file with --task passkey, no text at all.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k tokenize
"""

import json

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from dgqtools.tiny_gguf import write_tiny_gguf
from eval_support import SHIPPED_GGUF_NAMES, run_dgq, shipped_gguf

pytestmark = pytest.mark.needs_dgq
MODELS = ("smollm2", "gemma3")
FIXTURE = REPO_ROOT / "tests" / "fixtures" / "llama-cpp" / "texts.json"
MIXED = (
    "Ünïcödé café — naïve résumé.\n\n\n床前明月光，疑是地上霜。 🙂👍🏽 x=12345;\ty\t\t= 3.14159\n"
    "    indented    with   runs of spaces\r\n<b>bold</b> it's they'll we'd I'M 2024-12-03\n"
)


def tokenize(dgq_bin, model: str, text: str, tmp_path) -> list[int]:
    source = tmp_path / "text.txt"
    source.write_text(text, encoding="utf-8")
    out = run_dgq(dgq_bin, "tokenize", "--model", shipped_gguf(model), "--text-file", source).stdout
    return [int(t) for t in out.split()]


def first_difference(got, want) -> str:
    at = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
    return f"{len(got)} ids vs {len(want)}, first difference at {at}: {got[at : at + 5]} vs {want[at : at + 5]}"


@pytest.mark.parametrize("model", MODELS)
def test_the_ids_are_llama_cpps_on_the_fixture_texts(dgq_bin, model, tmp_path):
    for name, entry in json.loads(FIXTURE.read_text(encoding="utf-8"))["texts"].items():
        got, want = tokenize(dgq_bin, model, entry["text"], tmp_path), entry["tokens"][model]
        assert got == want, f"{model} on {name}: {first_difference(got, want)}"


@pytest.mark.parametrize("model", MODELS)
def test_the_ids_are_the_python_tokenizers_on_whole_texts(dgq_bin, python_tokenizers, model, tmp_path):
    texts = {"mixed": MIXED}
    for trace in ("smollm2-code-1k.h5", "smollm2-prose-1k-noise10.h5"):
        with h5py.File(REPO_ROOT / "data" / trace, "r") as f:
            texts[trace] = f["text"][()].decode("utf-8")
    for name, text in texts.items():
        got = tokenize(dgq_bin, model, text, tmp_path)
        want = python_tokenizers[model].encode(text, add_special_tokens=False).ids
        assert got == want, f"{model} on {name}: {first_difference(got, want)}"


def test_eval_of_a_text_file_scores_what_its_token_file_scores(dgq_bin, tmp_path):
    with h5py.File(REPO_ROOT / "data" / "smollm2-code-1k.h5", "r") as f:
        text = f["text"][()].decode("utf-8")
    source = tmp_path / "code.txt"
    source.write_text(text, encoding="utf-8")
    gguf = shipped_gguf("smollm2")
    tokens = tmp_path / "code.h5"
    said = run_dgq(dgq_bin, "tokenize", "--model", gguf, "--text-file", source, "-o", tokens).stdout
    assert said.startswith(f"wrote {tokens}: ") and f"({SHIPPED_GGUF_NAMES['smollm2']}, fnv1a64:" in said
    with h5py.File(tokens, "r") as f:
        assert f.attrs["format"] == "dgq-tokens" and f.attrs["kind"] == "text"
        assert f["text"][()].decode("utf-8") == text
    common = ("--model", gguf, "--ctx", 64, "--chunks", 2, "--scheme", "q4_0", "--threads", 2)
    run_dgq(dgq_bin, "eval", "--text-file", source, "-o", tmp_path / "a.h5", *common)
    run_dgq(dgq_bin, "eval", "--text", tokens, "-o", tmp_path / "b.h5", *common)
    with h5py.File(tmp_path / "a.h5", "r") as a, h5py.File(tmp_path / "b.h5", "r") as b:
        for run in ("0", "1"):
            for name in ("nll", "kld"):
                assert np.array_equal(a["runs"][run][name][()], b["runs"][run][name][()]), (run, name)


def test_refusals_name_what_is_missing(dgq_bin, tmp_path):
    source = tmp_path / "t.txt"
    source.write_text("some text " * 50, encoding="utf-8")
    model_file = REPO_ROOT / "models" / "smollm2-135m.h5"
    base = ("--ctx", 32, "--scheme", "q8_0", "-o", tmp_path / "never.h5")
    cases = {
        "model file": (
            ("eval", "--model", model_file, "--text-file", source, *base),
            "only a GGUF holds; " + str(model_file) + " is not a GGUF",
        ),
        "no vocabulary": (
            ("tokenize", "--model", tmp_path / "tiny.gguf", "--text-file", source),
            "tokenizer.ggml.model 'no_vocab': dgq tokenizes text only for gpt2",
        ),
        "passkey": (
            (
                "eval",
                "--task",
                "passkey",
                "--model",
                shipped_gguf("smollm2"),
                "--text-file",
                source,
                "-o",
                tmp_path / "never.h5",
            ),
            "--text-file: not used by --task passkey",
        ),
        "no text": (("eval", "--model", shipped_gguf("smollm2"), *base), "give the text: --text TOKENS.h5"),
        "empty": (
            ("tokenize", "--model", shipped_gguf("smollm2"), "--text-file", tmp_path / "empty.txt"),
            "empty.txt: the text file is empty",
        ),
        "latin-1": (
            ("tokenize", "--model", shipped_gguf("smollm2"), "--text-file", tmp_path / "latin1.txt"),
            "latin1.txt: not UTF-8: byte 3 does not start a valid sequence",
        ),
    }
    (tmp_path / "latin1.txt").write_bytes("caf\u00e9 au lait".encode("latin-1"))
    write_tiny_gguf(tmp_path / "tiny.gguf", "qwen2", seed=1)
    (tmp_path / "empty.txt").write_text("")
    for name, (args, expected) in cases.items():
        result = run_dgq(dgq_bin, *args, check=False)
        assert result.returncode == 2 and expected in result.stderr, (name, result.stderr)
        assert result.stderr.count("\n") == 1, (name, result.stderr)
    assert not (tmp_path / "never.h5").exists()
