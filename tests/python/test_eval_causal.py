"""`dgq eval --cache causal` (docs/eval.md, "The causal cache"; the rules: docs/spec.md, "Causal caches").

Three claims, each checked on the tiny random llama and Gemma 3 models (seconds) and the first
256 tokens of the shipped SmolLM2 code text:
- a per-token format is final on append, so its causal cache equals its prefill cache: identical
  logits and bytes;
- the one-pass causal evaluation (each query reads the cache as it was when its token was
  appended) equals the literal token-by-token decoder (`--ubatch 1`), logits bit for bit, when
  both use the batch-independent arithmetic (`--row-exact`), for every family that looks ahead;
- a family that looks ahead in prefill (KIVI, DGQ v2) scores differently when written causally.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k causal
"""

import json
import os
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from eval_support import eval_runs, run_eval, tiny_eval_inputs, write_token_file

pytestmark = pytest.mark.needs_dgq
MODELS_DIR = Path(os.environ.get("DGQ_MODELS_DIR", REPO_ROOT / "models"))
SMOLLM2_FILE = MODELS_DIR / "smollm2-135m.h5"

PER_TOKEN = [
    "fp16",
    "q8_0",
    "q4_0",
    "q4_1",
    "q5_0",
    "q5_1",
    "iq4_nl",
    "int8-token",
    "int8-group64",
    "int4-group64",
    "turboquant:bits=3",
    "fp8-e4m3:scale=token",
]
# Families whose values depend on later tokens in prefill, in configurations that make the
# tiny chunks (128 tokens, head_dim 32) close groups and segments while they are read.
LOOK_AHEAD = [
    "kivi-4",
    "kivi-2:group=16,residual=8",
    "dgq2",
    "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=32",
    "dgq2:bits=3,kgran=segment-channel-group,kgroup=16,residual=8,win=8,group_ratio=0.95",
    "dgq2:kgran=segment,vgran=segment-channel,win=8,group_ratio=0.95,budget=max_groups,max_groups=6",
    "dgq:boundaries=online,win=8,group_ratio=0.95",
    "dgq:boundaries=online,granularity=segment-channel",
    "fp8-e4m3:scale=prefix,prefix=40",
]


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def tiny(request, tmp_path_factory):
    """A tiny random model of each architecture and 256 tokens (2 chunks of 128), BOS first."""
    return tiny_eval_inputs(tmp_path_factory.mktemp(f"tiny-{request.param}"), request.param, 11)


def test_per_token_formats_are_the_same_cache_causal_or_prefill(dgq_bin, tiny):
    prefill = eval_runs(dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "pt-prefill.h5", PER_TOKEN)
    causal = eval_runs(
        dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "pt-causal.h5", PER_TOKEN, "--cache", "causal"
    )
    assert prefill["attrs"]["cache"] == "prefill" and causal["attrs"]["cache"] == "causal"
    for p, c in zip(prefill["runs"], causal["runs"]):
        assert np.array_equal(p["logits"], c["logits"]), p["spec"]
        assert p["stored_bytes"] == c["stored_bytes"], p["spec"]
        # Final on append: what the cache holds on average is what it holds at the end.
        assert c["bits_averaged"] == pytest.approx(c["bits"], rel=1e-12), p["spec"]


def test_one_pass_causal_equals_the_token_by_token_decoder(dgq_bin, tiny):
    schemes = ["q8_0"] + LOOK_AHEAD
    one_pass = eval_runs(
        dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "c0.h5", schemes, "--cache", "causal", "--row-exact"
    )
    literal = eval_runs(
        dgq_bin,
        tiny["model"],
        tiny["text"],
        tiny["dir"] / "c1.h5",
        schemes,
        "--cache",
        "causal",
        "--ubatch",
        1,
        "--row-exact",
    )
    assert literal["attrs"]["ubatch"] == 1
    for a, b in zip(one_pass["runs"], literal["runs"]):
        assert np.array_equal(a["logits"], b["logits"]), a["spec"]
        assert a["stored_bytes"] == b["stored_bytes"], a["spec"]
        assert a["bits_averaged"] == b["bits_averaged"], a["spec"]


def test_a_look_ahead_family_scores_differently_when_written_causally(dgq_bin, tiny):
    schemes = ["kivi-4", "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=32"]
    prefill = eval_runs(dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "la-p.h5", schemes)
    causal = eval_runs(dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "la-c.h5", schemes, "--cache", "causal")
    for p, c in zip(prefill["runs"][1:], causal["runs"][1:]):
        assert not np.array_equal(p["logits"], c["logits"]), p["spec"]
        # The open group is held raw (fp32 here) while decoding: more bits on average than at the end.
        assert c["bits_averaged"] > c["bits"], p["spec"]
    kivi_p, kivi_c = prefill["runs"][1], causal["runs"][1]
    assert kivi_p["stored_bytes"] == kivi_c["stored_bytes"]  # KIVI's prefill layout is its final causal state


def test_micro_batches_run_and_stay_close_to_token_by_token(dgq_bin, tiny):
    schemes = ["dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=32"]
    one = eval_runs(
        dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "u1.h5", schemes, "--cache", "causal", "--ubatch", 1
    )
    big = eval_runs(
        dgq_bin, tiny["model"], tiny["text"], tiny["dir"] / "u64.h5", schemes, "--cache", "causal", "--ubatch", 64
    )
    # A micro-batch is written before it attends, so its queries may read groups that closed
    # inside it: a different cache, not a different model.
    assert not np.array_equal(one["runs"][1]["logits"], big["runs"][1]["logits"])
    assert big["runs"][0]["kld"] == 0.0 and big["runs"][1]["kld"] < 1.0


@pytest.mark.parametrize(
    "scheme, message",
    [
        ("fp8-e4m3", "fp8-e4m3: scale=tensor (one scale per tensor) has no causal form"),
        ("dgq2:boundaries=fixed", "dgq2: boundaries=fixed has no causal form"),
    ],
)
def test_a_scheme_without_a_causal_form_is_refused_before_any_work(dgq_bin, tiny, scheme, message):
    out = tiny["dir"] / "refused.h5"
    result = run_eval(
        dgq_bin, model=tiny["model"], text=tiny["text"], ctx=128, scheme=scheme, cache="causal", out=out, check=False
    )
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert not out.exists() and not Path(str(out) + ".partial.d").exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--ubatch", "1"], "--ubatch 1: the micro-batched decoder needs --cache causal"),
        (["--cache", "causal", "--ubatch", "-2"], "eval: --ubatch: must be >= 0 (0 = one pass), got -2"),
        (["--cache", "lookahead"], "--cache 'lookahead': expected prefill or causal"),
    ],
)
def test_bad_cache_options_get_one_clear_error(dgq_bin, tiny, options, message):
    result = run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=128,
        scheme="q8_0",
        out=tiny["dir"] / "bad.h5",
        extra=options,
        check=False,
    )
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_the_json_summary_records_the_cache(dgq_bin, tiny):
    out, summary = tiny["dir"] / "j.h5", tiny["dir"] / "j.json"
    run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=128,
        chunks=1,
        scheme="kivi-4",
        cache="causal",
        out=out,
        json=summary,
    )
    doc = json.loads(summary.read_text())
    assert doc["cache"] == "causal" and doc["ubatch"] == 0
    assert doc["schemes"][1]["bits_averaged"] > doc["schemes"][1]["bits_per_element"]


@pytest.mark.skipif(not SMOLLM2_FILE.exists(), reason="models/smollm2-135m.h5 not made (tools/make-models.sh)")
def test_smollm2_one_pass_causal_equals_the_token_by_token_decoder(dgq_bin, tmp_path):
    """256 tokens of the shipped code text through the real model: the headline DGQ v2
    configuration (rotated V, 128-token key groups) and KIVI, one pass vs token by token. (The
    per-token formats are proved on the tiny models, the rotated ones, which need head_dim 64,
    in tests/reference/test_causal_conformance.cpp; each cache here costs CI about 15 s.)"""
    with h5py.File(REPO_ROOT / "data" / "smollm2-code-1k.h5", "r") as f:
        tokens = np.asarray(f["tokens"])[:256]
    with h5py.File(SMOLLM2_FILE, "r") as f:
        model_name = f.attrs["model"]
    text = tmp_path / "code.h5"
    write_token_file(text, tokens, model_name, "code")
    schemes = ["kivi-4", "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v"]
    a = eval_runs(
        dgq_bin, SMOLLM2_FILE, text, tmp_path / "a.h5", schemes, "--cache", "causal", "--row-exact", ctx=256, chunks=1
    )
    b = eval_runs(
        dgq_bin,
        SMOLLM2_FILE,
        text,
        tmp_path / "b.h5",
        schemes,
        "--cache",
        "causal",
        "--ubatch",
        1,
        "--row-exact",
        ctx=256,
        chunks=1,
    )
    for x, y in zip(a["runs"], b["runs"]):
        assert np.array_equal(x["logits"], y["logits"]), x["spec"]
        assert x["bits_averaged"] == y["bits_averaged"], x["spec"]
