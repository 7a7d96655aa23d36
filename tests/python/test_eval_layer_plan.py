"""Layer plans in `dgq eval` (docs/eval.md, "Layer plans"): "DEFAULT;LAYERS=SPEC;..." gives some
layers their own cache, as KVTuner allocates bits by layer sensitivity. Checked on the tiny random
models (seconds):
- a plan that overrides every layer is the override's cache, bit for bit; one whose overrides are
  the default is the default, with its identity;
- the bytes are each layer's own: a 2-layer plan holds the mean of its two caches' bytes;
- the override reaches the layer it names: a numpy forward pass that quantizes that layer's keys
  matches, one that quantizes another layer's does not;
- the one-pass causal cache equals the token-by-token decoder with a plan of look-ahead families;
- a layer past the model, and a plan on one side of a K/V pair, get one clear line.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k layer_plan
"""

import h5py
import numpy as np
import pytest

from eval_support import (
    dgq_round_trip,
    eval_runs,
    numpy_gemma3_logits,
    relative_l2_error,
    run_dgq,
    run_eval,
    tiny_eval_inputs,
    tiny_gemma3_prompt,
)

pytestmark = pytest.mark.needs_dgq


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def tiny(request, tmp_path_factory):
    """A tiny random model of each architecture (llama: 2 layers, Gemma 3: 7) and 256 tokens."""
    return tiny_eval_inputs(tmp_path_factory.mktemp(f"layer-plan-{request.param}"), request.param, 9)


def test_a_plan_over_every_layer_is_the_override_and_one_of_the_default_is_the_default(dgq_bin, tiny):
    last = tiny["layers"] - 1
    schemes = ["kivi-4", f"q8_0;0-{last}=kivi-4", "q4_0", f"q4_0;0,{last}=q4_0:rot=none"]
    r = eval_runs(dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "all.h5", schemes, "--cache", "causal")["runs"]
    for a, b in [(r[1], r[2]), (r[3], r[4])]:
        assert np.array_equal(a["logits"], b["logits"]), b["spec"]
        assert a["stored_bytes"] == b["stored_bytes"] and a["bits_averaged"] == b["bits_averaged"], b["spec"]
    with h5py.File(tiny["dir"] / "all.h5", "r") as f:
        hashes = [f["runs"][str(i)].attrs["config_hash"] for i in range(5)]
    assert hashes[3] == hashes[4]  # one configuration, one identity
    assert hashes[1] != hashes[2]  # "q8_0;0-L=kivi-4" is not canonicalised into kivi-4 (said, not inferred)


def test_each_layer_holds_its_own_caches_bytes(dgq_bin, tiny):
    # Every layer has as many K/V elements: a plan's bytes are the layers' own, summed.
    n = tiny["layers"]
    schemes = ["fp32", "q4_0", "fp32;0=q4_0", "q4_0;1=fp32/q8_0"]
    r = eval_runs(dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "bytes.h5", schemes, "--base", "fp32")["runs"]
    exact, q4_0 = r[1]["stored_bytes"], r[2]["stored_bytes"]
    assert r[3]["stored_bytes"] * n == (n - 1) * exact + q4_0
    q8_0 = eval_runs(dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "q8.h5", ["q8_0"], "--base", "fp32")["runs"][1]
    assert r[4]["stored_bytes"] * n * 2 == 2 * (n - 1) * q4_0 + exact + q8_0["stored_bytes"]


def test_the_override_reaches_the_layer_it_names(dgq_bin, tmp_path):
    """Tiny Gemma 3 (7 layers), keys of one layer through q4_0 (prefill, the rest exact): dgq's
    logits follow a numpy forward pass that quantizes that layer's keys 100x closer than one that
    quantizes a neighbour's (the numpy keys differ from the C++ ones in the last bits, so a few
    4-bit codes may round the other way: a ratio, not equality)."""
    model, text, tokens = tiny_gemma3_prompt(tmp_path)
    q4_0_keys = dgq_round_trip("q4_0")
    for layer, neighbour in [(2, 3), (5, 4)]:  # a local layer, and the global one (pattern 6)
        twins = {
            twin: numpy_gemma3_logits(model, tokens, q4_0_keys, key_cache_layers={twin})[75:149]
            for twin in (layer, neighbour)
        }
        out = tmp_path / f"layer-{layer}.h5"
        run_eval(
            dgq_bin,
            model=model,
            text=text,
            ctx=150,
            base="fp32",
            scheme=f"fp32;{layer}=q4_0/fp32",
            save_logits=True,
            out=out,
        )
        with h5py.File(out, "r") as f:
            logits = np.asarray(f["runs"]["1"]["logits"])
        right, wrong = relative_l2_error(logits, twins[layer]), relative_l2_error(logits, twins[neighbour])
        assert right * 100 < wrong, (layer, right, wrong)


def test_the_one_pass_causal_cache_equals_the_token_by_token_decoder_with_a_plan(dgq_bin, tiny):
    # Layers of look-ahead families beside exact and per-token ones: each layer's causal view is its own.
    plans = [
        "q8_0;0=kivi-2:group=16,residual=8",
        "fp32;1=dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=32",
        "kivi-4;0=fp32/q4_0",
    ]
    one_pass = eval_runs(
        dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "c0.h5", plans, "--cache", "causal", "--row-exact"
    )
    literal = eval_runs(
        dgq_bin,
        tiny["model"],
        tiny["text"],
        tiny["dir"] / "c1.h5",
        plans,
        "--cache",
        "causal",
        "--ubatch",
        1,
        "--row-exact",
    )
    for a, b in zip(one_pass["runs"], literal["runs"]):
        assert np.array_equal(a["logits"], b["logits"]), a["spec"]
        assert a["stored_bytes"] == b["stored_bytes"] and a["bits_averaged"] == b["bits_averaged"], a["spec"]


@pytest.mark.parametrize(
    "options, message",
    [
        (["--scheme", "q8_0;9=q4_0"], "layer plan: layer 9 is past the model's last"),
        (["--scheme", "q8_0;2-1=q4_0"], "cache spec 'q8_0;2-1=q4_0': layer range '2-1' runs backwards"),
        (["--scheme", "q8_0;0=q9"], "unknown scheme family 'q9'"),
        (["--cache-k", "q8_0;0=q4_0"], "--cache-k takes one scheme per entry, not a K/V pair or a layer plan"),
        (["--scheme", "q8_0;0=fp8-e4m3", "--cache", "causal"], "fp8-e4m3"),
    ],
)
def test_bad_plans_get_one_clear_error_and_no_output(dgq_bin, tiny, options, message):
    out = tiny["dir"] / "bad.h5"
    result = run_eval(dgq_bin, model=tiny["model"], text=tiny["text"], ctx=128, out=out, extra=options, check=False)
    assert result.returncode != 0
    assert message in result.stderr and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert not out.exists()


def test_a_plan_outside_dgq_eval_is_refused_by_name(dgq_bin, tmp_path):
    import dgq

    with pytest.raises(dgq.ParameterError, match="';' makes a layer plan, which only dgq eval reads"):
        dgq.Scheme("q8_0;0=q4_0")
    result = run_dgq(
        dgq_bin,
        "memory",
        "--scheme",
        "q8_0;0=q4_0",
        "--layers",
        2,
        "--kv-heads",
        1,
        "--head-dim",
        64,
        "--tokens",
        128,
        check=False,
    )
    assert result.returncode != 0 and "';' makes a layer plan" in result.stderr
