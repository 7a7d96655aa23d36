"""tools/dgq3-grids.py (docs/spec.md rule W8): the Lloyd-Max grids dgq3's `nl` parameter codes
with are what the script fits, so the header cannot drift from the command that made it.
By hand: tests/python/run_pytest.sh -k dgq3_grids
"""

import subprocess
import sys

import numpy as np

from conftest import REPO_ROOT
from dgqtools import dgq3_grids

HEADER = REPO_ROOT / "core" / "include" / "dgq" / "dgq3_grids.hpp"


def test_the_committed_header_is_what_the_script_writes():
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "dgq3-grids.py"), "--check", str(HEADER)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert "up to date" in run.stdout


def test_every_grid_pins_the_extreme_and_beats_the_uniform_grid_on_its_law():
    for bits, (levels, mse, uniform) in dgq3_grids.grids().items():
        assert levels[0] == -127 and len(levels) == 1 << bits
        assert np.all(np.diff(levels) > 0)
        assert mse < 0.92 * uniform  # 10-17 % lower at 2-5 bits


def test_a_changed_header_is_reported(tmp_path):
    stale = tmp_path / "grids.hpp"
    stale.write_text(HEADER.read_text().replace("return -45;", "return -44;"))
    run = subprocess.run(
        [sys.executable, str(REPO_ROOT / "tools" / "dgq3-grids.py"), "--check", str(stale)],
        capture_output=True,
        text=True,
    )
    assert run.returncode == 1
    assert "differs from what tools/dgq3-grids.py writes" in run.stderr
