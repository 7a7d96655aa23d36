"""`dgq eval` (docs/eval.md): the C++ model runner against the numpy forward pass of
tools/export-trace.py, the metrics against a numpy recomputation, resume and progress. Refusals are
in test_eval_refusals.py, Gemma 3 in test_eval_gemma3.py.

Most tests use a tiny random model (tools/export-model.py tiny-llama) so they take seconds; one
compares the real SmolLM2 model file (made by tools/make-models.sh, part of the setup) with the
numpy pass on the GGUF. By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k eval
"""

import re
import signal
import subprocess
import time
from pathlib import Path

import h5py
import numpy as np
import pytest

from conftest import REPO_ROOT
from dgqtools import export_trace
from eval_support import (
    LOGITS_REL_TOL,
    MODELS_DIR,
    eval_command,
    numpy_llama,
    numpy_logits,
    numpy_scores,
    relative_error,
    run_attrs,
    run_dgq,
    run_eval,
    saved_logits,
    tiny_llama_in_chunks,
    write_token_file,
)

pytestmark = pytest.mark.needs_dgq
SMOLLM2_FILE = MODELS_DIR / "smollm2-135m.h5"


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    return tiny_llama_in_chunks(tmp_path_factory.mktemp("tiny"))


def test_tiny_model_logits_match_the_numpy_forward_pass(dgq_bin, tiny, tmp_path):
    out = tmp_path / "r.h5"
    # 96 tokens: two blocks of 64 queries in the runner's attention, the second one partial.
    run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=96,
        chunks=1,
        base="fp32",
        schemes="fp32",
        save_logits=True,
        out=out,
    )
    expected = numpy_logits(numpy_llama(tiny["model"]), tiny["tokens"][:96])[48:95]
    got = saved_logits(out, 0)
    assert got.shape == expected.shape
    assert relative_error(got, expected) <= LOGITS_REL_TOL


def test_smollm2_logits_match_the_numpy_forward_pass_on_the_gguf(dgq_bin, tmp_path, model, prose_tokens):
    if not SMOLLM2_FILE.is_file():
        pytest.fail(f"{SMOLLM2_FILE} missing: run tools/make-models.sh (tools/setup.sh does)")
    tokens = prose_tokens[:64]
    text = tmp_path / "t.h5"
    write_token_file(text, tokens, "SmolLM2-135M-Instruct-Q4_1")
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=SMOLLM2_FILE, text=text, ctx=64, base="fp32", schemes="fp32", save_logits=True, out=out)
    expected = numpy_logits(model, tokens)[32:63]  # SmolLM2 adds no BOS: the tokens run as they are
    assert relative_error(saved_logits(out, 0), expected) <= LOGITS_REL_TOL


# fp32 cache: measured 1.6e-7 relative. fp16 cache: measured 7.8e-5. The two passes compute K in
# fp32 in different orders (Eigen vs numpy's BLAS, ~1e-6 apart), and about one element in a
# thousand then rounds to the neighbouring fp16 value; in SmolLM2's outlier key channels (|k| in
# the hundreds, fp16 ulp 0.125) one such flip moves an attention score visibly, so the two fp16
# caches differ about as much as fp16 differs from fp32 (logits 1e-3 relative either way).
FP32_CACHE_PPL_REL_TOL = 1e-6
FP16_CACHE_PPL_REL_TOL = 2e-4


def test_cache_perplexity_matches_numpy_on_the_shipped_code_text(dgq_bin, tmp_path):
    """PPL of `dgq eval` with an fp32 and an fp16 cache on the first 512 tokens of the shipped
    SmolLM2 code trace (data/smollm2-code-1k.h5, /tokens), recomputed with the numpy pass of
    tools/export-trace.py (for fp16: K after RoPE and V rounded to fp16 before attention), chunked
    and scored as docs/eval.md says (2 chunks of 256; rows 128..254 predict tokens 129..255)."""
    if not SMOLLM2_FILE.is_file():
        pytest.fail(f"{SMOLLM2_FILE} missing: run tools/make-models.sh (tools/setup.sh does)")
    with h5py.File(REPO_ROOT / "data" / "smollm2-code-1k.h5", "r") as f:
        tokens = np.asarray(f["tokens"][:512], dtype=np.int32)
        model_name = f.attrs["model"]
    text = tmp_path / "code.h5"
    write_token_file(text, tokens, model_name, kind="code")
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=SMOLLM2_FILE, text=text, ctx=256, base="fp16", schemes="fp32", out=out)
    dgq_fp16, dgq_fp32 = (r["ppl"] for r in run_attrs(out))

    model = numpy_llama(SMOLLM2_FILE)

    def numpy_ppl():
        nll = []
        for chunk in (tokens[:256], tokens[256:]):
            z = numpy_logits(model, chunk)[128:255].astype(np.float64)
            z -= z.max(axis=1, keepdims=True)
            log_p = z - np.log(np.exp(z).sum(axis=1, keepdims=True))
            nll.extend(-log_p[np.arange(127), chunk[129:256]])
        return float(np.exp(np.mean(nll)))

    numpy_fp32 = numpy_ppl()
    exact_attention = model._attention

    def fp16(x):  # llama.cpp's f32 -> f16 copy
        return x.astype(np.float16).astype(np.float32)

    def fp16_cache_attention(q, k, v, start):
        return exact_attention(q, fp16(k), fp16(v), start)

    model._attention = fp16_cache_attention  # type: ignore[method-assign]  # this model, a local one, only
    numpy_fp16 = numpy_ppl()
    print(
        f"PPL fp32 cache: dgq {dgq_fp32:.9f} numpy {numpy_fp32:.9f}; "
        f"fp16 cache: dgq {dgq_fp16:.9f} numpy {numpy_fp16:.9f}"
    )
    assert abs(dgq_fp32 / numpy_fp32 - 1) <= FP32_CACHE_PPL_REL_TOL
    assert abs(dgq_fp16 / numpy_fp16 - 1) <= FP16_CACHE_PPL_REL_TOL


def test_a_scheme_that_returns_its_input_has_kld_and_dppl_exactly_zero(dgq_bin, tiny, tmp_path):
    # The fp16 scheme stores fp16 input bytes unchanged; against the fp16 base it is an identity.
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=tiny["model"], text=tiny["text"], ctx=32, base="fp16", schemes="fp16,fp32", out=out)
    base, identity, exact = run_attrs(out)
    assert identity["kld_mean"] == 0.0 and identity["kld_max"] == 0.0 and identity["dppl"] == 0.0
    assert identity["same_top1"] == 1.0 and identity["ppl"] == base["ppl"]
    assert exact["kld_max"] > 0.0  # the fp32 cache differs from the fp16 one


def test_fp16_against_fp32_cache_is_tiny_but_not_zero(dgq_bin, tiny, tmp_path):
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=tiny["model"], text=tiny["text"], ctx=32, base="fp32", schemes="fp16,q8_0", out=out)
    _, fp16, q8 = run_attrs(out)
    assert 0.0 < fp16["kld_mean"] < 1e-5
    assert fp16["kld_mean"] < q8["kld_mean"]
    assert fp16["bits_per_element"] == 16.0 and q8["bits_per_element"] == 8.5
    # The per-layer attention KL of the replay code, inside the model: 0 for the exact base,
    # tiny for fp16, larger for q8_0; one value per layer.
    base = run_attrs(out)[0]
    assert base["attn_kl_mean"] == 0.0
    assert 0.0 < fp16["attn_kl_mean"] < q8["attn_kl_mean"]
    with h5py.File(out, "r") as f:
        assert f["runs/2/attn_kl_per_layer"].shape == (tiny["cfg"]["num_layers"],)
        assert np.all(f["runs/2/attn_kl_per_layer"][()] > 0)


def test_metrics_match_a_numpy_recomputation_on_saved_logits(dgq_bin, tiny, tmp_path):
    out = tmp_path / "r.h5"
    schemes = ["fp32", "int4-group64", "kivi-2"]
    run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=32,
        schemes=",".join(schemes),
        save_logits=True,
        out=out,
        json=tmp_path / "r.json",
    )
    targets = np.concatenate([tiny["tokens"][c * 32 + 17 : c * 32 + 32] for c in range(3)])
    base = saved_logits(out, 0)
    attrs = run_attrs(out)
    for index in range(1, len(schemes) + 1):
        expected = numpy_scores(base, saved_logits(out, index), targets)
        for key, value in expected.items():
            # dppl_stderr is sqrt(a + b - 2c) with a ~ b ~ c: the cancellation magnifies the
            # summation-order differences of the two implementations (1e-16) to ~1e-9.
            rel = 1e-6 if key == "dppl_stderr" else 1e-9
            assert attrs[index][key] == pytest.approx(value, rel=rel, abs=1e-12), (schemes[index - 1], key)
    assert attrs[2]["kld_mean"] > 1e-4  # int4 really perturbs the cache: the comparison is not vacuous
    import json

    summary = json.loads((tmp_path / "r.json").read_text())
    assert [s["spec"] for s in summary["schemes"]] == ["fp16"] + schemes
    assert summary["schemes"][2]["kld_p99"] == pytest.approx(attrs[2]["kld_p99"], rel=1e-15)


def test_base_logits_file_is_written_then_reused(dgq_bin, tiny, tmp_path):
    base_file = tmp_path / "base.h5"
    first, second = tmp_path / "a.h5", tmp_path / "b.h5"
    common = eval_command(model=tiny["model"], text=tiny["text"], base_logits=base_file)
    run_dgq(dgq_bin, *common, "--ctx", 32, "--schemes", "q8_0", "-o", first)
    assert base_file.is_file()
    run_dgq(dgq_bin, *common, "--ctx", 32, "--schemes", "q8_0", "-o", second)
    assert run_attrs(first) == run_attrs(second)
    other = run_dgq(dgq_bin, *common, "--schemes", "q8_0", "--ctx", 48, "-o", tmp_path / "c.h5", check=False)
    assert other.returncode == 2 and "base logits of another run" in other.stderr


def test_q8_0_query_rounding_changes_a_quantized_run_only(dgq_bin, tiny, tmp_path):
    plain, rounded = tmp_path / "a.h5", tmp_path / "b.h5"
    common = eval_command(model=tiny["model"], text=tiny["text"], ctx=32, base="fp32", schemes="fp32,q8_0")
    run_dgq(dgq_bin, *common, "-o", plain)
    run_dgq(dgq_bin, *common, "--query-rounding", "q8_0", "-o", rounded)
    a, b = run_attrs(plain), run_attrs(rounded)
    assert a[1]["kld_mean"] == 0.0 and b[1]["kld_mean"] == 0.0  # fp32 cache: queries untouched
    assert a[2]["kld_mean"] != b[2]["kld_mean"]


# ---- Resume ---------------------------------------------------------------------------------


def test_killed_eval_resumes_to_identical_results(dgq_bin, tiny, tmp_path):
    rng = np.random.default_rng(9)
    tokens = rng.integers(2, tiny["cfg"]["vocab_size"], size=512 * 12).astype(np.int32)
    text = tmp_path / "long.h5"
    write_token_file(text, tokens, "tiny-llama")
    args = eval_command(model=tiny["model"], text=text, ctx=512, threads=1, schemes="q8_0,dgq,kivi-4,int4-group64")
    whole = tmp_path / "whole.h5"
    run_dgq(dgq_bin, *args, "-o", whole)

    resumed = tmp_path / "resumed.h5"
    chunk_dir = Path(str(resumed) + ".partial.d")
    process = subprocess.Popen(
        [dgq_bin, *map(str, args), "-o", str(resumed)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.time() + 120
    while not (chunk_dir / "chunk-00001.h5").exists() and process.poll() is None and time.time() < deadline:
        time.sleep(0.005)
    process.send_signal(signal.SIGKILL)
    process.wait()
    done_before = sorted(p.name for p in chunk_dir.glob("chunk-*.h5"))
    assert 1 <= len(done_before) < 12, "the kill came too late to test resuming"
    assert not resumed.exists()  # never a file that looks complete

    result = run_dgq(dgq_bin, *args, "-o", resumed)
    assert "(resumed)" not in result.stdout  # progress goes to stderr; the table to stdout
    assert "(resumed)" in result.stderr  # the chunks of the killed run, reported as done without work
    assert not chunk_dir.exists()
    with h5py.File(whole, "r") as a, h5py.File(resumed, "r") as b:
        assert dict(a.attrs) == dict(b.attrs)
        for i in a["runs"]:
            assert dict(a["runs"][i].attrs) == dict(b["runs"][i].attrs)
            for name in a["runs"][i]:
                assert np.array_equal(a["runs"][i][name][()], b["runs"][i][name][()]), (i, name)


def test_token_files_of_make_eval_texts_are_read_by_dgq(dgq_bin, tiny, tmp_path):
    from dgqtools import make_eval_texts

    prompt = export_trace.Prompt(text="abc", tokens=tiny["tokens"][:64], noise_mask=np.zeros(64, np.uint8))
    text = tmp_path / "t.h5"
    make_eval_texts.write_tokens(text, "tiny-llama", "prose", 0.1, 7, prompt)
    assert not Path(str(text) + ".partial").exists()
    out = tmp_path / "r.h5"
    run_eval(dgq_bin, model=tiny["model"], text=text, ctx=32, schemes="q8_0", out=out)
    with h5py.File(out, "r") as f:
        assert f.attrs["text_kind"] == "prose" and f.attrs["noise_rate"] == 0.1 and f.attrs["chunks"] == 2


PROGRESS_LINE = re.compile(
    r"^eval: (\d+)/(\d+) chunk (\d+) (\S+), (\d+s|\d+m\d\ds|\d+h\d\dm) elapsed, "
    r"ETA (\?|\d+s|\d+m\d\ds|\d+h\d\dm)$"
)


def test_progress_goes_to_a_redirected_stderr_by_default_a_line_per_chunk_and_cache(dgq_bin, tiny, tmp_path):
    # Redirected to a file or a pipe, a long run printed nothing unless --progress was given: a
    # user could not tell a slow run from a hung one. Now one plain line per finished unit (a
    # chunk through one cache), no carriage returns, with the elapsed time and the ETA; --quiet
    # silences it; --progress is still accepted; the table is on stdout in every case.
    args = eval_command(model=tiny["model"], text=tiny["text"], ctx=32, chunks=3, scheme="q8_0")
    default = run_dgq(dgq_bin, *args, "-o", tmp_path / "default.h5")
    lines = default.stderr.splitlines()
    assert "\r" not in default.stderr and "\033" not in default.stderr, default.stderr
    matches = [PROGRESS_LINE.match(line) for line in lines]
    assert all(matches), default.stderr
    found = [m for m in matches if m]
    assert [(int(m[1]), int(m[2]), int(m[3]), m[4]) for m in found] == [
        (2 * chunk + i + 1, 6, chunk, spec) for chunk in range(3) for i, spec in enumerate(("fp16", "q8_0"))
    ]
    assert found[-1][6] == "0s"
    quiet = run_dgq(dgq_bin, *args, "--quiet", "-o", tmp_path / "quiet.h5")
    assert quiet.stderr == ""
    forced = run_dgq(dgq_bin, *args, "--progress", "-o", tmp_path / "forced.h5")
    assert len(forced.stderr.splitlines()) == 6 and all(map(PROGRESS_LINE.match, forced.stderr.splitlines()))
    for run in (default, quiet, forced):
        assert "q8_0" in run.stdout and "eval -> " in run.stdout  # the table, on stdout in every case
    both = run_dgq(dgq_bin, *args, "--quiet", "--progress", "-o", tmp_path / "both.h5", check=False)
    assert both.returncode == 2 and both.stderr.startswith("dgq: error: eval: --quiet excludes --progress"), both.stderr
