"""The campaign's seeds: small valid files of every kind dgq reads, made by dgq itself (gen-trace,
compress, replay, sweep, eval) and by dgqtools (tiny random models, token files), plus the
committed h5py trace fixture. Deterministic: every path dgq records in them is relative to the
folder they are written into.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING

import h5py
import numpy as np

from dgqtools.campaign.commands import child_env
from dgqtools.campaign.kinds import EVAL_CTX, GGUF_CTX, KINDS, Seed
from dgqtools.repo import REPO_ROOT
from dgqtools.token_file import write_token_file

if TYPE_CHECKING:
    from collections.abc import Sequence


def run_checked(argv, cwd=None):
    p = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True, env=child_env(5))
    if p.returncode != 0:
        raise SystemExit(
            f"mutation-campaign: seed command failed ({p.returncode}): "
            f"{shlex.join(map(str, argv))}\n{p.stdout}{p.stderr}"
        )


def write_campaign_token_file(path: Path, tokens: Sequence[int] | np.ndarray, model: str, seed: int) -> None:
    """A token file with every optional part (seed, noise mask, text) for the mutations to reach."""
    write_token_file(
        path,
        tokens,
        model,
        "prose",
        0.1,
        seed=seed,
        noise_mask=(np.arange(len(tokens)) % 7 == 3).astype(np.uint8),
        text="a tiny text of random token ids for the mutation campaign",
    )


def make_seeds(dgq: str, d: Path) -> dict[str, list[Seed]]:
    """Writes the seed files into d (deterministic: dgq's generators and fixed numpy seeds; every
    path dgq records in them is relative to d, so the bytes do not depend on where d is)."""
    from dgqtools import export_model

    d.mkdir(parents=True, exist_ok=True)
    seeds: dict[str, list[Seed]] = {k: [] for k in KINDS}
    tiny = ["--layers", "2", "--q-heads", "2", "--kv-heads", "1", "--head-dim", "64", "--tokens", "64", "--probes", "2"]
    for name, dtype, kind, noise in (("trace-f16", "f16", "poetry", "0.1"), ("trace-f32", "f32", "code", "0")):
        run_checked(
            [
                dgq,
                "gen-trace",
                "-o",
                f"{name}.h5",
                "--kind",
                kind,
                "--dtype",
                dtype,
                "--noise-rate",
                noise,
                "--seed",
                "7",
                *tiny,
            ],
            d,
        )
        seeds["trace"].append(Seed("trace", name, d / f"{name}.h5"))
    # bf16 (docs/trace-format.md): gen-trace writes f16/f32 only; K/V/Q of the f32 trace as
    # uint16 bf16 bits (truncated) with the attribute dtype = "bf16".
    shutil.copy(d / "trace-f32.h5", d / "trace-bf16.h5")
    with h5py.File(d / "trace-bf16.h5", "a") as f:
        for layer in f["layers"].values():
            for role in ("k", "v", "q"):
                bits = (np.ascontiguousarray(layer[role][()], dtype="<f4").view("<u4") >> 16).astype("<u2")
                del layer[role]
                layer.create_dataset(role, data=bits).attrs["dtype"] = "bf16"
    seeds["trace"].append(Seed("trace", "trace-bf16", d / "trace-bf16.h5"))
    shutil.copy(REPO_ROOT / "tests/fixtures/h5py/trace-v1.h5", d / "trace-h5py.h5")
    seeds["trace"].append(Seed("trace", "trace-h5py", d / "trace-h5py.h5"))
    trace = d / "trace-f16.h5"

    for name, scheme in (
        ("q8_0", "q8_0"),
        ("dgq-bitmap", "dgq:markers=bitmap"),
        ("dgq-segch", "dgq:granularity=segment-channel"),
        ("kivi-2", "kivi-2"),
        ("dgq2", "dgq2"),
        ("turboquant-3", "turboquant:bits=3"),
        ("q4_0-rot", "q4_0:rot=hadamard"),
    ):
        path = d / f"compressed-{name}.h5"
        run_checked([dgq, "compress", trace.name, "-o", path.name, "--scheme", scheme, "--threads", "1"], d)
        seeds["compressed"].append(Seed("compressed", f"compressed-{name}", path))

    models = {}
    for arch in ("llama", "gemma3"):
        cfg, tensors = export_model.random_model(arch, 0)
        model = d / f"model-{arch}.h5"
        export_model.write_model(model, f"tiny-{arch}", "random, seed 0", cfg, tensors)
        rng = np.random.default_rng(5)
        tokens = rng.integers(2, cfg["vocab_size"], size=96).astype(np.int32)
        tokens[::32] = cfg["bos_token_id"]
        text = d / f"tokens-{arch}.h5"
        write_campaign_token_file(text, tokens, f"tiny-{arch}", 5)
        models[arch] = (model, text)
        seeds["model"].append(Seed("model", f"model-{arch}", model, {"tokens": text}))
        seeds["tokens"].append(Seed("tokens", f"tokens-{arch}", text, {"model": model}))

    model, text = models["llama"]
    base = d / "base-logits-llama.h5"
    run_checked(
        [
            dgq,
            "eval",
            "--model",
            model.name,
            "--text",
            text.name,
            "--ctx",
            EVAL_CTX,
            "--chunks",
            "1",
            "--scheme",
            "q8_0",
            "--threads",
            "1",
            "--base-logits",
            base.name,
            "-o",
            "eval-scratch.h5",
        ],
        d,
    )
    (d / "eval-scratch.h5").unlink()
    seeds["base-logits"].append(Seed("base-logits", "base-logits-llama", base, {"model": model, "tokens": text}))

    replay_cfg = d / "sweep-replay.toml"
    replay_cfg.write_text(f'schemes = ["q8_0", "dgq"]\ntraces = ["{trace.name}"]\n')
    eval_cfg = d / "sweep-eval.toml"
    eval_cfg.write_text(
        f'schemes = ["q8_0"]\n[eval]\nctx = {EVAL_CTX}\nchunks = 1\n[[eval.model]]\n'
        f'path = "{model.name}"\nlabel = "tiny"\ntexts = ["{text.name}"]\n'
    )
    run_checked(
        [dgq, "replay", trace.name, "--scheme", "q8_0", "--scheme", "dgq", "--threads", "1", "-o", "results-replay.h5"],
        d,
    )
    run_checked([dgq, "sweep", replay_cfg.name, "-o", "results-sweep.h5", "--threads", "1"], d)
    run_checked([dgq, "sweep", eval_cfg.name, "-o", "results-eval.h5", "--threads", "1"], d)
    for name, config in (("results-replay", replay_cfg), ("results-sweep", replay_cfg), ("results-eval", eval_cfg)):
        seeds["results"].append(Seed("results", name, d / f"{name}.h5", {"config": config, "trace": trace}))

    # GGUF models (byte-level edits only): the fuzz corpus's two (tests/fuzz/corpus/write_seed_files.py:
    # 16-token vocabularies, every block type dgq decodes), each with a token file of its name.
    for arch in ("llama", "qwen3"):
        model = d / f"gguf-{arch}.gguf"
        shutil.copy(REPO_ROOT / f"tests/fuzz/corpus/fuzz_gguf/seed-{arch}.gguf", model)
        text = d / f"tokens-gguf-{arch}.h5"
        write_campaign_token_file(text, [(7 * i + 3) % 16 for i in range(24)], f"fuzz-{arch}", 5)
        seeds["gguf"].append(Seed("gguf", f"gguf-{arch}", model, {"tokens": text, "ctx": GGUF_CTX}))
    for leftover in d.glob("*.lock"):
        leftover.unlink()
    return seeds
