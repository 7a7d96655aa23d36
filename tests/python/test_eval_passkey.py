"""`dgq eval --task passkey` (docs/eval.md, "The passkey task") on the tiny random models.

- Greedy decoding, done for real: the continuation of each prompt is generated token by token
  by the literal decoder (`--ubatch 1`, one new token per call), then scored in one teacher-forced
  pass: exact = 1 with it, exact = 0 and first_wrong = j when its token j is changed, and the one
  pass and `--ubatch 1` give identical scores under `--row-exact`.
- The scores against `dgq eval --task perplexity`'s saved logits of the same tokens (argmax and
  log-softmax recomputed in numpy).
- The results file and JSON layout; every task-file and option error as one line, exit code 2.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k passkey
"""

import json

import h5py
import numpy as np
import pytest

from dgqtools import make_passkey as mp
from eval_support import eval_command, run_dgq, run_eval, write_tiny_model, write_token_file

pytestmark = pytest.mark.needs_dgq
STEPS = 5  # greedy tokens generated per prompt
# A per-token format and a family that looks ahead (its groups close inside these prompts).
SCHEMES = ["fp32", "q8_0", "kivi-2:group=16,residual=8"]
# One OpenMP thread: these passes are tiny, and on a loaded 2-core machine spinning worker threads
# made single runs take seconds instead of milliseconds.
THREADS = 1


@pytest.fixture(scope="module", params=["llama", "gemma3"])
def tiny(request, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"passkey-{request.param}")
    model = folder / "model.h5"
    cfg, _ = write_tiny_model(model, request.param)
    rng = np.random.default_rng(23)
    prompts = [list(map(int, rng.integers(2, cfg["vocab_size"], size=n))) for n in (21, 40, 57)]
    return {
        "model": model,
        "name": f"tiny-{request.param}",
        "vocab": cfg["vocab_size"],
        "dir": folder,
        "prompts": prompts,
    }


def write_task(path, tiny, answers):
    """A task file of the tiny prompts with the given answers (needle and depth are nominal)."""
    prompts = [
        mp.PasskeyPrompt(
            tokens=p, answer=list(a), key=10000 + i, length=len(p), depth=50.0, needle_position=len(p) // 2
        )
        for i, (p, a) in enumerate(zip(tiny["prompts"], answers))
    ]
    mp.write_task(path, tiny["name"], 0, prompts)
    return path


def run_passkey(dgq_bin, tiny, task, name, schemes, *options):
    out = tiny["dir"] / f"{name}.h5"
    # --force: the greedy steps rerun into one output (an existing one is refused without it).
    run_eval(
        dgq_bin,
        options,
        task="passkey",
        model=tiny["model"],
        text=task,
        out=out,
        force=True,
        threads=THREADS,
        scheme=schemes,
    )
    with h5py.File(out, "r") as f:
        offsets = f["answer_offsets"][:]
        runs = []
        for i in range(len(f["runs"])):
            g = f["runs"][str(i)]
            predicted = g["predicted"][:]
            runs.append(
                {
                    "spec": g.attrs["spec"],
                    "exact": g["exact"][:],
                    "logprob": g["logprob"][:],
                    "first_wrong": g["first_wrong"][:],
                    "predicted": [list(predicted[offsets[k] : offsets[k + 1]]) for k in range(len(offsets) - 1)],
                }
            )
        return runs


def greedy_continuation(dgq_bin, tiny, scheme):
    """STEPS tokens per prompt, generated one at a time by the token-by-token decoder: at step t
    the answer is the t tokens generated so far plus a placeholder, and the last row's argmax
    (the prediction that follows the generated tokens) is the next token."""
    generated: list[list[int]] = [[] for _ in tiny["prompts"]]
    for step in range(STEPS):
        task = write_task(tiny["dir"] / "greedy-task.h5", tiny, [g + [0] for g in generated])
        run = run_passkey(dgq_bin, tiny, task, "greedy", [scheme], "--ubatch", 1, "--row-exact")[0]
        for g, predicted in zip(generated, run["predicted"]):
            assert predicted[:step] == g  # earlier rows see the same prefix: the same tokens again
            g.append(int(predicted[step]))
    return generated


@pytest.mark.parametrize("scheme", SCHEMES)
def test_one_pass_scores_exactly_what_greedy_decoding_emits(dgq_bin, tiny, scheme):
    greedy = greedy_continuation(dgq_bin, tiny, scheme)
    task = write_task(tiny["dir"] / "exact.h5", tiny, greedy)
    one = run_passkey(dgq_bin, tiny, task, "one", [scheme], "--row-exact")[0]
    literal = run_passkey(dgq_bin, tiny, task, "lit", [scheme], "--ubatch", 1, "--row-exact")[0]
    assert list(one["exact"]) == [1, 1, 1] and list(one["first_wrong"]) == [-1, -1, -1]
    assert one["predicted"] == greedy
    assert np.array_equal(one["logprob"], literal["logprob"]) and np.all(one["logprob"] < 0)
    assert np.array_equal(one["exact"], literal["exact"]) and one["predicted"] == literal["predicted"]

    # One answer token changed: the greedy decoder would have emitted another token there.
    for j in (0, 2, STEPS - 1):
        changed = [g[:j] + [(g[j] + 1) % tiny["vocab"]] + g[j + 1 :] for g in greedy]
        task = write_task(tiny["dir"] / "changed.h5", tiny, changed)
        one = run_passkey(dgq_bin, tiny, task, "one-changed", [scheme], "--row-exact")[0]
        literal = run_passkey(dgq_bin, tiny, task, "lit-changed", [scheme], "--ubatch", 1, "--row-exact")[0]
        assert list(one["exact"]) == [0, 0, 0] and list(one["first_wrong"]) == [j, j, j]
        for p, g in zip(one["predicted"], greedy):
            assert p[: j + 1] == g[: j + 1]  # up to the change the prefix is the greedy one
        assert np.array_equal(one["logprob"], literal["logprob"])
        assert list(literal["first_wrong"]) == [j, j, j]


def test_scores_match_the_perplexity_task_logits_of_the_same_tokens(dgq_bin, tiny):
    """Row by row against `dgq eval --save-logits` on a token file holding BOS + prompt + answer."""
    rng = np.random.default_rng(5)
    answers = [list(map(int, rng.integers(2, tiny["vocab"], size=k))) for k in (1, 4, 7)]
    task = write_task(tiny["dir"] / "cross.h5", tiny, answers)
    schemes = ["fp32", "q8_0"]
    scores = run_passkey(dgq_bin, tiny, task, "cross", schemes, "--row-exact")
    for i, (prompt, answer) in enumerate(zip(tiny["prompts"], answers)):
        tokens = [1] + prompt + answer  # BOS (id 1) first: eval puts BOS over the first token
        text = tiny["dir"] / "cross-tokens.h5"
        write_token_file(text, tokens, tiny["name"])
        ppl = tiny["dir"] / "cross-ppl.h5"
        run_eval(
            dgq_bin,
            model=tiny["model"],
            text=text,
            ctx=len(tokens),
            save_logits=True,
            base="fp32",
            scheme="q8_0",
            cache="causal",
            row_exact=True,
            out=ppl,
            force=True,
            threads=THREADS,
        )
        first = len(tokens) // 2  # eval's first scored row predicts token first + 1
        with h5py.File(ppl, "r") as f:
            for k, spec in enumerate(schemes):
                logits = f["runs"][str(k)]["logits"][:].astype(np.float64)
                rows = logits[len(prompt) - first : len(prompt) - first + len(answer)]  # row p predicts token p + 1
                log_softmax = rows - rows.max(axis=1, keepdims=True)
                log_softmax -= np.log(np.exp(log_softmax).sum(axis=1, keepdims=True))
                s = scores[k]
                assert s["spec"] == spec
                assert s["predicted"][i] == list(np.argmax(rows, axis=1))
                assert s["logprob"][i] == pytest.approx(log_softmax[np.arange(len(answer)), answer].sum(), rel=1e-12)
                assert s["exact"][i] == (s["predicted"][i] == answer)


def test_keys_before_rope_score_alike_in_one_pass_and_token_by_token(dgq_bin, tiny):
    # docs/eval.md, "Pre-RoPE keys": the decoder rotates what it reads, the one pass what it stored.
    task = write_task(tiny["dir"] / "pre-rope.h5", tiny, [[5, 6], [7], [8, 9, 10]])
    schemes = ["q4_0", "kivi-2:group=16,residual=8"]
    one = run_passkey(dgq_bin, tiny, task, "pre-one", schemes, "--row-exact", "--keys", "pre-rope")
    literal = run_passkey(dgq_bin, tiny, task, "pre-lit", schemes, "--ubatch", 1, "--row-exact", "--keys", "pre-rope")
    post = run_passkey(dgq_bin, tiny, task, "post-one", schemes, "--row-exact")
    for a, b, c in zip(one, literal, post):
        assert np.array_equal(a["logprob"], b["logprob"]), a["spec"]
        assert not np.array_equal(a["logprob"], c["logprob"]), a["spec"]
    with h5py.File(tiny["dir"] / "pre-one.h5", "r") as f:
        assert f.attrs["keys"] == "pre-rope"


def test_the_results_file_json_and_table(dgq_bin, tiny):
    task = write_task(tiny["dir"] / "layout.h5", tiny, [[5, 6], [7], [8, 9, 10]])
    out, summary = tiny["dir"] / "layout-out.h5", tiny["dir"] / "layout.json"
    result = run_eval(
        dgq_bin,
        task="passkey",
        model=tiny["model"],
        text=task,
        scheme=["fp32", "q8_0"],
        extra=["-ctk", "q8_0", "-ctv", "fp32"],
        out=out,
        json=summary,
        threads=THREADS,
    )
    assert not (tiny["dir"] / "layout-out.h5.partial").exists()
    # Progress on the (piped) stderr: one line per prompt and cache, in order, with its length.
    progress = [line.split(", ")[0] for line in result.stderr.splitlines()]
    assert progress == [
        f"eval passkey: {3 * i + k + 1}/9 prompt {i} ({n} tokens) {spec}"
        for i, n in enumerate((21, 40, 57))
        for k, spec in enumerate(("fp32", "q8_0", "q8_0/fp32"))
    ], result.stderr
    assert all(" elapsed, ETA " in line for line in result.stderr.splitlines())
    with h5py.File(out, "r") as f:
        a = f.attrs
        assert a["format"] == "dgq-passkey-results" and a["version"] == 1 and a["task"] == "passkey"
        assert a["model"] == tiny["name"] and a["cache"] == "causal" and a["ubatch"] == 0 and a["raw_dtype"] == "f16"
        for name in ("dgq_version", "dgq_commit", "dgq_dirty", "config_hash"):
            assert name in a
        assert list(f["length"][:]) == [21, 40, 57] and list(f["key"][:]) == [10000, 10001, 10002]
        assert list(f["needle_position"][:]) == [10, 20, 28] and list(f["depth"][:]) == [50.0] * 3
        assert list(f["answer_offsets"][:]) == [0, 2, 3, 6]
        fp32, q8 = f["runs"]["0"], f["runs"]["1"]
        assert fp32.attrs["spec"] == "fp32" and q8.attrs["spec"] == "q8_0"
        assert fp32.attrs["bits_per_element"] == 32.0 and q8.attrs["bits_per_element"] == 8.5
        assert fp32.attrs["config_hash"] != q8.attrs["config_hash"]
        assert fp32.attrs["raw_dtype"] == "none" and q8.attrs["raw_dtype"] == "none"  # no raw rows: nothing applies
        pair = f["runs"]["2"]  # K and V apart: each role's bits are its side's
        assert pair.attrs["spec"] == "q8_0/fp32"
        assert (pair.attrs["bits_k"], pair.attrs["bits_v"], pair.attrs["bits_per_element"]) == (8.5, 32.0, 20.25)
        assert (q8.attrs["bits_k"], q8.attrs["bits_v"]) == (8.5, 8.5)
        assert fp32["exact"].dtype == np.uint8 and fp32["first_wrong"].dtype == np.int64
        assert fp32["predicted"].shape == (6,) and fp32["logprob"].shape == (3,)
        accuracy = float(np.mean(q8["exact"][:]))
        assert q8.attrs["accuracy"] == accuracy
    doc = json.loads(summary.read_text())
    assert doc["format"] == "dgq-passkey-summary" and doc["prompts"] == 3 and doc["cache"] == "causal"
    assert doc["raw_dtype"] == "f16" and doc["schemes"][1]["raw_dtype"] == "none"
    lengths = doc["schemes"][1]["by_length"]
    assert [x["length"] for x in lengths] == [21, 40, 57] and [x["prompts"] for x in lengths] == [1, 1, 1]
    assert doc["schemes"][1]["accuracy"] == accuracy
    assert (doc["schemes"][2]["bits_k"], doc["schemes"][2]["bits_v"]) == (8.5, 32.0)
    table = result.stdout.splitlines()
    assert table[0] == f"{tiny['name']}: passkey, 3 prompts, causal cache, raw rows in f16"
    assert "acc@21" in table[1] and "acc@57" in table[1] and table[2].startswith("fp32") and table[3].startswith("q8_0")


def damage(path, edit):
    with h5py.File(path, "a") as f:
        edit(f)
    return path


def replace(name, values):
    def edit(f):
        dtype = f[name].dtype
        del f[name]
        f.create_dataset(name, data=np.asarray(values, dtype=dtype))

    return edit


@pytest.mark.parametrize(
    "edit, message",
    [
        (lambda f: f.attrs.__setitem__("format", "dgq-tokens"), ": format is 'dgq-tokens', expected 'dgq-passkey'"),
        (lambda f: f.attrs.__setitem__("version", np.int64(2)), ": passkey format version 2, this dgq reads 1"),
        (
            lambda f: f.attrs.__setitem__("model", "tiny-other"),
            ": the task was made with the tokenizer of 'tiny-other', the model is 'tiny-",
        ),
        (
            replace("prompt_offsets", [0, 21, 61, 119]),
            ": dataset /prompt_offsets: index 3 holds 119, expected the length of /tokens (118)",
        ),
        (
            replace("prompt_offsets", [0, 21, 21, 118]),
            ": dataset /prompt_offsets: index 2 holds 21, not above index 1 (21)",
        ),
        (replace("answer_offsets", [0, 1, 3]), ": dataset /answer_offsets: 3 entries, /prompt_offsets has 4"),
        (replace("length", [21, 41, 57]), ": dataset /length: index 1 holds 41, the prompt has 40 tokens"),
        (
            replace("needle_position", [10, 40, 28]),
            ": dataset /needle_position: index 1 holds 40, outside the prompt's 40",
        ),
        (replace("key", [1, 2]), ": dataset /key: 2 entries, expected 3 (one per prompt)"),
        (
            lambda f: f["tokens"].__setitem__(30, 300),
            ": dataset /tokens: index 30 holds 300, outside the vocabulary of 300",
        ),
        (lambda f: f["answer_tokens"].__setitem__(1, -4), ": dataset /answer_tokens: index 1 holds -4, not a token id"),
    ],
)
def test_a_bad_task_file_gets_one_line_naming_file_dataset_and_index(dgq_bin, tiny, edit, message):
    task = damage(write_task(tiny["dir"] / "bad.h5", tiny, [[5], [6], [7]]), edit)
    out = tiny["dir"] / "bad-out.h5"
    result = run_eval(dgq_bin, task="passkey", model=tiny["model"], text=task, scheme="q8_0", out=out, check=False)
    assert result.returncode == 2, result.stderr
    assert result.stderr.startswith(f"dgq: error: {task}{message}"), result.stderr
    assert len(result.stderr.splitlines()) == 1 and not out.exists()


@pytest.mark.parametrize(
    "options, message",
    [
        (["--ctx", "64"], "--ctx: not used by --task passkey"),
        (["--base", "fp32"], "--base: not used by --task passkey"),
        (["--chunks", "1"], "--chunks: not used by --task passkey"),
        (["--task", "summarize"], "--task 'summarize': expected perplexity or passkey"),
        (["--cache", "prefill", "--ubatch", "1"], "--ubatch 1: the micro-batched decoder needs --cache causal"),
        (["--scheme", "fp8-e4m3"], "fp8-e4m3: scale=tensor (one scale per tensor) has no causal form"),
    ],
)
def test_options_that_do_not_apply_are_refused(dgq_bin, tiny, options, message):
    task = write_task(tiny["dir"] / "opt.h5", tiny, [[5], [6], [7]])
    result = run_eval(
        dgq_bin,
        options,
        model=tiny["model"],
        text=task,
        out=tiny["dir"] / "opt-out.h5",
        task=None if "--task" in options else "passkey",
        scheme=None if "--scheme" in options else "q8_0",
        check=False,
    )
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_perplexity_still_requires_ctx(dgq_bin, tiny):
    text = tiny["dir"] / "ppl-tokens.h5"
    write_token_file(text, list(range(2, 66)), tiny["name"])
    result = run_eval(dgq_bin, model=tiny["model"], text=text, scheme="q8_0", out=tiny["dir"] / "ppl.h5", check=False)
    assert result.returncode != 0 and "--ctx is required" in result.stderr, result.stderr


def test_an_existing_output_is_refused_before_any_work_unless_forced(dgq_bin, tiny):
    """A rerun once replaced the file, and every run in it, without a word."""
    task = write_task(tiny["dir"] / "exists-task.h5", tiny, [[5], [6, 7], [8]])
    out = tiny["dir"] / "exists.h5"
    args = eval_command(task="passkey", model=tiny["model"], text=task, out=out, threads=THREADS) + ["--scheme"]
    run_dgq(dgq_bin, *args, "q8_0")
    before = out.read_bytes()
    result = run_dgq(dgq_bin, *args, "fp32", check=False)
    assert result.returncode == 2
    assert result.stderr == (
        f"dgq: error: {out}: exists (1 run(s), a dgq-passkey-results file); dgq eval writes its "
        "results to a new file: choose another -o (and join the two with dgq merge), or pass "
        "--force to replace it\n"
    )
    assert out.read_bytes() == before
    run_dgq(dgq_bin, *args, "fp32", "--force")
    with h5py.File(out, "r") as f:
        assert [f["runs"][r].attrs["spec"] for r in f["runs"]] == ["fp32"]
