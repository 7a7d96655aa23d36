#!/usr/bin/env python3
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
import os
import re
import resource
import shlex
import shutil
import signal
import subprocess
import sys
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

os.environ.setdefault("HDF5_USE_FILE_LOCKING", "FALSE")
import h5py  # noqa: E402
from dgqtools.token_file import write_token_file  # noqa: E402

REPO = Path(__file__).resolve().parent.parent

KINDS = ["trace", "compressed", "results", "model", "tokens", "base-logits", "gguf"]
CLASSES = ["ok", "crash", "hang", "oom", "badmsg", "partial"]
EVAL_CTX = "32"
GGUF_CTX = "8"  # the GGUF seeds' token files hold 24 tokens


# --------------------------------------------------------------------------------------------
# Seeds
# --------------------------------------------------------------------------------------------

@dataclass
class Seed:
    kind: str
    name: str
    path: Path
    # kind-specific companions: "config" (sweep config that made a results file), "model",
    # "tokens" (the valid partner of a model/token file), "trace" (a valid trace)
    extra: dict = field(default_factory=dict)


def run_checked(argv, cwd=None):
    p = subprocess.run([str(a) for a in argv], cwd=cwd, capture_output=True, text=True,
                       env=child_env(5))
    if p.returncode != 0:
        raise SystemExit(f"mutation-campaign: seed command failed ({p.returncode}): "
                         f"{shlex.join(map(str, argv))}\n{p.stdout}{p.stderr}")


def write_campaign_token_file(path: Path, tokens, model: str, seed: int) -> None:
    """A token file with every optional part (seed, noise mask, text) for the mutations to reach."""
    write_token_file(path, tokens, model, "prose", 0.1, seed=seed,
                     noise_mask=(np.arange(len(tokens)) % 7 == 3).astype(np.uint8),
                     text="a tiny text of random token ids for the mutation campaign")


def make_seeds(dgq: str, d: Path) -> dict[str, list[Seed]]:
    """Writes the seed files into d (deterministic: dgq's generators and fixed numpy seeds; every
    path dgq records in them is relative to d, so the bytes do not depend on where d is)."""
    from dgqtools import export_model
    d.mkdir(parents=True, exist_ok=True)
    seeds: dict[str, list[Seed]] = {k: [] for k in KINDS}
    tiny = ["--layers", "2", "--q-heads", "2", "--kv-heads", "1", "--head-dim", "64", "--tokens", "64",
            "--probes", "2"]
    for name, dtype, kind, noise in (("trace-f16", "f16", "poetry", "0.1"), ("trace-f32", "f32", "code", "0")):
        run_checked([dgq, "gen-trace", "-o", f"{name}.h5", "--kind", kind, "--dtype", dtype,
                     "--noise-rate", noise, "--seed", "7", *tiny], d)
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
    shutil.copy(REPO / "tests/fixtures/h5py/trace-v1.h5", d / "trace-h5py.h5")
    seeds["trace"].append(Seed("trace", "trace-h5py", d / "trace-h5py.h5"))
    trace = d / "trace-f16.h5"

    for name, scheme in (("q8_0", "q8_0"), ("dgq-bitmap", "dgq:markers=bitmap"),
                         ("dgq-segch", "dgq:granularity=segment-channel"), ("kivi-2", "kivi-2"),
                         ("dgq2", "dgq2"), ("turboquant-3", "turboquant:bits=3"),
                         ("q4_0-rot", "q4_0:rot=hadamard")):
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
    run_checked([dgq, "eval", "--model", model.name, "--text", text.name, "--ctx", EVAL_CTX, "--chunks", "1",
                 "--scheme", "q8_0", "--threads", "1", "--base-logits", base.name, "-o", "eval-scratch.h5"], d)
    (d / "eval-scratch.h5").unlink()
    seeds["base-logits"].append(Seed("base-logits", "base-logits-llama", base, {"model": model, "tokens": text}))

    replay_cfg = d / "sweep-replay.toml"
    replay_cfg.write_text(f'schemes = ["q8_0", "dgq"]\ntraces = ["{trace.name}"]\n')
    eval_cfg = d / "sweep-eval.toml"
    eval_cfg.write_text(f'schemes = ["q8_0"]\n[eval]\nctx = {EVAL_CTX}\nchunks = 1\n[[eval.model]]\n'
                        f'path = "{model.name}"\nlabel = "tiny"\ntexts = ["{text.name}"]\n')
    run_checked([dgq, "replay", trace.name, "--scheme", "q8_0", "--scheme", "dgq", "--threads", "1",
                 "-o", "results-replay.h5"], d)
    run_checked([dgq, "sweep", replay_cfg.name, "-o", "results-sweep.h5", "--threads", "1"], d)
    run_checked([dgq, "sweep", eval_cfg.name, "-o", "results-eval.h5", "--threads", "1"], d)
    for name, cfg in (("results-replay", replay_cfg), ("results-sweep", replay_cfg), ("results-eval", eval_cfg)):
        seeds["results"].append(Seed("results", name, d / f"{name}.h5", {"config": cfg, "trace": trace}))

    # GGUF models (byte-level edits only): the fuzz corpus's two (tests/fuzz/corpus/write_seed_files.py:
    # 16-token vocabularies, every block type dgq decodes), each with a token file of its name.
    for arch in ("llama", "qwen3"):
        model = d / f"gguf-{arch}.gguf"
        shutil.copy(REPO / f"tests/fuzz/corpus/fuzz_gguf/seed-{arch}.gguf", model)
        text = d / f"tokens-gguf-{arch}.h5"
        write_campaign_token_file(text, [(7 * i + 3) % 16 for i in range(24)], f"fuzz-{arch}", 5)
        seeds["gguf"].append(Seed("gguf", f"gguf-{arch}", model, {"tokens": text, "ctx": GGUF_CTX}))
    for leftover in d.glob("*.lock"):
        leftover.unlink()
    return seeds


# --------------------------------------------------------------------------------------------
# Mutations
# --------------------------------------------------------------------------------------------

def data_ranges(path: Path) -> list[tuple[int, int]]:
    """Byte ranges of the datasets' stored data (contiguous storage or chunks); the rest of the
    file is metadata (superblock, object headers, B-trees, heaps)."""
    ranges = []

    def visit(_, obj):
        if not isinstance(obj, h5py.Dataset):
            return
        dsid = obj.id
        try:
            layout = dsid.get_create_plist().get_layout()
            if layout == h5py.h5d.CONTIGUOUS:
                off = dsid.get_offset()
                if off is not None:
                    ranges.append((off, off + dsid.get_storage_size()))
            elif layout == h5py.h5d.CHUNKED:
                for i in range(dsid.get_num_chunks()):
                    info = dsid.get_chunk_info(i)
                    ranges.append((info.byte_offset, info.byte_offset + info.size))
        except Exception:  # noqa: BLE001 - a dataset h5py cannot describe: treat as metadata
            pass

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return sorted(ranges)


def gguf_data_ranges(path: Path) -> list[tuple[int, int]]:
    """A GGUF file's tensor data (everything after its header, metadata and tensor entries)."""
    import gguf
    return [(int(gguf.GGUFReader(str(path)).data_offset), path.stat().st_size)]


def metadata_positions(size: int, ranges) -> np.ndarray:
    mask = np.ones(size, dtype=bool)
    for a, b in ranges:
        mask[max(0, a):min(size, b)] = False
    return np.flatnonzero(mask)


INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x7FFF, 0x8000, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF,
               2**40, 2**60, 2**63 - 1, 2**64 - 1]


class ByteMutator:
    def __init__(self, data: bytes, meta: np.ndarray, rng: np.random.Generator):
        self.b = bytearray(data)
        self.meta = meta
        self.rng = rng

    def pos(self) -> int:
        n = len(self.b)
        if n == 0:
            return 0
        if len(self.meta) and self.rng.random() < 0.75:
            p = int(self.meta[self.rng.integers(len(self.meta))])
            if p < n:
                return p
        return int(self.rng.integers(n))

    def run_length(self) -> int:
        r = self.rng.random()
        return int(self.rng.integers(1, 9)) if r < 0.6 else int(self.rng.integers(9, 129)) if r < 0.9 \
            else int(self.rng.integers(129, 4097))

    def apply(self) -> str:
        if not self.b:
            return "empty file, nothing to mutate"
        op = self.rng.choice(["flip", "flip", "overwrite", "overwrite", "interesting", "truncate",
                              "duplicate", "delete", "insert"])
        n = len(self.b)
        if op == "flip":
            count = int(self.rng.integers(1, 17))
            where = []
            for _ in range(count):
                p = self.pos()
                bit = int(self.rng.integers(8))
                self.b[p] ^= 1 << bit
                where.append(f"{p}:{bit}")
            return "flip bits " + ",".join(where)
        if op == "overwrite":
            p, length = self.pos(), self.run_length()
            length = min(length, n - p)
            fill = self.rng.choice(["00", "ff", "random"])
            if fill == "random":
                self.b[p:p + length] = self.rng.integers(0, 256, size=length, dtype=np.uint8).tobytes()
            else:
                self.b[p:p + length] = bytes([int(fill, 16)]) * length
            return f"overwrite {length} bytes at {p} with {fill}"
        if op == "interesting":
            p = self.pos()
            value = INTERESTING[int(self.rng.integers(len(INTERESTING)))]
            width = int(self.rng.choice([1, 2, 4, 8]))
            value &= (1 << (8 * width)) - 1
            raw = value.to_bytes(width, "little" if self.rng.random() < 0.8 else "big")
            raw = raw[:max(0, n - p)]
            self.b[p:p + len(raw)] = raw
            return f"write {width}-byte integer {value:#x} at {p}"
        if op == "truncate":
            r = self.rng.random()
            keep = int(self.rng.integers(0, n)) if r < 0.5 else max(0, n - int(self.rng.integers(1, 513))) \
                if r < 0.8 else self.pos()
            del self.b[keep:]
            return f"truncate to {keep} of {n} bytes"
        if op == "duplicate":
            src, length = self.pos(), self.run_length()
            length = min(length, n - src)
            chunk = bytes(self.b[src:src + length])
            dst = self.pos()
            if self.rng.random() < 0.5:
                self.b[dst:dst] = chunk
                return f"insert a copy of {length} bytes from {src} at {dst}"
            self.b[dst:dst + length] = chunk
            del self.b[n:]
            return f"overwrite {length} bytes at {dst} with the bytes at {src}"
        if op == "delete":
            p, length = self.pos(), self.run_length()
            del self.b[p:p + length]
            return f"delete {length} bytes at {p}"
        p, length = self.pos(), self.run_length()
        self.b[p:p] = self.rng.integers(0, 256, size=length, dtype=np.uint8).tobytes()
        return f"insert {length} random bytes at {p}"


class GlobalHeapMutator:
    """Edits aimed at variable-length strings (every string attribute h5py and dgq write): the
    global heap collections that hold their bytes ("GCOL", version 1: collection size, then
    objects of index, reference count, reserved, size, data padded to 8 bytes) and the heap ids
    that point into them (in an attribute's or dataset's stored value: length u32, collection
    address, object index u32). libhdf5 1.10.8 trusts both: a free-space object of size 0 makes it
    loop, an object size or length beyond the string makes it copy out of bounds (H5HG_read under
    H5Aread; docs/robustness.md). Lengths and addresses are 8 bytes, as in every file dgq reads."""

    def __init__(self, data: bytes, rng: np.random.Generator):
        self.b = bytearray(data)
        self.rng = rng

    def collections(self):
        """[(offset, collection size, [(object offset, index, size)])] of every parsable collection."""
        found = []
        for m in re.finditer(b"GCOL\x01", bytes(self.b)):
            at = m.start()
            if at + 16 > len(self.b):
                continue
            size = int.from_bytes(self.b[at + 8:at + 16], "little")
            objects, p, end = [], at + 16, min(len(self.b), at + size)
            while p + 16 <= end:
                index, length = int.from_bytes(self.b[p:p + 2], "little"), int.from_bytes(self.b[p + 8:p + 16], "little")
                if index == 0:
                    break
                objects.append((p, index, length))
                p += 16 + (length + 7) // 8 * 8
            found.append((at, size, objects))
        return found

    def heap_ids(self, collections):
        """Offsets of heap ids (their length field) that point at one of the collections."""
        inside = [(at, at + 16) for at, _, _ in collections]
        ids = []
        for at, _, _ in collections:
            for m in re.finditer(re.escape(at.to_bytes(8, "little")), bytes(self.b)):
                q = m.start() - 4
                if q >= 0 and q + 16 <= len(self.b) and not any(a <= m.start() < b for a, b in inside):
                    ids.append(q)
        return sorted(ids)

    def put(self, at: int, width: int, value: int) -> None:
        self.b[at:at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")

    def apply(self) -> str:
        collections = self.collections()
        if not collections:
            return "no global heap collection to edit"
        pick = lambda items: items[int(self.rng.integers(len(items)))]  # noqa: E731
        at, size, objects = pick(collections)
        extremes = [0, 1, 7, 8, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 32, 1 << 40, (1 << 63) - 1, (1 << 64) - 1]
        op = self.rng.choice(["object-size", "object-size", "object-size", "object-index", "free-space",
                              "collection-size", "id-length", "id-length", "id-index", "id-address"])
        if op in ("object-size", "object-index", "free-space") and objects:
            p, index, length = pick(objects)
            if op == "object-size":
                value = int(self.rng.choice([length + 1, length + 8, max(0, length - 1), 2 * length, size, *extremes]))
                self.put(p + 8, 8, value)
                return f"global heap at {at}: object {index} size {length} -> {value}"
            if op == "object-index":
                value = int(self.rng.choice([0, index + 1, objects[-1][1], 0xFFFF]))
                self.put(p, 2, value)
                return f"global heap at {at}: object {index} index -> {value}"
            # an object turned into free space of size 0 or of its own size (libhdf5 loops on 0)
            value = int(self.rng.choice([0, 0, length, 8]))
            self.put(p, 2, 0)
            self.put(p + 8, 8, value)
            return f"global heap at {at}: object {index} -> free space of size {value}"
        if op == "collection-size":
            value = int(self.rng.choice([0, 16, size // 2, size - 8, size + 8, 2 * size, *extremes]))
            self.put(at + 8, 8, value)
            return f"global heap at {at}: collection size {size} -> {value}"
        ids = self.heap_ids(collections)
        if not ids:
            return "no heap id to edit"
        q = pick(ids)
        if op == "id-length":
            old = int.from_bytes(self.b[q:q + 4], "little")
            value = int(self.rng.choice([0, old + 1, 2 * old + 16, old + 4096, 0x10000, 0x7FFFFFFF, 0xFFFFFFFF]))
            self.put(q, 4, value)
            return f"heap id at {q}: length {old} -> {value}"
        if op == "id-index":
            old = int.from_bytes(self.b[q + 12:q + 16], "little")
            value = int(self.rng.choice([0, old + 1, old + 100, 0xFFFF, 0x10000, 0xFFFFFFFF]))
            self.put(q + 12, 4, value)
            return f"heap id at {q}: object index {old} -> {value}"
        old = int.from_bytes(self.b[q + 4:q + 12], "little")
        value = int(self.rng.choice([0, old + 8, old + 16, old - 16, old + 4096, len(self.b) - 16, 1 << 40]))
        self.put(q + 4, 8, value)
        return f"heap id at {q}: collection address {old} -> {value}"


def absurd_attribute_values(rng, current):
    """Candidates for an attribute: extreme numbers, other types, odd strings."""
    values = [np.int64(0), np.int64(-1), np.int64(2**31 - 1), np.int64(2**31), np.int64(2**32 + 1),
              np.int64(2**40), np.int64(2**62), np.int64(2**63 - 1), np.int64(-2**63), np.int32(-7),
              np.uint64(2**64 - 1), np.float64(np.nan), np.float64(np.inf), np.float64(-np.inf),
              np.float64(1e308), np.float64(-0.0), np.float64(5e-324), np.float64(0.5), np.float16(65504),
              "", "x" * int(rng.choice([1000, 100000])), "dgq-trace", "dgq-compressed", "dgq-results",
              "dgq-model", "dgq-tokens", "dgq-base-logits", "dgq-eval", "../../etc/passwd", "nan",
              np.bytes_(b"\xff\xfe\x00garbage"), np.bytes_(b""), np.arange(1000, dtype=np.int64),
              np.zeros(0, dtype=np.int64), np.array([1, 2], dtype=np.int32), np.array([np.nan] * 3),
              np.bool_(True), h5py.Empty("f8")]
    if isinstance(current, (np.integer, int)) and not isinstance(current, bool):
        c = int(current)
        values += [np.int64(c + 1), np.int64(c - 1), np.int64(c * 2), np.int64(-c), np.float64(c), str(c),
                   np.int8(c & 0x7F), np.array([c, c], dtype=np.int64)]
    elif isinstance(current, (np.floating, float)):
        values += [np.float64(current) * 1e300, np.float32(current), str(current), np.int64(1 << 40)]
    elif isinstance(current, (str, bytes, np.bytes_)):
        s = current.decode("latin-1") if isinstance(current, (bytes, np.bytes_)) else current
        values += [s[:-1], s + "x", s.upper(), np.bytes_(s.encode("utf-8", "replace")), s * 1000,
                   np.array([s, s], dtype=h5py.string_dtype()), s.replace(",", ";"), s + "\n" + s]
    elif isinstance(current, np.ndarray):
        values += [current[:0], current[:-1] if current.size else current, np.concatenate([current, current])
                   if current.ndim == 1 else current.ravel(), (current.astype(np.float64) * 1e300)
                   if current.dtype.kind in "iuf" else current]
    return values[int(rng.integers(len(values)))]


def objects_of(f):
    groups, datasets, attrs = ["/"], [], [("/", k) for k in sorted(f.attrs.keys())]

    def visit(name, obj):
        path = "/" + name
        (datasets if isinstance(obj, h5py.Dataset) else groups).append(path)
        attrs.extend((path, k) for k in sorted(obj.attrs.keys()))

    f.visititems(visit)
    return sorted(groups), sorted(datasets), attrs


# Edits that read a dataset skip larger ones (an extent made huge by an earlier edit is not
# stored: reading it would materialize its fill value).
MAX_REWRITE = 1 << 22


def recreate(f, path, data=None, dtype=None, shape=None, write=True, **create):
    """Replaces dataset `path` by a new one (other dtype, shape, layout), keeping its attributes."""
    old = f[path]
    if write and data is None and old.shape is not None and old.size > MAX_REWRITE:
        raise ValueError(f"{path}: {old.size} elements, too many to rewrite")
    attrs = {k: old.attrs[k] for k in old.attrs.keys()}
    if data is None and write:
        data = old[()] if old.shape is not None else None
    dtype = dtype if dtype is not None else old.dtype
    shape = shape if shape is not None else old.shape
    del f[path]
    if write and data is not None:
        arr = np.asarray(data)
        if arr.shape != tuple(shape):
            arr = np.resize(arr, shape) if arr.size and all(s > 0 for s in shape) else np.zeros(shape, arr.dtype)
        with np.errstate(all="ignore"):
            arr = arr.astype(dtype) if np.dtype(dtype).kind not in "OSU" else arr.astype(str).astype(dtype)
        new = f.create_dataset(path, data=arr, **create)
    else:
        new = f.create_dataset(path, shape=shape, dtype=dtype, **create)
    for k, v in attrs.items():
        new.attrs[k] = v
    return new


def structural_mutation(path: Path, rng: np.random.Generator) -> str:
    """One structure-aware edit of the HDF5 file at `path` (in place); returns its description."""
    with h5py.File(path, "a", libver=("earliest", "v110")) as f:
        groups, datasets, attrs = objects_of(f)
        ops = ["del-attr", "attr", "attr", "attr", "dtype", "shape", "values", "values", "layout",
               "del-dataset", "del-group", "move", "swap", "link", "huge-extent", "add"]
        for _ in range(20):
            op = ops[int(rng.integers(len(ops)))]
            try:
                d = apply_structural(f, op, groups, datasets, attrs, rng)
            except (Exception, SystemError) as err:  # noqa: BLE001 - h5py refused this edit: draw another
                d = None
                _ = err
            if d:
                return d
    return "no structural edit applied"


def apply_structural(f, op, groups, datasets, attrs, rng):
    pick = lambda items: items[int(rng.integers(len(items)))]  # noqa: E731
    if op == "del-attr" and attrs:
        obj, name = pick(attrs)
        del f[obj].attrs[name]
        return f"delete attribute {obj}@{name}"
    if op == "attr" and attrs:
        obj, name = pick(attrs)
        value = absurd_attribute_values(rng, f[obj].attrs[name])
        del f[obj].attrs[name]
        f[obj].attrs[name] = value
        shown = repr(value)[:80]
        return f"set attribute {obj}@{name} = {shown}"
    if op == "dtype" and datasets:
        p = pick(datasets)
        choices = ["f2", "f4", "f8", "i1", "i2", "i4", "i8", "u1", "u2", "u8", "c8", "S4", "bool",
                   h5py.string_dtype(), np.dtype([("a", "f4"), ("b", "i4")]), h5py.vlen_dtype("f4")]
        dt = choices[int(rng.integers(len(choices)))]
        old = str(f[p].dtype)
        dt_ = np.dtype(dt)
        # compound and vlen-of-numbers: no cast of the old values exists; leave them unwritten
        writable = not dt_.names and not (dt_.kind == "O" and h5py.check_vlen_dtype(dt_) is not str)
        recreate(f, p, dtype=dt, write=writable)
        return f"dtype of {p}: {old} -> {dt}"
    if op == "shape" and datasets:
        p = pick(datasets)
        shape = list(f[p].shape or ())
        how = rng.choice(["grow", "shrink", "zero", "double", "drop-dim", "add-dim", "reverse", "scalar",
                          "unwritten", "empty"])
        if how == "empty":
            old = f[p]
            attrs_ = {k: old.attrs[k] for k in old.attrs.keys()}
            dt = old.dtype
            del f[p]
            f[p] = h5py.Empty(dt)
            for k, v in attrs_.items():
                f[p].attrs[k] = v
            return f"{p}: null dataspace (h5py.Empty)"
        new = list(shape)
        if shape and how in ("grow", "shrink", "zero", "double"):
            i = int(rng.integers(len(shape)))
            new[i] = {"grow": shape[i] + 1, "shrink": max(0, shape[i] - 1), "zero": 0, "double": 2 * shape[i]}[how]
        elif how == "drop-dim" and shape:
            new = shape[:-1]
        elif how == "add-dim":
            new = shape + [1] if rng.random() < 0.5 else [1] + shape
        elif how == "reverse":
            new = shape[::-1]
        elif how == "scalar":
            new = []
        elif how == "unwritten" and shape:
            recreate(f, p, shape=tuple(shape), write=False, chunks=tuple(max(1, s) for s in shape))
            return f"{p}: same shape {shape}, chunked, never written (fill value)"
        else:
            new = shape + [2]
        recreate(f, p, shape=tuple(new))
        return f"shape of {p}: {shape} -> {new} ({how})"
    if op == "values" and datasets:
        p = pick(datasets)
        ds = f[p]
        if ds.shape is None or ds.size == 0 or ds.size > MAX_REWRITE or ds.dtype.kind not in "fiub":
            return None
        data = ds[()]
        flat = np.array(data).reshape(-1)
        count = int(rng.integers(1, min(8, flat.size) + 1))
        idx = rng.choice(flat.size, size=count, replace=False)
        if ds.dtype.kind == "f":
            pool = [np.nan, np.inf, -np.inf, np.finfo(ds.dtype).max, -np.finfo(ds.dtype).max,
                    np.finfo(ds.dtype).tiny / 2, 0.0]
        elif ds.dtype.kind == "b":
            pool = [True, False]
        else:
            info = np.iinfo(ds.dtype)
            pool = [info.min, info.max, -1 if info.min < 0 else 0, 0, 1 << (8 * ds.dtype.itemsize - 2),
                    int(flat.max(initial=0)) + 1]
        chosen = [pool[int(rng.integers(len(pool)))] for _ in idx]
        with np.errstate(all="ignore"):
            flat[idx] = np.array(chosen).astype(ds.dtype)
        ds[...] = flat.reshape(np.shape(data))
        return f"values of {p} at {sorted(int(i) for i in idx)[:8]} set to {chosen[:4]}"
    if op == "layout" and datasets:
        p = pick(datasets)
        ds = f[p]
        if ds.shape is None or ds.shape == ():
            return None
        how = rng.choice(["gzip", "shuffle-gzip", "fletcher32", "compact", "lzf", "scaleoffset", "tiny-chunks"])
        kw = {"gzip": dict(compression="gzip", compression_opts=9),
              "shuffle-gzip": dict(shuffle=True, compression="gzip"),
              "fletcher32": dict(fletcher32=True, chunks=True),
              "compact": {},
              "lzf": dict(compression="lzf"),
              "scaleoffset": dict(scaleoffset=2 if ds.dtype.kind == "f" else 0),
              "tiny-chunks": dict(chunks=tuple(1 for _ in ds.shape))}[how]
        if how == "compact":
            if ds.nbytes > 30000:
                return None
            dcpl = h5py.h5p.create(h5py.h5p.DATASET_CREATE)
            dcpl.set_layout(h5py.h5d.COMPACT)
            data = ds[()]
            attrs_ = {k: ds.attrs[k] for k in ds.attrs.keys()}
            del f[p]
            space = h5py.h5s.create_simple(data.shape)
            dsid = h5py.h5d.create(f.id, p.encode(), h5py.h5t.py_create(data.dtype), space, dcpl=dcpl)
            dsid.write(h5py.h5s.ALL, h5py.h5s.ALL, np.ascontiguousarray(data))
            for k, v in attrs_.items():
                f[p].attrs[k] = v
        else:
            if ds.dtype.kind not in "fiu" and how == "scaleoffset":
                return None
            recreate(f, p, **kw)
        return f"layout of {p}: {how}"
    if op == "del-dataset" and datasets:
        p = pick(datasets)
        del f[p]
        return f"delete dataset {p}"
    if op == "del-group" and len(groups) > 1:
        p = pick(groups[1:])
        del f[p]
        return f"delete group {p}"
    if op == "move" and len(groups) + len(datasets) > 1:
        p = pick(groups[1:] + datasets)
        parent = p.rsplit("/", 1)[0] or "/"
        target = rng.choice(["7", "-1", "x", "00", "1e9", "99999999999", "../" + p.rsplit("/", 1)[1]])
        dest = (parent.rstrip("/") + "/" + target) if not target.startswith("../") else "/" + target[3:] + "_moved"
        if dest in f:
            return None
        f.move(p, dest)
        return f"move {p} -> {dest}"
    if op == "swap" and len(datasets) > 1:
        a, b = pick(datasets), pick(datasets)
        if a == b:
            return None
        f.move(a, a + "__tmp")
        f.move(b, a)
        f.move(a + "__tmp", b)
        return f"swap datasets {a} and {b}"
    if op == "link":
        how = rng.choice(["cycle", "soft-dangling", "external", "hard-alias"])
        if how == "cycle" and len(groups) > 1:
            g = pick(groups[1:])
            f[g + "/loop"] = f[g]
            return f"hard link {g}/loop -> {g} (cycle)"
        if not datasets:
            return None
        p = pick(datasets)
        if how == "cycle":
            f["/loop"] = f["/"]
            return "hard link /loop -> / (cycle)"
        del f[p]
        if how == "soft-dangling":
            f[p] = h5py.SoftLink("/nowhere/at/all")
            return f"{p} -> soft link to nothing"
        if how == "external":
            f[p] = h5py.ExternalLink("/nonexistent/file.h5", "/x")
            return f"{p} -> external link to a missing file"
        others = [q for q in datasets if q != p and q in f]
        if not others:
            return None
        f[p] = f[pick(others)]
        return f"{p} -> hard link to another dataset"
    if op == "huge-extent" and datasets:
        p = pick(datasets)
        shape = list(f[p].shape or (1,))
        if not shape:
            shape = [1]
        i = int(rng.integers(len(shape)))
        shape[i] = int(rng.choice([2**31, 2**34, 2**40, 2**50]))
        chunks = tuple(min(s, 64) for s in shape)
        recreate(f, p, shape=tuple(shape), write=False, chunks=chunks, maxshape=tuple(shape))
        return f"{p}: extent {shape}, chunked, nothing stored"
    if op == "add":
        how = rng.choice(["layer", "dataset", "attr", "group"])
        if how == "layer" and "/layers" in f:
            names = sorted(f["/layers"].keys())
            if names:
                src = "/layers/" + names[-1]
                dest = "/layers/" + str(len(names) + int(rng.integers(0, 3)))
                if dest in f:
                    return None
                f.copy(src, dest)
                return f"copy {src} -> {dest}"
        if how == "dataset":
            g = pick(groups)
            f[g].create_dataset("extra_" + str(int(rng.integers(100))), data=np.arange(10))
            return f"add a dataset in {g}"
        if how == "group":
            g = pick(groups)
            f[g].create_group("extra_group")
            return f"add a group in {g}"
        g = pick(groups + datasets)
        f[g].attrs["extra"] = np.int64(1)
        return f"add attribute {g}@extra"
    return None


def make_mutant(seed: Seed, meta: np.ndarray, target: Path, rng: np.random.Generator) -> list[str]:
    """Writes one mutant of seed to target; returns the list of edits."""
    shutil.copy(seed.path, target)
    if seed.kind == "gguf":  # not HDF5: byte-level edits only
        return byte_edits(target, meta, rng)
    r = rng.random()
    if r < 0.15:  # variable-length strings: their global heap and heap ids
        m = GlobalHeapMutator(target.read_bytes(), rng)
        steps = [m.apply() for _ in range(int(rng.choice([1, 1, 2, 3])))]
        target.write_bytes(bytes(m.b))
        return steps
    steps = []
    if r >= 0.5:  # structure-aware, alone (40 %) or followed by byte edits (10 %)
        steps.append(structural_mutation(target, rng))
        if rng.random() < 0.2:
            steps.append(structural_mutation(target, rng))
    if r < 0.5 or r >= 0.9:
        steps += byte_edits(target, np.arange(0) if steps else meta, rng)  # after an edit, offsets moved
    return steps


def byte_edits(target: Path, meta: np.ndarray, rng: np.random.Generator) -> list[str]:
    m = ByteMutator(target.read_bytes(), meta, rng)
    steps = [m.apply() for _ in range(int(rng.choice([1, 1, 1, 2, 3, 4])))]
    target.write_bytes(bytes(m.b))
    return steps


# --------------------------------------------------------------------------------------------
# Commands
# --------------------------------------------------------------------------------------------

@dataclass
class Cmd:
    name: str
    argv: list
    new_outputs: list = field(default_factory=list)      # must not exist after a failure
    changed_inputs: list = field(default_factory=list)   # existing files: unchanged after a failure
    prep: list = field(default_factory=list)             # ("copy", src, dst) | ("mkdir", dir) | ("write", path, text)


def commands_for(seed: Seed, dgq: str) -> list[Cmd]:
    m = "mutant.h5"
    k = seed.kind
    th = ["--threads", "1"]
    cmds = [Cmd("inspect", [dgq, "inspect", m])]
    if k == "trace":
        cmds += [
            Cmd("compress", [dgq, "compress", m, "-o", "compress-out.h5", "--scheme", "dgq", *th], ["compress-out.h5"]),
            Cmd("replay", [dgq, "replay", m, "--scheme", "q8_0", "--scheme", "dgq", *th, "-o", "replay-out.h5",
                           "--json", "replay-out.json"], ["replay-out.h5", "replay-out.json"]),
            Cmd("sweep", [dgq, "sweep", "sweep-trace.toml", "-o", "sweep-out.h5", *th], ["sweep-out.h5"],
                prep=[("write", "sweep-trace.toml", 'schemes = ["q8_0"]\ntraces = ["mutant.h5"]\n')]),
        ]
    elif k == "compressed":
        cmds.append(Cmd("decompress", [dgq, "decompress", m, "-o", "decompress-out.h5"], ["decompress-out.h5"]))
    elif k == "results":
        cfg, trace = str(seed.extra["config"]), str(seed.extra["trace"])
        shard_dir = "slurm-out.h5.slurm/shards"
        cmds += [
            Cmd("merge-self", [dgq, "merge", "merge-self-out.h5", m, m], ["merge-self-out.h5"]),
            Cmd("merge-valid", [dgq, "merge", "merge-valid-out.h5", m, str(seed.path)], ["merge-valid-out.h5"]),
            Cmd("replay-into", [dgq, "replay", trace, "--scheme", "fp16", *th, "-o", "replay-into.h5"], [],
                ["replay-into.h5"], prep=[("copy", m, "replay-into.h5")]),
            Cmd("sweep-resume", [dgq, "sweep", cfg, "-o", "sweep-resume.h5", *th], [], ["sweep-resume.h5"],
                prep=[("copy", m, "sweep-resume.h5")]),
            Cmd("slurm-merge", [dgq, "slurm", cfg, "-o", "slurm-out.h5", "--tasks", "1", "--merge"], ["slurm-out.h5"],
                prep=[("mkdir", shard_dir), ("copy", m, shard_dir + "/shard-0-of-1.h5")]),
        ]
    elif k in ("model", "tokens", "gguf"):
        model = str(seed.extra["model"]) if k == "tokens" else m
        text = m if k == "tokens" else str(seed.extra["tokens"])
        ctx = seed.extra.get("ctx", EVAL_CTX)
        toml = (f'schemes = ["q8_0"]\n[eval]\nctx = {ctx}\nchunks = 1\n[[eval.model]]\npath = "{model}"\n'
                f'label = "m"\ntexts = ["{text}"]\n')
        if k == "gguf":
            cmds = []  # inspect reads HDF5 files only
        cmds += [
            Cmd("eval", [dgq, "eval", "--model", model, "--text", text, "--ctx", ctx, "--chunks", "1",
                         "--scheme", "q8_0", *th, "-o", "eval-out.h5", "--json", "eval-out.json"],
                ["eval-out.h5", "eval-out.json"]),
            Cmd("sweep-eval", [dgq, "sweep", "sweep-eval.toml", "-o", "sweep-eval-out.h5", *th], ["sweep-eval-out.h5"],
                prep=[("write", "sweep-eval.toml", toml)]),
        ]
    elif k == "base-logits":
        cmds.append(Cmd("eval-base-logits",
                        [dgq, "eval", "--model", str(seed.extra["model"]), "--text", str(seed.extra["tokens"]),
                         "--ctx", EVAL_CTX, "--chunks", "1", "--scheme", "q8_0", *th, "--base-logits",
                         "base-in.h5", "-o", "eval-out.h5"], ["eval-out.h5"], ["base-in.h5"],
                        prep=[("copy", m, "base-in.h5")]))
    return cmds


def deadline_env(deadline: float) -> dict:
    """dgq's deadline on its forked metadata check; 0 leaves dgq's default (60 s)."""
    return {"DGQ_HDF5_CHECK_TIMEOUT": f"{deadline:g}"} if deadline > 0 else {}


def child_env(deadline: float) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "HDF5_", "DGQ_", "OMP_"))}
    env.update({**deadline_env(deadline), "OMP_NUM_THREADS": "1", "LC_ALL": "C"})
    return env


def wrapped(argv, opts, as_limit=None) -> list[str]:
    return ["timeout", "-k", "5", f"{opts.timeout:g}", "prlimit", f"--as={as_limit or opts.as_limit}", "--core=0",
            *[str(a) for a in argv]]


def repro_line(cmd: Cmd, opts) -> str:
    steps = []
    for p in cmd.prep:
        if p[0] == "copy":
            steps.append(f"cp {shlex.quote(p[1])} {shlex.quote(p[2])}")
        elif p[0] == "mkdir":
            steps.append(f"mkdir -p {shlex.quote(p[1])}")
    env = " ".join([*(f"{k}={v}" for k, v in deadline_env(opts.hdf5_deadline).items()), "OMP_NUM_THREADS=1"])
    steps.append(f"env {env} {shlex.join(wrapped(cmd.argv, opts))}; echo \"exit $?\"")
    return " && ".join(steps)


ALLOC_MARKERS = ("bad_alloc", "bad_array_new_length", "cannot create std::vector larger than max_size",
                 "basic_string::_M_create", "vector::_M_default_append", "vector::reserve",
                 "memory allocation failed", "out of memory", "Cannot allocate memory")


def classify(rc: int, stderr: str, wall: float, opts) -> tuple[str, str]:
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


def run_command(cmd: Cmd, work: Path, opts) -> dict:
    for p in cmd.prep:
        if p[0] == "copy":
            shutil.copy(work / p[1], work / p[2])
        elif p[0] == "mkdir":
            (work / p[1]).mkdir(parents=True, exist_ok=True)
        elif p[0] == "write":
            (work / p[1]).write_text(p[2])
    before = {name: file_digest(work / name) for name in cmd.changed_inputs}
    start = time.monotonic()
    proc = subprocess.Popen(wrapped(cmd.argv, opts), cwd=work, env=child_env(opts.hdf5_deadline),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
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
        again = subprocess.run(wrapped(cmd.argv, opts, 2 * int(opts.as_limit)), cwd=work,
                               env=child_env(opts.hdf5_deadline), capture_output=True, start_new_session=True,
                               timeout=opts.timeout + 30)
        last = [x for x in again.stderr.decode("utf-8", "replace").splitlines() if x.strip()][-1:]
        recheck = {"as_limit": 2 * int(opts.as_limit), "rc": again.returncode, "last_line": "".join(last)[:300],
                   "same_outcome": again.returncode == proc.returncode and "".join(last) == why}
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
    return {"command": cmd.name, "verdict": verdict, "why": why, "rc": proc.returncode, "wall_s": round(wall, 3),
            "stderr_tail": stderr[-2000:], "stdout_tail": out.decode("utf-8", "replace")[-500:],
            "partial_files_left": partial_files, "repro": repro_line(cmd, opts),
            **({"oom_recheck": recheck} if recheck else {})}


def run_control(task) -> list[str]:
    """Every command on the unmutated seed: each must exit 0. A command that refuses a valid file
    would count as a clean refusal ("ok") on every mutant, and the campaign would hide it."""
    seed, opts = task
    work = Path(opts.work) / f"control-{seed.name}"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copy(seed.path, work / "mutant.h5")
    failed = [f"{seed.name} {r['command']}: exit {r['rc']}: {r['why'][:300]}"
              for r in (run_command(cmd, work, opts) for cmd in commands_for(seed, opts.dgq)) if r["rc"] != 0]
    shutil.rmtree(work, ignore_errors=True)
    return failed


def mutant_rng(campaign_seed: int, seed_name: str, index: int) -> np.random.Generator:
    return np.random.default_rng([campaign_seed, zlib.crc32(seed_name.encode()), index])


def run_mutant(task) -> dict:
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
    except Exception as err:  # noqa: BLE001 - a mutation bug must not stop the campaign
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


# --------------------------------------------------------------------------------------------
# Main
# --------------------------------------------------------------------------------------------

def message_shape(line: str) -> str:
    """An error line without its file names and numbers, to count kinds of messages."""
    line = re.sub(r"\S*\.(h5|toml|json)\b", "FILE", line)
    line = re.sub(r"\(HDF5: .*", "(HDF5: ...)", line)
    line = re.sub(r"(?<![A-Za-z_])-?\d+(\.\d+)?(e[-+]?\d+)?", "N", line)
    return line[:110]


def summarize(results, kinds) -> tuple[str, dict]:
    table: dict = {}
    messages: dict = {}
    for res in results:
        for r in res["runs"]:
            if r["verdict"] == "ok" and r["rc"] != 0:
                shape = message_shape(r["why"])
                messages[shape] = messages.get(shape, 0) + 1
            row = table.setdefault((res["kind"], r["command"]), {c: 0 for c in ["inputs", *CLASSES]})
            row["inputs"] += 1
            row[r["verdict"]] += 1
            row["exit0"] = row.get("exit0", 0) + (r["rc"] == 0)
            row["partial_left"] = row.get("partial_left", 0) + bool(r["partial_files_left"])
    cols = ["inputs", "ok", "crash", "hang", "oom", "badmsg", "partial", "exit0", "partial_left"]
    lines = [f"{'kind':<12} {'command':<17}" + "".join(f"{c:>13}" for c in cols)]
    total = {c: 0 for c in cols}
    for kind in kinds:
        for (k, cmd), row in sorted(table.items()):
            if k != kind:
                continue
            lines.append(f"{k:<12} {cmd:<17}" + "".join(f"{row.get(c, 0):>13}" for c in cols))
            for c in cols:
                total[c] += row.get(c, 0)
    lines.append(f"{'all':<12} {'':<17}" + "".join(f"{total[c]:>13}" for c in cols))
    rechecked = [r["oom_recheck"] for res in results for r in res["runs"] if "oom_recheck" in r]
    if rechecked:
        same = sum(r["same_outcome"] for r in rechecked)
        lines.append(f"oom runs rerun with twice the --as limit: {len(rechecked)}, same exit code and error line: "
                     f"{same} (the limit did not decide those: the allocation fails at any limit or is not one)")
    lines.append(f"most frequent error messages of the rejected inputs ({len(messages)} distinct shapes):")
    for shape, n in sorted(messages.items(), key=lambda kv: -kv[1])[:25]:
        lines.append(f"{n:>7}  {shape}")
    return "\n".join(lines), {"messages": messages, "rows": [{"kind": k, "command": c, **row} for (k, c), row in sorted(table.items())],
                              "total": total}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dgq", required=True, help="the dgq binary under test")
    ap.add_argument("--seed-dgq", help="the dgq that makes the seed files (default: --dgq)")
    ap.add_argument("--out", required=True, help="output folder (seeds/, findings/, summary.*); emptied first")
    ap.add_argument("--seed", type=int, default=20, help="campaign seed (default 20)")
    ap.add_argument("--mutants-per-seed", type=int, default=50)
    ap.add_argument("--kinds", default=",".join(KINDS), help="comma-separated subset of " + ",".join(KINDS))
    ap.add_argument("--seeds", help="comma-separated seed names to use (default: all of the kinds)")
    ap.add_argument("--only", help="run only these mutants (comma-separated ids, e.g. trace-f16-00017)")
    ap.add_argument("--keep-all", action="store_true",
                    help="keep every mutant (OUT/kept/KIND/ID, with repro.sh), not only those with a finding")
    ap.add_argument("--jobs", type=int, default=1, help="mutants in parallel (default 1)")
    ap.add_argument("--timeout", type=float, default=20.0, help="seconds per command (default 20)")
    ap.add_argument("--as-limit", default=str(4 << 30), help="address-space limit in bytes (default 4 GiB)")
    ap.add_argument("--hdf5-deadline", type=float, default=0,
                    help="DGQ_HDF5_CHECK_TIMEOUT for the commands (default 0: dgq's own default, 60 s)")
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
    print(f"mutation-campaign: seed {opts.seed}, {len(chosen)} seed file(s), {opts.mutants_per_seed} mutant(s) "
          f"each, kinds {','.join(kinds)}, dgq {opts.dgq}, timeout {opts.timeout:g} s, --as {opts.as_limit}, "
          f"{opts.jobs} job(s)", flush=True)
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
                    print(f"  {r['verdict'].upper()}: {res['id']} {r['command']}: {r['why'][:200]} "
                          f"[{'; '.join(res['mutation'])[:160]}]", flush=True)
            if not opts.quiet and n % 100 == 0:
                print(f"  ... {n}/{len(tasks)} mutants, {time.monotonic() - started:.0f} s", flush=True)
    shutil.rmtree(out / "work", ignore_errors=True)
    elapsed = time.monotonic() - started
    text, table = summarize(results, kinds)
    runs = table["total"]["inputs"]
    not_ok = runs - table["total"]["ok"]
    header = (f"seed {opts.seed}, {len(results)} mutant(s) of {len(chosen)} seed file(s), {runs} command run(s), "
              f"{elapsed:.0f} s wall, {opts.jobs} job(s); dgq {opts.dgq}\n"
              f"control: every command on the {len(chosen)} unmutated seed file(s): "
              + (f"{len(control_failures)} failed" if control_failures else "all exit 0"))
    (out / "summary.txt").write_text(header + "\n" + text + "\n")
    (out / "summary.json").write_text(json.dumps({"seed": opts.seed, "mutants_per_seed": opts.mutants_per_seed,
                                                  "control_failures": control_failures,
                                                  "kinds": kinds, "dgq": opts.dgq, "elapsed_s": round(elapsed, 1),
                                                  "table": table, "mutants": results}, indent=1))
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
