"""tools/diff-fragments.sh, the CI check that a quick-mode report fragment regenerated now equals
the committed one (ctest experiments:quick-fragments): it must pass when only the provenance line
differs and fail on a changed figure, a missing file, or a committed fragment of another mode.
By hand: tests/python/run_pytest.sh -k diff_fragments
"""

import subprocess

from conftest import REPO_ROOT

TOOL = REPO_ROOT / "tools" / "diff-fragments.sh"
BODY = "| scheme | KL mean |\n| :--- | ---: |\n| dgq | 0.00271 |\n"


def provenance(name, commit="9d02b964f3e7", date="2026-12-03", quick=True):
    command = f"experiments/run.sh {'--quick ' if quick else ''}{name}"
    mode = "quick" if quick else "full"
    return f"Measured by `{command}` (commit {commit}; {mode} mode; {date}).\n\n"


def run(tmp_path, committed_text, generated_text, name="noise"):
    committed, generated = tmp_path / "committed", tmp_path / "generated"
    committed.mkdir(exist_ok=True)
    generated.mkdir(exist_ok=True)
    if committed_text is not None:
        (committed / f"{name}.md").write_text(committed_text)
    if generated_text is not None:
        (generated / f"{name}.md").write_text(generated_text)
    return subprocess.run(["bash", str(TOOL), str(committed), str(generated), name], capture_output=True, text=True)


def test_a_fragment_regenerated_by_another_commit_on_another_day_is_the_same(tmp_path):
    result = run(
        tmp_path,
        committed_text=provenance("noise") + BODY,
        generated_text=provenance("noise", commit="0123456789ab", date="2027-01-01") + BODY,
    )
    assert result.returncode == 0, result.stderr
    assert "noise: same figures as committed" in result.stdout


def test_a_changed_figure_fails_and_shows_the_difference(tmp_path):
    result = run(tmp_path, provenance("noise") + BODY, provenance("noise") + BODY.replace("0.00271", "0.00272"))
    assert result.returncode == 1
    assert "differs from the fragment regenerated now" in result.stderr
    assert "0.00272" in result.stderr


def test_a_missing_regenerated_fragment_fails_naming_it(tmp_path):
    result = run(tmp_path, provenance("noise") + BODY, None)
    assert result.returncode == 1
    assert "generated/noise.md: missing" in result.stderr


def test_a_committed_full_mode_fragment_is_refused_not_compared(tmp_path):
    result = run(tmp_path, provenance("noise", quick=False) + BODY, provenance("noise") + BODY)
    assert result.returncode == 1
    assert "not a quick-mode provenance line" in result.stderr


def test_a_committed_fragment_without_provenance_is_refused(tmp_path):
    result = run(tmp_path, BODY, provenance("noise") + BODY)
    assert result.returncode == 1
    assert "not a quick-mode provenance line" in result.stderr
