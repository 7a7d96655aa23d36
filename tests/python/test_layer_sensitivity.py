"""tools/layer-sensitivity.py (docs/eval.md, "Layer plans"): the greedy allocation under a bits
budget, its sensitivity-blind control, the plan's spec, and one run on a tiny model whose plans
dgq eval then runs.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k layer_sensitivity
"""

import json
import subprocess
import sys
from collections.abc import Sequence

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from dgqtools import layer_sensitivity as ls
from eval_support import option_args, run_eval, write_tiny_model, write_token_file

BITS = [3.0, 4.0, 5.0]


def layer_sensitivity(extra: Sequence[object] = (), **options: object) -> subprocess.CompletedProcess:
    """tools/layer-sensitivity.py with option_args of the keyword options, then extra; its output captured."""
    args = [*option_args(options), *extra]
    script = REPO_ROOT / "tools" / "layer-sensitivity.py"
    return subprocess.run([sys.executable, str(script), *map(str, args)], capture_output=True, text=True)


def test_no_budget_above_the_first_level_keeps_every_layer_there():
    assert ls.allocate([[1.0, 0.5, 0.1]] * 3, BITS, 3.0) == [0, 0, 0]


def test_the_largest_reduction_per_bit_is_bought_first_and_the_budget_holds():
    sensitivity = [
        [1.0, 0.9, 0.8],  # layer 0: little to gain
        [5.0, 1.0, 0.5],  # layer 1: the sensitive one
        [2.0, 1.4, 1.3],
    ]
    assert ls.allocate(sensitivity, BITS, 3.0 + 1 / 3) == [0, 1, 0]
    level = ls.allocate(sensitivity, BITS, 3.0 + 2 / 3)
    assert level == [0, 1, 1]  # then 2.0 -> 1.4 (0.6 per bit) before 1.0 -> 0.5 (0.5 per bit)
    assert sum(BITS[j] for j in level) / 3 <= 3.0 + 2 / 3 + 1e-12
    assert ls.allocate(sensitivity, BITS, 5.0) == [2, 2, 2]
    # A tie goes to the lower layer.
    assert ls.allocate([[1.0, 0.5, 0.4], [1.0, 0.5, 0.4]], BITS, 3.5) == [1, 0]


def test_an_upgrade_that_does_not_reduce_the_measured_kld_is_never_bought():
    assert ls.allocate([[1.0, 1.2, 0.5], [1.0, 0.5, 0.4]], BITS, 5.0) == [0, 2]


def test_the_control_spreads_the_same_levels_blind_to_sensitivity():
    level = [2, 2, 1, 0, 0, 0, 0, 0, 0, 0]
    control = ls.control_of(level)
    assert sorted(control) == sorted(level)
    assert control != level  # not the plan itself: the order ignores where the sensitive layers are
    assert ls.control_of([0, 0, 0, 1]) == ls.control_of([1, 0, 0, 0])  # independent of where the plan put them


def test_a_plans_spec_takes_the_most_common_level_as_default():
    assert ls.plan_spec([1, 0, 0, 2], ["a", "b", "c"]) == "a;0=b;3=c"
    assert ls.plan_spec([1, 1, 0], ["a", "b"]) == "b;2=a"
    assert ls.plan_spec([0, 0], ["a", "b"]) == "a"


@pytest.mark.needs_dgq
def test_one_run_on_a_tiny_model_writes_plans_that_dgq_eval_runs(dgq_bin, tmp_path):
    model = tmp_path / "model.h5"
    cfg, _ = write_tiny_model(model, "gemma3")
    tokens = np.random.default_rng(4).integers(2, cfg["vocab_size"], size=400).astype(np.int32)
    texts = [tmp_path / "a.h5", tmp_path / "b.h5"]
    write_token_file(texts[0], tokens[:200], "tiny-gemma3")
    write_token_file(texts[1], tokens[200:], "tiny-gemma3")  # each window past token 50: the first ones not used
    out = tmp_path / "plans" / "tiny.json"
    result = layer_sensitivity(
        model=model,
        text=texts,
        window="50,128",
        ctx=128,
        chunks=2,
        level=["q4_0", "q5_0", "q8_0"],
        budget=5.0,
        dgq=dgq_bin,
        out=out,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert [lv["spec"] for lv in doc["levels"]] == ["q4_0", "q5_0", "q8_0"]
    assert [lv["bits"] for lv in doc["levels"]] == [4.5, 5.5, 8.5]
    assert len(doc["sensitivity"]) == cfg["num_layers"] and all(len(row) == 3 for row in doc["sensitivity"])
    plan = doc["plans"]["5"]
    assert plan["predicted_bits"] <= 5.0 and plan["spec"].startswith("q4_0;")
    assert plan["predicted_kld"] < plan["control_predicted_kld"]  # on this model the first layers matter most
    summary = tmp_path / "plan.json"
    calibration = out.with_name("tiny-calibration.h5")
    with h5py.File(calibration, "r") as f:  # the windows, one chunk each
        assert np.array_equal(f["tokens"][:], np.concatenate([tokens[50:178], tokens[250:378]]))
        assert f.attrs["kind"] == "calibration" and f.attrs["model"] == "tiny-gemma3"
    run_eval(
        dgq_bin,
        model=model,
        text=calibration,
        ctx=128,
        chunks=2,
        cache="causal",
        scheme=[plan["spec"], plan["control_spec"]],
        out=tmp_path / "plan.h5",
        json=summary,
    )
    runs = json.loads(summary.read_text())["schemes"]
    assert runs[1]["bits_averaged"] == pytest.approx(plan["predicted_bits"], rel=1e-9)
    assert runs[1]["kld_mean"] < runs[2]["kld_mean"]  # the measured KLD agrees with the prediction's order


def tiny_model_and_text(tmp_path, seed: int, tokens: int):
    """A tiny Gemma 3 model file and one token file of random tokens for it."""
    model = tmp_path / "model.h5"
    cfg, _ = write_tiny_model(model, "gemma3")
    text = tmp_path / "a.h5"
    write_token_file(
        text, np.random.default_rng(seed).integers(2, cfg["vocab_size"], size=tokens).astype(np.int32), "tiny-gemma3"
    )
    return model, cfg, text


@pytest.mark.needs_dgq
def test_keys_pre_rope_calibrates_and_records_the_key_position(dgq_bin, tmp_path):
    model, _, text = tiny_model_and_text(tmp_path, 5, 128)
    docs = {}
    for keys in ("post-rope", "pre-rope"):
        out = tmp_path / keys / "tiny.json"
        result = layer_sensitivity(
            model=model, text=text, ctx=128, keys=keys, level=["q4_0", "q8_0"], budget=6.0, dgq=dgq_bin, out=out
        )
        assert result.returncode == 0, result.stderr
        docs[keys] = json.loads(out.read_text())
        assert docs[keys]["keys"] == keys
        assert json.loads(out.with_name("tiny-levels.json").read_text())["keys"] == keys
    # q4_0 keys before RoPE are other bytes than after it: the measured sensitivities differ.
    assert docs["pre-rope"]["sensitivity"] != docs["post-rope"]["sensitivity"]


def test_a_plan_of_k_v_pairs_for_a_pair_of_mixed_levels():
    # Layer 0's K is the sensitive item, then layer 1's V; each level's bits are its role's.
    k, v = [0, 1], [1, 0]
    spec = ls.pair_plan(k, v, ["q4_0", "q8_0"], ["q4_0", "q8_0"])
    assert spec == "q4_0/q8_0;1=q8_0/q4_0"
    level = ls.allocate([[5.0, 1.0], [1.0, 0.9], [1.0, 0.9], [3.0, 1.0]], [[4.5, 8.5]] * 2 + [[4.5, 8.5]] * 2, 5.5)
    assert level == [1, 0, 0, 0]  # one upgrade fits: the largest reduction per bit


@pytest.mark.needs_dgq
def test_k_and_v_levels_are_allocated_apart_and_their_plan_runs(dgq_bin, tmp_path):
    model, cfg, text = tiny_model_and_text(tmp_path, 6, 256)
    out = tmp_path / "split.json"
    result = layer_sensitivity(
        model=model,
        text=text,
        ctx=128,
        k_level=["q4_0", "q8_0"],
        v_level=["q4_0", "q8_0"],
        budget=6.5,
        dgq=dgq_bin,
        out=out,
    )
    assert result.returncode == 0, result.stderr
    doc = json.loads(out.read_text())
    assert doc["roles"] == "split"
    assert [lv["bits"] for lv in doc["k_levels"]] == [4.5, 8.5] == [lv["bits"] for lv in doc["v_levels"]]
    layers = cfg["num_layers"]
    assert len(doc["k_sensitivity"]) == layers == len(doc["v_sensitivity"])
    plan = doc["plans"]["6.5"]
    assert len(plan["k_levels"]) == layers and plan["predicted_bits"] <= 6.5
    assert sorted(plan["control_k_levels"]) == sorted(plan["k_levels"])
    assert "/" in plan["spec"]
    summary = tmp_path / "plan.json"
    run_eval(
        dgq_bin,
        model=model,
        text=text,
        ctx=128,
        cache="causal",
        scheme=plan["spec"],
        out=tmp_path / "plan.h5",
        json=summary,
    )
    got = json.loads(summary.read_text())["schemes"][1]
    assert got["bits_averaged"] == pytest.approx(plan["predicted_bits"], rel=1e-9)
    # Refused: both kinds of levels, or one role's alone.
    for extra in (
        ["--level", "q4_0", "--level", "q8_0", "--k-level", "q4_0", "--v-level", "q4_0"],
        ["--k-level", "q4_0"],
    ):
        bad = layer_sensitivity(
            extra, model=model, text=text, ctx=128, budget=5, dgq=dgq_bin, out=tmp_path / "bad.json"
        )
        assert bad.returncode != 0 and "--k-level and --v-level" in bad.stderr
