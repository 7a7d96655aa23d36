"""Writing tables and figures: markdown fragments in docs/results/, spliced into the report between
`<!-- BEGIN name -->` and `<!-- END name -->`, each starting with the provenance line that says
which command and which dgq build measured it; figures as PNG in docs/figures/.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

from dgqtools.results.paths import (
    checkout_commit,
    figures_dir,
    fragments_dir,
    readme_path,
    report_path,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from matplotlib.figure import Figure

# --- Writing tables and figures -------------------------------------------------------------


def markdown_table(headers: list[str], rows: list[list], align: str | None = None) -> str:
    """A GitHub markdown table. align: one char per column, 'l' or 'r' (default: first column
    left, the rest right, since the rest are numbers)."""
    align = align or ("l" + "r" * (len(headers) - 1))
    rule = ["---:" if a == "r" else ":---" for a in align]
    lines = ["| " + " | ".join(headers) + " |", "| " + " | ".join(rule) + " |"]
    for row in rows:
        lines.append("| " + " | ".join(str(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def _write_atomically(path: Path, text: str) -> None:
    # Write to X.partial then rename, so an interrupted run never leaves a half-written file.
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text)
    partial.replace(path)


def splice_into_report(block: str, markdown: str, report: Path | None = None) -> bool:
    """Replaces the text between <!-- BEGIN block --> and <!-- END block --> in the report.
    Returns False (and leaves the report alone) when the report has no such markers."""
    report = report or report_path()
    if not report.exists():
        return False
    text = report.read_text()
    pattern = re.compile(rf"(<!-- BEGIN {re.escape(block)} -->\n)(.*?)(<!-- END {re.escape(block)} -->)", re.S)
    if not pattern.search(text):
        return False
    new_text = pattern.sub(lambda m: m.group(1) + markdown + m.group(3), text, count=1)
    if new_text != text:
        _write_atomically(report, new_text)
    return True


def publish_measurement(block: str, command: str, provenance: str, body: str, page: Path) -> Path:
    """The fragment "Measured by `command` (commit C; date; provenance)." and body, written as
    docs/results/<block>.md and spliced into page; SystemExit naming the block when page has no
    markers for it (a tool's --fragment run must not end silently half done)."""
    date = datetime.now(UTC).date().isoformat()
    fragment = f"Measured by `{command}` (commit {checkout_commit()}; {date}; {provenance}\n\n{body}"
    try:
        path = publish_fragment(block, fragment, into=page, strict=True)
    except ValueError as e:
        raise SystemExit(f"{block}: {e}") from None
    print(f"wrote {path} and spliced it into {page}")
    return path


def publish_fragment(block: str, markdown: str, into: str | Path = "report", strict: bool = False) -> Path:
    """Writes docs/results/<block>.md and splices it into docs/results.md (into="report"), into
    the README (into="readme", see readme_path) or into the page at a Path. strict: a target
    without the block's markers is an error (ValueError) instead of a note."""
    path = fragments_dir() / f"{block}.md"
    _write_atomically(path, markdown)
    target = into if isinstance(into, Path) else report_path() if into == "report" else readme_path()
    if target is None:
        print(f"note: no README to update here; wrote {path} only")
    elif not splice_into_report(block, markdown, target):
        message = f"{target} has no <!-- BEGIN {block} --> markers; wrote {path} only"
        if strict:
            raise ValueError(message)
        print(f"note: {message}")
    return path


def commit_label(dgq_version: str | None) -> str:
    """The commit a dgq_version string names, as fragments quote it: 12 hex digits, "-dirty" when
    the build had uncommitted changes. Accepts the recorded form ("<40 hex>[-dirty-<diff hash>]")
    and `dgq --version`'s ("dgq 0.1.0 <that>"); "?" when none is recorded."""
    words = str(dgq_version or "").split()
    if not words or not re.fullmatch(r"[0-9a-f]{7,40}(-dirty.*)?", words[-1]):
        return "?"
    commit, _, rest = words[-1].partition("-")
    return commit[:12] + ("-dirty" if rest.startswith("dirty") else "")


def measured_by(name: str, versions: Iterable[str]) -> str:
    """The provenance line every fragment starts with: the command that regenerates it, the
    commit(s) of the dgq build(s) that wrote its results, the mode and the date it was made.
    experiments/run.sh exports DGQ_EXPERIMENT_MODE (quick or full). tools/diff-fragments.sh
    compares fragments without this line, so a regenerated fragment equals the committed one
    whenever its figures do."""
    mode = os.environ.get("DGQ_EXPERIMENT_MODE", "")
    command = f"experiments/run.sh {'--quick ' if mode == 'quick' else ''}{name}"
    commits = sorted({commit_label(v) for v in versions}) or ["?"]
    from datetime import datetime

    date = datetime.now(UTC).date().isoformat()
    return f"Measured by `{command}` (commit {', '.join(commits)}; {mode or 'unknown'} mode; {date}).\n\n"


def save_figure(fig: Figure, name: str) -> Path:
    """Saves a matplotlib figure as docs/figures/<name>.png at a page-width-readable size."""
    path = figures_dir() / f"{name}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    fig.savefig(partial, dpi=110, bbox_inches="tight", format="png")
    partial.replace(path)
    return path


def fmt(x: float, digits: int = 3) -> str:
    """Compact number formatting for tables: fixed for ordinary magnitudes, else scientific."""
    if x != x:  # NaN
        return "n/a"
    if x == 0:
        return "0"
    if 1e-3 <= abs(x) < 1e5:
        return f"{x:.{digits}g}" if abs(x) < 1 else f"{x:.{digits}f}".rstrip("0").rstrip(".")
    return f"{x:.{digits - 1}e}"
