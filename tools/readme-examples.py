#!/usr/bin/env python3
"""Runs the shell examples of a Markdown file (the README's) as a user would after the demo.

Every ```sh block is run, in order, with `bash -e -o pipefail` in a scratch folder that looks
like a checkout after `tools/demo.sh`: each top-level entry of the repository linked into it
(tools, data, models, .venv, ...), `build` linked to the build under test and `out/` its own.
The premise (--premise, e.g. tools/demo.sh) runs there first. A block that CI cannot afford
is marked on the line before its fence, with the reason:

    <!-- readme-examples: skip (runs every test: this one included) -->

and is listed, not run. The first block that fails ends the check (a later one may use what
it makes), naming its first line and showing its output. Exit 77 (ctest's skip) when a file the examples need (--needs,
e.g. .venv/bin/python or a model file) is missing from the repository: a DGQ_SKIP_PYTHON=1
build cannot run them.

Usage: tools/readme-examples.py README.md --build build [--premise tools/demo.sh]
       [--needs FILE ...] [--work DIR] [--list]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SKIP_MARK = re.compile(r"<!--\s*readme-examples:\s*skip\s*\((?P<reason>[^)]*)\)\s*-->")
FENCE_SH = re.compile(r"^```(sh|bash)\s*$")
BLOCK_TIMEOUT_S = 900
SKIP_RETURN_CODE = 77


@dataclass
class Block:
    line: int  # the fence's line number, 1-based
    text: str
    skip_reason: str | None

    def title(self) -> str:
        first = next((line for line in self.text.splitlines() if line.strip() and not line.startswith("#")), "")
        return f"line {self.line}: {first.strip()}"


def shell_blocks(markdown: str) -> list[Block]:
    """The ```sh and ```bash blocks, each with the skip reason marked on the line before it."""
    lines = markdown.splitlines()
    blocks = []
    i = 0
    while i < len(lines):
        if FENCE_SH.match(lines[i]):
            end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise SystemExit(f"readme-examples: the block at line {i + 1} is not closed")
            before = lines[i - 1] if i > 0 else ""
            mark = SKIP_MARK.search(before)
            blocks.append(Block(i + 1, "\n".join(lines[i + 1 : end]) + "\n", mark.group("reason") if mark else None))
            i = end + 1
        else:
            i += 1
    return blocks


def make_workspace(work: Path, build: Path) -> None:
    """A folder that looks like the checkout: its entries linked, `build` the build under test."""
    work.mkdir(parents=True, exist_ok=True)
    for entry in REPO.iterdir():
        if entry.name in ("out", "build", ".git"):
            continue
        link = work / entry.name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(entry)
    (work / "build").symlink_to(build.resolve())
    (work / "out").mkdir()


def run(script: str, work: Path, what: str) -> bool:
    print(f"readme-examples: running {what}", flush=True)
    try:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", script],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            timeout=BLOCK_TIMEOUT_S,
        )
    except subprocess.TimeoutExpired as e:
        print(f"readme-examples: FAILED {what}: still running after {BLOCK_TIMEOUT_S} s\n{e.output or ''}")
        return False
    if done.returncode != 0:
        print(f"readme-examples: FAILED {what}: exit code {done.returncode}; its output:\n{done.stdout}")
        return False
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("markdown", type=Path)
    ap.add_argument("--build", type=Path, default=REPO / "build", help="the build under test (its sim/dgq)")
    ap.add_argument("--premise", default="", help="a command run first, e.g. tools/demo.sh")
    ap.add_argument(
        "--needs",
        action="append",
        default=[],
        help="a file of the repository the examples need (repeatable); missing: exit 77",
    )
    ap.add_argument(
        "--work", type=Path, help="scratch folder, emptied first (default: a new temporary one); removed after"
    )
    ap.add_argument("--list", action="store_true", help="list the blocks and whether they run; run nothing")
    args = ap.parse_args()

    blocks = shell_blocks(args.markdown.read_text())
    for b in blocks:
        verdict = "run" if b.skip_reason is None else f"skipped: {b.skip_reason}"
        print(f"readme-examples: {args.markdown} {b.title()} ({verdict})")
    if args.list:
        return 0
    if not (args.build / "sim" / "dgq").exists():
        print(f"readme-examples: {args.build}/sim/dgq missing: build first")
        return 1
    missing = [n for n in args.needs if not (REPO / n).exists()]
    if missing:
        print(f"readme-examples: skipped: {', '.join(missing)} missing (tools/setup-python.sh makes them)")
        return SKIP_RETURN_CODE

    work = args.work or Path(tempfile.mkdtemp(prefix="readme-examples-"))
    if args.work and work.exists():
        shutil.rmtree(work)
    make_workspace(work, args.build)
    os.environ["DGQ_BIN"] = str((args.build / "sim" / "dgq").resolve())  # the demo's: no setup, this build
    # In order, stopping at the first failure: a later block may use what an earlier one made.
    runnable = [b for b in blocks if b.skip_reason is None]
    steps = ([(args.premise, f"the premise: {args.premise}")] if args.premise else []) + [
        (b.text, b.title()) for b in runnable
    ]
    try:
        for script, what in steps:
            if not run(script, work, what):
                return 1
    finally:
        shutil.rmtree(work)  # it links the build and the checkout: no copy left for a walk to loop in
    print(
        f"readme-examples: {len(runnable)} block(s) of {args.markdown} ran, {len(blocks) - len(runnable)} "
        "skipped as marked"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
