#!/usr/bin/env python3
"""Whether two HDF5 files hold the same datasets and attributes, byte for byte.

    tools/h5-same.py A.h5 B.h5 [--ignore-attr NAME ...]

Prints one line per difference (object path, and which of dataset bytes, dtype, shape or
attribute differs) and exits 1 if there is any, 0 if none. Attributes named with --ignore-attr
(anywhere in the file) are skipped: a run's timing or the device it ran on, which may differ
while the stored data must not. tools/gpu-cli-check.sh uses it to compare `dgq compress
--device cuda` with `--device cpu`.
"""

import argparse
import sys

import h5py
import numpy as np


def contents(path, ignored):
    out = {}

    def visit(name, obj):
        for key, value in obj.attrs.items():
            if key not in ignored:
                out[f"{name}@{key}"] = ("attribute", np.asarray(value).tobytes(), str(np.asarray(value).dtype))
        if isinstance(obj, h5py.Dataset):
            data = obj[()]
            array = np.asarray(data)
            out[name] = ("dataset", array.tobytes(), f"{array.dtype}{array.shape}")

    with h5py.File(path, "r") as f:
        for key, value in f.attrs.items():
            if key not in ignored:
                out[f"/@{key}"] = ("attribute", np.asarray(value).tobytes(), str(np.asarray(value).dtype))
        f.visititems(visit)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a")
    parser.add_argument("b")
    parser.add_argument("--ignore-attr", action="append", default=[])
    args = parser.parse_args()
    a, b = contents(args.a, set(args.ignore_attr)), contents(args.b, set(args.ignore_attr))
    differences = 0
    for key in sorted(set(a) | set(b)):
        if key not in a or key not in b:
            print(f"{key}: only in {args.a if key in a else args.b}")
        elif a[key][2] != b[key][2]:
            print(f"{key}: {a[key][0]} type/shape {a[key][2]} vs {b[key][2]}")
        elif a[key][1] != b[key][1]:
            print(f"{key}: {a[key][0]} bytes differ")
        else:
            continue
        differences += 1
    print(f"h5-same: {len(a)} and {len(b)} objects compared, {differences} difference(s)")
    return 1 if differences else 0


if __name__ == "__main__":
    sys.exit(main())
