"""Structure-aware mutations through h5py: a dataset's dtype, shape, layout or filters changed,
datasets, groups and attributes deleted, moved, swapped or linked in cycles, attributes set to
absurd values, NaN/Inf/extreme values in the data.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import h5py
import numpy as np

from dgqtools.campaign.picking import pick


def absurd_attribute_values(rng, current):
    """Candidates for an attribute: extreme numbers, other types, odd strings."""
    values = [
        np.int64(0),
        np.int64(-1),
        np.int64(2**31 - 1),
        np.int64(2**31),
        np.int64(2**32 + 1),
        np.int64(2**40),
        np.int64(2**62),
        np.int64(2**63 - 1),
        np.int64(-(2**63)),
        np.int32(-7),
        np.uint64(2**64 - 1),
        np.float64(np.nan),
        np.float64(np.inf),
        np.float64(-np.inf),
        np.float64(1e308),
        np.float64(-0.0),
        np.float64(5e-324),
        np.float64(0.5),
        np.float16(65504),
        "",
        "x" * int(rng.choice([1000, 100000])),
        "dgq-trace",
        "dgq-compressed",
        "dgq-results",
        "dgq-model",
        "dgq-tokens",
        "dgq-base-logits",
        "dgq-eval",
        "../../etc/passwd",
        "nan",
        np.bytes_(b"\xff\xfe\x00garbage"),
        np.bytes_(b""),
        np.arange(1000, dtype=np.int64),
        np.zeros(0, dtype=np.int64),
        np.array([1, 2], dtype=np.int32),
        np.array([np.nan] * 3),
        np.bool_(True),
        h5py.Empty("f8"),
    ]
    if isinstance(current, (np.integer, int)) and not isinstance(current, bool):
        c = int(current)
        values += [
            np.int64(c + 1),
            np.int64(c - 1),
            np.int64(c * 2),
            np.int64(-c),
            np.float64(c),
            str(c),
            np.int8(c & 0x7F),
            np.array([c, c], dtype=np.int64),
        ]
    elif isinstance(current, (np.floating, float)):
        values += [np.float64(current) * 1e300, np.float32(current), str(current), np.int64(1 << 40)]
    elif isinstance(current, (str, bytes, np.bytes_)):
        s = current.decode("latin-1") if isinstance(current, (bytes, np.bytes_)) else current
        values += [
            s[:-1],
            s + "x",
            s.upper(),
            np.bytes_(s.encode("utf-8", "replace")),
            s * 1000,
            np.array([s, s], dtype=h5py.string_dtype()),
            s.replace(",", ";"),
            s + "\n" + s,
        ]
    elif isinstance(current, np.ndarray):
        values += [
            current[:0],
            current[:-1] if current.size else current,
            np.concatenate([current, current]) if current.ndim == 1 else current.ravel(),
            (current.astype(np.float64) * 1e300) if current.dtype.kind in "iuf" else current,
        ]
    return values[int(rng.integers(len(values)))]


def objects_of(f):
    groups, attrs = ["/"], [("/", k) for k in sorted(f.attrs.keys())]
    datasets: list[str] = []

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
        ops = [
            "del-attr",
            "attr",
            "attr",
            "attr",
            "dtype",
            "shape",
            "values",
            "values",
            "layout",
            "del-dataset",
            "del-group",
            "move",
            "swap",
            "link",
            "huge-extent",
            "add",
        ]
        for _ in range(20):
            op = ops[int(rng.integers(len(ops)))]
            try:
                d = apply_structural(f, op, groups, datasets, attrs, rng)
            except (Exception, SystemError) as err:
                d = None
                _ = err
            if d:
                return d
    return "no structural edit applied"


def apply_structural(f, op, groups, datasets, attrs, rng):
    if op == "del-attr" and attrs:
        obj, name = pick(attrs, rng)
        del f[obj].attrs[name]
        return f"delete attribute {obj}@{name}"
    if op == "attr" and attrs:
        obj, name = pick(attrs, rng)
        value = absurd_attribute_values(rng, f[obj].attrs[name])
        del f[obj].attrs[name]
        f[obj].attrs[name] = value
        shown = repr(value)[:80]
        return f"set attribute {obj}@{name} = {shown}"
    if op == "dtype" and datasets:
        p = pick(datasets, rng)
        choices = [
            "f2",
            "f4",
            "f8",
            "i1",
            "i2",
            "i4",
            "i8",
            "u1",
            "u2",
            "u8",
            "c8",
            "S4",
            "bool",
            h5py.string_dtype(),
            np.dtype([("a", "f4"), ("b", "i4")]),
            h5py.vlen_dtype("f4"),
        ]
        dt = choices[int(rng.integers(len(choices)))]
        old = str(f[p].dtype)
        dt_ = np.dtype(dt)
        # compound and vlen-of-numbers: no cast of the old values exists; leave them unwritten
        writable = not dt_.names and not (dt_.kind == "O" and h5py.check_vlen_dtype(dt_) is not str)
        recreate(f, p, dtype=dt, write=writable)
        return f"dtype of {p}: {old} -> {dt}"
    if op == "shape" and datasets:
        p = pick(datasets, rng)
        shape = list(f[p].shape or ())
        how = rng.choice(
            ["grow", "shrink", "zero", "double", "drop-dim", "add-dim", "reverse", "scalar", "unwritten", "empty"]
        )
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
        p = pick(datasets, rng)
        ds = f[p]
        if ds.shape is None or ds.size == 0 or ds.size > MAX_REWRITE or ds.dtype.kind not in "fiub":
            return None
        data = ds[()]
        flat = np.array(data).reshape(-1)
        count = int(rng.integers(1, min(8, flat.size) + 1))
        idx = rng.choice(flat.size, size=count, replace=False)
        if ds.dtype.kind == "f":
            pool = [
                np.nan,
                np.inf,
                -np.inf,
                np.finfo(ds.dtype).max,
                -np.finfo(ds.dtype).max,
                np.finfo(ds.dtype).tiny / 2,
                0.0,
            ]
        elif ds.dtype.kind == "b":
            pool = [True, False]
        else:
            info = np.iinfo(ds.dtype)
            pool = [
                info.min,
                info.max,
                -1 if info.min < 0 else 0,
                0,
                1 << (8 * ds.dtype.itemsize - 2),
                int(flat.max(initial=0)) + 1,
            ]
        chosen = [pool[int(rng.integers(len(pool)))] for _ in idx]
        with np.errstate(all="ignore"):
            flat[idx] = np.array(chosen).astype(ds.dtype)
        ds[...] = flat.reshape(np.shape(data))
        return f"values of {p} at {sorted(int(i) for i in idx)[:8]} set to {chosen[:4]}"
    if op == "layout" and datasets:
        p = pick(datasets, rng)
        ds = f[p]
        if ds.shape is None or ds.shape == ():
            return None
        how = rng.choice(["gzip", "shuffle-gzip", "fletcher32", "compact", "lzf", "scaleoffset", "tiny-chunks"])
        layouts: dict[str, dict[str, Any]] = {
            "gzip": dict(compression="gzip", compression_opts=9),
            "shuffle-gzip": dict(shuffle=True, compression="gzip"),
            "fletcher32": dict(fletcher32=True, chunks=True),
            "compact": {},
            "lzf": dict(compression="lzf"),
            "scaleoffset": dict(scaleoffset=2 if ds.dtype.kind == "f" else 0),
            "tiny-chunks": dict(chunks=tuple(1 for _ in ds.shape)),
        }
        kw = layouts[how]
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
        p = pick(datasets, rng)
        del f[p]
        return f"delete dataset {p}"
    if op == "del-group" and len(groups) > 1:
        p = pick(groups[1:], rng)
        del f[p]
        return f"delete group {p}"
    if op == "move" and len(groups) + len(datasets) > 1:
        p = pick(groups[1:] + datasets, rng)
        parent = p.rsplit("/", 1)[0] or "/"
        target = rng.choice(["7", "-1", "x", "00", "1e9", "99999999999", "../" + p.rsplit("/", 1)[1]])
        dest = (parent.rstrip("/") + "/" + target) if not target.startswith("../") else "/" + target[3:] + "_moved"
        if dest in f:
            return None
        f.move(p, dest)
        return f"move {p} -> {dest}"
    if op == "swap" and len(datasets) > 1:
        a, b = pick(datasets, rng), pick(datasets, rng)
        if a == b:
            return None
        f.move(a, a + "__tmp")
        f.move(b, a)
        f.move(a + "__tmp", b)
        return f"swap datasets {a} and {b}"
    if op == "link":
        how = rng.choice(["cycle", "soft-dangling", "external", "hard-alias"])
        if how == "cycle" and len(groups) > 1:
            g = pick(groups[1:], rng)
            f[g + "/loop"] = f[g]
            return f"hard link {g}/loop -> {g} (cycle)"
        if not datasets:
            return None
        p = pick(datasets, rng)
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
        f[p] = f[pick(others, rng)]
        return f"{p} -> hard link to another dataset"
    if op == "huge-extent" and datasets:
        p = pick(datasets, rng)
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
            g = pick(groups, rng)
            f[g].create_dataset("extra_" + str(int(rng.integers(100))), data=np.arange(10))
            return f"add a dataset in {g}"
        if how == "group":
            g = pick(groups, rng)
            f[g].create_group("extra_group")
            return f"add a group in {g}"
        g = pick(groups + datasets, rng)
        f[g].attrs["extra"] = np.int64(1)
        return f"add attribute {g}@extra"
    return None
