"""Provenance of `dgq eval` and eval sweeps (docs/results-format.md,
"Provenance"): resuming after the code or the config changed does not mix results. A finished
chunk, a base logits file or a sweep run of another dgq build is refused with one line naming
both versions, unless --allow-mixed-versions, which labels the result with every version.
Other builds are simulated by rewriting the dgq_version attribute with h5py.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k eval_provenance
"""

import json
import re
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from eval_support import eval_command, run_dgq, write_tiny_model, write_token_file

pytestmark = pytest.mark.needs_dgq
HASH = r"[0-9a-f]{16}"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A tiny llama model and a 64-token text of random ids."""
    folder = tmp_path_factory.mktemp("eval-provenance")
    model = folder / "tiny.h5"
    cfg, _ = write_tiny_model(model, "llama")
    tokens = np.random.default_rng(21).integers(2, cfg["vocab_size"], size=64).astype(np.int32)
    write_token_file(folder / "a.h5", tokens, "tiny-llama")
    return {"dir": folder, "model": model, "text": folder / "a.h5", "cfg": cfg}


@pytest.fixture(scope="module")
def this_version(dgq_bin):
    return run_dgq(dgq_bin, "--version").stdout.split()[-1]


def relabel(path: Path, group: str, version: str) -> None:
    with h5py.File(path, "r+") as f:
        f[group].attrs["dgq_version"] = version


def sweep_config(folder: Path, chunks: int) -> Path:
    config = folder / f"sweep-{chunks}.toml"
    config.write_text(f"""schemes = ["fp16", "q8_0"]
[eval]
ctx = [16]
chunks = {chunks}
[[eval.model]]
path = "tiny.h5"
label = "tiny"
texts = ["a.h5"]
""")
    return config


def test_eval_sweep_runs_record_version_and_config_hash(dgq_bin, inputs, this_version, tmp_path):
    out = tmp_path / "s.h5"
    run_dgq(dgq_bin, "sweep", sweep_config(inputs["dir"], 1), "-o", out)
    with h5py.File(out, "r") as f:
        runs = {name: dict(g.attrs) for name, g in f["runs"].items()}
        assert f.attrs["dgq_version"] == this_version
    assert {r["dgq_version"] for r in runs.values()} == {this_version}
    hashes = [r["config_hash"] for r in runs.values()]
    assert all(len(h) == 16 for h in hashes) and len(set(hashes)) == 2


def test_eval_sweep_resume_over_another_version_is_refused_then_allowed(dgq_bin, inputs, this_version, tmp_path):
    out = tmp_path / "s.h5"
    config = sweep_config(inputs["dir"], 1)
    run_dgq(dgq_bin, "sweep", config, "-o", out)
    relabel(out, "runs/q8_0@tiny+a+ctx16", "other-build")
    before = out.read_bytes()
    refused = run_dgq(dgq_bin, "sweep", config, "-o", out, check=False)
    assert refused.returncode == 2
    assert refused.stderr.count("\n") == 1
    pattern = (
        rf"^dgq: error: {out}: run q8_0@tiny\+a\+ctx16 was written by dgq other-build \(config {HASH}\), "
        rf"this is dgq {this_version} \(config {HASH}\); rerun into a new output or pass --allow-mixed-versions$"
    )
    assert re.match(pattern, refused.stderr.strip()), refused.stderr
    assert out.read_bytes() == before
    allowed = run_dgq(dgq_bin, "sweep", config, "-o", out, "--allow-mixed-versions")
    assert "2 already complete, 0 run now" in allowed.stdout
    with h5py.File(out, "r") as f:
        assert f["runs/q8_0@tiny+a+ctx16"].attrs["dgq_version"] == "other-build"
        assert f["runs/fp16@tiny+a+ctx16"].attrs["dgq_version"] == this_version


def test_eval_sweep_resume_after_the_config_changed_is_refused(dgq_bin, inputs, tmp_path):
    # chunks is in no run name: before provenance, 1-chunk runs were silently kept for a 2-chunk sweep.
    out = tmp_path / "s.h5"
    run_dgq(dgq_bin, "sweep", sweep_config(inputs["dir"], 1), "-o", out)
    with h5py.File(out, "r") as f:
        old_hash = f["runs/fp16@tiny+a+ctx16"].attrs["config_hash"]
    refused = run_dgq(dgq_bin, "sweep", sweep_config(inputs["dir"], 2), "-o", out, check=False)
    assert refused.returncode == 2
    assert "run fp16@tiny+a+ctx16 was written by dgq" in refused.stderr
    assert f"(config {old_hash}), this is dgq" in refused.stderr
    assert refused.stderr.split("this is dgq ")[1].split("(config ")[1][:16] != old_hash


def test_base_logits_of_another_version_are_refused_then_allowed_and_labelled(dgq_bin, inputs, this_version, tmp_path):
    base = tmp_path / "base.h5"
    common = eval_command(model=inputs["model"], text=inputs["text"], ctx=16, schemes="q8_0", base_logits=base)
    run_dgq(dgq_bin, *common, "-o", tmp_path / "a.h5")
    with h5py.File(base, "r") as f:
        assert f.attrs["dgq_version"] == this_version and len(f.attrs["config_hash"]) == 16
    relabel(base, "/", "other-build")
    refused = run_dgq(dgq_bin, *common, "-o", tmp_path / "b.h5", check=False)
    assert refused.returncode == 2
    assert f"{base}: the base run was written by dgq other-build" in refused.stderr
    assert not (tmp_path / "b.h5").exists()
    run_dgq(dgq_bin, *common, "-o", tmp_path / "b.h5", "--json", tmp_path / "b.json", "--allow-mixed-versions")
    with h5py.File(tmp_path / "b.h5", "r") as f:
        assert f.attrs["dgq_version"] == f"{this_version}+other-build"
        assert f["runs/1"].attrs["dgq_version"] == f"{this_version}+other-build"
    assert json.loads((tmp_path / "b.json").read_text())["dgq_version"] == f"{this_version}+other-build"


def test_a_chunk_of_another_version_is_not_resumed_unless_allowed(dgq_bin, inputs, this_version, tmp_path):
    tokens = np.random.default_rng(4).integers(2, inputs["cfg"]["vocab_size"], size=512 * 8).astype(np.int32)
    text = tmp_path / "long.h5"
    write_token_file(text, tokens, "tiny-llama")
    args = eval_command(model=inputs["model"], text=text, ctx=512, threads=1, schemes="q8_0")
    out = tmp_path / "r.h5"
    chunk_dir = Path(str(out) + ".partial.d")
    process = subprocess.Popen(
        [dgq_bin, *map(str, args), "-o", str(out)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 120
    while not (chunk_dir / "chunk-00000.h5").exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    chunk = chunk_dir / "chunk-00000.h5"
    assert chunk.exists() and not out.exists(), "the kill came too late to test resuming"
    with h5py.File(chunk, "r") as f:
        assert f.attrs["dgq_version"] == this_version
    relabel(chunk, "/", "other-build")
    refused = run_dgq(dgq_bin, *args, "-o", out, check=False)
    assert refused.returncode == 2
    assert f"{chunk}: chunk 0 was written by dgq other-build" in refused.stderr
    assert not out.exists()
    run_dgq(dgq_bin, *args, "-o", out, "--allow-mixed-versions")
    with h5py.File(out, "r") as f:
        assert f.attrs["dgq_version"] == f"{this_version}+other-build"
