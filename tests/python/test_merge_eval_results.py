"""`dgq merge` of `dgq eval` results (dgq-eval) and passkey results (dgq-passkey-results),
docs/results-format.md ("Merging eval and passkey results"): every run of every input is kept,
each configuration once, renumbered /runs/0, 1, ... with the base first, and the merged file
exports like any eval file. Files of other settings, another text or another kind are refused
with one line naming both files. Merge once read these files as replay results:
their runs have no `complete` flag, so it kept none ("0 run(s), 6 incomplete run(s) skipped"),
exited 0, and the file it wrote could not be exported.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k merge_eval
"""

import csv
import io

import h5py
import numpy as np
import pytest

from dgqtools import make_passkey as mp
from eval_support import run_dgq, run_eval, write_tiny_model, write_token_file

pytestmark = pytest.mark.needs_dgq


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny llama, two 64-token texts of random ids and a three-prompt passkey task."""
    folder = tmp_path_factory.mktemp("merge-eval")
    model = folder / "model.h5"
    cfg, _ = write_tiny_model(model, "llama")
    rng = np.random.default_rng(49)
    for name in ("a", "b"):
        write_token_file(
            folder / f"text-{name}.h5", rng.integers(2, cfg["vocab_size"], size=64).astype(np.int32), "tiny-llama"
        )
    prompts = [
        mp.PasskeyPrompt(
            tokens=list(map(int, rng.integers(2, cfg["vocab_size"], size=n))),
            answer=[5, 6],
            key=10000 + n,
            length=n,
            depth=50.0,
            needle_position=n // 2,
        )
        for n in (17, 29, 33)
    ]
    mp.write_task(folder / "task.h5", "tiny-llama", 0, prompts)
    return {"dir": folder, "model": model}


def eval_file(dgq_bin, tiny, out, schemes, text="a", ctx=16):
    text_file = tiny["dir"] / f"text-{text}.h5"
    run_eval(dgq_bin, model=tiny["model"], text=text_file, ctx=ctx, chunks=2, out=out, threads=1, scheme=schemes)
    return out


def passkey_file(dgq_bin, tiny, out, schemes):
    task = tiny["dir"] / "task.h5"
    run_eval(dgq_bin, task="passkey", model=tiny["model"], text=task, out=out, threads=1, scheme=schemes)
    return out


def runs_of(path):
    """Each run's spec and every attribute and dataset of it, in run order."""
    with h5py.File(path, "r") as f:
        runs = []
        for i in range(len(f["runs"])):
            g = f["runs"][str(i)]
            runs.append(
                {
                    "spec": g.attrs["spec"],
                    "attrs": dict(g.attrs),
                    "data": {k: g[k][()] for k in g if isinstance(g[k], h5py.Dataset)},
                }
            )
        return runs


def same_run(a, b):
    assert a["spec"] == b["spec"]
    assert a["attrs"].keys() == b["attrs"].keys()
    for k, v in a["attrs"].items():
        assert np.array_equal(v, b["attrs"][k]), k
    assert a["data"].keys() == b["data"].keys()
    for k, v in a["data"].items():
        assert np.array_equal(v, b["data"][k], equal_nan=True), k


def test_merge_of_two_eval_files_keeps_every_run_and_exports(dgq_bin, tiny, tmp_path):
    a = eval_file(dgq_bin, tiny, tmp_path / "a.h5", ["q8_0", "q4_0"])
    b = eval_file(dgq_bin, tiny, tmp_path / "b.h5", ["q5_0", "q8_0"])
    merged = tmp_path / "merged.h5"
    report = run_dgq(dgq_bin, "merge", merged, a, b).stdout
    # a: fp16 (the base), q8_0, q4_0; b: fp16, q5_0, q8_0 -> the base and q8_0 once.
    assert (
        report == f"merged 2 file(s) into {merged}: 4 run(s), 2 identical duplicate(s), 0 incomplete run(s) skipped\n"
    )
    runs_a, runs_b, runs_m = runs_of(a), runs_of(b), runs_of(merged)
    assert [r["spec"] for r in runs_m] == ["fp16", "q8_0", "q4_0", "q5_0"]
    for got, want in zip(runs_m, runs_a + [runs_b[1]]):
        same_run(got, want)
    with h5py.File(a, "r") as fa, h5py.File(merged, "r") as fm:
        assert fm.attrs["format"] == "dgq-eval"
        for key in ("model", "text_kind", "ctx", "chunks", "base", "cache", "keys", "scored_per_chunk"):
            assert fm.attrs[key] == fa.attrs[key], key
    table = list(csv.DictReader(io.StringIO(run_dgq(dgq_bin, "export", merged).stdout)))
    assert [(row["run"], row["spec"]) for row in table] == [("0", "fp16"), ("1", "q8_0"), ("2", "q4_0"), ("3", "q5_0")]
    assert float(table[3]["kld_mean"]) == runs_b[1]["attrs"]["kld_mean"]  # shortest round-trip text


def test_an_eval_file_named_as_output_and_input_gains_the_other_runs(dgq_bin, tiny, tmp_path):
    a = eval_file(dgq_bin, tiny, tmp_path / "a.h5", ["q8_0"])
    b = eval_file(dgq_bin, tiny, tmp_path / "b.h5", ["q4_0"])
    run_dgq(dgq_bin, "merge", a, a, b)
    assert [r["spec"] for r in runs_of(a)] == ["fp16", "q8_0", "q4_0"]


def test_eval_files_of_other_settings_or_texts_are_refused_by_name(dgq_bin, tiny, tmp_path):
    a = eval_file(dgq_bin, tiny, tmp_path / "a.h5", ["q8_0"])
    other_ctx = eval_file(dgq_bin, tiny, tmp_path / "ctx32.h5", ["q4_0"], ctx=32)
    other_text = eval_file(dgq_bin, tiny, tmp_path / "text-b.h5", ["q4_0"], text="b")
    out = tmp_path / "m.h5"
    result = run_dgq(dgq_bin, "merge", out, a, other_ctx, check=False)
    assert result.returncode == 2
    assert result.stderr.startswith(
        f"dgq: error: merge: {a} and {other_ctx} hold runs of different settings (the root: "
        "attribute ctx: different values (16 vs 32))"
    )
    assert result.stderr.count("\n") == 1
    # Same settings on the root, another text: the base run has another config hash.
    result = run_dgq(dgq_bin, "merge", out, a, other_text, check=False)
    assert result.returncode == 2
    assert f"{a}: run 0 (fp16) has config hash " in result.stderr
    assert "the same scheme in another configuration" in result.stderr
    assert not out.exists() and not (tmp_path / "m.h5.partial").exists()


def test_files_of_different_kinds_are_refused(dgq_bin, tiny, tmp_path):
    a = eval_file(dgq_bin, tiny, tmp_path / "a.h5", ["q8_0"])
    p = passkey_file(dgq_bin, tiny, tmp_path / "p.h5", ["q8_0"])
    result = run_dgq(dgq_bin, "merge", tmp_path / "m.h5", a, p, check=False)
    assert result.returncode == 2
    assert (
        result.stderr
        == f"dgq: error: merge: {a} is a dgq-eval file and {p} a dgq-passkey-results file: merge files of one kind\n"
    )
    token_file = tiny["dir"] / "text-a.h5"
    result = run_dgq(dgq_bin, "merge", tmp_path / "m.h5", a, token_file, check=False)
    assert result.returncode == 2
    assert f"{token_file}: attribute 'format' is 'dgq-tokens', not a results file" in result.stderr


def test_merge_of_two_passkey_files_keeps_every_run_and_exports(dgq_bin, tiny, tmp_path):
    a = passkey_file(dgq_bin, tiny, tmp_path / "a.h5", ["fp32", "q8_0"])
    b = passkey_file(dgq_bin, tiny, tmp_path / "b.h5", ["q4_0", "q8_0"])
    merged = tmp_path / "merged.h5"
    report = run_dgq(dgq_bin, "merge", merged, a, b).stdout
    assert "3 run(s), 1 identical duplicate(s)" in report
    runs_a, runs_b, runs_m = runs_of(a), runs_of(b), runs_of(merged)
    assert [r["spec"] for r in runs_m] == ["fp32", "q8_0", "q4_0"]
    for got, want in zip(runs_m, runs_a + [runs_b[0]]):
        same_run(got, want)
    with h5py.File(a, "r") as fa, h5py.File(merged, "r") as fm:
        assert fm.attrs["format"] == "dgq-passkey-results"
        for name in ("key", "length", "depth", "needle_position", "answer_offsets", "answer_tokens"):
            assert np.array_equal(fm[name][()], fa[name][()]), name
    table = list(csv.DictReader(io.StringIO(run_dgq(dgq_bin, "export", merged).stdout)))
    assert [row["spec"] for row in table] == ["fp32", "q8_0", "q4_0"]


def test_a_run_that_differs_between_inputs_is_refused(dgq_bin, tiny, tmp_path):
    a = passkey_file(dgq_bin, tiny, tmp_path / "a.h5", ["q8_0"])
    b = passkey_file(dgq_bin, tiny, tmp_path / "b.h5", ["q8_0"])
    with h5py.File(b, "r+") as f:
        f["runs/0"].attrs["accuracy"] = 0.25
    result = run_dgq(dgq_bin, "merge", tmp_path / "m.h5", a, b, check=False)
    assert result.returncode == 2
    assert (
        f"{a}: run 0 (q8_0) and {b}: run 0 (q8_0) are one configuration but differ: /runs/0: attribute "
        "accuracy: different values" in result.stderr
    )
