"""The C++ side reads what the exporter writes: `dgq inspect` on exported and shipped traces.

Registered with ctest only where the dgq target is built; ctest passes its path in $DGQ_BIN.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -m needs_dgq
"""

import os
import subprocess

import h5py
import pytest

from conftest import ENGLISH_PROSE, REPO_ROOT
from dgqtools import export_trace

pytestmark = pytest.mark.needs_dgq
SHIPPED_TRACE = REPO_ROOT / "data" / "smollm2-code-1k.h5"


@pytest.fixture(scope="module")
def dgq_bin():
    path = os.environ.get("DGQ_BIN")
    if not path:
        pytest.fail("DGQ_BIN is not set: point it at the dgq binary (ctest sets it when dgq is built)")
    if not os.access(path, os.X_OK):
        pytest.fail(f"DGQ_BIN={path} is not an executable file")
    return path


def inspect(dgq_bin, trace):
    return subprocess.run([dgq_bin, "inspect", str(trace)], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def exported_trace(model, tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect")
    prompt = folder / "prose.txt"
    prompt.write_text(ENGLISH_PROSE, encoding="utf-8")
    out = folder / "prose.h5"
    argv = [
        "--prompt-file",
        str(prompt),
        "--kind",
        "prose",
        "--max-tokens",
        "100",
        "--layers",
        "3,17",
        "--noise-rate",
        "0.1",
        "--seed",
        "1",
        "-o",
        str(out),
    ]
    assert export_trace.main(argv, model=model) == 0
    return out


def test_dgq_inspect_reads_an_exported_trace(dgq_bin, exported_trace):
    result = inspect(dgq_bin, exported_trace)
    assert result.returncode == 0, result.stderr
    assert "SmolLM2-135M-Instruct-Q4_1" in result.stdout


def test_dgq_inspect_reads_the_shipped_trace(dgq_bin):
    result = inspect(dgq_bin, SHIPPED_TRACE)
    assert result.returncode == 0, result.stderr
    assert "SmolLM2-135M-Instruct-Q4_1" in result.stdout


def test_dgq_inspect_rejects_a_trace_with_a_missing_layer(dgq_bin, exported_trace, tmp_path):
    broken = tmp_path / "missing-layer.h5"
    broken.write_bytes(exported_trace.read_bytes())
    with h5py.File(broken, "a") as f:
        del f["layers/1/k"]
    result = inspect(dgq_bin, broken)
    assert result.returncode != 0
    assert "layers/1/k" in result.stdout + result.stderr
