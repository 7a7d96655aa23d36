#!/usr/bin/env python3
"""What a dgq cache costs a transformers decoder (docs/python.md, "Hugging Face"): SmolLM2-135M
(the shipped GGUF through transformers' loader) decodes the same tokens one at a time with
transformers' own DynamicCache and with dgq.hf.Cache of several specs, interleaved rounds, the
median wall time per decoded token. The dgq cache's append is the literal causal cache (each
append re-reads the schedule of every token so far), so the cost grows with the length: the
table gives the first and the last quarter of the tokens apart.

    PYTHONPATH=build/python .venv/bin/python tools/bench-hf-cache.py [--tokens 256] [--rounds 3] [--fragment]

--fragment also writes the table with its provenance line to docs/results/hf-overhead.md and
splices it into docs/python.md (between <!-- BEGIN hf-overhead --> and its END).
"""

import argparse
import os
import statistics
import time
from pathlib import Path

os.environ.setdefault("TQDM_DISABLE", "1")
import h5py
import torch

import dgq.hf

REPO_ROOT = Path(__file__).resolve().parent.parent
SPECS = [
    "fp32",
    "q8_0",
    "q4_0:rot=hadamard",
    "kivi-2",
    "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v",
]


def step_seconds(model, ids, make_cache) -> list[float]:
    cache, times = make_cache(), []
    with torch.no_grad():
        for t in ids:
            start = time.perf_counter()
            model(torch.tensor([[int(t)]]), cache=cache)
            times.append(time.perf_counter() - start)
    return times


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tokens", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--fragment", action="store_true")
    args = parser.parse_args()
    from transformers import AutoModelForCausalLM, DynamicCache

    from dgqtools import export_trace

    torch.set_num_threads(1)
    gguf = export_trace.bundled_gguf_path()
    model = AutoModelForCausalLM.from_pretrained(str(gguf.parent), gguf_file=gguf.name, dtype=torch.float32).eval()
    with h5py.File(REPO_ROOT / "data" / "smollm2-code-1k.h5", "r") as f:
        ids = f["tokens"][: args.tokens]
    makers = {"transformers DynamicCache": DynamicCache}
    makers.update({f'dgq.hf.Cache("{s}")': (lambda s=s: dgq.hf.Cache(s)) for s in SPECS})
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    samples: dict[str, list[list[float]]] = {name: [] for name in makers}
    step_seconds(model, ids[:16], DynamicCache)  # warm-up
    for _ in range(args.rounds):
        for name, make in makers.items():
            samples[name].append(step_seconds(model, ids, make))
    quarter = len(ids) // 4

    def ms(name, part):
        return 1e3 * statistics.median(statistics.mean(r[part]) for r in samples[name])

    first, last = slice(0, quarter), slice(len(ids) - quarter, len(ids))
    base = ms("transformers DynamicCache", slice(0, len(ids)))
    lines = ["| cache | ms per token (all) | vs DynamicCache | first quarter | last quarter |", "|---|--:|--:|--:|--:|"]
    for name in makers:
        whole = ms(name, slice(0, len(ids)))
        lines.append(f"| `{name}` | {whole:.1f} | {whole / base:.2f}x | {ms(name, first):.1f} | {ms(name, last):.1f} |")
    table = "\n".join(lines) + "\n"
    header = (
        f"SmolLM2-135M (30 layers x 3 KV heads x 64), {len(ids)} tokens decoded one at a time, "
        f"torch {torch.__version__} on 1 thread; median over {args.rounds} interleaved rounds of each "
        "cache's mean time per token"
    )
    print(f"{header}; load average {load} before\n\n{table}")
    if args.fragment:
        from dgqtools import results

        results.publish_measurement(
            "hf-overhead",
            "PYTHONPATH=build/python .venv/bin/python tools/bench-hf-cache.py --fragment",
            f"load average {load} when it started): {header}.",
            table,
            REPO_ROOT / "docs" / "python.md",
        )


if __name__ == "__main__":
    main()
