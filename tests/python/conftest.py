"""Shared fixtures for the exporter tests: the model is loaded once per session (about 6 s)."""

import os
from pathlib import Path

# Before numpy loads OpenBLAS: the test problems are small, and on a shared 2-core machine BLAS
# worker threads mostly spin against each other (measured: a 120-token forward pass took 11 s with
# two threads under load, 0.5 s with one).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np
import pytest

from dgqtools import export_trace

REPO_ROOT = Path(__file__).resolve().parents[2]

# The dgq.hf tests import torch and transformers at once: collected only when
# tests/python/run_hf_tests.sh runs them (it decides, with DGQ_HF_REQUIRED, whether a missing
# torch is a skip or a failure), never as an import error of the other pytest runs.
collect_ignore_glob = [] if os.environ.get("DGQ_HF_TESTS") == "1" else ["test_hf_*.py"]

# Plain English prose written for these tests (no copyrighted text in the repository).
ENGLISH_PROSE = (
    "The old lighthouse stood at the edge of the cliff for more than a hundred years. "
    "Every evening, the keeper climbed the narrow stairs, lit the lamp, and watched the ships "
    "pass safely along the rocky coast. In the winter, the wind was so strong that the windows "
    "shook, and the sea threw white foam high into the air. The keeper did not mind the cold. "
    "He liked the quiet hours of the night, when he could read his books and listen to the "
    "waves. One morning, a small boat appeared near the harbor. A young girl was rowing it "
    "alone, and she looked tired and afraid. The keeper went down to the beach to help her. "
    "She told him that her father was a fisherman and that his boat had been lost in the storm. "
    "The keeper gave her a warm blanket and a cup of tea, and together they walked to the village "
    "to ask for help."
)

# The start of a libstdc++ header: real C++ that is on every machine that can build dgq.
CXX_HEADER = Path("/usr/include/c++/12/bits/stl_vector.h")


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_dgq: runs the C++ dgq binary named by $DGQ_BIN")
    config.addinivalue_line("markers", "hf: imports torch and transformers (dgq.hf; ctest python:hf)")
    config.addinivalue_line(
        "markers", "bindings: imports the Python module dgq (ctest python:bindings, -DDGQ_PYTHON=ON)"
    )


@pytest.fixture(scope="session")
def model():
    return export_trace.SmolLM2()


@pytest.fixture(scope="session")
def tokenizer(model):
    return export_trace.load_tokenizer(model.reader)


def tokens_of(tokenizer, text, limit):
    return np.array(tokenizer.encode(text, add_special_tokens=False).ids[:limit], dtype=np.int32)


@pytest.fixture(scope="session")
def prose_tokens(tokenizer):
    return tokens_of(tokenizer, ENGLISH_PROSE, 1000)


@pytest.fixture(scope="session")
def code_tokens(tokenizer):
    # Skip the licence comment at the top of the header: the test is about code.
    text = CXX_HEADER.read_text(encoding="utf-8")
    code = text[text.index("#ifndef _STL_VECTOR_H") :]
    return tokens_of(tokenizer, code, 256)


@pytest.fixture(scope="session")
def python_tokenizers():
    """The Python tokenizers of the two shipped models (tools/make-eval-texts.py), built once per
    session: reading Gemma 3's GGUF metadata with the gguf package takes about 15 s."""
    from dgqtools import make_eval_texts

    return {
        model: make_eval_texts.load_tokenizer(model, make_eval_texts.gguf_reader(model))
        for model in ("smollm2", "gemma3")
    }


@pytest.fixture(scope="session")
def dgq_bin():
    """The dgq CLI for the tests marked needs_dgq (ctest sets DGQ_BIN when dgq is built)."""
    path = os.environ.get("DGQ_BIN")
    if not path or not os.access(path, os.X_OK):
        pytest.fail(f"DGQ_BIN={path!r} is not an executable file (ctest sets it when dgq is built)")
    return path
