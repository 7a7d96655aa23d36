#!/usr/bin/env python3
"""splice-block.py DOC NAME BLOCK_FILE: puts BLOCK_FILE's text between `<!-- BEGIN NAME -->` and
`<!-- END NAME -->` in DOC, through dgqtools.results.publish.splice_into_report (atomic write),
for the benchmark scripts that generate a block of docs/benchmarks.md. Exit 1 naming DOC and
NAME when DOC has no such markers."""

import sys
from pathlib import Path

from dgqtools.results.publish import splice_into_report

if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: tools/splice-block.py DOC NAME BLOCK_FILE")
    doc, name, block = Path(sys.argv[1]), sys.argv[2], Path(sys.argv[3])
    if not splice_into_report(name, block.read_text(encoding="utf-8"), doc):
        sys.exit(f"splice-block: {doc} has no <!-- BEGIN {name} --> ... <!-- END {name} --> markers")
