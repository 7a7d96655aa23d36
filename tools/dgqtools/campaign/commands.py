"""The dgq commands that read each kind of file, and how each runs: under `timeout` and `prlimit`
(address space, no core), with dgq's deadlines in its environment, and as a repro line.
"""

from __future__ import annotations

import argparse
import os
import shlex
from dataclasses import dataclass, field

from dgqtools.campaign.kinds import EVAL_CTX, Seed


@dataclass
class Cmd:
    name: str
    argv: list
    new_outputs: list = field(default_factory=list)  # must not exist after a failure
    changed_inputs: list = field(default_factory=list)  # existing files: unchanged after a failure
    prep: list = field(default_factory=list)  # ("copy", src, dst) | ("mkdir", dir) | ("write", path, text)


def commands_for(seed: Seed, dgq: str) -> list[Cmd]:
    m = "mutant.h5"
    k = seed.kind
    th = ["--threads", "1"]
    cmds = [Cmd("inspect", [dgq, "inspect", m])]
    if k == "trace":
        cmds += [
            Cmd("compress", [dgq, "compress", m, "-o", "compress-out.h5", "--scheme", "dgq", *th], ["compress-out.h5"]),
            Cmd(
                "replay",
                [
                    dgq,
                    "replay",
                    m,
                    "--scheme",
                    "q8_0",
                    "--scheme",
                    "dgq",
                    *th,
                    "-o",
                    "replay-out.h5",
                    "--json",
                    "replay-out.json",
                ],
                ["replay-out.h5", "replay-out.json"],
            ),
            Cmd(
                "sweep",
                [dgq, "sweep", "sweep-trace.toml", "-o", "sweep-out.h5", *th],
                ["sweep-out.h5"],
                prep=[("write", "sweep-trace.toml", 'schemes = ["q8_0"]\ntraces = ["mutant.h5"]\n')],
            ),
        ]
    elif k == "compressed":
        cmds.append(Cmd("decompress", [dgq, "decompress", m, "-o", "decompress-out.h5"], ["decompress-out.h5"]))
    elif k == "results":
        cfg, trace = str(seed.extra["config"]), str(seed.extra["trace"])
        shard_dir = "slurm-out.h5.slurm/shards"
        cmds += [
            Cmd("merge-self", [dgq, "merge", "merge-self-out.h5", m, m], ["merge-self-out.h5"]),
            Cmd("merge-valid", [dgq, "merge", "merge-valid-out.h5", m, str(seed.path)], ["merge-valid-out.h5"]),
            Cmd(
                "replay-into",
                [dgq, "replay", trace, "--scheme", "fp16", *th, "-o", "replay-into.h5"],
                [],
                ["replay-into.h5"],
                prep=[("copy", m, "replay-into.h5")],
            ),
            Cmd(
                "sweep-resume",
                [dgq, "sweep", cfg, "-o", "sweep-resume.h5", *th],
                [],
                ["sweep-resume.h5"],
                prep=[("copy", m, "sweep-resume.h5")],
            ),
            Cmd(
                "slurm-merge",
                [dgq, "slurm", cfg, "-o", "slurm-out.h5", "--tasks", "1", "--merge"],
                ["slurm-out.h5"],
                prep=[("mkdir", shard_dir), ("copy", m, shard_dir + "/shard-0-of-1.h5")],
            ),
        ]
    elif k in ("model", "tokens", "gguf"):
        model = str(seed.extra["model"]) if k == "tokens" else m
        text = m if k == "tokens" else str(seed.extra["tokens"])
        ctx = seed.extra.get("ctx", EVAL_CTX)
        toml = (
            f'schemes = ["q8_0"]\n[eval]\nctx = {ctx}\nchunks = 1\n[[eval.model]]\npath = "{model}"\n'
            f'label = "m"\ntexts = ["{text}"]\n'
        )
        if k == "gguf":
            cmds = []  # inspect reads HDF5 files only
        cmds += [
            Cmd(
                "eval",
                [
                    dgq,
                    "eval",
                    "--model",
                    model,
                    "--text",
                    text,
                    "--ctx",
                    ctx,
                    "--chunks",
                    "1",
                    "--scheme",
                    "q8_0",
                    *th,
                    "-o",
                    "eval-out.h5",
                    "--json",
                    "eval-out.json",
                ],
                ["eval-out.h5", "eval-out.json"],
            ),
            Cmd(
                "sweep-eval",
                [dgq, "sweep", "sweep-eval.toml", "-o", "sweep-eval-out.h5", *th],
                ["sweep-eval-out.h5"],
                prep=[("write", "sweep-eval.toml", toml)],
            ),
        ]
    elif k == "base-logits":
        cmds.append(
            Cmd(
                "eval-base-logits",
                [
                    dgq,
                    "eval",
                    "--model",
                    str(seed.extra["model"]),
                    "--text",
                    str(seed.extra["tokens"]),
                    "--ctx",
                    EVAL_CTX,
                    "--chunks",
                    "1",
                    "--scheme",
                    "q8_0",
                    *th,
                    "--base-logits",
                    "base-in.h5",
                    "-o",
                    "eval-out.h5",
                ],
                ["eval-out.h5"],
                ["base-in.h5"],
                prep=[("copy", m, "base-in.h5")],
            )
        )
    return cmds


def deadline_env(deadline: float) -> dict:
    """dgq's deadline on its forked metadata check; 0 leaves dgq's default (60 s)."""
    return {"DGQ_HDF5_CHECK_TIMEOUT": f"{deadline:g}"} if deadline > 0 else {}


def child_env(deadline: float) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "HDF5_", "DGQ_", "OMP_"))}
    env.update({**deadline_env(deadline), "OMP_NUM_THREADS": "1", "LC_ALL": "C"})
    return env


def wrapped(argv: list[str], opts: argparse.Namespace, as_limit: int | None = None) -> list[str]:
    return [
        "timeout",
        "-k",
        "5",
        f"{opts.timeout:g}",
        "prlimit",
        f"--as={as_limit or opts.as_limit}",
        "--core=0",
        *[str(a) for a in argv],
    ]


def repro_line(cmd: Cmd, opts: argparse.Namespace) -> str:
    steps = []
    for p in cmd.prep:
        if p[0] == "copy":
            steps.append(f"cp {shlex.quote(p[1])} {shlex.quote(p[2])}")
        elif p[0] == "mkdir":
            steps.append(f"mkdir -p {shlex.quote(p[1])}")
    env = " ".join([*(f"{k}={v}" for k, v in deadline_env(opts.hdf5_deadline).items()), "OMP_NUM_THREADS=1"])
    steps.append(f'env {env} {shlex.join(wrapped(cmd.argv, opts))}; echo "exit $?"')
    return " && ".join(steps)
