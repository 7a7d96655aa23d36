"""The notebooks' loader refuses to combine results of different dgq builds (provenance;
docs/results-format.md, "Provenance"), as `dgq sweep` and `dgq merge` do, unless called with
allow_mixed=True, which labels each run with its version. Results files are written with h5py here,
so no dgq binary is needed. By hand: tests/python/run_pytest.sh -k versions
"""

import json

import h5py
import numpy as np
import pytest

from dgqtools import results


def write_results(path, versions: dict) -> None:
    """A results file whose run NAME records dgq_version VERSION (None: no attribute, as written
    before dgq recorded it)."""
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "dgq-results"
        runs = f.create_group("runs")
        for name, version in versions.items():
            g = runs.create_group(name)
            g.attrs["complete"] = np.int64(1)
            g.attrs["scheme"] = "fp16"
            if version is not None:
                g.attrs["dgq_version"] = version
                g.attrs["config_hash"] = "0123456789abcdef"


def test_runs_of_one_version_load_with_their_label(tmp_path):
    write_results(tmp_path / "r.h5", {"a@t": "v1", "b@t": "v1"})
    runs = results.load_runs(tmp_path / "r.h5")
    assert [(r.name, r.dgq_version) for r in runs] == [("a@t", "v1"), ("b@t", "v1")]


def test_runs_of_different_versions_are_refused_naming_both(tmp_path):
    write_results(tmp_path / "r.h5", {"a@t": "v1", "b@t": "v2"})
    with pytest.raises(results.MixedVersionsError, match=r"run b@t was written by dgq v2, run a@t by dgq v1"):
        results.load_runs(tmp_path / "r.h5")


def test_allow_mixed_labels_each_run_with_its_version(tmp_path):
    write_results(tmp_path / "r.h5", {"a@t": "v1", "b@t": "v2", "c@t": None})
    runs = results.load_runs(tmp_path / "r.h5", allow_mixed=True)
    assert {r.name: r.dgq_version for r in runs} == {"a@t": "v1", "b@t": "v2", "c@t": "unknown"}


def test_runs_written_before_provenance_are_unknown_and_do_not_mix_with_recorded_ones(tmp_path):
    write_results(tmp_path / "old.h5", {"a@t": None, "b@t": None})
    assert {r.dgq_version for r in results.load_runs(tmp_path / "old.h5")} == {"unknown"}
    write_results(tmp_path / "mixed.h5", {"a@t": None, "b@t": "v1"})
    with pytest.raises(results.MixedVersionsError, match="unknown"):
        results.load_runs(tmp_path / "mixed.h5")


def test_eval_summaries_of_different_versions_are_refused_unless_allowed(tmp_path):
    (tmp_path / "a.json").write_text(json.dumps({"dgq_version": "v1", "schemes": []}))
    (tmp_path / "b.json").write_text(json.dumps({"dgq_version": "v1", "schemes": []}))
    assert len(results.load_eval_summaries(tmp_path)) == 2
    (tmp_path / "c.json").write_text(json.dumps({"schemes": []}))  # before provenance
    with pytest.raises(results.MixedVersionsError, match=r"c\.json was written by dgq unknown, a\.json by dgq v1"):
        results.load_eval_summaries(tmp_path)
    docs = results.load_eval_summaries(tmp_path, allow_mixed=True)
    assert [d.get("dgq_version", "unknown") for d in docs] == ["v1", "v1", "unknown"]


# --- every kind of file is read or refused by name ------------------------------------------------


def write_eval_file(path, versions) -> None:
    """A `dgq eval` results file (format dgq-eval): file attributes, then one run per scheme."""
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "dgq-eval"
        f.attrs["model"] = "tiny"
        f.attrs["ctx"] = np.int64(32)
        runs = f.create_group("runs")
        for i, (spec, version) in enumerate(versions):
            g = runs.create_group(str(i))
            g.attrs["spec"] = spec
            g.attrs["ppl"] = 4.0 + i
            g.attrs["dgq_version"] = version


def test_load_runs_refuses_an_eval_file_naming_the_reader_to_use(tmp_path):
    # It returned no run at all (eval runs have no `complete` attribute), so a notebook saw nothing.
    path = tmp_path / "eval.h5"
    write_eval_file(path, [("fp16", "abc"), ("q8_0", "abc")])
    with pytest.raises(ValueError, match=r"a dgq-eval file, not a replay or sweep results file .*load_eval_file"):
        results.load_runs(path)


def test_load_eval_file_gives_each_run_with_the_files_attributes(tmp_path):
    path = tmp_path / "eval.h5"
    write_eval_file(path, [("fp16", "abc"), ("q8_0", "abc")])
    runs = results.load_eval_file(path)
    assert [(r["run"], r["spec"], r["ppl"], r["model"], r["ctx"]) for r in runs] == [
        (0, "fp16", 4.0, "tiny", 32),
        (1, "q8_0", 5.0, "tiny", 32),
    ]


def test_load_eval_file_refuses_other_files_and_mixed_builds(tmp_path):
    replay_results = tmp_path / "results.h5"
    write_results(replay_results, {"fp16@t": "abc"})
    with pytest.raises(ValueError, match="not a dgq eval results file"):
        results.load_eval_file(replay_results)
    mixed = tmp_path / "mixed.h5"
    write_eval_file(mixed, [("fp16", "abc"), ("q8_0", "def")])
    with pytest.raises(results.MixedVersionsError):
        results.load_eval_file(mixed)
