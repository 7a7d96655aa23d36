"""Reading the published fragments back (the claims ledger): the report's own generated tables,
so a ledger row cannot disagree with the section it quotes.
"""

from __future__ import annotations

import re
from pathlib import Path

from dgqtools.results.paths import fragments_dir

# --- Reading the published fragments back (the claims ledger) ----------------------------------


def fragment_tables(block: str) -> list[list[dict]]:
    """The markdown tables of docs/results/<block>.md, each a list of rows (header -> cell).
    The claims ledger reads the report's own generated tables rather than the results files in
    out/, so a rerun of some experiments on a machine without the others' results cannot turn
    their rows into "not run", and a ledger row cannot disagree with the section it quotes."""
    return markdown_tables((fragments_dir() / f"{block}.md").read_text(encoding="utf-8"))


def markdown_tables(text: str) -> list[list[dict]]:
    """The markdown tables of a text, each a list of rows (header -> cell)."""
    tables: list[list[dict]] = []
    header = None
    rows: list[dict] = []
    for line in text.splitlines() + [""]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if header is None:
                header = cells
            elif not all(set(c) <= set(":- ") for c in cells):
                rows.append(dict(zip(header, cells)))
        elif header is not None:
            tables.append(rows)
            header, rows = None, []
    return tables


def marked_tables(doc: Path, marker: str) -> tuple[str, list[list[dict]]]:
    """The text and markdown tables of a generated block spliced into a document between
    "<!-- BEGIN MARKER -->" and "<!-- END MARKER -->" (e.g. docs/benchmarks.md's ggml blocks,
    written by bench/ggml/run.sh --update-docs), each table a list of rows (header -> cell)."""
    text = Path(doc).read_text(encoding="utf-8")
    begin = text.index(f"<!-- BEGIN {marker} -->")
    block = text[begin : text.index(f"<!-- END {marker} -->", begin)]
    return block, markdown_tables(block)


def fragment_source(block: str) -> str:
    """Where a fragment's figures come from: its file, the command and the commit(s) its
    "Measured by" line names."""
    text = (fragments_dir() / f"{block}.md").read_text(encoding="utf-8")
    first = text.splitlines()[0] if text else ""
    command = re.search(r"`(experiments/run\.sh[^`]*)`", first)
    commits = re.search(r"\(commits? ([0-9a-f]{7,40}(?:-dirty)?(?:, [0-9a-f]{7,40}(?:-dirty)?)*)", first)
    parts = [f"docs/results/{block}.md"]
    if command:
        parts.append(f"`{command.group(1)}`")
    parts.append(f"commit {commits.group(1)}" if commits else "commit not recorded")
    return ", ".join(parts)


def value_and_error(cell: str) -> tuple[float, float]:
    """ "4.496 ± 0.327" -> (4.496, 0.327); a plain number has error 0."""
    value, _, error = cell.partition("±")
    return float(value), float(error) if error.strip() else 0.0
