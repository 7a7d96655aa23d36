"""`dgq export` (docs/results-format.md, "Export"): replay and eval results load with
`pandas.read_csv` (and `read_json(lines=True)`, `read_parquet`) in one line, one row per (run, layer, q head) or
per scheme run, every value equal to what h5py reads from the results file, and the recorded
model's layer ids where the trace has them.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k export
"""

import json
import math
import os

import h5py
import numpy as np
import pandas
import pytest

from conftest import REPO_ROOT
from dgqtools import make_passkey
from eval_support import run_dgq, run_eval, write_tiny_model, write_token_file

pytestmark = pytest.mark.needs_dgq
SYNTHETIC = REPO_ROOT / "data" / "synthetic-code-2k.h5"  # 2 layers, 8 q heads, 2 KV heads, no layer_ids
SMOLLM2 = REPO_ROOT / "data" / "smollm2-code-1k.h5"  # 4 layers, the model's 0, 7, 15, 29; 9 q heads, 3 KV heads


@pytest.fixture(scope="module")
def replay_results(dgq_bin, tmp_path_factory):
    folder = tmp_path_factory.mktemp("export")
    out = folder / "r.h5"
    run_dgq(dgq_bin, "replay", SYNTHETIC, "--scheme", "q8_0", "--scheme", "q4_0", "-o", out, "--threads", 1)
    # Trace layers 1 and 3 only: their model layers are 7 and 29.
    run_dgq(dgq_bin, "replay", SMOLLM2, "--scheme", "q8_0", "--layers", "1,3", "-o", out, "--threads", 1)
    return out


def export(dgq_bin, results, fmt, out):
    said = run_dgq(dgq_bin, "export", results, "--format", fmt, "-o", out).stdout
    assert not out.with_name(out.name + ".partial").exists()
    lines = out.read_text().splitlines()
    rows = len(lines) - (fmt == "csv")
    assert (
        said
        == f"wrote {out}: {rows} rows x {len(pandas.read_csv(out).columns) if fmt == 'csv' else len(json.loads(lines[0]))} columns\n"
    )
    return out


def expected_replay_rows(results):
    """Every (run, layer, q head) row as h5py reads it from the results file."""
    rows = []
    with h5py.File(results, "r") as f:
        for name in sorted(f["runs"]):
            g = f["runs"][name]
            qh, kvh = int(g.attrs["num_q_heads"]), int(g.attrs["num_kv_heads"])
            for i, layer in enumerate(g["layers"][()]):
                for q in range(qh):
                    kv = q // (qh // kvh)
                    rows.append(
                        {
                            "run": name,
                            "scheme": g.attrs["scheme"],
                            "layer": int(layer),
                            "model_layer": int(g["model_layers"][i]),
                            "q_head": q,
                            "kv_head": kv,
                            "k_mse": g["k/mse"][i, kv],
                            "v_snr_db": g["v/snr_db"][i, kv],
                            "k_bytes": int(g["k/bytes"][i, kv]),
                            "attn_kl": g["attn/kl"][i, q],
                            "attn_top8": g["attn/top8"][i, q],
                            "bits_per_element": g.attrs["bits_per_element"],
                        }
                    )
    return rows


def same(a, b):
    return (isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)) or a == b


def test_replay_results_load_in_one_line_with_a_row_per_run_layer_and_q_head(dgq_bin, replay_results, tmp_path):
    table = pandas.read_csv(export(dgq_bin, replay_results, "csv", tmp_path / "r.csv"))
    assert len(table) == 2 * 2 * 8 + 1 * 2 * 9  # runs x layers x q heads, per trace
    expected = expected_replay_rows(replay_results)
    assert len(expected) == len(table)
    for want, (_, got) in zip(expected, table.iterrows()):
        for column, value in want.items():
            assert same(got[column], value.item() if hasattr(value, "item") else value), (want["run"], column)
    smollm2 = table[table["trace"] == str(SMOLLM2)]
    assert sorted(set(zip(smollm2["layer"], smollm2["model_layer"]))) == [(1, 7), (3, 29)]
    synthetic = table[table["trace"] == str(SYNTHETIC)]
    assert (synthetic["model_layer"] == synthetic["layer"]).all()  # no layer_ids: the trace's own
    assert table["k_mse"].dtype == np.float64 and table["k_bytes"].dtype == np.int64


def test_jsonl_holds_the_same_rows(dgq_bin, replay_results, tmp_path):
    csv = pandas.read_csv(export(dgq_bin, replay_results, "csv", tmp_path / "r.csv"))
    lines = export(dgq_bin, replay_results, "jsonl", tmp_path / "r.jsonl")
    table = pandas.read_json(lines, lines=True)
    assert list(table.columns) == list(csv.columns)
    assert len(table) == len(csv)
    first = json.loads(lines.read_text().splitlines()[0])
    assert list(first) == list(csv.columns)  # every column a key, in the CSV's order
    pandas.testing.assert_frame_equal(table, csv, check_dtype=False)


def test_parquet_holds_the_same_rows_with_types_nulls_and_infinities(dgq_bin, replay_results, tmp_path):
    # fp16 is lossless: its K/V SNR is +inf, which the CSV writes "inf" and Parquet stores as such;
    # dgq's runs record attributes the others do not (its parameters): nulls in their rows.
    results = tmp_path / "r.h5"
    results.write_bytes(replay_results.read_bytes())
    run_dgq(
        dgq_bin,
        "replay",
        SYNTHETIC,
        "--scheme",
        "fp16",
        "--scheme",
        "dgq:win=16,group_ratio=0.75",
        "--layers",
        "0",
        "-o",
        results,
        "--threads",
        1,
    )
    csv = pandas.read_csv(export(dgq_bin, results, "csv", tmp_path / "r.csv"))
    said = run_dgq(dgq_bin, "export", results, "--format", "parquet", "-o", tmp_path / "r.parquet").stdout
    assert said == f"wrote {tmp_path / 'r.parquet'}: {len(csv)} rows x {len(csv.columns)} columns\n"
    table = pandas.read_parquet(tmp_path / "r.parquet")  # the one line
    assert list(table.columns) == list(csv.columns)
    pandas.testing.assert_frame_equal(table, csv, check_dtype=False)
    assert np.isinf(table["k_snr_db"]).any() and table["k_mse"].dtype == np.float64
    assert csv.isna().to_numpy().any() and (table.isna() == csv.isna()).all().all()
    assert any("," in s for s in table["scheme"])  # dgq's canonical spec: commas inside a text
    assert table["k_bytes"].dtype == np.int64 and table["scheme"].dtype != np.float64
    # A second reader, with the file's own schema: pyarrow's.
    import pyarrow.parquet

    schema = pyarrow.parquet.read_schema(tmp_path / "r.parquet")
    assert str(schema.field("k_bytes").type) == "int64" and str(schema.field("scheme").type) == "string"


def test_parquet_of_eval_results_holds_the_csvs_rows(dgq_bin, eval_results, tmp_path):
    csv = pandas.read_csv(export(dgq_bin, eval_results, "csv", tmp_path / "e.csv"))
    run_dgq(dgq_bin, "export", eval_results, "--format", "parquet", "-o", tmp_path / "e.parquet")
    pandas.testing.assert_frame_equal(pandas.read_parquet(tmp_path / "e.parquet"), csv, check_dtype=False)


def test_parquet_to_a_terminal_is_refused(dgq_bin, replay_results, tmp_path):
    import pty
    import subprocess

    controller, terminal = pty.openpty()
    result = subprocess.run(
        [dgq_bin, "export", str(replay_results), "--format", "parquet"],
        stdout=terminal,
        stderr=subprocess.PIPE,
        text=True,
        timeout=60,
    )
    os.close(terminal)
    os.close(controller)
    assert result.returncode == 2
    assert result.stderr == "dgq: error: --format parquet writes binary: give -o FILE or redirect stdout\n"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny random llama and 128 tokens of random ids."""
    folder = tmp_path_factory.mktemp("export-eval")
    model = folder / "model.h5"
    cfg, _ = write_tiny_model(model, "llama")
    text = folder / "tokens.h5"
    write_token_file(text, np.random.default_rng(3).integers(2, cfg["vocab_size"], size=128), "tiny-llama")
    return {"dir": folder, "model": model, "text": text, "vocab": cfg["vocab_size"]}


@pytest.fixture(scope="module")
def eval_results(dgq_bin, tiny):
    out = tiny["dir"] / "e.h5"
    run_eval(
        dgq_bin, model=tiny["model"], text=tiny["text"], ctx=64, chunks=2, scheme=["q8_0", "q4_0"], out=out, threads=1
    )
    return out


def value_of(attribute):
    return attribute.item() if hasattr(attribute, "item") else attribute


def test_eval_results_give_one_row_per_scheme_run(dgq_bin, eval_results, tmp_path):
    table = pandas.read_csv(export(dgq_bin, eval_results, "csv", tmp_path / "e.csv"))
    with h5py.File(eval_results, "r") as f:
        runs = [dict(f["runs"][str(i)].attrs) for i in range(len(f["runs"]))]
        root = dict(f.attrs)
    assert len(table) == len(runs) == 3  # the base, then the two schemes
    assert list(table["run"]) == [0, 1, 2]
    for (_, got), want in zip(table.iterrows(), runs):
        for key in ("spec", "ppl", "kld_mean", "bits_per_element", "bits_k", "tokens", "config_hash"):
            value = want[key].item() if hasattr(want[key], "item") else want[key]
            assert same(got[key], value), key
        assert got["model"] == root["model"] and got["ctx"] == root["ctx"]
        assert got["file_config_hash"] == root["config_hash"]  # the whole run's, beside each scheme's own


def test_eval_sweep_results_give_one_row_per_run(dgq_bin, tiny, tmp_path):
    config = tiny["dir"] / "sweep.toml"
    config.write_text(
        'schemes = ["fp16", "q8_0"]\n[eval]\nctx = 32\nchunks = 1\n'
        '[[eval.model]]\npath = "model.h5"\nlabel = "tiny"\ntexts = ["tokens.h5"]\n'
    )
    results = tmp_path / "sweep.h5"
    run_dgq(dgq_bin, "sweep", config, "-o", results, "--threads", 1)
    table = pandas.read_csv(export(dgq_bin, results, "csv", tmp_path / "sweep.csv"))
    with h5py.File(results, "r") as f:
        runs = {name: dict(g.attrs) for name, g in f["runs"].items()}
    assert list(table["run"]) == sorted(runs) and len(runs) == 2
    assert "complete" not in table.columns and list(table.columns[:3]) == ["run", "kind", "scheme"]
    for _, got in table.iterrows():
        want = runs[got["run"]]
        for key in ("scheme", "ctx", "ppl", "kld_mean", "bits_per_element", "config_hash", "text"):
            assert same(got[key], value_of(want[key])), key


def test_passkey_results_give_one_row_per_scheme(dgq_bin, tiny, tmp_path):
    rng = np.random.default_rng(9)
    prompts = [
        make_passkey.PasskeyPrompt(
            tokens=list(map(int, rng.integers(2, tiny["vocab"], size=n))),
            answer=[5, 6],
            key=10000 + n,
            length=n,
            depth=50.0,
            needle_position=n // 2,
        )
        for n in (20, 33)
    ]
    task = tmp_path / "task.h5"
    make_passkey.write_task(task, "tiny-llama", 0, prompts)
    results = tmp_path / "passkey.h5"
    run_eval(dgq_bin, task="passkey", model=tiny["model"], text=task, scheme=["fp32", "q8_0"], out=results, threads=1)
    table = pandas.read_csv(export(dgq_bin, results, "csv", tmp_path / "passkey.csv"))
    with h5py.File(results, "r") as f:
        runs = [dict(f["runs"][str(i)].attrs) for i in range(len(f["runs"]))]
        root = dict(f.attrs)
    assert list(table["run"]) == [0, 1]
    for (_, got), want in zip(table.iterrows(), runs):
        for key in ("spec", "accuracy", "logprob_mean", "bits_per_element", "stored_bytes", "config_hash"):
            assert same(got[key], value_of(want[key])), key
        assert got["task"] == "passkey" and got["prompts"] == 2 and got["file_config_hash"] == root["config_hash"]


def test_stdout_export_and_refusals(dgq_bin, replay_results):
    out = run_dgq(dgq_bin, "export", replay_results)  # CSV on stdout by default
    assert out.stdout.splitlines()[0].startswith("run,scheme,scheme_family,device,trace,")
    refused = run_dgq(dgq_bin, "export", SYNTHETIC, check=False)
    assert refused.returncode == 2 and refused.stdout == ""
    assert refused.stderr == (
        f"dgq: error: {SYNTHETIC}: attribute 'format' is 'dgq-trace', not a results file; "
        "dgq export reads dgq-results (replay, sweep, merge), dgq-eval and dgq-passkey-results "
        "files\n"
    )
    unknown = run_dgq(dgq_bin, "export", replay_results, "--format", "feather", check=False)
    assert unknown.returncode == 2 and "not an export format: csv, jsonl or parquet" in unknown.stderr
