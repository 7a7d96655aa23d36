"""The exporter end to end: the trace it writes, its determinism, its errors."""

import h5py
import numpy as np
import pytest

from conftest import ENGLISH_PROSE
from dgqtools import export_trace
from trace_checks import check_model_trace, datasets_and_attrs

LAYERS = (0, 29)
MAX_TOKENS = 120
PROBE_STRIDE = 16
PROBE_LAST = 5


@pytest.fixture(scope="module")
def prompt_file(tmp_path_factory):
    path = tmp_path_factory.mktemp("prompt") / "prose.txt"
    path.write_text(ENGLISH_PROSE, encoding="utf-8")
    return path


def run_export(model, prompt_file, out, *extra):
    argv = [
        "--prompt-file",
        str(prompt_file),
        "--kind",
        "prose",
        "--max-tokens",
        str(MAX_TOKENS),
        "--layers",
        ",".join(map(str, LAYERS)),
        "--probe-stride",
        str(PROBE_STRIDE),
        "--probe-last",
        str(PROBE_LAST),
        "-o",
        str(out),
        *extra,
    ]
    return export_trace.main(argv, model=model)


@pytest.fixture(scope="module")
def noisy_trace(model, prompt_file, tmp_path_factory):
    out = tmp_path_factory.mktemp("trace") / "noisy.h5"
    assert run_export(model, prompt_file, out, "--noise-rate", "0.1", "--seed", "3") == 0
    return out


def test_written_trace_follows_format_v1(noisy_trace):
    attrs, length, probes = check_model_trace(
        noisy_trace, expect_kind="prose", expect_layer_ids=LAYERS, expect_tokens=MAX_TOKENS
    )
    assert attrs["decode_rel_err"] < 1e-4
    assert not noisy_trace.with_name(noisy_trace.name + ".partial").exists()


def test_probe_positions_are_every_stride_and_the_last_ones(noisy_trace):
    with h5py.File(noisy_trace, "r") as f:
        q_pos = f["q_pos"][...]
    expected = sorted(
        set(range(PROBE_STRIDE - 1, MAX_TOKENS, PROBE_STRIDE)) | set(range(MAX_TOKENS - PROBE_LAST, MAX_TOKENS))
    )
    assert q_pos.tolist() == expected


def test_noisy_trace_text_tokens_and_mask_agree(noisy_trace, tokenizer):
    with h5py.File(noisy_trace, "r") as f:
        text = f["text"][()].decode("utf-8")
        tokens = f["tokens"][...]
        mask = f["noise_mask"][...]
    assert tokenizer.decode(tokens.tolist()) == text
    assert text != ENGLISH_PROSE[: len(text)]  # noise went in
    assert 0 < mask.sum() < len(mask)


def test_layer_zero_matches_an_independent_float64_recomputation(noisy_trace, model):
    # Checks layout, not just shapes: head axis, token axis, probe positions and channel order
    # (rotate-half pairs) of the stored K, V and Q of the first layer.
    cfg = model.config
    with h5py.File(noisy_trace, "r") as f:
        tokens = f["tokens"][...]
        q_pos = f["q_pos"][...]
        stored = {name: f[f"layers/0/{name}"][...].astype(np.float64) for name in ("k", "v", "q")}
    layer = model.layers[0]
    x = model.embedding[tokens].astype(np.float64)
    h = x / np.sqrt(np.mean(x * x, axis=1, keepdims=True) + cfg.rms_eps) * layer.attn_norm

    def heads(m, n):
        return m.reshape(len(tokens), n, cfg.head_dim).transpose(1, 0, 2)

    half = cfg.head_dim // 2
    inv_freq = cfg.rope_theta ** (-np.arange(half) * 2.0 / cfg.head_dim)
    angle = np.arange(len(tokens))[:, None] * inv_freq[None, :]
    cos, sin = np.cos(angle), np.sin(angle)

    def rope(t):
        a, b = t[..., :half], t[..., half:]
        return np.concatenate([a * cos - b * sin, b * cos + a * sin], axis=-1)

    expected = {
        "k": rope(heads(h @ layer.wk, cfg.num_kv_heads)),
        "v": heads(h @ layer.wv, cfg.num_kv_heads),
        "q": rope(heads(h @ layer.wq, cfg.num_q_heads))[:, q_pos],
    }
    for name in expected:
        scale = np.max(np.abs(expected[name]))
        np.testing.assert_allclose(stored[name], expected[name], rtol=0, atol=2e-3 * scale, err_msg=name)


def test_same_seed_gives_byte_identical_datasets(model, prompt_file, noisy_trace, tmp_path):
    again = tmp_path / "again.h5"
    assert run_export(model, prompt_file, again, "--noise-rate", "0.1", "--seed", "3") == 0
    assert datasets_and_attrs(again) == datasets_and_attrs(noisy_trace)


def test_other_seed_gives_other_noise(model, prompt_file, noisy_trace, tmp_path):
    other = tmp_path / "other.h5"
    assert run_export(model, prompt_file, other, "--noise-rate", "0.1", "--seed", "4") == 0
    with h5py.File(other, "r") as a, h5py.File(noisy_trace, "r") as b:
        assert not np.array_equal(a["noise_mask"][...], b["noise_mask"][...])


def test_clean_trace_has_zero_noise_mask(model, prompt_file, tmp_path):
    out = tmp_path / "clean.h5"
    assert run_export(model, prompt_file, out) == 0
    with h5py.File(out, "r") as f:
        assert f["noise_mask"].shape == (MAX_TOKENS,)
        assert not f["noise_mask"][...].any()
        assert f["text"][()].decode("utf-8") == ENGLISH_PROSE[: len(f["text"][()].decode("utf-8"))]


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--max-tokens", "9000"], "--max-tokens 9000"),
        (["--layers", "0,30"], "layer 30 out of range"),
        (["--layers", "zero"], "comma-separated"),
        (["--probe-stride", "0"], "--probe-stride 0"),
        (["--noise-rate", "-0.5"], "--noise-rate"),
    ],
)
def test_bad_options_fail_with_a_message_and_no_file(model, prompt_file, tmp_path, capsys, extra, message):
    out = tmp_path / "bad.h5"
    assert run_export(model, prompt_file, out, *extra) == 1
    assert message in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_missing_prompt_file_is_named_in_the_error(model, tmp_path, capsys):
    missing = tmp_path / "no-such-prompt.txt"
    assert run_export(model, missing, tmp_path / "out.h5") == 1
    assert str(missing) in capsys.readouterr().err


def test_failure_while_writing_leaves_neither_partial_nor_output(model, prompt_file, tmp_path, monkeypatch, capsys):
    def refuse(*args, **kwargs):
        raise OSError("disk full (simulated)")

    monkeypatch.setattr(h5py.Group, "create_dataset", refuse)
    out = tmp_path / "interrupted.h5"
    assert run_export(model, prompt_file, out) == 1
    assert "disk full (simulated)" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_unreadable_model_file_is_named_in_the_error(prompt_file, tmp_path, capsys):
    fake = tmp_path / "not-a-model.gguf"
    fake.write_bytes(b"GGUF" + b"\x00" * 20)
    out = tmp_path / "out.h5"
    assert (
        export_trace.main(["--prompt-file", str(prompt_file), "--kind", "prose", "--gguf", str(fake), "-o", str(out)])
        == 1
    )
    assert f"{fake}: not a readable GGUF file" in capsys.readouterr().err
    assert not out.exists()
