"""Byte-level mutations: bit flips, byte runs, "interesting" integers and truncations, placed mostly
in a file's metadata (every byte outside its datasets' stored data); and the mutations aimed at the
global heap collections that hold variable-length strings and the heap ids that point into them.
"""

from __future__ import annotations

import re
from pathlib import Path

import h5py
import numpy as np

from dgqtools.campaign.picking import pick


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
        except Exception:
            pass

    with h5py.File(path, "r") as f:
        f.visititems(visit)
    return sorted(ranges)


def gguf_data_ranges(path: Path) -> list[tuple[int, int]]:
    """A GGUF file's tensor data (everything after its header, metadata and tensor entries)."""
    import gguf

    return [(int(gguf.GGUFReader(str(path)).data_offset), path.stat().st_size)]


def metadata_positions(size: int, ranges: list[tuple[int, int]]) -> np.ndarray:
    mask = np.ones(size, dtype=bool)
    for a, b in ranges:
        mask[max(0, a) : min(size, b)] = False
    return np.flatnonzero(mask)


INTERESTING = [
    0,
    1,
    0x7F,
    0x80,
    0xFF,
    0x7FFF,
    0x8000,
    0xFFFF,
    0x7FFFFFFF,
    0x80000000,
    0xFFFFFFFF,
    2**40,
    2**60,
    2**63 - 1,
    2**64 - 1,
]


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
        return (
            int(self.rng.integers(1, 9))
            if r < 0.6
            else int(self.rng.integers(9, 129))
            if r < 0.9
            else int(self.rng.integers(129, 4097))
        )

    def apply(self) -> str:
        if not self.b:
            return "empty file, nothing to mutate"
        op = self.rng.choice(
            ["flip", "flip", "overwrite", "overwrite", "interesting", "truncate", "duplicate", "delete", "insert"]
        )
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
                self.b[p : p + length] = self.rng.integers(0, 256, size=length, dtype=np.uint8).tobytes()
            else:
                self.b[p : p + length] = bytes([int(fill, 16)]) * length
            return f"overwrite {length} bytes at {p} with {fill}"
        if op == "interesting":
            p = self.pos()
            value = INTERESTING[int(self.rng.integers(len(INTERESTING)))]
            width = int(self.rng.choice([1, 2, 4, 8]))
            value &= (1 << (8 * width)) - 1
            raw = value.to_bytes(width, "little" if self.rng.random() < 0.8 else "big")
            raw = raw[: max(0, n - p)]
            self.b[p : p + len(raw)] = raw
            return f"write {width}-byte integer {value:#x} at {p}"
        if op == "truncate":
            r = self.rng.random()
            keep = (
                int(self.rng.integers(0, n))
                if r < 0.5
                else max(0, n - int(self.rng.integers(1, 513)))
                if r < 0.8
                else self.pos()
            )
            del self.b[keep:]
            return f"truncate to {keep} of {n} bytes"
        if op == "duplicate":
            src, length = self.pos(), self.run_length()
            length = min(length, n - src)
            chunk = bytes(self.b[src : src + length])
            dst = self.pos()
            if self.rng.random() < 0.5:
                self.b[dst:dst] = chunk
                return f"insert a copy of {length} bytes from {src} at {dst}"
            self.b[dst : dst + length] = chunk
            del self.b[n:]
            return f"overwrite {length} bytes at {dst} with the bytes at {src}"
        if op == "delete":
            p, length = self.pos(), self.run_length()
            del self.b[p : p + length]
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
            size = int.from_bytes(self.b[at + 8 : at + 16], "little")
            objects, p, end = [], at + 16, min(len(self.b), at + size)
            while p + 16 <= end:
                index, length = (
                    int.from_bytes(self.b[p : p + 2], "little"),
                    int.from_bytes(self.b[p + 8 : p + 16], "little"),
                )
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
        self.b[at : at + width] = (value & ((1 << (8 * width)) - 1)).to_bytes(width, "little")

    def apply(self) -> str:
        collections = self.collections()
        if not collections:
            return "no global heap collection to edit"
        at, size, objects = pick(collections, self.rng)
        extremes = [0, 1, 7, 8, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 1 << 32, 1 << 40, (1 << 63) - 1, (1 << 64) - 1]
        op = self.rng.choice(
            [
                "object-size",
                "object-size",
                "object-size",
                "object-index",
                "free-space",
                "collection-size",
                "id-length",
                "id-length",
                "id-index",
                "id-address",
            ]
        )
        if op in ("object-size", "object-index", "free-space") and objects:
            p, index, length = pick(objects, self.rng)
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
        q = pick(ids, self.rng)
        if op == "id-length":
            old = int.from_bytes(self.b[q : q + 4], "little")
            value = int(self.rng.choice([0, old + 1, 2 * old + 16, old + 4096, 0x10000, 0x7FFFFFFF, 0xFFFFFFFF]))
            self.put(q, 4, value)
            return f"heap id at {q}: length {old} -> {value}"
        if op == "id-index":
            old = int.from_bytes(self.b[q + 12 : q + 16], "little")
            value = int(self.rng.choice([0, old + 1, old + 100, 0xFFFF, 0x10000, 0xFFFFFFFF]))
            self.put(q + 12, 4, value)
            return f"heap id at {q}: object index {old} -> {value}"
        old = int.from_bytes(self.b[q + 4 : q + 12], "little")
        value = int(self.rng.choice([0, old + 8, old + 16, old - 16, old + 4096, len(self.b) - 16, 1 << 40]))
        self.put(q + 4, 8, value)
        return f"heap id at {q}: collection address {old} -> {value}"
