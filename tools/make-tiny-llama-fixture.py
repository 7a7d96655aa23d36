#!/usr/bin/env python3
"""llama.cpp's log-probabilities on the tiny random Qwen2 and Qwen3 GGUFs of tools/tiny-gguf.py:
the fixture that pins `dgq eval`'s qwen2 and qwen3 paths (Q/K/V biases, per-head Q/K RMSNorm,
head_dim apart from hidden / heads, untied output) to llama.cpp, as tools/make-llama-fixture.py
pins SmolLM2 and Gemma 3. No real Qwen GGUF ships in a PyPI package this project pins; a random
model checks the forward pass as well as a trained one. Called by
tools/make-llama-fixture.sh, which builds the tool; run that script.

Writes OUTDIR/tiny-<arch>.json: the GGUF's arguments and sha256 (the test makes the GGUF again
and checks it is the same file), CHUNKS x N_CTX seeded random token ids, and per scored token
(positions n_ctx/2 .. n_ctx-2 of each chunk) the target's log-probability and the top-8.
Usage: tools/make-tiny-llama-fixture.py --tool BIN --version V --command CMD -o OUTDIR
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

from dgqtools.make_llama_fixture import fixture_provenance, run_tool, scored_rows
from dgqtools.tiny_gguf import ARCHITECTURES, write_tiny_gguf

REPO_ROOT = Path(__file__).resolve().parent.parent
SEED = 0  # of the weights (export_model.random_model)
TOKENS_SEED = 17  # of the token ids


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--version", required=True, help="llama-cpp-python version of the sdist")
    parser.add_argument("--command", required=True, help="the command line that made the fixture")
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--chunks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("-o", "--output", required=True, type=Path)
    args = parser.parse_args(argv)
    args.output.mkdir(parents=True, exist_ok=True)
    provenance = fixture_provenance(args.version, args.command)
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        for arch in ARCHITECTURES:
            gguf_path = tmp / f"tiny-{arch}.gguf"
            cfg, _ = write_tiny_gguf(gguf_path, arch, SEED)
            tokens = (
                np.random.default_rng(TOKENS_SEED).integers(0, cfg["vocab_size"], size=args.chunks * args.ctx).tolist()
            )
            ids = tmp / "tokens.txt"
            ids.write_text(" ".join(map(str, tokens)) + "\n")
            rows = scored_rows(
                run_tool(args.tool, "logits", gguf_path, ids, args.ctx, args.threads),
                args.chunks,
                args.ctx,
                f"tiny {arch}",
            )
            doc = {
                "provenance": provenance,
                "arch": arch,
                "gguf": f"tools/tiny-gguf.py {arch} --seed {SEED}",
                "gguf_sha256": hashlib.sha256(gguf_path.read_bytes()).hexdigest(),
                "vocab_size": cfg["vocab_size"],
                "kv_cache": "F32 K and V, flash attention off",
                "ctx": args.ctx,
                "chunks": args.chunks,
                "first_scored": args.ctx // 2,
                "top_k": 8,
                "tokens_seed": TOKENS_SEED,
                "tokens": tokens,
                "scored": rows,
            }
            path = args.output / f"tiny-{arch}.json"
            path.write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
            print(f"make-tiny-llama-fixture.py: wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
