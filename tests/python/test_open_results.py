"""dgq.open_results (python/dgq/results.py, docs/python.md "Files as numpy"): a replay results file
and a trace read whole into numpy, equal to what h5py reads; missing, non-HDF5 and non-dgq files
refused with dgq.InputError, one line naming the file. Run by the ctest python:bindings."""

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from eval_support import run_dgq

pytestmark = pytest.mark.bindings
TRACE = REPO_ROOT / "data" / "smollm2-code-1k.h5"


@pytest.fixture(scope="module")
def dgq():
    try:
        import dgq as module
    except ImportError as e:
        pytest.fail(f"import dgq failed ({e}): configure with -DDGQ_PYTHON=ON (tools/setup.sh does)")
    return module


def test_a_trace_reads_as_numpy_equal_to_h5py(dgq):
    r = dgq.open_results(TRACE)
    assert r.format == "dgq-trace" and r.path == TRACE
    with h5py.File(TRACE, "r") as f:
        assert list(r) == list(f)
        assert np.array_equal(r["layers/0/k"], f["layers/0/k"][()]) and r["layers/0/k"].dtype == f["layers/0/k"].dtype
        assert np.array_equal(r["tokens"], f["tokens"][()])
        assert r["text"] == f["text"][()].decode("utf-8")
        for key, value in f.attrs.items():
            got = r.attrs[key]
            assert (
                np.array_equal(got, value)
                if isinstance(value, np.ndarray)
                else got == (value.decode() if isinstance(value, bytes) else value)
            ), key
    assert "layers/0/k" in r and "layers/9/k" not in r
    with pytest.raises(KeyError):
        r["layers/nope"]


@pytest.mark.needs_dgq
def test_replay_results_read_as_numpy_with_python_attributes(dgq, dgq_bin, tmp_path):
    out = tmp_path / "r.h5"
    run_dgq(dgq_bin, "replay", TRACE, "--scheme", "q8_0", "--scheme", "q4_0", "--layers", "1,3", "-o", out)
    r = dgq.open_results(out)
    assert r.format == "dgq-results" and sorted(r["runs"]) == ["q4_0@smollm2-code-1k", "q8_0@smollm2-code-1k"]
    run = r["runs"]["q8_0@smollm2-code-1k"]
    assert run.attrs["scheme"] == "q8_0" and isinstance(run.attrs["bits_per_element"], float)
    with h5py.File(out, "r") as f:
        assert np.array_equal(run["k/mse"], f["runs/q8_0@smollm2-code-1k/k/mse"][()])
        assert run["k/mse"].shape == (2, 3)  # 2 layers x 3 KV heads


def test_files_dgq_cannot_read_are_named(dgq, tmp_path):
    (tmp_path / "text.h5").write_text("not hdf5")
    with h5py.File(tmp_path / "other.h5", "w") as f:
        f.attrs["format"] = "someone-else"
    cases = {
        tmp_path / "missing.h5": "missing.h5: no such file",
        tmp_path / "text.h5": "text.h5: not an HDF5 file or truncated",
        tmp_path / "other.h5": "other.h5: attribute 'format' is 'someone-else', not a dgq file",
    }
    for path, expected in cases.items():
        with pytest.raises(dgq.InputError) as err:
            dgq.open_results(path)
        assert expected in str(err.value) and "\n" not in str(err.value)
