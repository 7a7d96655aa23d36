"""Checks that a file follows dgq trace format v1 as the SmolLM2 exporter writes it."""

from typing import Any

import h5py
import numpy as np

REQUIRED_INT_ATTRS = ("version", "num_layers", "num_q_heads", "num_kv_heads", "head_dim", "rope_applied")


def as_str(value):
    return value.decode("utf-8") if isinstance(value, bytes) else str(value)


def check_model_trace(path, *, expect_kind=None, expect_layer_ids=None, expect_tokens=None):
    """Asserts the v1 layout; returns (attrs dict, L, T)."""
    with h5py.File(path, "r") as f:
        attrs = dict(f.attrs)
        assert as_str(attrs["format"]) == "dgq-trace"
        for name in REQUIRED_INT_ATTRS:
            assert np.issubdtype(np.asarray(attrs[name]).dtype, np.integer), name
        assert attrs["version"] == 1
        assert attrs["rope_applied"] == 1
        assert as_str(attrs["source"]) == "model"
        assert as_str(attrs["model"]) == "SmolLM2-135M-Instruct-Q4_1"
        assert (attrs["num_q_heads"], attrs["num_kv_heads"], attrs["head_dim"]) == (9, 3, 64)
        if expect_kind is not None:
            assert as_str(attrs["prompt_kind"]) == expect_kind
        layer_ids = list(attrs["layer_ids"])
        if expect_layer_ids is not None:
            assert layer_ids == list(expect_layer_ids)
        assert attrs["num_layers"] == len(layer_ids) == len(f["layers"])
        assert 1.0 <= attrs["ppl"] and 0.0 <= attrs["top1_acc"] <= 1.0

        tokens = f["tokens"][...]
        length = len(tokens)
        if expect_tokens is not None:
            assert length == expect_tokens
        assert tokens.dtype == np.int32 and tokens.min() >= 0 and tokens.max() < 49152
        noise_mask = f["noise_mask"][...]
        assert noise_mask.dtype == np.uint8 and noise_mask.shape == (length,)
        assert set(np.unique(noise_mask)) <= {0, 1}
        q_pos = f["q_pos"][...]
        assert q_pos.dtype == np.int32 and q_pos.ndim == 1
        assert np.all(np.diff(q_pos) > 0) and q_pos[0] >= 0 and q_pos[-1] < length
        assert isinstance(f["text"][()], bytes) and f["text"].shape == ()

        for i in range(len(layer_ids)):
            layer = f[f"layers/{i}"]
            expected_shapes = {"k": (3, length, 64), "v": (3, length, 64), "q": (9, len(q_pos), 64)}
            for name, shape in expected_shapes.items():
                ds = layer[name]
                assert ds.shape == shape, f"layers/{i}/{name}"
                assert ds.dtype == np.float16, f"layers/{i}/{name}"
                assert ds.compression == "gzip" and ds.compression_opts == 4 and ds.shuffle
                assert ds.chunks[0] == 1 and ds.chunks[1] <= 1024
                assert np.all(np.isfinite(ds[...])), f"layers/{i}/{name}"
        return attrs, length, len(q_pos)


def datasets_and_attrs(path):
    """Every dataset's bytes and every attribute of a trace, for byte-level comparisons."""
    contents: dict[str, Any] = {}
    with h5py.File(path, "r") as f:
        contents["/attrs"] = {k: np.asarray(v).tobytes() if not isinstance(v, str) else v for k, v in f.attrs.items()}

        def visit(name, obj):
            if isinstance(obj, h5py.Dataset):
                value = obj[()]
                contents[name] = (
                    obj.dtype.str,
                    obj.shape,
                    value if isinstance(value, bytes) else np.asarray(value).tobytes(),
                )

        f.visititems(visit)
    return contents
