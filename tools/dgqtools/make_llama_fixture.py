"""Writes the llama.cpp fixture of tests/python/test_llama_fixture.py (docs/eval.md, "Pinned to
llama.cpp") from the outputs of bench/ggml's dgq-llama-fixture tool. Called by
tools/make-llama-fixture.sh, which builds the tool from the pinned llama-cpp-python sdist and makes
the F32 GGUFs; run that script, not this one.

Writes into OUTDIR:
  texts.json    llama.cpp's tokenization (no BOS, no special-token parsing) of the first CHARS
                characters of the text of each real trace in data/ (code, noisy prose), with
                each model's vocabulary
  <model>.json  llama.cpp on the F32 GGUF of each model, with an F32 KV cache: the first
                CHUNKS x N_CTX tokens of llama.cpp's tokenization of the code text, and per
                scored token (positions n_ctx/2 .. n_ctx-2 of each chunk, as `dgq eval`) the
                target's log-probability and the top-8 ids and log-probabilities
Usage: tools/make-llama-fixture.py --tool BIN --f32 smollm2=F32.gguf --f32 gemma3=F32.gguf
           --source smollm2=Q.gguf --source gemma3=Q.gguf --version V --command CMD -o OUTDIR
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import h5py

from dgqtools.repo import REPO_ROOT

TEXTS = {"code": "data/smollm2-code-1k.h5", "prose-noise10": "data/smollm2-prose-1k-noise10.h5"}
# The names `dgq eval` requires in a token file of each model (its model file's `name`).
MODEL_NAMES = {"smollm2": "SmolLM2-135M-Instruct-Q4_1", "gemma3": "gemma-3-270m-Q4_K_M"}
MODEL_FILES = {"smollm2": "models/smollm2-135m.h5", "gemma3": "models/gemma3-270m.h5"}
LOGITS_TEXT = "code"


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def trace_text(path: str) -> str:
    with h5py.File(REPO_ROOT / path, "r") as f:
        text = f["text"][()]
    return text.decode("utf-8") if isinstance(text, bytes) else text


def run_tool(tool: str, *args: object) -> str:
    result = subprocess.run([tool, *map(str, args)], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.exit(f"make-llama-fixture.py: {tool} {' '.join(map(str, args))} failed:\n{result.stderr}")
    return result.stdout


def fixture_provenance(version: str, command: str) -> dict:
    """What every fixture file records about how it was made."""
    commit = subprocess.run(
        ["git", "-C", str(REPO_ROOT), "rev-parse", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.strip()
    return {
        "llama_cpp_python": version,
        "llama_cpp": "ggml-org/llama.cpp@0c1e57098 (vendored by the sdist; bench/ggml/requirements-ggml.txt)",
        "command": command,
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dgq_commit": commit,
        "ggml_cpu": "GGML_NATIVE=ON, OpenMP, CPU backend only",
    }


def scored_rows(output: str, chunks: int, ctx: int, what: str) -> list[dict]:
    """The rows of `dgq-llama-fixture logits` (one per scored token: chunk pos target
    target_logprob, then 8 id logprob pairs), checked to be one per scored position."""
    rows = []
    for line in output.splitlines():
        fields = line.split()
        top = fields[4:]
        rows.append(
            {
                "chunk": int(fields[0]),
                "pos": int(fields[1]),
                "target": int(fields[2]),
                "target_logprob": float(fields[3]),
                "top_ids": [int(t) for t in top[0::2]],
                "top_logprobs": [float(v) for v in top[1::2]],
            }
        )
    expected = chunks * (ctx - 1 - ctx // 2)
    if len(rows) != expected:
        sys.exit(f"make-llama-fixture.py: {what}: {len(rows)} scored rows, expected {expected}")
    return rows


def tokenize(tool: str, gguf: Path, text: str, tmp: Path) -> list[int]:
    path = tmp / "text.txt"
    path.write_bytes(text.encode("utf-8"))
    return [int(t) for t in run_tool(tool, "tokenize", gguf, path).split()]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tool", required=True)
    parser.add_argument("--f32", action="append", required=True, help="MODEL=PATH of the F32 GGUF")
    parser.add_argument("--source", action="append", required=True, help="MODEL=PATH of the packaged GGUF")
    parser.add_argument("--version", required=True, help="llama-cpp-python version of the sdist")
    parser.add_argument("--command", required=True, help="the command line that made the fixture")
    parser.add_argument("--chars", type=int, default=2000)
    parser.add_argument("--ctx", type=int, default=128)
    parser.add_argument("--chunks", type=int, default=2)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("-o", "--output", required=True, type=Path)
    args = parser.parse_args(argv)
    f32 = dict(item.split("=", 1) for item in args.f32)
    source = dict(item.split("=", 1) for item in args.source)
    args.output.mkdir(parents=True, exist_ok=True)
    provenance = fixture_provenance(args.version, args.command)
    texts = {name: trace_text(path)[: args.chars] for name, path in TEXTS.items()}
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        tokenized = {}
        for model in ("smollm2", "gemma3"):
            gguf = Path(f32[model])
            tokenized[model] = {name: tokenize(args.tool, gguf, text, tmp) for name, text in texts.items()}
        out = {
            "provenance": provenance,
            "chars": args.chars,
            "texts": {
                name: {
                    "source": TEXTS[name],
                    "text": text,
                    "tokens": {model: tokenized[model][name] for model in tokenized},
                }
                for name, text in texts.items()
            },
        }
        (args.output / "texts.json").write_text(
            json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n", encoding="utf-8"
        )
        for model in ("smollm2", "gemma3"):
            tokens = tokenized[model][LOGITS_TEXT][: args.chunks * args.ctx]
            if len(tokens) < args.chunks * args.ctx:
                sys.exit(f"make-llama-fixture.py: {model}: only {len(tokens)} tokens in {LOGITS_TEXT}")
            ids = tmp / "tokens.txt"
            ids.write_text(" ".join(map(str, tokens)) + "\n")
            rows = scored_rows(
                run_tool(args.tool, "logits", f32[model], ids, args.ctx, args.threads), args.chunks, args.ctx, model
            )
            doc = {
                "provenance": provenance,
                "model": model,
                "model_name": MODEL_NAMES[model],
                "model_file": MODEL_FILES[model],
                "source_gguf": Path(source[model]).name,
                "source_gguf_sha256": sha256(Path(source[model])),
                "weights": "F32 (dgq-llama-fixture f32: llama_model_quantize, LLAMA_FTYPE_ALL_F32, allow_requantize, pure)",
                "kv_cache": "F32 K and V, flash attention off",
                "text": TEXTS[LOGITS_TEXT],
                "ctx": args.ctx,
                "chunks": args.chunks,
                "first_scored": args.ctx // 2,
                "top_k": 8,
                "tokens": tokens,
                "scored": rows,
            }
            (args.output / f"{model}.json").write_text(json.dumps(doc, separators=(",", ":")) + "\n", encoding="utf-8")
    for name in ("texts", "smollm2", "gemma3"):
        path = args.output / f"{name}.json"
        print(f"make-llama-fixture.py: wrote {path} ({path.stat().st_size} bytes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
