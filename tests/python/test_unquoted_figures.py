"""tools/unquoted-figures.py (ctest docs:figures): a figure typed into a document's hand-written
text must fail unless the source its sentence names, or else its section's blocks, hold it.
Three kinds of case: the stale figures of issue 54 (fixed in d243218) restored into a scratch copy
of today's document must fail; today's documents must pass; a small synthetic document per rule.
By hand: tests/python/run_pytest.sh -k unquoted
"""

import subprocess
import sys
from dataclasses import dataclass

import pytest

from conftest import REPO_ROOT

TOOL = REPO_ROOT / "tools" / "unquoted-figures.py"
FIGURE_DOCS = ["README.md", "docs/results.md", "docs/benchmarks.md", "docs/real-traces.md"]


def run_tool(cwd, *args):
    return subprocess.run([sys.executable, str(TOOL), *map(str, args)], cwd=cwd, capture_output=True, text=True)


# --- today's documents -------------------------------------------------------------------------


def test_the_documents_of_the_tree_pass():
    result = run_tool(REPO_ROOT, *FIGURE_DOCS)
    assert result.returncode == 0, result.stdout


# --- the stale figures of issue 54, restored ---------------------------------------------------


@dataclass
class Stale:
    """An old sentence (git show d243218) put back in place of today's text, from start to end."""

    doc: str
    start: str
    end: str
    old: str
    figure: str


STALE = {
    "rotating K costs 20 %": Stale(
        "docs/results.md",
        "(rotating K as well, `rot_on=kv`",
        "per-channel key ranges isolate).",
        "(rotating K as well costs 20 % KLD at the ≤ 4.0-bit configuration on SmolLM2, because it\n"
        "  spreads the outlier channels that per-channel ranges isolate).",
        "20 %",
    ),
    "seg_on=input 1.13e-1 both": Stale(
        "docs/results.md",
        "Segmenting the rotated K on its unrotated input",
        "again within that resolution.",
        "Segmenting on the rotated or the unrotated K gives\n"
        "  the same KLD (1.13e-1 both): a row's variance is (‖x‖² − D·mean²)/D, and the rotation keeps\n"
        "  ‖x‖.",
        "1.13e-1",
    ),
    "per-kind real-trace segments": Stale(
        "docs/results.md",
        "The real SmolLM2 traces say the same in direction",
        "so none is quoted here).",
        "The real SmolLM2 traces say the same in direction (2048 tokens, all 30 layers:\n"
        "code 2.33, prose 2.19, legal 2.03, poetry 1.42 segments per head, at a budget of 3;\n"
        "[real-traces.md](real-traces.md#replay-of-the-full-real-set-30-layers-2048-tokens-4-kinds--clean10-noise)).",
        "2.33",
    ),
    "in-band markers 1.5-5 dB": Stale(
        "docs/results.md",
        "boundaries: they cost K SNR",
        "with per-channel ranges),",
        "boundaries: they cost 1.5-5 dB of K SNR,",
        "5 dB",
    ),
    "long-context under ~10 %": Stale(
        "docs/results.md",
        "- **No steady growth of KLD",
        "measures it with intervals.",
        "- **KLD does not grow with context at 2K-8K on SmolLM2** for any cache here: per 512-position\n"
        "  bucket it is flat within its noise from position 1K to 8K (figure), and the mean over the\n"
        "  scored half moves by less than the ~10 % that arithmetic order alone moves a 4-bit cache's\n"
        '  KLD on this model (docs/eval.md, "Models"). TurboQuant-3\'s even falls at 8K.',
        "10 %",
    ),
    "README n_ctx up to 16K": Stale(
        "README.md",
        "up to 8K tokens on SmolLM2",
        "a longer run was stopped unfinished).",
        "up to 16K tokens (§10).",
        "16K",
    ),
    # Not caught, and why: 8.5 is q8_0's bits in every table of the baseline block and int8-token's
    # on its synthetic head_dim-128 traces, so the block the sentence's section holds has it; only
    # a rule that ties a figure to the row of the scheme named beside it could see that int8-token
    # is 9 bits on the real traces. strict: the day it is caught, this marker must go.
    "q8_0/int8-token (8.5)": pytest.param(
        Stale(
            "docs/results.md",
            "slightly smaller than q8_0 (8.5 bits)",
            "and int8-token (9 bits).",
            "slightly smaller than q8_0/int8-token\n(8.5).",
            "8.5",
        ),
        marks=pytest.mark.xfail(
            strict=True, reason="8.5 is in the baseline block (q8_0, and int8-token at head_dim 128)"
        ),
    ),
}


def restored(text, stale):
    start = text.index(stale.start)
    end = text.index(stale.end, start) + len(stale.end)
    return text[:start] + stale.old + text[end:]


@pytest.mark.parametrize("stale", STALE.values(), ids=STALE.keys())
def test_a_stale_figure_restored_into_a_scratch_copy_fails(tmp_path, stale):
    # The scratch copy sits at the same relative path under tmp_path, checked against the real
    # fragments (--root) and the real list of known exceptions, which is keyed by that path.
    scratch = tmp_path / stale.doc
    scratch.parent.mkdir(parents=True, exist_ok=True)
    scratch.write_text(restored((REPO_ROOT / stale.doc).read_text(encoding="utf-8"), stale), encoding="utf-8")
    result = run_tool(
        tmp_path, "--root", REPO_ROOT, "--known", REPO_ROOT / "tools" / "unquoted-figures.known", stale.doc
    )
    assert result.returncode == 1
    assert f": {stale.figure}\t" in result.stdout, result.stdout


def test_the_scratch_copy_without_a_stale_figure_passes(tmp_path):
    # The control for the cases above: the same copy, unchanged, is clean.
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "results.md").write_bytes((REPO_ROOT / "docs" / "results.md").read_bytes())
    result = run_tool(
        tmp_path, "--root", REPO_ROOT, "--known", REPO_ROOT / "tools" / "unquoted-figures.known", "docs/results.md"
    )
    assert result.returncode == 0, result.stdout


# --- one rule at a time, on synthetic fragments -------------------------------------------------


def check(tmp_path, text, fragments=None, known=""):
    """Checks doc.md against tmp_path/docs/results/<name>.md, with its own list of exceptions."""
    results = tmp_path / "docs" / "results"
    results.mkdir(parents=True, exist_ok=True)
    for name, fragment in (fragments or {}).items():
        (results / f"{name}.md").write_text(fragment, encoding="utf-8")
    (tmp_path / "doc.md").write_text(text, encoding="utf-8")
    (tmp_path / "known").write_text(known, encoding="utf-8")
    return run_tool(tmp_path, "--root", tmp_path, "--known", tmp_path / "known", "doc.md")


def test_a_decimal_that_no_source_holds_fails_naming_its_line(tmp_path):
    result = check(tmp_path, "# x\n\nDGQ costs 0.123456789 of something.\n")
    assert result.returncode == 1
    assert "doc.md:3: 0.123456789\t" in result.stdout


def test_an_integer_with_a_unit_is_a_figure(tmp_path):
    for text in ["It rose by 12 %.\n", "A ratio of 3x.\n", "n_ctx up to 16K.\n", "It costs 4 dB.\n", "9 bits.\n"]:
        assert check(tmp_path, text).returncode == 1, text


def test_a_k_length_is_held_by_its_token_count(tmp_path):
    fragments = {"long": "| n_ctx 16384 |\n"}
    assert check(tmp_path, "Up to 16K ([long](docs/results/long.md)).\n", fragments).returncode == 0
    assert check(tmp_path, "Up to 32K ([long](docs/results/long.md)).\n", fragments).returncode == 1


def test_bare_integers_and_names_are_not_figures(tmp_path):
    text = (
        "SmolLM2-135M and Gemma 3 270M, §9c, issue #54, 2026-12-02, version 0.19.0, commit 581d64d,\n"
        "2 threads, 30 layers, 2048 tokens, Llama-3 8B, kgroup=128.\n\n1. a list item\n"
    )
    result = check(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_both_ends_of_a_range_are_figures(tmp_path):
    fragments = {"a": "| +3 % | 0.8 |\n"}
    result = check(
        tmp_path, "It moves 3–10 % ([a](docs/results/a.md)); and 0.8-6.5 ([a](docs/results/a.md)).\n", fragments
    )
    assert result.returncode == 1
    assert ": 10 %\t" in result.stdout and ": 6.5\t" in result.stdout
    assert ": 3" not in result.stdout and ": 0.8\t" not in result.stdout


def test_a_figure_must_be_in_the_fragment_its_sentence_links(tmp_path):
    fragments = {"alpha": "| 0.4242 |\n", "beta": "| 0.1111 |\n"}
    assert check(tmp_path, "KL 0.4242 ([alpha](docs/results/alpha.md)).\n", fragments).returncode == 0
    wrong = check(tmp_path, "KL 0.4242 ([beta](docs/results/beta.md)).\n", fragments)
    assert wrong.returncode == 1 and ": 0.4242\t" in wrong.stdout


def test_an_unnamed_figure_must_be_in_its_own_sections_blocks(tmp_path):
    text = (
        "## One\n\n<!-- BEGIN one -->\n| 0.4242 |\n<!-- END one -->\n\nKL 0.4242 here.\n\n"
        "## Two\n\n<!-- BEGIN two -->\n| 0.1111 |\n<!-- END two -->\n\nKL 0.4242 there.\n"
    )
    result = check(tmp_path, text)
    assert result.returncode == 1
    assert "doc.md:15: 0.4242" in result.stdout and "doc.md:7:" not in result.stdout


def test_a_sentence_that_names_a_block_draws_on_it(tmp_path):
    text = "## One\n\n<!-- BEGIN one -->\n| 0.4242 |\n<!-- END one -->\n\n## Two\n\nKL 0.4242 in the one block above.\n"
    assert check(tmp_path, text).returncode == 0


def test_a_fragment_linked_anywhere_in_the_section_serves_the_whole_section(tmp_path):
    fragments = {"alpha": "| 0.4242 |\n"}
    text = "## One\n\nThe table is [alpha](docs/results/alpha.md).\n\nKL 0.4242 here.\n\n## Two\n\nKL 0.4242 there.\n"
    result = check(tmp_path, text, fragments)
    assert result.returncode == 1
    assert "doc.md:5:" not in result.stdout and "doc.md:9: 0.4242" in result.stdout


def test_code_spans_and_fences_are_not_hand_written(tmp_path):
    text = "Run `dgq memory --tokens 0.123456789`.\n\n```\ndgq eval --ppl 7.777 --tokens 16K\n```\n"
    result = check(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_figures_inside_generated_blocks_are_not_hand_written(tmp_path):
    text = "<!-- BEGIN demo -->\nKL 0.123456789, +12 %, 16K\n<!-- END demo -->\n"
    result = check(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_a_precise_figure_quotes_a_source_value_written_another_way(tmp_path):
    # Three or more significant digits: rounding at the figure's precision; fewer: the same value.
    fragments = {"m": "| 17.180 | 4.50 |\n"}
    link = " ([m](docs/results/m.md))"
    assert check(tmp_path, f"It is 1.718e+01{link}.\n", fragments).returncode == 0
    assert check(tmp_path, f"It is 1.719e+01{link}.\n", fragments).returncode == 1
    assert check(tmp_path, f"It is 4.5 bits{link}.\n", fragments).returncode == 0
    assert check(tmp_path, f"It is 4.6 bits{link}.\n", fragments).returncode == 1


def test_a_known_exception_is_not_reported_and_a_stale_one_is(tmp_path):
    text = "It rose by 12 %.\n"
    assert check(tmp_path, text, known="doc.md\t12 %\tIt rose by\n").returncode == 0
    stale = check(tmp_path, text, known="doc.md\t12 %\tIt fell by\n")
    assert stale.returncode == 1 and "stale entry" in stale.stdout


def test_only_benchmarks_is_still_checked_tree_wide(tmp_path):
    # The same sentence, whose section holds no block, in a synthetic tree whose only fragment
    # holds its figure: docs/benchmarks.md (TREE_WIDE_DOCS) passes, docs/real-traces.md (checked
    # by section since it left that list) and any other document fail.
    (tmp_path / "docs" / "results").mkdir(parents=True)
    (tmp_path / "docs" / "results" / "m.md").write_text("| clean | 10% |\n", encoding="utf-8")
    (tmp_path / "known").write_text("", encoding="utf-8")
    text = "## Traces\n\nFour kinds, clean and 10% noise.\n"
    for doc, returncode in [("docs/benchmarks.md", 0), ("docs/real-traces.md", 1), ("docs/other.md", 1)]:
        (tmp_path / doc).write_text(text, encoding="utf-8")
        result = run_tool(tmp_path, "--root", tmp_path, "--known", tmp_path / "known", doc)
        assert result.returncode == returncode, (doc, result.stdout)


def test_a_known_exception_may_say_why_it_is_listed(tmp_path):
    text = "It rose by 12 %.\n"
    known = "# a comment line\ndoc.md\t12 %\tIt rose by\t# external\n"
    assert check(tmp_path, text, known=known).returncode == 0
    # The reason does not make an entry match: a stale entry with a reason is still stale.
    stale = check(tmp_path, text, known="doc.md\t12 %\tIt fell by\t# external\n")
    assert stale.returncode == 1 and "stale entry" in stale.stdout
    # A fourth field is a reason only when it starts with '#'.
    malformed = check(tmp_path, text, known="doc.md\t12 %\tIt rose by\texternal\n")
    assert malformed.returncode == 1 and "expected document, figure, context" in malformed.stderr
