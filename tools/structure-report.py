#!/usr/bin/env python3
"""The structure figures of a commit: the largest source files, the files over the line budget,
and the include graph between the top-level folders.

Usage: tools/structure-report.py [REV]   (default HEAD; reads git objects, so the work tree and
any checkout of REV are left alone)

It prints Markdown: the ten largest C++/CUDA sources, how many exceed 450 lines (the budget of
docs/architecture.md), and for every pair of top-level folders (core, reference, cpu, cuda, sim,
bench, tests...) how many `#include "..."` lines in the first resolve to a header of the
second. A quoted include is resolved the way the build resolves it: against the including
file's folder, then each folder's public include/ and private src/ roots, then the top level.
"""

import re
import subprocess
import sys
from collections import Counter

SOURCE = re.compile(r"\.(cpp|hpp|h|cu|cuh|cxx)$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
BUDGET = 450


def git(*args: str) -> str:
    return subprocess.run(["git", *args], check=True, capture_output=True, text=True).stdout


def main() -> None:
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    paths = [p for p in git("ls-tree", "-r", "--name-only", rev).splitlines() if SOURCE.search(p)]
    texts = {p: git("show", f"{rev}:{p}") for p in paths}
    lines = {p: t.count("\n") for p, t in texts.items()}

    print(f"Structure of {git('rev-parse', '--short', rev).strip()}\n")
    print("| lines | file |\n|---:|---|")
    for p in sorted(lines, key=lambda p: (-lines[p], p))[:10]:
        print(f"| {lines[p]} | `{p}` |")
    over = sorted(p for p in lines if lines[p] > BUDGET)
    print(f"\nSource files over {BUDGET} lines: {len(over)}" + (f" ({', '.join(over)})" if over else ""))

    # Every path that a quoted include could name, keyed by its suffix relative to an include root.
    by_suffix: dict[str, list[str]] = {}
    for p in paths:
        parts = p.split("/")
        for i in range(len(parts)):
            by_suffix.setdefault("/".join(parts[i:]), []).append(p)

    def resolve(src: str, name: str) -> str | None:
        here = src.rsplit("/", 1)[0] if "/" in src else ""
        top = src.split("/", 1)[0]
        candidates = [f"{here}/{name}" if here else name]
        candidates += [f"{top}/include/{name}", f"{top}/src/{name}", name]
        for c in candidates:
            if c in texts:
                return c
        found = by_suffix.get(name, [])
        return found[0] if len(found) == 1 else None

    edges: Counter[tuple[str, str]] = Counter()
    for src, text in texts.items():
        for name in INCLUDE.findall(text):
            target = resolve(src, name)
            if target is None:
                continue
            a, b = src.split("/", 1)[0], target.split("/", 1)[0]
            if a != b:
                edges[(a, b)] += 1
    print("\nIncludes between top-level folders (including folder -> included folder: lines):\n")
    print("| from | to | includes |\n|---|---|---:|")
    for (a, b), n in sorted(edges.items()):
        print(f"| {a} | {b} | {n} |")


if __name__ == "__main__":
    main()
