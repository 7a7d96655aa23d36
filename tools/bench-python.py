#!/usr/bin/env python3
"""What the Python bindings cost (docs/python.md, "Overhead"): the same compress and decompress
timed from Python (dgq.compress, dgq.Scheme.compress, Compressed.decompress) and in a C++ loop
inside the same module (dgq._dgq._cpp_*_seconds), on the same array in the same process.

    PYTHONPATH=build/python .venv/bin/python tools/bench-python.py [--specs q8_0 dgq2] [--mib 64]
        [--fragment]

--fragment also writes the table with its provenance line to docs/results/python-overhead.md
and splices it into docs/python.md (between <!-- BEGIN python-overhead --> and its END).

Prints a Markdown table: medians of per-call wall times; single-threaded (one scheme call uses
one core). Tiny: 4 tokens x 128 channels fp16, where the fixed cost per call shows; large: a
--mib MiB fp16 array (tokens x 128), where GB/s is the fp16 tensor's bytes (read by compress,
written by decompress) per second.
"""

import argparse
import os
import statistics
import subprocess
import time
from pathlib import Path

import numpy as np

import dgq
from dgq import _dgq

CHANNELS = 128
REPO_ROOT = Path(__file__).resolve().parent.parent


def seconds(call, repeats):
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return times


def interleaved_medians(python_call, cpp_seconds, rounds, per_round):
    """Medians of Python's and C++'s per-call seconds, measured in alternating rounds so that a
    change of the machine's load (2 shared cores) falls on both alike."""
    py, cpp = [], []
    for _ in range(rounds):
        cpp += cpp_seconds(per_round)
        py += seconds(python_call, per_round)
    return statistics.median(py), statistics.median(cpp)


def commit():
    """HEAD, 12 digits, "-dirty" when tracked files differ from it (the build may then too)."""

    def git(*args):
        return subprocess.run(["git", "-C", str(REPO_ROOT), *args], capture_output=True, text=True).stdout.strip()

    head = git("rev-parse", "--short=12", "HEAD") or "?"
    return head + ("-dirty" if git("status", "--porcelain", "--untracked-files=no") else "")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--specs", nargs="+", default=["q8_0", "dgq2"])
    parser.add_argument("--mib", type=int, default=64, help="size of the large fp16 array in MiB")
    parser.add_argument("--tiny-repeats", type=int, default=2000)
    parser.add_argument("--large-repeats", type=int, default=5)
    parser.add_argument(
        "--fragment",
        action="store_true",
        help="write docs/results/python-overhead.md and splice it into docs/python.md",
    )
    args = parser.parse_args()

    load = " ".join(f"{x:.1f}" for x in os.getloadavg())  # 2 shared cores: say how busy they were
    rng = np.random.default_rng(1)
    tiny = rng.normal(size=(4, CHANNELS)).astype(np.float16)
    tokens = args.mib * 2**20 // (2 * CHANNELS)
    large = rng.normal(size=(tokens, CHANNELS)).astype(np.float16)

    lines = [
        f"| scheme | call | tiny 4x128: Python µs | C++ µs | overhead µs | {args.mib} MiB: Python GB/s | C++ GB/s |",
        "|---|---|--:|--:|--:|--:|--:|",
    ]
    for spec in args.specs:
        scheme = dgq.Scheme(spec)
        c_tiny, c_large = scheme.compress(tiny), scheme.compress(large)
        outs = {x.nbytes: np.empty_like(x) for x in (tiny, large)}
        cpp_compress = {
            x.nbytes: (lambda n, x=x, spec=spec: _dgq._cpp_compress_seconds(spec, x, n)) for x in (tiny, large)
        }
        cpp_decompress = {
            x.nbytes: (lambda n, x=x, spec=spec: _dgq._cpp_decompress_seconds(spec, x, n)) for x in (tiny, large)
        }
        calls = [
            ("dgq.compress(x, spec)", lambda x, spec=spec: dgq.compress(x, spec), cpp_compress),
            ("Scheme.compress(x)", scheme.compress, cpp_compress),
            (
                "Compressed.decompress()",
                lambda x, c_tiny=c_tiny, c_large=c_large: (c_tiny if x is tiny else c_large).decompress(),
                cpp_decompress,
            ),
            (
                "Compressed.decompress(out=y)",
                lambda x, c_tiny=c_tiny, c_large=c_large, outs=outs: (c_tiny if x is tiny else c_large).decompress(
                    out=outs[x.nbytes]
                ),
                cpp_decompress,
            ),
        ]
        for name, call, cpp in calls:
            py_tiny, cpp_tiny = interleaved_medians(
                lambda call=call: call(tiny), cpp[tiny.nbytes], 10, args.tiny_repeats // 10
            )
            py_large, cpp_large = interleaved_medians(
                lambda call=call: call(large), cpp[large.nbytes], args.large_repeats, 1
            )
            lines.append(
                f"| {spec} | `{name}` | {py_tiny * 1e6:.1f} | {cpp_tiny * 1e6:.1f} | "
                f"{(py_tiny - cpp_tiny) * 1e6:.1f} | {large.nbytes / py_large / 1e9:.2f} | "
                f"{large.nbytes / cpp_large / 1e9:.2f} |"
            )
    table = "\n".join(lines) + "\n"
    print(
        f"dgq {commit()}: Python bindings vs C++ in the same process, medians, one thread; load average {load} before\n"
    )
    print(table)
    print(
        "C++: make_scheme once, then Scheme::compress (keys) / decompress into a reused buffer, "
        "timed in C++ with the GIL released; Python: each call from Python, result object included "
        "(dgq.compress also parses the spec; decompress() allocates the array it returns, "
        "decompress(out=y) decodes into y, as the C++ loop does)."
    )
    if args.fragment:
        publish(table, load)


def publish(table, load):
    from dgqtools import (
        results,  # the report's fragment writer: docs/results/<name>.md + the splice
    )

    results.publish_measurement(
        "python-overhead",
        "PYTHONPATH=build/python .venv/bin/python tools/bench-python.py --fragment",
        f"load average {load} when it started).",
        table,
        REPO_ROOT / "docs" / "python.md",
    )


if __name__ == "__main__":
    main()
