"""`dgq eval --gemm onednn|eigen` (docs/eval.md, "Weight products"): the library that multiplies
by the weights in the blocked arithmetic. Checked on the tiny random llama model (seconds):
- both libraries give the logits of the same model within fp32 rounding (the exact fp32 cache:
  an fp16 or quantized one amplifies the last-bit differences, docs/eval.md), and the results
  file names the one that ran;
- a run by Eigen has its own config hash (its chunks never mix with oneDNN's on a resume), a
  row-exact run the same whichever is named (it uses neither);
- a word other than the two is refused on one line naming the option.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k gemm_library
"""

import h5py
import numpy as np
import pytest

from eval_support import eval_runs, run_eval, tiny_eval_inputs

pytestmark = pytest.mark.needs_dgq


@pytest.fixture(scope="module")
def tiny(tmp_path_factory, dgq_bin):
    inputs = tiny_eval_inputs(tmp_path_factory.mktemp("tiny-gemm"), "llama", 5)
    runs = {
        gemm: eval_runs(
            dgq_bin,
            inputs["model"],
            inputs["text"],
            inputs["dir"] / f"{gemm}.h5",
            ["fp32"],
            "--base",
            "fp32",
            "--gemm",
            gemm,
        )
        for gemm in ("eigen", "onednn")
        if gemm == "eigen" or not _built_without_onednn(dgq_bin, inputs)
    }
    return {**inputs, "runs": runs}


def _built_without_onednn(dgq_bin, inputs) -> bool:
    out = inputs["dir"] / "default.h5"
    run_eval(dgq_bin, model=inputs["model"], text=inputs["text"], ctx=128, chunks=1, scheme="q8_0", out=out)
    with h5py.File(out, "r") as f:
        return f.attrs["gemm"] == "eigen"


def config_hashes(dgq_bin, tiny, name, *options) -> list[str]:
    out = tiny["dir"] / f"hash-{name}.h5"
    run_eval(dgq_bin, options, model=tiny["model"], text=tiny["text"], ctx=128, chunks=1, scheme="q8_0", out=out)
    with h5py.File(out, "r") as f:
        return [f.attrs["config_hash"], *(f["runs"][str(i)].attrs["config_hash"] for i in range(2))]


def test_the_results_file_names_the_library_that_ran(tiny):
    for gemm, runs in tiny["runs"].items():
        assert runs["attrs"]["gemm"] == gemm


def test_both_libraries_compute_the_same_logits_within_fp32_rounding(tiny):
    if "onednn" not in tiny["runs"]:
        pytest.skip("built without oneDNN: one library only")
    for base_eigen, base_onednn in zip(tiny["runs"]["eigen"]["runs"], tiny["runs"]["onednn"]["runs"], strict=True):
        eigen, onednn = base_eigen["logits"], base_onednn["logits"]
        scale = np.abs(eigen).max()
        assert np.abs(eigen - onednn).max() <= 1e-5 * scale
        assert not np.array_equal(eigen, np.zeros_like(eigen))


def test_eigen_runs_have_their_own_config_hash_and_row_exact_runs_do_not(tiny, dgq_bin):
    if "onednn" not in tiny["runs"]:
        pytest.skip("built without oneDNN: one library only")
    assert config_hashes(dgq_bin, tiny, "eigen", "--gemm", "eigen") != config_hashes(
        dgq_bin, tiny, "onednn", "--gemm", "onednn"
    )
    assert config_hashes(dgq_bin, tiny, "exact-eigen", "--gemm", "eigen", "--row-exact") == config_hashes(
        dgq_bin, tiny, "exact-onednn", "--gemm", "onednn", "--row-exact"
    )


def test_an_unknown_library_is_refused_on_one_line(tiny, dgq_bin):
    result = run_eval(
        dgq_bin,
        ("--gemm", "mkl"),
        check=False,
        model=tiny["model"],
        text=tiny["text"],
        ctx=128,
        scheme="q8_0",
        out=tiny["dir"] / "refused.h5",
    )
    assert result.returncode != 0
    assert result.stderr.strip() == "dgq: error: --gemm 'mkl': expected onednn or eigen"
    assert not (tiny["dir"] / "refused.h5").exists()
