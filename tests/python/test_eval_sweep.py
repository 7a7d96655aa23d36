"""Eval sweeps (docs/eval.md, "Eval sweeps"): `[eval]` in a sweep config runs `dgq eval` for
every model x text x ctx x scheme as one run of a results file, so grids resume, shard and merge
like replay sweeps. Checked here: each run equals the same `dgq eval` run, shards merged equal
the whole sweep, a rerun runs nothing, and bad [eval] tables get clear errors.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k eval_sweep
"""

from pathlib import Path

import h5py
import numpy as np
import pytest

from eval_support import eval_command, run_dgq, run_eval, write_tiny_model, write_token_file

pytestmark = pytest.mark.needs_dgq
SUMMARY_KEYS = [
    "ppl",
    "ppl_stderr",
    "dppl",
    "dppl_stderr",
    "kld_mean",
    "kld_stderr",
    "kld_median",
    "kld_p90",
    "kld_p99",
    "kld_max",
    "rms_dp",
    "same_top1",
    "bits_per_element",
    "attn_kl_mean",
    "tokens",
]


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    """A tiny llama model and two 64-token texts of random ids."""
    folder = tmp_path_factory.mktemp("eval-sweep")
    model = folder / "tiny.h5"
    cfg, _ = write_tiny_model(model, "llama")
    rng = np.random.default_rng(11)
    texts = []
    for name in ["a", "b"]:
        tokens = rng.integers(2, cfg["vocab_size"], size=64).astype(np.int32)
        write_token_file(folder / f"{name}.h5", tokens, "tiny-llama", kind=name)
        texts.append(folder / f"{name}.h5")
    return {"dir": folder, "model": model, "texts": texts}


def write_config(folder: Path, body: str) -> Path:
    config = folder / "sweep.toml"
    config.write_text(body)
    return config


CONFIG = """schemes = ["fp16", "q8_0", "dgq"]
[grid]
win = [8, 16]
[eval]
ctx = [16, 32]
chunks = 2
[[eval.model]]
path = "tiny.h5"
label = "tiny"
texts = ["a.h5", "b.h5"]
"""


def one_input_causal_config(schemes: str, axis: str) -> str:
    """A sweep of the schemes (a TOML list) on one input, tiny.h5 on a.h5 at ctx 32, one chunk, the
    causal cache, and one more [eval] axis (a TOML line)."""
    return f"""schemes = {schemes}
[eval]
ctx = 32
chunks = 1
cache = "causal"
{axis}
[[eval.model]]
path = "tiny.h5"
label = "tiny"
texts = ["a.h5"]
"""


def one_input_causal_eval(dgq_bin: str, inputs: dict, out: Path, scheme: str, **options: str) -> dict:
    """`dgq eval` alone on the input of one_input_causal_config, with the options of the axis
    under test: the attributes of its scheme's run (runs/1; runs/0 is the base)."""
    command = eval_command(
        model=inputs["model"],
        text=inputs["texts"][0],
        ctx=32,
        chunks=1,
        scheme=scheme,
        cache="causal",
        **options,
        out=out,
    )
    run_dgq(dgq_bin, *command)
    with h5py.File(out, "r") as f:
        return dict(f["runs"]["1"].attrs)


def runs_of(results: Path) -> dict:
    with h5py.File(results, "r") as f:
        return {name: dict(g.attrs) for name, g in f["runs"].items()}


def test_every_run_equals_the_same_dgq_eval_run(dgq_bin, inputs, tmp_path):
    config = write_config(inputs["dir"], CONFIG)
    out = tmp_path / "sweep.h5"
    listing = run_dgq(dgq_bin, "sweep", config, "--list", "-o", out).stdout.splitlines()
    # 2 texts x 2 ctx x (fp16 + q8_0 + dgq at 2 window sizes)
    assert len(listing) == 16
    assert listing[0].endswith("fp16@tiny+a+ctx16")
    swept = run_dgq(dgq_bin, "sweep", config, "-o", out)
    # Progress on the (piped) stderr: each input's eval a line per chunk and cache, the sweep a
    # line per input (2 texts x 2 ctx), counted in runs, the last at 16/16.
    sweep_lines = [line for line in swept.stderr.splitlines() if line.startswith("sweep: ")]
    assert [line.split()[1] for line in sweep_lines] == ["4/16", "8/16", "12/16", "16/16"], swept.stderr
    assert all("run(s) done (eval input tiny+" in line for line in sweep_lines), swept.stderr
    assert sum(line.startswith("eval: ") for line in swept.stderr.splitlines()) == 4 * 2 * 4, swept.stderr
    runs = runs_of(out)
    assert len(runs) == 16 and all(r["complete"] == 1 and r["kind"] == "eval" for r in runs.values())
    assert not Path(str(out) + ".cache/eval").exists() or not any(Path(str(out) + ".cache/eval").iterdir())

    alone = tmp_path / "alone.h5"
    run_eval(
        dgq_bin, model=inputs["model"], text=inputs["texts"][1], ctx=32, chunks=2, schemes="dgq:win=8,q8_0", out=alone
    )
    with h5py.File(alone, "r") as f:
        by_spec = {f["runs"][k].attrs["spec"]: dict(f["runs"][k].attrs) for k in f["runs"]}
    for spec, name in [("fp16", "fp16@tiny+b+ctx32"), ("q8_0", "q8_0@tiny+b+ctx32")]:
        for key in SUMMARY_KEYS:
            assert runs[name][key] == by_spec[spec][key], (name, key)
    dgq_run = next(r for n, r in runs.items() if n.startswith("dgq") and "win=8" in n and n.endswith("b+ctx32"))
    dgq_alone = next(a for s, a in by_spec.items() if s.startswith("dgq"))
    for key in SUMMARY_KEYS:
        assert dgq_run[key] == dgq_alone[key], key
    assert runs["fp16@tiny+a+ctx16"]["kld_max"] == 0.0 and runs["q8_0@tiny+a+ctx16"]["kld_max"] > 0.0
    assert runs["q8_0@tiny+a+ctx16"]["text"] == "a.h5" and runs["q8_0@tiny+a+ctx16"]["ctx"] == 16

    rerun = run_dgq(dgq_bin, "sweep", config, "-o", out)
    assert "16 already complete, 0 run now" in rerun.stdout
    assert rerun.stderr.startswith("sweep: 16/16 run(s) done (already complete), "), rerun.stderr


def test_a_keys_axis_runs_each_input_before_and_after_rope_as_dgq_eval_does(dgq_bin, inputs, tmp_path):
    config = write_config(inputs["dir"], one_input_causal_config('["q4_0"]', 'keys = ["post-rope", "pre-rope"]'))
    out = tmp_path / "keys.h5"
    run_dgq(dgq_bin, "sweep", config, "-o", out)
    runs = runs_of(out)
    assert sorted(runs) == ["q4_0@tiny+a+ctx32+causal", "q4_0@tiny+a+ctx32+causal+prerope"]
    pre = runs["q4_0@tiny+a+ctx32+causal+prerope"]
    assert pre["keys"] == "pre-rope" and runs["q4_0@tiny+a+ctx32+causal"]["keys"] == "post-rope"
    expected = one_input_causal_eval(dgq_bin, inputs, tmp_path / "alone-pre.h5", "q4_0", keys="pre-rope")
    for key in SUMMARY_KEYS + ["config_hash"]:
        assert pre[key] == expected[key], key
    assert pre["kld_mean"] != runs["q4_0@tiny+a+ctx32+causal"]["kld_mean"]


def test_a_raw_dtype_axis_runs_each_input_in_both_dtypes_as_dgq_eval_does(dgq_bin, inputs, tmp_path):
    config = write_config(
        inputs["dir"], one_input_causal_config('["kivi-4:group=8,residual=8", "q4_0"]', 'raw_dtype = ["fp16", "fp32"]')
    )
    out = tmp_path / "raw.h5"
    run_dgq(dgq_bin, "sweep", config, "-o", out)
    runs = runs_of(out)
    # The label of the default raw dtype says nothing, the other's says which (run names spell ':' as '_').
    assert sorted(runs) == sorted(
        f"{s}@tiny+a+ctx32+causal{r}" for s in ("kivi-4_group=8,residual=8", "q4_0") for r in ("", "+raw-f32")
    )
    by = {(r["scheme"].split(":")[0], r["text"], name.endswith("+raw-f32")): r for name, r in runs.items()}
    f16, f32 = by[("kivi-4", "a.h5", False)], by[("kivi-4", "a.h5", True)]
    assert (f16["raw_dtype"], f32["raw_dtype"]) == ("f16", "f32")
    assert f16["bits_averaged"] < f32["bits_averaged"] and f16["config_hash"] != f32["config_hash"]
    # q4_0 keeps no raw row: the same run, the same identity, whatever the raw dtype.
    q4_f16, q4_f32 = by[("q4_0", "a.h5", False)], by[("q4_0", "a.h5", True)]
    assert q4_f16["raw_dtype"] == q4_f32["raw_dtype"] == "none"
    for key in SUMMARY_KEYS + ["config_hash"]:
        assert q4_f16[key] == q4_f32[key], key
    expected = one_input_causal_eval(
        dgq_bin, inputs, tmp_path / "alone-f32.h5", "kivi-4:group=8,residual=8", raw_dtype="fp32"
    )
    for key in SUMMARY_KEYS + ["config_hash", "raw_dtype"]:
        assert f32[key] == expected[key], key


def test_shards_merged_equal_the_whole_sweep(dgq_bin, inputs, tmp_path):
    config = write_config(inputs["dir"], CONFIG)
    whole = tmp_path / "whole.h5"
    run_dgq(dgq_bin, "sweep", config, "-o", whole)
    shards = [tmp_path / f"shard{i}.h5" for i in range(3)]
    for i, shard in enumerate(shards):
        run_dgq(dgq_bin, "sweep", config, "-o", shard, "--shard", f"{i}/3")
    merged = tmp_path / "merged.h5"
    run_dgq(dgq_bin, "merge", merged, *shards)
    # merge refuses a run present twice with different contents: merging the whole sweep in too
    # checks every run of the shards against it attribute by attribute.
    report = run_dgq(dgq_bin, "merge", tmp_path / "both.h5", merged, whole).stdout
    assert runs_of(merged).keys() == runs_of(whole).keys()
    assert ": 16 run(s), 16 identical duplicate(s)" in report, report


@pytest.mark.parametrize(
    "body, message",
    [
        (
            'schemes = ["q8_0"]\n[eval]\nchunks = 1\n[[eval.model]]\npath = "tiny.h5"\ntexts = ["a.h5"]\n',
            "[eval] needs 'ctx'",
        ),
        ('schemes = ["q8_0"]\n[eval]\nctx = 16\n', "[eval] needs [[eval.model]]"),
        (
            'schemes = ["q8_0"]\n[eval]\nctx = 16\nquery_rounding = "q4"\n[[eval.model]]\npath = "tiny.h5"\n'
            'texts = ["a.h5"]\n',
            "key 'query_rounding'",
        ),
        (
            'schemes = ["q8_0"]\ntraces = ["t.h5"]\n[eval]\nctx = 16\n[[eval.model]]\npath = "tiny.h5"\ntexts = ["a.h5"]\n',
            "cannot be combined with traces",
        ),
        (
            'schemes = ["q8_0"]\n[eval]\nctx = 2\n[[eval.model]]\npath = "tiny.h5"\ntexts = ["a.h5"]\n',
            "outside [4, 1048576]",
        ),
        (
            'schemes = ["q8_0"]\n[eval]\nctx = 16\n[[eval.model]]\npath = "tiny.h5"\ntexts = ["a.h5"]\nseed = 1\n',
            "unknown key 'seed' in [[eval.model]]",
        ),
    ],
)
def test_bad_eval_tables_are_refused_with_the_key_named(dgq_bin, inputs, tmp_path, body, message):
    config = write_config(tmp_path, body)
    result = run_dgq(dgq_bin, "sweep", config, "-o", tmp_path / "r.h5", check=False)
    assert result.returncode != 0 and message in result.stderr, result.stderr
    assert not (tmp_path / "r.h5").exists()


def test_a_missing_text_names_the_input_and_the_file(dgq_bin, inputs, tmp_path):
    body = CONFIG.replace('"b.h5"', '"missing.h5"')
    config = write_config(
        tmp_path, body.replace('"tiny.h5"', f'"{inputs["model"]}"').replace('"a.h5"', f'"{inputs["texts"][0]}"')
    )
    out = tmp_path / "r.h5"
    result = run_dgq(dgq_bin, "sweep", config, "-o", out, check=False)
    assert result.returncode != 0
    assert "eval input 'tiny+missing+ctx16'" in result.stderr and "missing.h5" in result.stderr, result.stderr
    # the inputs before the failing one are complete and kept; nothing half-written
    assert len(runs_of(out)) == 8 and all(r["complete"] == 1 for r in runs_of(out).values())
