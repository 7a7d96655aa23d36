"""Where results are read and the report written: each default inside the checkout, each movable by
an environment variable (experiments/run.sh sets them), and the dgq CLI the notebooks ask.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from dgqtools.repo import REPO_ROOT


def _env_path(var: str, default: Path) -> Path:
    value = os.environ.get(var)
    return Path(value) if value else default


def results_dir() -> Path:
    return _env_path("DGQ_RESULTS_DIR", REPO_ROOT / "out" / "experiments")


def figures_dir() -> Path:
    return _env_path("DGQ_FIGURES_DIR", REPO_ROOT / "docs" / "figures")


def fragments_dir() -> Path:
    return _env_path("DGQ_FRAGMENTS_DIR", REPO_ROOT / "docs" / "results")


def report_path() -> Path:
    return _env_path("DGQ_REPORT", REPO_ROOT / "docs" / "results.md")


def results_file(name: str, suffix: str = ".h5") -> Path:
    """Path of an experiment's results file; a clear error if the experiment has not run."""
    path = results_dir() / f"{name}{suffix}"
    if not path.exists():
        raise FileNotFoundError(f"{path}: no results for experiment '{name}'; run `experiments/run.sh {name}` first")
    return path


def dgq_binary() -> Path:
    """The dgq CLI: $DGQ_BIN (experiments/run.sh and ctest set it), else build/sim/dgq."""
    path = _env_path("DGQ_BIN", REPO_ROOT / "build" / "sim" / "dgq")
    # experiments/run.sh runs from the repository root, the notebooks from notebooks/.
    return path if path.is_absolute() else REPO_ROOT / path


def readme_path() -> Path | None:
    """The README whose generated blocks (the findings) the notebooks update: $DGQ_README, else
    the repository's README.md when the report is docs/results.md itself; None when the report
    goes elsewhere (experiments/run.sh with DGQ_DOCS_OUT, tests), so that only the fragments are
    written there and the committed README is left alone."""
    if os.environ.get("DGQ_README"):
        return Path(os.environ["DGQ_README"])
    default_report = REPO_ROOT / "docs" / "results.md"
    return REPO_ROOT / "README.md" if report_path().resolve() == default_report.resolve() else None


def checkout_commit() -> str:
    """HEAD of this checkout, 12 digits, "-dirty" when tracked files differ from it: the label of a
    measurement made by a tool run from the checkout (not from a dgq binary's results)."""
    return (
        subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        or "unknown"
    )
