"""`dgq inspect` reads every kind of dgq file and says what it is (docs/cli.md, "dgq inspect"):
traces, compressed and results files (tested in tests/cli), and here the eval side, made for
real on the tiny random llama: a token file, a passkey task file, a model file, an eval results
file, a passkey results file and a base-logits file. Before, inspect took every file that was not
compressed, results, eval or base logits for a trace and refused it ("expected 'dgq-trace'").
A file of no kind dgq knows is one line naming its format.
By hand: DGQ_BIN=build/sim/dgq tests/python/run_pytest.sh -k inspect
"""

import h5py
import numpy as np
import pytest

from dgqtools import make_passkey as mp
from eval_support import run_dgq, run_eval, tiny_eval_inputs

pytestmark = pytest.mark.needs_dgq


@pytest.fixture(scope="module")
def files(dgq_bin, tmp_path_factory):
    folder = tmp_path_factory.mktemp("inspect-kinds")
    tiny = tiny_eval_inputs(folder, "llama", token_seed=3, tokens=64)
    prompts = [
        mp.PasskeyPrompt(
            tokens=list(range(2, 2 + n)), answer=[5, 6], key=10000 + n, length=n, depth=50.0, needle_position=n // 2
        )
        for n in (12, 20)
    ]
    mp.write_task(folder / "passkey.h5", "tiny-llama", 7, prompts)
    run_eval(
        dgq_bin,
        model=tiny["model"],
        text=tiny["text"],
        ctx=32,
        chunks=1,
        base_logits=folder / "base-logits.h5",
        out=folder / "eval.h5",
        threads=1,
        scheme="q8_0",
    )
    run_eval(
        dgq_bin,
        task="passkey",
        model=tiny["model"],
        text=folder / "passkey.h5",
        out=folder / "passkey-results.h5",
        threads=1,
        scheme="q8_0",
    )
    return {
        "tokens": tiny["text"],
        "model": tiny["model"],
        "passkey": folder / "passkey.h5",
        "eval": folder / "eval.h5",
        "passkey-results": folder / "passkey-results.h5",
        "base-logits": folder / "base-logits.h5",
        "dir": folder,
    }


@pytest.mark.parametrize(
    "kind, first_line, detail",
    [
        ("tokens", ": dgq token file (dgq eval --text), 64 tokens", "model         tiny-llama"),
        (
            "passkey",
            ": dgq passkey task file (dgq eval --task passkey), 2 prompts",
            "lengths       12 to 20 tokens, seed 7",
        ),
        ("model", ": dgq model file (dgq eval --model), llama", "model         tiny-llama"),
        ("eval", ": dgq eval results, 2 run(s)", "run 1: q8_0"),
        ("passkey-results", ": dgq passkey results, 1 run(s)", "run 0: q8_0"),
        ("base-logits", ": dgq base-logits file (dgq eval --base-logits)", "dgq version   "),
    ],
)
def test_inspect_says_what_each_eval_file_is(dgq_bin, files, kind, first_line, detail):
    out = run_dgq(dgq_bin, "inspect", files[kind]).stdout
    lines = out.splitlines()
    assert lines[0] == f"{files[kind]}{first_line}", out
    assert any(line.startswith(detail) for line in lines), out


def test_a_file_of_no_dgq_kind_is_one_line_naming_its_format(dgq_bin, files):
    other = files["dir"] / "other.h5"
    with h5py.File(other, "w") as f:
        f.attrs["format"] = "someone-elses"
        f["x"] = np.arange(3)
    result = run_dgq(dgq_bin, "inspect", other, check=False)
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"dgq: error: {other}: format 'someone-elses' is no kind of dgq file (dgq inspect reads trace, compressed, "
        "results, eval, passkey results, token, passkey task, model and base-logits files)"
    ]
