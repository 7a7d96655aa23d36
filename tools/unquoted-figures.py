#!/usr/bin/env python3
"""unquoted-figures.py DOC...: the figures in a document's hand-written text that no generated
fragment (docs/results/*.md, or a generated block) contains, so that nothing shows where they
come from.

A figure is a decimal number (1.5, 4.35e-2) or a percentage (12 %); text inside the generated
blocks (<!-- BEGIN x --> ... <!-- END x -->, the one marker form every block writer uses) and
inside code spans (commands, scheme specs) is not hand-written and is skipped. The fragments are
docs/results/*.md and the generated blocks of the documents checked, README.md and docs/*.md
(e.g. docs/benchmarks.md's ggml tables, spliced by bench/ggml/run.sh --update-docs). A figure
counts as quoted when the same digits occur in a fragment, or, for a figure of three or more
significant digits, when a fragment holds a number that rounds to it at the figure's precision
(4.35e-2 quotes a table's 0.04352; 2.0 quotes only a "2.0").
Derived figures (a ratio of two table cells, a value re-rounded) are reported too: the aim is that
prose quotes the generated tables or says what it computes from them in a notebook.
Exit 0 when every figure is quoted, 1 otherwise (one line per figure: document, line, figure).
In CI: ctest docs:figures (label docs) runs it on the documents listed in tests/CMakeLists.txt
(DGQ_FIGURE_DOCS: README.md, docs/results.md, docs/benchmarks.md, docs/real-traces.md).
"""

import re
import sys
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent
FIGURE = re.compile(r"(?<![\w.§/-])\d+\.\d+(?:e[-+]\d+)?|(?<![\w.§/-])\d+(?:\.\d+)?\s?%")
NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]\d+)?")


BEGIN = re.compile(r"<!-- BEGIN ([\w -]+?) -->")


def generated_blocks(doc: Path) -> list[str]:
    """The text of each generated block (<!-- BEGIN x --> ... <!-- END x -->) of a document."""
    blocks, inside = [], None
    text: list[str] = []
    for line in doc.read_text(encoding="utf-8").splitlines():
        begin = BEGIN.match(line)
        if inside is None and begin:
            inside, text = begin.group(1), []
        elif inside is not None and line.startswith(f"<!-- END {inside} -->"):
            blocks.append("\n".join(text))
            inside = None
        elif inside is not None:
            text.append(line)
    return blocks


def generated_numbers(docs: list[Path]) -> set[str]:
    """The numbers of the fragments (docs/results/*.md) and of the generated blocks of the
    documents checked, README.md and docs/*.md (e.g. docs/benchmarks.md's ggml tables, written
    by bench/ggml/run.sh --update-docs)."""
    texts = [p.read_text(encoding="utf-8") for p in sorted((REPO_ROOT / "docs" / "results").glob("*.md"))]
    spliced = {REPO_ROOT / "README.md", *sorted((REPO_ROOT / "docs").glob("*.md")), *docs}
    for doc in sorted(spliced):
        if doc.exists():
            texts.extend(generated_blocks(doc))
    return set(NUMBER.findall("\n".join(texts)))


def significant_digits(figure: str) -> int:
    mantissa = figure.split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def rounds_to(value: float, digits: int) -> str:
    return f"{value:.{digits - 1}e}"


def quoted(figure: str, known: set[str], known_values: list[float]) -> bool:
    if figure in known:
        return True
    digits = significant_digits(figure)
    if digits < 3:
        return False
    target = rounds_to(float(figure), digits)
    return any(rounds_to(v, digits) == target for v in known_values)


def hand_written_lines(doc: Path) -> list[tuple[int, str]]:
    """(line number, text) of the document outside its generated blocks, code spans blanked."""
    lines, inside = [], None
    for number, line in enumerate(doc.read_text(encoding="utf-8").splitlines(), 1):
        begin = BEGIN.match(line)
        if inside is None and begin:
            inside = begin.group(1)
            continue
        if inside is not None:
            if line.startswith(f"<!-- END {inside} -->"):
                inside = None
            continue
        lines.append((number, re.sub(r"`[^`]*`", "", re.sub(r"arXiv \S+", "", line))))
    return lines


def main(docs: list[str]) -> int:
    known = generated_numbers([Path(name).resolve() for name in docs])
    known_values = sorted({float(n) for n in known})
    missing = 0
    for name in docs:
        for number, line in hand_written_lines(Path(name)):
            for figure in FIGURE.findall(line):
                if not quoted(figure.rstrip("%").strip(), known, known_values):
                    print(f"{name}:{number}: {figure.strip()}")
                    missing += 1
    print(f"unquoted-figures: {missing} figure(s) in hand-written text found in no generated fragment", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: tools/unquoted-figures.py DOC...")
    sys.exit(main(sys.argv[1:]))
