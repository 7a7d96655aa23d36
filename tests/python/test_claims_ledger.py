"""The claims ledger (notebooks/claims.ipynb) is computed from the report's generated tables, so
it can be checked in CI without any experiment: the committed ledger must be what the notebook
makes of the committed fragments (a hand edit, or a fragment changed without rebuilding the
ledger, fails here), and the rules it judges by are tested on their own.
By hand: tests/python/run_pytest.sh -k claims
"""

import os
import shutil
import subprocess

import pytest

from conftest import REPO_ROOT
from dgqtools import results

# --- the ordering rule ---------------------------------------------------------------------------


def test_an_ordering_holds_only_when_every_gap_exceeds_its_error():
    verdict, detail = results.ordering_verdict([("b − a", 0.5, 0.1), ("c − b", 2.0, 0.5)])
    assert verdict == "holds"
    assert "b − a +0.50 ± 0.10" in detail


def test_a_gap_inside_its_error_leaves_the_ordering_unresolved():
    verdict, detail = results.ordering_verdict([("b − a", 0.5, 0.1), ("c − b", 0.2, 0.3)])
    assert verdict == "not resolved at this sample size"
    assert detail == "within one SE: c − b +0.20 ± 0.30"


def test_a_gap_reversed_beyond_its_error_fails_the_ordering_even_beside_unresolved_ones():
    verdict, detail = results.ordering_verdict([("b − a", -0.5, 0.1), ("c − b", 0.0, 0.3)])
    assert verdict == "fails"
    assert detail == "reversed beyond one SE: b − a -0.50 ± 0.10"


def test_a_gap_exactly_one_error_wide_is_not_resolved():
    assert results.ordering_verdict([("b − a", 0.25, 0.25)])[0] == "not resolved at this sample size"
    assert results.ordering_verdict([("b − a", -0.25, 0.25)])[0] == "not resolved at this sample size"


def test_the_error_of_a_mean_over_independent_texts_shrinks_with_their_count():
    value, error = results.mean_with_error([(1.0, 0.3), (3.0, 0.4)])
    assert value == pytest.approx(2.0)
    assert error == pytest.approx(0.25)  # sqrt(0.09 + 0.16) / 2


# --- reading fragments back ----------------------------------------------------------------------


def test_fragment_tables_reads_every_table_with_its_header(tmp_path, monkeypatch):
    monkeypatch.setenv("DGQ_FRAGMENTS_DIR", str(tmp_path))
    (tmp_path / "x.md").write_text(
        "Measured by `experiments/run.sh x` (commit 0123456789ab; full mode).\n\n"
        "| a | b |\n| :--- | ---: |\n| 1 | 2 ± 0.5 |\n| 3 | 4 |\n\nprose\n\n| c |\n| --- |\n| `q8_0` |\n",
        encoding="utf-8",
    )
    tables = results.fragment_tables("x")
    assert tables == [[{"a": "1", "b": "2 ± 0.5"}, {"a": "3", "b": "4"}], [{"c": "`q8_0`"}]]
    assert results.value_and_error(tables[0][0]["b"]) == (2.0, 0.5)
    assert results.value_and_error(tables[0][1]["b"]) == (4.0, 0.0)
    assert results.fragment_source("x") == "docs/results/x.md, `experiments/run.sh x`, commit 0123456789ab"


def test_a_fragment_without_a_recorded_commit_says_so(tmp_path, monkeypatch):
    monkeypatch.setenv("DGQ_FRAGMENTS_DIR", str(tmp_path))
    (tmp_path / "y.md").write_text("| a |\n| --- |\n| 1 |\n", encoding="utf-8")
    assert results.fragment_source("y") == "docs/results/y.md, commit not recorded"


# --- provenance lines -------------------------------------------------------------------------------


def test_commit_label_reads_the_recorded_and_the_printed_version():
    commit = "69a129e45b9387f003553a0e845d3a38098fca3e"
    assert results.commit_label(commit) == "69a129e45b93"
    assert results.commit_label(commit + "-dirty-ae1f9567") == "69a129e45b93-dirty"
    assert results.commit_label("dgq 0.1.0 " + commit) == "69a129e45b93"
    assert results.commit_label("unknown") == "?"
    assert results.commit_label(None) == "?"


def test_a_provenance_line_names_command_commit_mode_and_is_read_back(tmp_path, monkeypatch):
    monkeypatch.setenv("DGQ_FRAGMENTS_DIR", str(tmp_path))
    monkeypatch.setenv("DGQ_EXPERIMENT_MODE", "quick")
    line = results.measured_by("baseline", ["9d02b964f3e78a0416d536ad65efdad149e537c6"] * 3)
    assert line.startswith("Measured by `experiments/run.sh --quick baseline` (commit 9d02b964f3e7; quick mode; ")
    (tmp_path / "baseline.md").write_text(line + "| a |\n| --- |\n| 1 |\n", encoding="utf-8")
    assert results.fragment_source("baseline") == (
        "docs/results/baseline.md, `experiments/run.sh --quick baseline`, commit 9d02b964f3e7"
    )


# --- the committed ledger is the notebook's output ------------------------------------------------


def run_claims_notebook(fragments, report, figures, readme=None):
    env = dict(os.environ, DGQ_FRAGMENTS_DIR=str(fragments), DGQ_REPORT=str(report), DGQ_FIGURES_DIR=str(figures))
    if readme is not None:
        env["DGQ_README"] = str(readme)
    jupyter = REPO_ROOT / ".venv" / "bin" / "jupyter"
    subprocess.run(
        [
            str(jupyter),
            "nbconvert",
            "--to",
            "notebook",
            "--execute",
            "claims.ipynb",
            "--output",
            str(fragments.parent / "claims-executed.ipynb"),
        ],
        cwd=REPO_ROOT / "notebooks",
        env=env,
        check=True,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_committed_ledger_is_what_the_notebook_makes_of_the_committed_fragments(tmp_path):
    fragments = tmp_path / "results"
    shutil.copytree(REPO_ROOT / "docs" / "results", fragments)
    report = tmp_path / "results.md"
    shutil.copy(REPO_ROOT / "docs" / "results.md", report)
    readme = tmp_path / "README.md"
    shutil.copy(REPO_ROOT / "README.md", readme)
    run_claims_notebook(fragments, report, tmp_path / "figures", readme)
    assert (fragments / "claims-summary.md").read_text(encoding="utf-8") == (
        REPO_ROOT / "docs" / "results" / "claims-summary.md"
    ).read_text(encoding="utf-8"), (
        "docs/results/claims-summary.md is not what notebooks/claims.ipynb makes: rebuild with `experiments/run.sh claims`"
    )
    assert readme.read_text(encoding="utf-8") == (REPO_ROOT / "README.md").read_text(encoding="utf-8"), (
        "README.md's claims-summary block differs from the ledger: rebuild with `experiments/run.sh claims`"
    )
    committed = (REPO_ROOT / "docs" / "results" / "claims.md").read_text(encoding="utf-8")
    assert (fragments / "claims.md").read_text(encoding="utf-8") == committed, (
        "docs/results/claims.md differs from what notebooks/claims.ipynb makes of docs/results/: "
        "rebuild it with `experiments/run.sh claims`"
    )
    assert report.read_text(encoding="utf-8") == (REPO_ROOT / "docs" / "results.md").read_text(encoding="utf-8"), (
        "docs/results.md's claims block differs from docs/results/claims.md: rebuild with `experiments/run.sh claims`"
    )


def test_a_changed_fragment_changes_the_ledger(tmp_path):
    # The check above could pass if the notebook ignored its inputs; here a figure in a source
    # table changes and the ledger must follow.
    fragments = tmp_path / "results"
    shutil.copytree(REPO_ROOT / "docs" / "results", fragments)
    noise = fragments / "noise.md"
    text = noise.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| dgq | 10% |"))
    cells = row.split("|")
    cells[-3] = " 0.0100 "  # noise mass after: far below the mass before
    noise.write_text(text.replace(row, "|".join(cells)), encoding="utf-8")
    report = tmp_path / "results.md"
    shutil.copy(REPO_ROOT / "docs" / "results.md", report)
    run_claims_notebook(fragments, report, tmp_path / "figures")
    ledger = (fragments / "claims.md").read_text(encoding="utf-8")
    assert "0.0100 after dgq" in ledger and "holds: dgq halves the attention mass on noise tokens" in ledger
