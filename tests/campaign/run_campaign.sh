#!/usr/bin/env bash
# Runs tools/mutation-campaign.py with the project's Python (.venv, or $DGQ_PYTHON).
#   run_campaign.sh small DGQ OUT          the fixed-seed campaign of ctest campaign:mutation-small
#   run_campaign.sh planted DGQ OUT        the campaign against tests/campaign/faulty_dgq.sh: it must
#                                          report each planted crash, hang, badmsg, oom and partial
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo_root="$(cd "$here/../.." && pwd)"
python="${DGQ_PYTHON:-$repo_root/.venv/bin/python}"
if [ ! -x "$python" ]; then
  echo "run_campaign.sh: $python not found: run tools/setup-python.sh first (or set DGQ_PYTHON)" >&2
  exit 1
fi
mode=$1 dgq=$2 out=$3
campaign="$repo_root/tools/mutation-campaign.py"
case "$mode" in
  small)
    # Fixed seed and size: the same commit always gets the same verdict. About 620 runs, under a minute on 2 cores.
    exec "$python" "$campaign" --dgq "$dgq" --out "$out" --seed 20 --mutants-per-seed 10 --jobs 2
    ;;
  planted)
    set +e
    "$python" "$campaign" --dgq "$here/faulty_dgq.sh" --seed-dgq "$dgq" --out "$out" --seed 1 \
      --kinds trace,compressed --seeds trace-f16,compressed-q8_0 --mutants-per-seed 1 --timeout 3 --quiet
    rc=$?
    set -e
    [ "$rc" -eq 1 ] || { echo "FAIL: the campaign should exit 1 on a faulty dgq, exited $rc" >&2; exit 1; }
    "$python" - "$out/summary.json" <<'PY'
import json, sys
rows = {(r["kind"], r["command"]): r for r in json.load(open(sys.argv[1]))["table"]["rows"]}
expected = {("trace", "inspect"): "crash", ("trace", "compress"): "hang", ("trace", "replay"): "badmsg",
            ("trace", "sweep"): "partial", ("compressed", "inspect"): "crash", ("compressed", "decompress"): "oom"}
bad = [f"{k}: {rows.get(k)}" for k, v in expected.items() if k not in rows or rows[k][v] != 1 or rows[k]["ok"] != 0]
if bad:
    sys.exit("FAIL: planted faults not reported as expected:\n" + "\n".join(bad))
print("ok: every planted fault was reported (crash, hang, badmsg, partial, oom)")
PY
    ;;
  *) echo "run_campaign.sh: unknown mode $mode" >&2; exit 2 ;;
esac
