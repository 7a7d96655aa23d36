"""tools/h5-same.py, the byte comparison of two HDF5 files that tools/gpu-cli-check.sh applies to
`dgq compress` / `dgq replay` outputs of --device cuda and cpu: equal files pass; a changed byte,
dtype, shape, a missing object or a differing attribute fails, and --ignore-attr skips only the
attribute it names. By hand: tests/python/run_pytest.sh -k h5_same
"""

import subprocess
import sys

import h5py
import numpy as np

from conftest import REPO_ROOT

TOOL = REPO_ROOT / "tools" / "h5-same.py"


def write(path, codes, device="cpu", extra=None):
    with h5py.File(path, "w") as f:
        f.attrs["format"] = "dgq-compressed"
        group = f.create_group("layers/0/k/0")
        group.create_dataset("codes", data=np.asarray(codes))
        group.attrs["device"] = device
        if extra is not None:
            f.create_dataset(extra, data=np.zeros(3, dtype=np.float32))


def same(a, b, *flags):
    result = subprocess.run([sys.executable, str(TOOL), str(a), str(b), *flags], capture_output=True, text=True)
    return result.returncode, result.stdout


def test_equal_files_pass(tmp_path):
    write(tmp_path / "a.h5", np.arange(8, dtype=np.int8))
    write(tmp_path / "b.h5", np.arange(8, dtype=np.int8))
    rc, out = same(tmp_path / "a.h5", tmp_path / "b.h5")
    assert rc == 0, out
    assert "0 difference(s)" in out


def test_one_changed_byte_fails_naming_the_dataset(tmp_path):
    codes = np.arange(8, dtype=np.int8)
    write(tmp_path / "a.h5", codes)
    codes[5] = 100
    write(tmp_path / "b.h5", codes)
    rc, out = same(tmp_path / "a.h5", tmp_path / "b.h5")
    assert rc == 1
    assert "layers/0/k/0/codes: dataset bytes differ" in out


def test_dtype_shape_and_missing_objects_fail(tmp_path):
    write(tmp_path / "a.h5", np.arange(8, dtype=np.int8))
    write(tmp_path / "b.h5", np.arange(8, dtype=np.int16))
    write(tmp_path / "c.h5", np.arange(8, dtype=np.int8), extra="more")
    assert same(tmp_path / "a.h5", tmp_path / "b.h5")[0] == 1
    rc, out = same(tmp_path / "a.h5", tmp_path / "c.h5")
    assert rc == 1
    assert "more: only in" in out


def test_an_attribute_differs_unless_ignored(tmp_path):
    write(tmp_path / "a.h5", np.arange(8, dtype=np.int8), device="cpu")
    write(tmp_path / "b.h5", np.arange(8, dtype=np.int8), device="cuda")
    rc, out = same(tmp_path / "a.h5", tmp_path / "b.h5")
    assert rc == 1
    assert "@device" in out
    assert same(tmp_path / "a.h5", tmp_path / "b.h5", "--ignore-attr", "device")[0] == 0
