"""Mutation campaign over every kind of file dgq reads (docs/robustness.md, "Mutation campaign").

Seeds are small valid files made by dgq itself (gen-trace, compress, replay, sweep, eval) and
by tools/export-model.py (tiny random models), plus the committed h5py trace fixture. Each seed
is mutated N times by a numpy Generator seeded from (--seed, seed name, mutant index), so every
mutant is reproducible on its own; a mutant is byte-level (bit flips, byte runs set to 0x00,
0xFF or random, "interesting" integers in metadata, truncation, chunks duplicated or deleted),
structure-aware (h5py: a dataset's dtype, shape, layout or filters changed, datasets, groups and
attributes deleted, moved, swapped or linked in cycles, attributes set to absurd values,
NaN/Inf/extreme values in the data), or both, or (15 %) aimed at variable-length strings: the
global heap collections that hold them (an object's size, index or turned into free space of
size 0, the collection's size) and the heap ids that point into them (length, index, address),
the fields libhdf5 1.10.8 loops or copies out of bounds on. Byte positions favour the file's
metadata (every byte outside the datasets' stored data), where libhdf5 and dgq's checks live.
GGUF models (kind gguf, the fuzz corpus's two) get byte-level edits, favouring their header.

Every command that reads the kind runs on each mutant, in a fresh folder, under
`timeout` and `prlimit --as` (and `--core=0`):

  trace        inspect, compress, replay, sweep (the trace in a sweep config)
  compressed   inspect, decompress
  results      inspect, merge (with itself), merge (with its valid seed), replay into it
               (adds a run), sweep resume into it, slurm --merge (as shard 0 of 1)
  model        inspect, eval, sweep with [eval]
  tokens       inspect, eval, sweep with [eval]
  base-logits  inspect, eval --base-logits
  gguf         eval, sweep with [eval] (the GGUF as the model)

Each run is classified:
  ok       exit 0; or exit 2 whose stderr has exactly one "dgq: error:" line, which is its
           last non-empty line (progress lines before it are allowed) and no HDF5-DIAG dump
  crash    killed by a signal (SIGSEGV, SIGABRT, ...: exit 128+n through timeout, or < 0)
  hang     still running after --timeout seconds
  oom      an allocation refused: std::bad_alloc, length_error ("cannot create
           std::vector larger than max_size()", "basic_string::_M_create"), "memory
           allocation failed" in the message, whatever the exit code; each such run is run once
           more with twice the --as limit, and the summary says how many ended the same way
           (those the limit did not decide: a request no limit would grant, or libhdf5 calling a
           failed zero-byte malloc an allocation failure)
  badmsg   any other exit code, or an error that is not one "dgq: error:" line
  partial  the command failed (correctly) but left a file under an output's final name, or
           changed a results/base-logits file it was to add to
Every mutant with a non-ok run is kept under OUT/findings/KIND/ID/ with the mutant, the files
its commands read from the run folder, repro.sh (the exact command lines) and info.json.
OUT/summary.txt and OUT/summary.json hold the table per kind x command. First, as a control,
every command runs on each unmutated seed file and must exit 0: a command that refused valid
files would make every mutant's run a clean refusal. Exit code 1 when a control run fails or any
run is not ok, 0 otherwise.

dgq's own deadline on libhdf5 (DGQ_HDF5_CHECK_TIMEOUT, the forked metadata walk's) is left at
its default (60 s) unless --hdf5-deadline sets it: a file that keeps libhdf5 busy is then a hang
at the 20 s --timeout, not a refusal after a deadline (a corrupt file must be refused in seconds).

Usage (from the repository root, with the project's .venv):
  .venv/bin/python tools/mutation-campaign.py --dgq build/sim/dgq --out /tmp/campaign \\
      --seed 20 --mutants-per-seed 200 --jobs 2
  .venv/bin/python tools/mutation-campaign.py --dgq build/sim/dgq --out /tmp/c --kinds trace,results \\
      --only trace-f16-00017        # one mutant again, by its id
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import shutil
import sys
import time
from pathlib import Path

from dgqtools.campaign.byte_mutations import (
    data_ranges,
    gguf_data_ranges,
    metadata_positions,
)
from dgqtools.campaign.kinds import KINDS
from dgqtools.campaign.running import run_control, run_mutant
from dgqtools.campaign.seeds import make_seeds
from dgqtools.campaign.summary import summarize


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgq", required=True, help="the dgq binary under test")
    ap.add_argument("--seed-dgq", help="the dgq that makes the seed files (default: --dgq)")
    ap.add_argument("--out", required=True, help="output folder (seeds/, findings/, summary.*); emptied first")
    ap.add_argument("--seed", type=int, default=20, help="campaign seed (default 20)")
    ap.add_argument("--mutants-per-seed", type=int, default=50)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ",".join(KINDS))
    ap.add_argument("--seeds", help="comma-separated seed names to use (default: all of the kinds)")
    ap.add_argument("--only", help="run only these mutants (comma-separated ids, e.g. trace-f16-00017)")
    ap.add_argument(
        "--keep-all",
        action="store_true",
        help="keep every mutant (OUT/kept/KIND/ID, with repro.sh), not only those with a finding",
    )
    ap.add_argument("--jobs", type=int, default=1, help="mutants in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per command (default 20)")
    ap.add_argument("--as-limit", default=str(4 << 30), help="address-space limit in bytes (default 4 GiB)")
    ap.add_argument(
        "--hdf5-deadline",
        type=float,
        default=0,
        help="DGQ_HDF5_CHECK_TIMEOUT for the commands (default 0: dgq's own default, 60 s)",
    )
    ap.add_argument("--quiet", action="store_true", help="no progress lines")
    opts = ap.parse_args(argv)
    kinds = [k for k in opts.kinds.split(",") if k]
    for k in kinds:
        if k not in KINDS:
            ap.error(f"unknown kind {k}; kinds: {', '.join(KINDS)}")
    for tool in ("timeout", "prlimit"):
        if shutil.which(tool) is None:
            ap.error(f"{tool} not found (coreutils / util-linux)")
    opts.dgq = str(Path(opts.dgq).resolve())
    out = Path(opts.out).resolve()
    opts.out = str(out)
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    opts.work = str(out / "work")
    started = time.monotonic()
    seeds = make_seeds(str(Path(opts.seed_dgq).resolve()) if opts.seed_dgq else opts.dgq, out / "seeds")
    chosen = [s for k in kinds for s in seeds[k]]
    if opts.seeds:
        names = set(opts.seeds.split(","))
        chosen = [s for s in chosen if s.name in names]
    tasks = []
    for s in chosen:
        ranges = gguf_data_ranges(s.path) if s.kind == "gguf" else data_ranges(s.path)
        meta = metadata_positions(s.path.stat().st_size, ranges)
        for i in range(opts.mutants_per_seed):
            if opts.only and f"{s.name}-{i:05d}" not in opts.only.split(","):
                continue
            tasks.append((s, meta, i, opts))
    print(
        f"mutation-campaign: seed {opts.seed}, {len(chosen)} seed file(s), {opts.mutants_per_seed} mutant(s) "
        f"each, kinds {','.join(kinds)}, dgq {opts.dgq}, timeout {opts.timeout:g} s, --as {opts.as_limit}, "
        f"{opts.jobs} job(s)",
        flush=True,
    )
    results = []
    with concurrent.futures.ProcessPoolExecutor(max_workers=max(1, opts.jobs)) as pool:
        control_failures = [f for failed in pool.map(run_control, [(s, opts) for s in chosen]) for f in failed]
        for line in control_failures:
            print(f"  CONTROL FAILED: {line}", flush=True)
        for n, res in enumerate(pool.map(run_mutant, tasks, chunksize=1), 1):
            results.append(res)
            bad = [r for r in res["runs"] if r["verdict"] != "ok"]
            if bad and not opts.quiet:
                for r in bad:
                    print(
                        f"  {r['verdict'].upper()}: {res['id']} {r['command']}: {r['why'][:200]} "
                        f"[{'; '.join(res['mutation'])[:160]}]",
                        flush=True,
                    )
            if not opts.quiet and n % 100 == 0:
                print(f"  ... {n}/{len(tasks)} mutants, {time.monotonic() - started:.0f} s", flush=True)
    shutil.rmtree(out / "work", ignore_errors=True)
    elapsed = time.monotonic() - started
    text, table = summarize(results, kinds)
    runs = table["total"]["inputs"]
    not_ok = runs - table["total"]["ok"]
    header = (
        f"seed {opts.seed}, {len(results)} mutant(s) of {len(chosen)} seed file(s), {runs} command run(s), "
        f"{elapsed:.0f} s wall, {opts.jobs} job(s); dgq {opts.dgq}\n"
        f"control: every command on the {len(chosen)} unmutated seed file(s): "
        + (f"{len(control_failures)} failed" if control_failures else "all exit 0")
    )
    (out / "summary.txt").write_text(header + "\n" + text + "\n")
    (out / "summary.json").write_text(
        json.dumps(
            {
                "seed": opts.seed,
                "mutants_per_seed": opts.mutants_per_seed,
                "control_failures": control_failures,
                "kinds": kinds,
                "dgq": opts.dgq,
                "elapsed_s": round(elapsed, 1),
                "table": table,
                "mutants": results,
            },
            indent=1,
        )
    )
    print(header)
    print(text)
    if control_failures:
        print(f"mutation-campaign: {len(control_failures)} command(s) refused an unmutated seed file (above)")
        return 1
    if not_ok:
        print(f"mutation-campaign: {not_ok} run(s) not ok; reproducers in {out / 'findings'}")
        return 1
    print("mutation-campaign: every run ok")
    return 0


if __name__ == "__main__":
    sys.exit(main())
