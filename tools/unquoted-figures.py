#!/usr/bin/env python3
"""unquoted-figures.py [--root DIR] DOC...: the figures in a document's hand-written text that the
generated fragment they belong to does not hold, so that nothing shows where they come from.

Generated text. The fragments are DIR/docs/results/*.md (written by experiments/run.sh and other
commands) and the blocks spliced into DIR/README.md, DIR/docs/*.md and the documents checked
(<!-- BEGIN x --> ... <!-- END x -->, the one marker form every block writer uses); a block and
the fragment of the same name are one source. DIR is the repository holding this script unless
--root names another (the tests check scratch copies of a document against the real fragments,
or synthetic documents against synthetic fragments). Text inside blocks, fenced code, code spans,
link targets, URLs and arXiv ids is not hand-written and is not checked.

What a figure is. Every decimal number (1.5, 4.35e-2, +6.7591) is one. An integer is one only
with a unit of measure glued to it or one space away: %, x or × (a ratio), dB, bit(s), GB, MB,
KB, GiB, MiB, KiB, tokens/s, or K (16K: a length in thousands of tokens, n_ctx and the like). Both
ends of a range are figures and share its unit ("3–10 %", "1.5-5 dB", "2-40x", "0.8–6.5"); a
range of bare integers is not ("2026-12-02"). Why: an integer with a unit is a measured amount
that goes stale when the runs change, while a bare integer is mostly a name or a count of the
setup the command itself states ("2 threads", "30 layers", "2048 tokens") or no amount at all.
Not figures either, because they are names: a number glued to a letter other than those units
(SmolLM2-135M, 270M, 8B, a commit hash like 581d64d), after a letter and a hyphen (Llama-3),
after §, #, /, = or a dot (§9c, issue #54, kgroup=128, version 0.19.0), followed by a dot and a
digit (a version), and the section number of a heading or a list marker (bare integers).

Where a figure must come from. Hand-written text is split into sentences (a paragraph, a list
item, a table row or a heading is split at a '.', '!' or '?' followed by a space and a capital,
a parenthesis, a bracket, an asterisk or a backquote). A sentence's figure must be in the
sources that sentence names, when it names any:
  - a link or path to results/x.md (docs/results/x.md): fragment x;
  - a command that writes a fragment, `experiments/run.sh [--flags] x`: fragment x;
  - "the x block" or "the x ledger" (x a fragment or block name: "the frontier block above",
    "the claims ledger"): x;
  - §N (N a section number of docs/results.md, e.g. §10, §9d, as the README and docs/benchmarks.md
    cite it): the blocks of that section of docs/results.md, its subsections included.
A sentence that names none draws on its own section: the blocks between the nearest heading
above it and the next heading (any level), and the fragments linked or written (run.sh) anywhere
in that span. Why not every fragment of the tree: the same digits turn up in some table
somewhere for almost any figure, which let stale figures pass; the sentence or its section says
which table it quotes, so that table must hold the figure.

When a figure counts as held. The same digits occur as a number of a source (signs and
thousands commas aside), or, for a figure of three or more significant digits, a source holds a
number that rounds to it at the figure's precision (4.35e-2 quotes a table's 0.04352; 2.0 quotes
only a "2.0"), or equals it (4.5 and a table's 4.50). A percentage is held only by a source's
percentage (a number followed by %): "10 %" is not held by a table's "10 keys". A K figure is
held by the same "16K" or by 16384 or 16000 in a source.
Derived figures (a ratio of two table cells, a difference, a value re-rounded) are reported too:
the aim is that prose quotes the generated tables or says in words what it computes from them.

Known exceptions. docs/benchmarks.md is still checked against every fragment and block of the
tree (TREE_WIDE_DOCS), with the figure rule above: its prose has not been sorted by section yet.
tools/unquoted-figures.known lists the figures of the other documents that the rule flags and
that no generated source can hold (issue 54: a figure quoted from outside the tree, a formula's
value), one per line: document, figure as written, the words just before it (KNOWN_CONTEXT
characters of prose, spaces collapsed) and, optionally, a fourth field that starts with '#' and
says why it is listed, tab-separated; a line that starts with '#' is a comment. A listed figure
is not reported; editing the words before it makes it reported again, and an entry that matches
no figure is reported as stale, so the list can only shrink.

Exit 0 when every figure is held, 1 otherwise (one line per figure: document, line, figure).
In CI: ctest docs:figures (label docs) runs it on the documents listed in tests/CMakeLists.txt
(DGQ_FIGURE_DOCS: README.md, docs/results.md, docs/benchmarks.md, docs/real-traces.md); the
tests are tests/python/test_unquoted_figures.py.
"""

from __future__ import annotations

import argparse
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

SCRIPT_ROOT = Path(__file__).resolve().parent.parent

# Checked against every fragment and block of the tree, as before the section rule: its prose
# was written against it and not yet sorted by section (issue 54 names the work left).
TREE_WIDE_DOCS = ("docs/benchmarks.md",)

KNOWN_FILE = SCRIPT_ROOT / "tools" / "unquoted-figures.known"
KNOWN_CONTEXT = 40

BEGIN = re.compile(r"<!-- BEGIN ([\w -]+?) -->")
HEADING = re.compile(r"#{1,6} ")
SECTION_NUMBER = re.compile(r"#{1,6} (\d+[a-z]?)\. ")
LIST_ITEM = re.compile(r"\s*(?:[-*+]|\d+\.) ")
FENCE = re.compile(r"\s*(```|~~~)")

NUMBER_TEXT = r"\d{1,3}(?:,\d{3})+(?!\d)|\d+(?:\.\d+)?(?:e[-+]\d+)?"
SPACED_UNIT = r"%|dB|bits?|GB|MB|KB|GiB|MiB|KiB|tokens/s"
GLUED_UNIT = r"x|×|K"
# One number, or a range of two, with its unit; the look-behinds keep names (§9c, #54,
# kgroup=128, Llama-3, SmolLM2-135M) out, the look-ahead keeps out numbers glued to a letter
# (270M, 581d64d) and versions (0.19.0).
FIGURE_TOKEN = re.compile(
    rf"(?<![\w.§#/=])(?<!\w-)(?<!\w–)"
    rf"(?P<low>{NUMBER_TEXT})(?:(?:-|–| – )(?P<high>{NUMBER_TEXT}))?"
    rf"(?P<unit>\s?(?:{SPACED_UNIT})(?![\w/])|(?:{GLUED_UNIT})(?!\w))?"
    rf"(?![\w.]\d|\w)"
)
SOURCE_NUMBER = re.compile(r"\d+(?:\.\d+)?(?:e[-+]\d+)?")
SOURCE_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}(?!\d))")
SOURCE_K = re.compile(r"(?<![\w.])\d+K(?!\w)")
SOURCE_PERCENT = re.compile(r"(\d+(?:\.\d+)?)\s?%")

FRAGMENT_PATH = re.compile(r"results/([\w-]+)\.md")
RUN_COMMAND = re.compile(r"run\.sh(?:\s+--[\w-]+)*\s+([\w-]+)")
SECTION_REFERENCE = re.compile(r"§(\d+[a-z]?)")
BLOCK_MENTION = re.compile(r"([\w-]+) (?:blocks?|ledger)\b")

CODE_SPAN = re.compile(r"`[^`\n]*`")
NOT_PROSE = re.compile(r"\]\([^)\s]*\)|https?://\S+|arXiv \S+|<[^>\n]*>")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z(\[*`_])")
ABBREVIATIONS = ("e.g.", "i.e.", "vs.", "cf.", "etc.", "approx.", "resp.")


@dataclass
class Block:
    name: str
    text: str


@dataclass
class Section:
    """The span between a heading and the next heading, and what it holds."""

    heading: str
    number: str | None
    level: int
    blocks: list[str] = field(default_factory=list)
    named: set[str] = field(default_factory=set)


@dataclass
class Sentence:
    """A piece of hand-written text: its text (code spans and link targets blanked), the raw text
    (for the names it mentions), the line of each character, and its section's index."""

    text: str
    raw: str
    lines: list[int]
    section: int


@dataclass
class Document:
    blocks: list[Block]
    sections: list[Section]
    sentences: list[Sentence]


def read_document(path: Path) -> Document:
    """The blocks, sections and hand-written sentences of a Markdown document."""
    blocks: list[Block] = []
    sections = [Section(heading="", number=None, level=0)]
    sentences: list[Sentence] = []
    paragraph: list[tuple[int, str]] = []
    block_name: str | None = None
    block_text: list[str] = []
    in_fence = False

    def end_paragraph() -> None:
        if paragraph:
            sentences.extend(split_sentences(paragraph, len(sections) - 1))
            paragraph.clear()

    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if block_name is not None:
            if line.startswith(f"<!-- END {block_name} -->"):
                blocks.append(Block(block_name, "\n".join(block_text)))
                sections[-1].blocks.append(block_name)
                block_name = None
            else:
                block_text.append(line)
            continue
        if FENCE.match(line):
            end_paragraph()
            in_fence = not in_fence
            continue
        if in_fence:
            continue
        begin = BEGIN.match(line)
        if begin:
            end_paragraph()
            block_name, block_text = begin.group(1), []
            continue
        heading = HEADING.match(line)
        if heading:
            end_paragraph()
            sections.append(new_section(line))
        # After the heading opens its section: a heading's command names its own section's fragment.
        sections[-1].named |= fragments_named(line)
        if heading:
            paragraph.append((number, line))
            end_paragraph()
        elif not line.strip() or line.lstrip().startswith("<!--"):
            end_paragraph()
        elif LIST_ITEM.match(line) or line.lstrip().startswith("|"):
            end_paragraph()
            paragraph.append((number, line))
        else:
            paragraph.append((number, line))
    end_paragraph()
    return Document(blocks, sections, sentences)


def new_section(heading: str) -> Section:
    number = SECTION_NUMBER.match(heading)
    level = len(heading) - len(heading.lstrip("#"))
    return Section(heading=heading, number=number.group(1) if number else None, level=level)


def split_sentences(paragraph: list[tuple[int, str]], section: int) -> list[Sentence]:
    """The sentences of a paragraph, each character keeping its line number."""
    raw = "\n".join(text for _, text in paragraph)
    lines = [number for number, text in paragraph for _ in text + "\n"]
    prose = blank(NOT_PROSE, blank(CODE_SPAN, raw))
    starts = [0] + [m.end() for m in SENTENCE_END.finditer(prose) if not after_abbreviation(prose, m.start())]
    ends = starts[1:] + [len(prose)]
    return [Sentence(prose[a:b], raw[a:b], lines[a:b], section) for a, b in zip(starts, ends, strict=True)]


def blank(pattern: re.Pattern[str], text: str) -> str:
    """The text with each match replaced by as many spaces: offsets (and line numbers) hold."""
    return pattern.sub(lambda m: " " * len(m.group(0)), text)


def after_abbreviation(text: str, end: int) -> bool:
    return text[:end].endswith(ABBREVIATIONS)


def fragments_named(text: str) -> set[str]:
    """The fragments a piece of text links or whose command it names."""
    return set(FRAGMENT_PATH.findall(text)) | set(RUN_COMMAND.findall(text))


@dataclass
class Figure:
    text: str
    unit: str
    offset: int
    as_written: str


def figures_in(text: str) -> list[Figure]:
    """The figures of a piece of hand-written text (see the module docstring for the rule)."""
    figures: list[Figure] = []
    for token in FIGURE_TOKEN.finditer(text):
        unit = (token.group("unit") or "").strip()
        ends = [("low", token.group("low")), ("high", token.group("high"))]
        numbers = [(name, value) for name, value in ends if value is not None]
        if not unit and not any(is_decimal(value) for _, value in numbers):
            continue
        figures.extend(
            Figure(value, unit, token.start(name), token.group(name) + (token.group("unit") or ""))
            for name, value in numbers
        )
    return figures


def is_decimal(number: str) -> bool:
    return "." in number or "e" in number


class Sources:
    """The numbers of every fragment and block, by name, and the blocks of docs/results.md's
    numbered sections (what §N cites)."""

    def __init__(self, root: Path, docs: list[Path]) -> None:
        self.texts: dict[str, list[str]] = {}
        for fragment in sorted((root / "docs" / "results").glob("*.md")):
            self.texts.setdefault(fragment.stem, []).append(fragment.read_text(encoding="utf-8"))
        spliced = {root / "README.md", *(root / "docs").glob("*.md"), *docs}
        for doc in sorted(spliced):
            if doc.exists():
                for block in read_document(doc).blocks:
                    self.texts.setdefault(block.name, []).append(block.text)
        self.numbers = {name: numbers_of("\n".join(texts)) for name, texts in self.texts.items()}
        results = root / "docs" / "results.md"
        self.sections = read_document(results).sections if results.exists() else []

    def cited_section(self, number: str) -> set[str]:
        """The blocks of docs/results.md's section §number and its subsections."""
        names: set[str] = set()
        level = None
        for section in self.sections:
            if level is not None and section.level <= level:
                break
            if level is not None or section.number == number:
                level = section.level if level is None else level
                names |= set(section.blocks) | section.named
        return names

    def numbers_of_sources(self, names: set[str]) -> set[str]:
        return set().union(*(self.numbers.get(name, set()) for name in names))


def numbers_of(text: str) -> set[str]:
    """Every number of a generated text, thousands commas dropped, its K lengths (16K) and its
    percentages (12%)."""
    plain = SOURCE_THOUSANDS.sub("", text)
    percentages = {f"{n}%" for n in SOURCE_PERCENT.findall(plain)}
    return set(SOURCE_NUMBER.findall(plain)) | set(SOURCE_K.findall(plain)) | percentages


def sources_of(sentence: Sentence, document: Document, sources: Sources) -> set[str]:
    """The names a sentence draws on: those it names, or else its section's."""
    named = fragments_named(sentence.raw) | set(BLOCK_MENTION.findall(sentence.raw)) & sources.texts.keys()
    for number in SECTION_REFERENCE.findall(sentence.raw):
        named |= sources.cited_section(number)
    if named:
        return named
    section = document.sections[sentence.section]
    return set(section.blocks) | section.named


def significant_digits(figure: str) -> int:
    mantissa = figure.split("e")[0].replace(".", "").lstrip("0")
    return len(mantissa)


def rounds_to(value: float, digits: int) -> str:
    return f"{value:.{digits - 1}e}"


def held(figure: Figure, numbers: set[str]) -> bool:
    value = figure.text.replace(",", "")
    if figure.unit == "K" and value.isdigit():
        thousands = int(value)
        return f"{value}K" in numbers or str(thousands * 1024) in numbers or str(thousands * 1000) in numbers
    if figure.unit == "%":
        # A percentage only from a source's percentages: a table's counts and lengths are not.
        numbers = {n.rstrip("%") for n in numbers if n.endswith("%")}
    if value in numbers:
        return True
    values = [float(n) for n in numbers if not n.endswith(("K", "%"))]
    if float(value) in values:
        return True
    digits = significant_digits(value)
    if digits < 3:
        return False
    target = rounds_to(float(value), digits)
    return any(rounds_to(v, digits) == target for v in values)


@dataclass(frozen=True)
class Unquoted:
    line: int
    figure: str
    context: str


def unquoted(doc: Path, sources: Sources, tree_wide: bool) -> list[Unquoted]:
    """Each figure of the document that its sources do not hold, with the words before it."""
    document = read_document(doc)
    missing = []
    for sentence in document.sentences:
        names = set(sources.texts) if tree_wide else sources_of(sentence, document, sources)
        numbers = sources.numbers_of_sources(names)
        for figure in figures_in(sentence.text):
            if not held(figure, numbers):
                context = words_before(sentence.text, figure.offset)
                missing.append(Unquoted(sentence.lines[figure.offset], figure.as_written, context))
    return missing


def words_before(text: str, offset: int) -> str:
    collapsed = " ".join(text[:offset].split())
    return collapsed[-KNOWN_CONTEXT:]


def read_known(path: Path) -> set[tuple[str, str, str]]:
    """(document, figure, words before it) of each listed exception. A line that starts with '#'
    is a comment, and so is a fourth field that starts with '#' (why the figure is listed)."""
    if not path.exists():
        return set()
    known = set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) == 4 and fields[3].startswith("#"):
            fields = fields[:3]
        if len(fields) != 3:
            raise SystemExit(f"{path}:{number}: expected document, figure, context [, # reason], tab-separated")
        doc, figure, context = fields
        known.add((doc, figure, context))
    return known


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=SCRIPT_ROOT, help="the repository whose fragments are the sources")
    parser.add_argument("--known", type=Path, default=KNOWN_FILE, help="the listed exceptions (default: %(default)s)")
    parser.add_argument("docs", nargs="+", type=Path)
    args = parser.parse_args(argv)
    root = args.root.resolve()
    sources = Sources(root, [doc.resolve() for doc in args.docs])
    tree_wide = {root / name for name in TREE_WIDE_DOCS}
    known = read_known(args.known)
    matched: set[tuple[str, str, str]] = set()
    count = 0
    for doc in args.docs:
        for figure in unquoted(doc, sources, doc.resolve() in tree_wide):
            key = (doc.as_posix(), figure.figure, figure.context)
            if key in known:
                matched.add(key)
                continue
            print(f"{doc}:{figure.line}: {figure.figure}\t(after: {figure.context})")
            count += 1
    checked = {doc.as_posix() for doc in args.docs}
    for listed_doc, listed_figure, context in sorted(known - matched):
        if listed_doc in checked:
            print(f"{args.known}: stale entry, no such figure: {listed_doc}\t{listed_figure}\t{context}")
            count += 1
    print(f"unquoted-figures: {count} figure(s) in hand-written text that their sources do not hold", file=sys.stderr)
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
