"""Token files for `dgq eval` (format "dgq-tokens" v1, docs/eval.md).

Tokenizes the four prompt kinds of tools/prompts.sh (code, legal, poetry, prose), clean and with
10% random characters inserted (export_trace.inject_noise, seeded), with the model's own tokenizer
rebuilt from its GGUF by the pinned `tokenizers` library, and writes one file per text:
OUTDIR/<model>-<kind>-<clean|noise10>.h5.

Usage: tools/make-eval-texts.py smollm2 --prompts out/prompts -o out/eval-texts [--tokens 8192]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from dgqtools import export_trace
from dgqtools.export_trace import ExportError
from dgqtools.token_file import write_token_file
from dgqtools.tokenizer_id import tokenizer_id

if TYPE_CHECKING:
    from gguf import GGUFReader
    from tokenizers import Tokenizer

    from dgqtools.export_trace.prompt import Prompt

KINDS = ("code", "legal", "poetry", "prose")
MODEL_NAMES = {"smollm2": "SmolLM2-135M-Instruct-Q4_1", "gemma3": "gemma-3-270m-Q4_K_M"}


def gguf_reader(model: str) -> GGUFReader:
    import gguf

    if model == "smollm2":
        path = export_trace.bundled_gguf_path()
    else:
        from dgqtools.export_model import gemma3_gguf_path

        path = gemma3_gguf_path()
    return gguf.GGUFReader(str(path))


def load_tokenizer(model: str, reader: GGUFReader) -> Tokenizer:
    if model == "smollm2":
        return export_trace.load_tokenizer(reader)
    from dgqtools.gemma_tokenizer import load_gemma_tokenizer

    return load_gemma_tokenizer(reader)


def write_tokens(
    path: Path, model_name: str, kind: str, noise_rate: float, seed: int, prompt: Prompt, tokenizer: str = ""
) -> None:
    """`tokenizer`: the tokenizer's identity (dgqtools/tokenizer_id.py), matched by `dgq eval` against the
    model's; empty: none recorded (the model is then matched by name)."""
    write_token_file(
        path,
        prompt.tokens,
        model_name,
        kind,
        noise_rate,
        seed=seed,
        tokenizer_id=tokenizer,
        noise_mask=prompt.noise_mask,
        text=prompt.text,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("model", choices=sorted(MODEL_NAMES))
    parser.add_argument("--prompts", type=Path, required=True, help="folder of tools/prompts.sh")
    parser.add_argument("-o", "--output", type=Path, required=True)
    parser.add_argument("--tokens", type=int, default=8192, help="at most this many tokens per text")
    parser.add_argument("--noise-rate", type=float, default=0.1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--kinds", default=",".join(KINDS))
    args = parser.parse_args(argv)
    try:
        reader = gguf_reader(args.model)
        tokenizer = load_tokenizer(args.model, reader)
        identity = tokenizer_id(reader)
        args.output.mkdir(parents=True, exist_ok=True)
        for kind in args.kinds.split(","):
            source = args.prompts / f"{kind}.txt"
            if not source.is_file():
                raise ExportError(f"{source}: prompt missing; run tools/prompts.sh {args.prompts}")
            text = source.read_text(encoding="utf-8")
            for variant, rate in (("clean", 0.0), (f"noise{round(args.noise_rate * 100)}", args.noise_rate)):
                rng = np.random.default_rng(args.seed)
                noisy, inserted = export_trace.inject_noise(text, rate, rng)
                prompt = export_trace.tokenize_prompt(tokenizer, noisy, inserted, args.tokens)
                out = args.output / f"{args.model}-{kind}-{variant}.h5"
                write_tokens(out, MODEL_NAMES[args.model], kind, rate, args.seed, prompt, identity)
                print(f"make-eval-texts.py: {out}: {len(prompt.tokens)} tokens")
    except ExportError as err:
        print(f"make-eval-texts.py: error: {err}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
