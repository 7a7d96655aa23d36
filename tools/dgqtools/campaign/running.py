"""Running the commands on a mutant in a fresh folder and classifying each run (ok, crash, hang,
oom, badmsg, partial); the control runs on the unmutated seeds.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import signal
import subprocess
import time
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dgqtools.campaign.commands import Cmd, child_env, commands_for, repro_line, wrapped
from dgqtools.campaign.mutant import make_mutant

if TYPE_CHECKING:
    from dgqtools.campaign.kinds import Seed

CLASSES = ["ok", "crash", "hang", "oom", "badmsg", "partial"]
ALLOC_MARKERS = (
    "bad_alloc",
    "bad_array_new_length",
    "cannot create std::vector larger than max_size",
    "basic_string::_M_create",
    "vector::_M_default_append",
    "vector::reserve",
    "memory allocation failed",
    "out of memory",
    "Cannot allocate memory",
)


def classify(rc: int, stderr: str, wall: float, opts: argparse.Namespace) -> tuple[str, str]:
    lines = [line for line in stderr.splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if any(marker in stderr for marker in ALLOC_MARKERS):
        return "oom", last
    if rc == 124 or (rc in (137, -9) and wall >= opts.timeout):
        return "hang", f"still running after {opts.timeout:g} s"
    if rc < 0 or rc > 128:
        sig = -rc if rc < 0 else rc - 128
        try:
            name = signal.Signals(sig).name
        except ValueError:
            name = f"signal {sig}"
        return "crash", f"killed by {name}" + (f"; last stderr line: {last}" if last else "")
    errors = [line for line in lines if line.startswith("dgq: error:")]
    if rc == 0:
        return ("badmsg", "exit 0 with an error line: " + errors[0]) if errors else ("ok", "")
    if rc == 2 and len(errors) == 1 and last.startswith("dgq: error:") and "HDF5-DIAG" not in stderr:
        return "ok", last
    return "badmsg", f"exit {rc}, {len(errors)} 'dgq: error:' line(s) in {len(lines)}: {last[:300]}"


def file_digest(path: Path) -> str | None:
    return str(zlib.crc32(path.read_bytes())) + ":" + str(path.stat().st_size) if path.exists() else None


def run_command(cmd: Cmd, work: Path, opts: argparse.Namespace) -> dict:
    for p in cmd.prep:
        if p[0] == "copy":
            shutil.copy(work / p[1], work / p[2])
        elif p[0] == "mkdir":
            (work / p[1]).mkdir(parents=True, exist_ok=True)
        elif p[0] == "write":
            (work / p[1]).write_text(p[2])
    before = {name: file_digest(work / name) for name in cmd.changed_inputs}
    start = time.monotonic()
    proc = subprocess.Popen(
        wrapped(cmd.argv, opts),
        cwd=work,
        env=child_env(opts.hdf5_deadline),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    try:
        out, err = proc.communicate(timeout=opts.timeout + 30)
    except subprocess.TimeoutExpired:  # timeout(1) itself should have ended it; end the group
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
    wall = time.monotonic() - start
    stderr = err.decode("utf-8", "replace")
    verdict, why = classify(proc.returncode, stderr, wall, opts)
    recheck = None
    if verdict == "oom":  # did the limit decide? The same command with twice the limit, once.
        again = subprocess.run(
            wrapped(cmd.argv, opts, 2 * int(opts.as_limit)),
            cwd=work,
            env=child_env(opts.hdf5_deadline),
            capture_output=True,
            start_new_session=True,
            timeout=opts.timeout + 30,
        )
        last = [x for x in again.stderr.decode("utf-8", "replace").splitlines() if x.strip()][-1:]
        recheck = {
            "as_limit": 2 * int(opts.as_limit),
            "rc": again.returncode,
            "last_line": "".join(last)[:300],
            "same_outcome": again.returncode == proc.returncode and "".join(last) == why,
        }
    leftovers = []
    if proc.returncode != 0:
        for name in cmd.new_outputs:
            if (work / name).exists():
                leftovers.append(f"{name} exists after exit {proc.returncode}")
        for name, digest in before.items():
            if file_digest(work / name) != digest:
                leftovers.append(f"{name} changed by a failed command")
        if verdict == "ok" and leftovers:
            verdict, why = "partial", "; ".join(leftovers)
    partial_files = sorted(str(p.relative_to(work)) for p in work.rglob("*.partial"))
    return {
        "command": cmd.name,
        "verdict": verdict,
        "why": why,
        "rc": proc.returncode,
        "wall_s": round(wall, 3),
        "stderr_tail": stderr[-2000:],
        "stdout_tail": out.decode("utf-8", "replace")[-500:],
        "partial_files_left": partial_files,
        "repro": repro_line(cmd, opts),
        **({"oom_recheck": recheck} if recheck else {}),
    }


def run_control(task: tuple[Seed, argparse.Namespace]) -> list[str]:
    """Every command on the unmutated seed: each must exit 0. A command that refuses a valid file
    would count as a clean refusal ("ok") on every mutant, and the campaign would hide it."""
    seed, opts = task
    work = Path(opts.work) / f"control-{seed.name}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copy(seed.path, work / "mutant.h5")
    failed = [
        f"{seed.name} {r['command']}: exit {r['rc']}: {r['why'][:300]}"
        for r in (run_command(cmd, work, opts) for cmd in commands_for(seed, opts.dgq))
        if r["rc"] != 0
    ]
    shutil.rmtree(work, ignore_errors=True)
    return failed


def mutant_rng(campaign_seed: int, seed_name: str, index: int) -> np.random.Generator:
    return np.random.default_rng([campaign_seed, zlib.crc32(seed_name.encode()), index])


def run_mutant(task: tuple[Seed, np.ndarray, int, argparse.Namespace]) -> dict:
    seed, meta, index, opts = task
    mid = f"{seed.name}-{index:05d}"
    work = Path(opts.work) / mid
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    rng = mutant_rng(opts.seed, seed.name, index)
    # The mutation itself runs under a 2 GiB address-space limit (soft; prlimit raises it again
    # for dgq): a bug in an edit fails with MemoryError instead of exhausting a shared machine.
    limits = resource.getrlimit(resource.RLIMIT_AS)
    resource.setrlimit(resource.RLIMIT_AS, (min(2 << 30, limits[1]) if limits[1] > 0 else 2 << 30, limits[1]))
    try:
        steps = make_mutant(seed, meta, work / "mutant.h5", rng)
    except Exception as err:
        steps = [f"mutation failed in the campaign itself: {err!r}; the unmodified seed is used"]
        shutil.copy(seed.path, work / "mutant.h5")
    finally:
        resource.setrlimit(resource.RLIMIT_AS, limits)
    runs = [run_command(cmd, work, opts) for cmd in commands_for(seed, opts.dgq)]
    bad = [r for r in runs if r["verdict"] != "ok"]
    result = {"id": mid, "kind": seed.kind, "seed": seed.name, "index": index, "mutation": steps, "runs": runs}
    if bad or opts.keep_all:
        keep = Path(opts.out) / ("findings" if bad else "kept") / seed.kind / mid
        shutil.rmtree(keep, ignore_errors=True)
        keep.parent.mkdir(parents=True, exist_ok=True)
        # the run folder as the commands left it is not what a rerun needs: keep the mutant and
        # the configs the commands wrote; repro.sh makes the copies again.
        keep.mkdir()
        shutil.copy(work / "mutant.h5", keep / "mutant.h5")
        for toml in work.glob("*.toml"):
            shutil.copy(toml, keep / toml.name)
        script = ["#!/usr/bin/env bash", f"# {mid}: {'; '.join(steps)}", 'cd "$(dirname "$0")"']
        for r in runs:  # the commands that failed; the others as comments
            script.append(f"# {r['command']}: {r['verdict']} {r['why'][:200]}".replace("\n", " "))
            script.append(r["repro"] if r["verdict"] != "ok" else "#   " + r["repro"])
        (keep / "repro.sh").write_text("\n".join(script) + "\n")
        (keep / "repro.sh").chmod(0o755)
        (keep / "info.json").write_text(json.dumps(result, indent=1))
    shutil.rmtree(work, ignore_errors=True)
    for r in runs:  # keep the summary small: details of ok runs are not needed
        if r["verdict"] == "ok":
            r.pop("stderr_tail"), r.pop("stdout_tail")
    return result
