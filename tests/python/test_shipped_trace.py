"""The real trace shipped in data/ for the tests and the demo (see data/README.md)."""

import h5py

from conftest import REPO_ROOT
from trace_checks import check_model_trace

SHIPPED_TRACE = REPO_ROOT / "data" / "smollm2-code-1k.h5"
SHIPPED_LAYERS = (0, 7, 15, 29)
SIZE_LIMIT_BYTES = 8 * 1024 * 1024  # "a few MB": the repository ships it


def test_shipped_trace_follows_format_v1():
    attrs, length, probes = check_model_trace(
        SHIPPED_TRACE, expect_kind="code", expect_layer_ids=SHIPPED_LAYERS, expect_tokens=1024
    )
    assert probes >= 16


def test_shipped_trace_records_a_plausible_forward_pass():
    with h5py.File(SHIPPED_TRACE, "r") as f:
        assert f.attrs["ppl"] < 30
        assert f.attrs["decode_rel_err"] < 1e-4
        assert not f["noise_mask"][...].any()


def test_shipped_trace_is_small():
    assert SHIPPED_TRACE.stat().st_size < SIZE_LIMIT_BYTES
