#!/usr/bin/env bash
# update-readme-demo.sh [DGQ]: runs tools/demo.sh with the given dgq (default build/sim/dgq) and
# writes its output, trimmed to the first trace's rows and the first memory rows, into README.md
# between "<!-- BEGIN demo -->" and "<!-- END demo -->", headed by the commit and date of the run.
# The README's example output is this command's, not typed by hand; timings differ run to run.
set -euo pipefail
cd "$(dirname "$0")/.."
dgq="${1:-build/sim/dgq}"
version="$("$dgq" --version | awk '{print $NF}')"
if [[ "$version" == *dirty* ]]; then
  echo "update-readme-demo.sh: $dgq was built from uncommitted changes ($version); build a commit" >&2
  exit 1
fi
output="$(DGQ_BIN="$dgq" tools/demo.sh 2>&1)"
block="$(python3 - "$output" "${version:0:12}" "$(date -u +%F)" <<'PY'
import re
import sys
output, commit, date = sys.argv[1:]
# Progress lines (stderr, one per replayed layer when not on a terminal) are not the demo's result.
progress = re.compile(r", \S+ elapsed, ETA \S+$")
lines = [l for l in output.splitlines() if not progress.search(l)]
table = next(i for i, l in enumerate(lines) if l.startswith("run "))
memory = next(i for i, l in enumerate(lines) if l.startswith("KV cache of "))
first_trace = lines[table + 1].split(" @ ")[1].split()[0]
rows = [l for l in lines[table + 1:memory] if l.strip()]
shown = [l for l in rows if l.split(" @ ")[1].split()[0] == first_trace]
memory_rows = [l for l in lines[memory + 2:] if l.strip() and l[0].isdigit()]
out = ["Output of `tools/demo.sh` at commit " + commit + " (" + date + "), trimmed by "
       "`tools/update-readme-demo.sh` (which writes this block):", "", "```", "$ tools/demo.sh", "..."]
out += lines[:table] + [lines[table]] + shown
out.append(f"... ({len(rows) - len(shown)} more rows: the other traces)")
out += [lines[memory], lines[memory + 1]] + memory_rows[:8]
out.append(f"... ({len(memory_rows) - 8} more rows: every other family)")
out += [l for l in lines[memory + 2:] if l.strip() and not l[0].isdigit()]
out.append("```")
print("\n".join(out))
PY
)"
PYTHONPATH="$PWD/tools${PYTHONPATH:+:$PYTHONPATH}" .venv/bin/python - "$block" <<'PY'
import sys
from pathlib import Path

from dgqtools import results  # the report's splice: the text between <!-- BEGIN demo --> and <!-- END demo -->

if not results.splice_into_report("demo", sys.argv[1] + "\n", Path("README.md")):
    sys.exit("update-readme-demo.sh: README.md has no <!-- BEGIN demo --> markers")
PY
echo "update-readme-demo.sh: README.md's demo block is tools/demo.sh's output at ${version:0:12}"
