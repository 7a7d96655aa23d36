"""tools/unquoted-figures.py (ctest docs:figures): a figure typed into a document's
hand-written text must fail unless a generated fragment holds it; generated blocks and code spans
are not hand-written. By hand: tests/python/run_pytest.sh -k unquoted
"""

import subprocess
import sys

from conftest import REPO_ROOT

TOOL = REPO_ROOT / "tools" / "unquoted-figures.py"


def check(tmp_path, text):
    doc = tmp_path / "doc.md"
    doc.write_text(text, encoding="utf-8")
    return subprocess.run([sys.executable, str(TOOL), str(doc)], capture_output=True, text=True)


def test_a_typed_figure_that_no_fragment_holds_fails_naming_its_line(tmp_path):
    result = check(tmp_path, "# x\n\nDGQ costs 0.123456789 of something.\n")
    assert result.returncode == 1
    assert "doc.md:3: 0.123456789" in result.stdout


def test_a_typed_percentage_fails_too(tmp_path):
    assert check(tmp_path, "It rose by 98765.4321 %.\n").returncode == 1


def test_figures_inside_generated_blocks_and_code_spans_are_not_hand_written(tmp_path):
    text = "<!-- BEGIN demo -->\nKL 0.123456789\n<!-- END demo -->\nRun `dgq memory --tokens 0.123456789`.\n"
    result = check(tmp_path, text)
    assert result.returncode == 0, result.stdout


def test_a_figure_quoted_from_a_fragment_passes(tmp_path):
    memory = (REPO_ROOT / "docs" / "results" / "memory.md").read_text(encoding="utf-8")
    assert "17.180" in memory  # the FP16 cache of Llama-3-8B at 128K, generated
    assert check(tmp_path, "The FP16 cache is 17.180 GB.\n").returncode == 0


def test_a_precise_figure_quotes_a_fragment_value_written_another_way(tmp_path):
    # memory.md holds 17.180 (GB): 1.718e+01 is the same figure at its own precision; a figure of
    # fewer than three significant digits must appear verbatim, or "2.0" would quote any 1.95-2.05.
    assert check(tmp_path, "The FP16 cache is 1.718e+01 GB.\n").returncode == 0
    assert check(tmp_path, "The FP16 cache is 1.719e+01 GB.\n").returncode == 1


def test_a_figure_quoted_from_a_generated_block_of_the_document_passes(tmp_path):
    # Blocks spliced into a document by a command (docs/benchmarks.md's ggml tables) are
    # generated fragments too: prose may quote their figures.
    text = "<!-- BEGIN demo -->\n| L | ms |\n| 4K | 0.123456789 |\n<!-- END demo -->\nAt 4K it takes 0.123456789 ms.\n"
    assert check(tmp_path, text).returncode == 0
    assert check(tmp_path, "At 4K it takes 0.123456789 ms.\n").returncode == 1
