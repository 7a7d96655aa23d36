"""K and V apart: `--cache-k SPEC --cache-v SPEC` (llama.cpp's -ctk/-ctv) in eval, replay and sweeps.

The pair "K/V" (core/include/dgq/kv_pair.hpp) gives each role its own scheme. Checked on a tiny
random llama (seconds) and the shipped synthetic trace:
- each role gets exactly its side's cache: the K bits of "q8_0/q4_0" are q8_0's, its V bits
  q4_0's, and in a replay its K bytes equal the q8_0 run's, its V bytes the q4_0 run's;
- a pair of one scheme is that scheme (same spec, same logits);
- a pair whose K side is exact reads exact keys: its attention KL (keys only) is 0;
- the one-pass causal pair equals the token-by-token decoder bit for bit (--row-exact);
- llama.cpp's spellings and vLLM's dtype names are accepted; bad pairs get one clear error.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k kv_pairs
"""

import json

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from eval_support import run_dgq, run_eval, write_tiny_model, write_token_file

pytestmark = pytest.mark.needs_dgq
TRACE = REPO_ROOT / "data" / "synthetic-code-2k.h5"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tiny-kv")
    model = folder / "model.h5"
    cfg, _ = write_tiny_model(model, "llama")
    tokens = np.random.default_rng(5).integers(2, cfg["vocab_size"], size=256).astype(np.int32)
    text = folder / "tokens.h5"
    write_token_file(text, tokens, "tiny-llama")
    return {"model": model, "text": text, "dir": folder}


def evaluate(dgq_bin, tiny, name, *options):
    out = tiny["dir"] / f"{name}.h5"
    run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=128,
        chunks=2,
        save_logits=True,
        out=out,
        json=tiny["dir"] / f"{name}.json",
        extra=options,
    )
    with h5py.File(out, "r") as f:
        runs = [f["runs"][str(i)] for i in range(len(f["runs"]))]
        return {
            r.attrs["spec"]: {
                "logits": np.asarray(r["logits"]),
                "bits": float(r.attrs["bits_per_element"]),
                "bits_k": float(r.attrs["bits_k"]),
                "bits_v": float(r.attrs["bits_v"]),
                "attn_kl": float(r.attrs["attn_kl_mean"]),
                "kld": float(r.attrs["kld_mean"]),
            }
            for r in runs
        }


def test_each_role_gets_its_sides_cache_in_eval(dgq_bin, tiny):
    runs = evaluate(
        dgq_bin,
        tiny,
        "roles",
        "--scheme",
        "q8_0",
        "--scheme",
        "q4_0",
        "--cache-k",
        "q8_0",
        "--cache-v",
        "q4_0",
        "--cache-k",
        "fp32",
        "--cache-v",
        "q4_0",
    )
    pair, exact_k = runs["q8_0/q4_0"], runs["fp32/q4_0"]
    assert (pair["bits_k"], pair["bits_v"], pair["bits"]) == (8.5, 4.5, 6.5)
    assert (exact_k["bits_k"], exact_k["bits_v"]) == (32.0, 4.5)
    assert runs["q8_0"]["bits_k"] == runs["q8_0"]["bits_v"] == 8.5
    # The probes compare attention over exact and cached keys: 0 for exact keys; for q8_0 keys
    # near q8_0's (the layers' inputs differ with the V side) and far below q4_0 keys'.
    assert exact_k["attn_kl"] == 0.0
    assert pair["attn_kl"] == pytest.approx(runs["q8_0"]["attn_kl"], rel=0.2)
    assert pair["attn_kl"] < runs["q4_0"]["attn_kl"] / 10
    for a, b in [("q8_0/q4_0", "q8_0"), ("q8_0/q4_0", "q4_0"), ("fp32/q4_0", "q4_0")]:
        assert not np.array_equal(runs[a]["logits"], runs[b]["logits"]), (a, b)
    doc = json.loads((tiny["dir"] / "roles.json").read_text())
    by_spec = {s["spec"]: s for s in doc["schemes"]}
    assert (by_spec["q8_0/q4_0"]["bits_k"], by_spec["q8_0/q4_0"]["bits_v"]) == (8.5, 4.5)


def test_a_pair_of_one_scheme_is_that_scheme(dgq_bin, tiny):
    evaluate(dgq_bin, tiny, "same", "--scheme", "q4_0", "-ctk", "q4_0", "-ctv", "q4_0", "--scheme", "q8_0")
    with h5py.File(tiny["dir"] / "same.h5", "r") as f:
        specs = [f["runs"][str(i)].attrs["spec"] for i in range(len(f["runs"]))]
        assert specs == ["fp16", "q4_0", "q8_0", "q4_0"]
        assert np.array_equal(np.asarray(f["runs"]["1"]["logits"]), np.asarray(f["runs"]["3"]["logits"]))


def test_the_causal_pair_equals_the_token_by_token_decoder(dgq_bin, tiny):
    pairs = [
        "--cache-k",
        "kivi-4",
        "--cache-v",
        "q4_0",
        "--cache-k",
        "fp32",
        "--cache-v",
        "kivi-2:group=16,residual=8",
        "--cache-k",
        "dgq2",
        "--cache-v",
        "fp16",
    ]
    one_pass = evaluate(dgq_bin, tiny, "c0", *pairs, "--cache", "causal", "--row-exact")
    literal = evaluate(dgq_bin, tiny, "c1", *pairs, "--cache", "causal", "--ubatch", 1, "--row-exact")
    assert list(one_pass) == list(literal) and len(one_pass) == 4
    for spec in one_pass:
        assert np.array_equal(one_pass[spec]["logits"], literal[spec]["logits"]), spec
        assert one_pass[spec]["bits_k"] == literal[spec]["bits_k"], spec


def test_replay_counts_each_roles_bytes_from_its_side(dgq_bin, tmp_path):
    out = tmp_path / "r.h5"
    run_dgq(
        dgq_bin,
        "replay",
        TRACE,
        "--scheme",
        "q8_0",
        "--scheme",
        "q4_0",
        "--cache-type-k",
        "q8_0",
        "--cache-type-v",
        "q4_0",
        "-o",
        out,
        "--json",
        tmp_path / "r.json",
    )
    runs = {r["scheme"]: r for r in json.loads((tmp_path / "r.json").read_text())["runs"]}
    assert runs["q8_0/q4_0"]["k_bytes"] == runs["q8_0"]["k_bytes"]
    assert runs["q8_0/q4_0"]["v_bytes"] == runs["q4_0"]["v_bytes"]
    assert runs["q8_0"]["k_bytes"] != runs["q4_0"]["k_bytes"]


def test_a_sweep_takes_cache_k_and_cache_v(dgq_bin, tmp_path):
    config = tmp_path / "kv.toml"
    config.write_text(f'cache_k = ["q8_0"]\ncache_v = ["q4_0", "fp8"]\ntraces = ["{TRACE}"]\n[replay]\nlayers = [0]\n')
    run_dgq(dgq_bin, "sweep", config, "-o", tmp_path / "s.h5")
    with h5py.File(tmp_path / "s.h5", "r") as f:
        schemes = sorted(g.attrs["scheme"] for g in f["runs"].values())
    assert schemes == ["q8_0/fp8-e4m3", "q8_0/q4_0"]  # vLLM's fp8 is fp8-e4m3, canonical


@pytest.mark.parametrize(
    "options, message",
    [
        (
            ["--cache-k", "q8_0/q4_0"],
            "--cache-k takes one scheme per entry, not a K/V pair or a layer plan ('q8_0/q4_0')",
        ),
        (
            ["--cache-v", "q8_0;0=q4_0"],
            "--cache-v takes one scheme per entry, not a K/V pair or a layer plan ('q8_0;0=q4_0')",
        ),
        (
            ["--cache-k", "q8_0", "--cache-k", "q4_0", "--cache-v", "q4_0", "--cache-v", "q8_0", "--cache-v", "fp16"],
            "--cache-k has 2 entries and --cache-v 3",
        ),
        (["--scheme", "q8_0/"], "scheme 'q8_0/': a K/V pair needs a scheme on both sides of '/'"),
        (["-ctv", "q3_0"], "unknown scheme family 'q3_0'"),
        (["--cache-v", "FP8"], "did you mean 'fp8'?"),
    ],
)
def test_bad_pairs_get_one_clear_error(dgq_bin, tmp_path, options, message):
    out = tmp_path / "bad.h5"
    result = run_dgq(dgq_bin, "replay", TRACE, *options, "-o", out, check=False)
    assert result.returncode == 2 and message in result.stderr, result.stderr
    assert result.stderr.count("\n") == 1 and result.stderr.startswith("dgq: error: ")
    assert not out.exists()
