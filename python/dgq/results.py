"""dgq.open_results: any HDF5 file dgq writes or reads as plain Python and numpy (docs/python.md,
"Files as numpy").

Every file dgq writes names its layout in the root attribute `format` (docs/results-format.md,
docs/trace-format.md, docs/eval.md): dgq-results (replay, sweep, merge), dgq-eval,
dgq-passkey-results, dgq-trace, dgq-compressed, dgq-tokens, dgq-passkey, dgq-model. open_results
reads the file once, whole, into a tree of `Group`s: `attrs` (scalars as Python numbers and str,
arrays as numpy) and its members, datasets as numpy arrays. It holds no open file afterwards.
Needs h5py (tools/requirements.txt pins it; `pip install h5py` elsewhere).

    >>> r = dgq.open_results("r.h5")                      # dgq replay ... -o r.h5
    >>> r.format, list(r["runs"])
    ('dgq-results', ['q4_0@smollm2-code-1k', 'q8_0@smollm2-code-1k'])
    >>> r["runs/q8_0@smollm2-code-1k/k/mse"].shape     # [layers, kv heads]
    (2, 3)
"""

from __future__ import annotations

import os
from collections.abc import ItemsView, Iterator, KeysView
from pathlib import Path
from typing import Any

import numpy as np

from ._dgq import InputError

FORMATS = (
    "dgq-results",
    "dgq-eval",
    "dgq-passkey-results",
    "dgq-trace",
    "dgq-compressed",
    "dgq-tokens",
    "dgq-passkey",
    "dgq-model",
)


def _value(v: Any) -> Any:
    """An attribute as Python: bytes and numpy strings as str, numpy scalars as Python numbers."""
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, bytes):
        return v.decode("utf-8", errors="replace")
    return v


class Group:
    """One HDF5 group: `attrs` (a dict) and its members by name; `group["a/b"]` walks a path."""

    def __init__(self, name: str, attrs: dict[str, Any], members: dict[str, Any]):
        self.name = name
        self.attrs = attrs
        self._members = members

    def __getitem__(self, path: str) -> Any:
        node: Any = self
        for part in path.strip("/").split("/"):
            if not isinstance(node, Group) or part not in node._members:
                raise KeyError(f"{self.name}: no member {path!r}")
            node = node._members[part]
        return node

    def __contains__(self, path: str) -> bool:
        try:
            self[path]
            return True
        except KeyError:
            return False

    def __iter__(self) -> Iterator[str]:
        return iter(self._members)

    def __len__(self) -> int:
        return len(self._members)

    def keys(self) -> KeysView[str]:
        return self._members.keys()

    def items(self) -> ItemsView[str, Any]:
        return self._members.items()

    def __repr__(self) -> str:
        return f"<dgq group {self.name!r}: {len(self._members)} members, {len(self.attrs)} attributes>"


class Results(Group):
    """The whole file: `format` (its root attribute), `path`, and the root group's attrs and members."""

    def __init__(self, path: Path, format: str, root: Group):
        super().__init__("/", root.attrs, root._members)
        self.path = path
        self.format = format

    def __repr__(self) -> str:
        return f"<dgq {self.format} file {str(self.path)!r}: {list(self._members)}>"


def _read_group(h5group: Any, name: str) -> Group:
    import h5py

    attrs = {key: _value(h5group.attrs[key]) for key in h5group.attrs}
    members: dict[str, Any] = {}
    for key, item in h5group.items():
        path = f"{name.rstrip('/')}/{key}"
        if isinstance(item, h5py.Group):
            members[key] = _read_group(item, path)
        else:
            data = item[()]
            members[key] = data.decode("utf-8", errors="replace") if isinstance(data, bytes) else data
    return Group(name, attrs, members)


def open_results(path: str | os.PathLike[str]) -> Results:
    """Reads a dgq HDF5 file (any format above) into memory. dgq.InputError, one line naming the
    file, when it is missing, not HDF5, or has no dgq `format` attribute."""
    import h5py

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: no such file")
    try:
        f = h5py.File(path, "r")
    except OSError as err:
        raise InputError(f"{path}: not an HDF5 file or truncated ({str(err).splitlines()[0]})") from None
    with f:
        format_ = _value(f.attrs.get("format", ""))
        if format_ not in FORMATS:
            said = f"attribute 'format' is {format_!r}" if format_ else "no attribute 'format'"
            raise InputError(f"{path}: {said}, not a dgq file ({', '.join(FORMATS)})")
        return Results(path, format_, _read_group(f, "/"))
