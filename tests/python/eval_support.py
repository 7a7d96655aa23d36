"""Helpers of the `dgq eval` tests: tiny model and token files, numpy twins of the runner."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

import h5py
import numpy as np

from dgqtools import export_model, export_trace, token_file

REPO_ROOT = Path(__file__).resolve().parents[2]
MODELS_DIR = Path(os.environ.get("DGQ_MODELS_DIR", REPO_ROOT / "models"))
# The runner's logits against the numpy forward pass: float32 either way, summed in other orders.
LOGITS_REL_TOL = 1e-4


def write_tiny_model(path: Path, arch: str = "llama", seed: int = 0) -> tuple[dict, dict]:
    cfg, tensors = export_model.random_model(arch, seed)
    export_model.write_model(path, f"tiny-{arch}", f"random, seed {seed}", cfg, tensors)
    return cfg, tensors


def tiny_eval_inputs(folder: Path, arch: str, token_seed: int, tokens: int = 256) -> dict:
    """The tiny random model of arch in folder and a token file of random ids (seeded): "model",
    "text", "dir", "arch" and "layers", the inputs of the eval tests' module fixtures."""
    model = folder / "model.h5"
    cfg, _ = write_tiny_model(model, arch)
    ids = np.random.default_rng(token_seed).integers(2, cfg["vocab_size"], size=tokens).astype(np.int32)
    text = folder / "tokens.h5"
    write_token_file(text, ids, f"tiny-{arch}")
    return {"model": model, "text": text, "dir": folder, "arch": arch, "layers": cfg["num_layers"]}


def relative_error(got: np.ndarray, expected: np.ndarray) -> float:
    return float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))


def saved_logits(results: Path, index: int) -> np.ndarray:
    """The logits `dgq eval --save-logits` stored for run index."""
    with h5py.File(results, "r") as f:
        return np.asarray(f["runs"][str(index)]["logits"])


def tiny_llama_in_chunks(folder: Path) -> dict:
    """Tiny llama model and a 96-token text (3 chunks of 32) of random ids, BOS first: "model",
    "text", "tokens", "cfg" and "dir"."""
    model = folder / "tiny-llama.h5"
    cfg, _ = write_tiny_model(model, "llama")
    rng = np.random.default_rng(5)
    tokens = rng.integers(2, cfg["vocab_size"], size=96).astype(np.int32)
    tokens[::32] = cfg["bos_token_id"]  # what the runner puts first in each chunk (add_bos)
    text = folder / "tokens.h5"
    write_token_file(text, tokens, "tiny-llama")
    return {"model": model, "text": text, "tokens": tokens, "cfg": cfg, "dir": folder}


def tiny_gemma3_prompt(folder: Path) -> tuple[Path, Path, np.ndarray]:
    """Tiny Gemma 3 (7 layers) and 150 tokens, BOS first: the inputs the numpy twin checks run on.
    Returns (model, token file, tokens)."""
    model = folder / "tiny-gemma3.h5"
    cfg, _ = write_tiny_model(model, "gemma3")
    tokens = np.random.default_rng(3).integers(3, cfg["vocab_size"], size=150).astype(np.int32)
    tokens[0] = cfg["bos_token_id"]
    text = folder / "t.h5"
    write_token_file(text, tokens, "tiny-gemma3")
    return model, text, tokens


def dgq_round_trip(spec: str, role: str = "k"):
    """A numpy cache hook: each head of [heads, n, d] through dgq.compress(spec) and back (fp32)."""
    import dgq

    def hook(x):
        return np.stack(
            [dgq.compress(np.ascontiguousarray(h, np.float32), spec, role=role).decompress("f32") for h in x]
        )

    return hook


def relative_l2_error(a, b) -> float:
    return float(np.linalg.norm(np.asarray(a, np.float64) - b) / np.linalg.norm(b))


# The shipped models' GGUF files (pinned PyPI packages) and the general.name of each, which is the
# name `dgq eval` gives a model read from its GGUF (token files for it carry that name).
SHIPPED_GGUF_NAMES = {"smollm2": "Smollm2 135M 8k Lc100K Mix1 Ep2", "gemma3": "Gemma 3 270m"}


def shipped_gguf(model: str) -> Path:
    """The GGUF of a shipped model: SmolLM2's inside its package, Gemma 3's assembled into
    models/ from its chunk packages (once)."""
    if model == "smollm2":
        return export_trace.bundled_gguf_path()
    from dgqtools.export_model import gemma3_gguf_path

    return gemma3_gguf_path()


def write_token_file(
    path: Path, tokens, model: str, kind: str = "test", noise_rate: float = 0.0, tokenizer_id: str = ""
) -> None:
    """dgqtools.token_file's writer with the tests' defaults (kind "test", no noise)."""
    token_file.write_token_file(path, tokens, model, kind, noise_rate, tokenizer_id=tokenizer_id)


def numpy_llama(model_file: Path) -> export_trace.SmolLM2:
    """export_trace's numpy SmolLM2 forward pass, with the weights of a dgq model file (llama)."""
    with h5py.File(model_file, "r") as f:
        a = f.attrs
        t = {name: np.asarray(d, dtype=np.float32) for name, d in f["tensors"].items()}
        cfg = export_trace.ModelConfig(
            num_layers=int(a["num_layers"]),
            hidden=int(a["hidden"]),
            ffn=int(a["ffn"]),
            num_q_heads=int(a["num_q_heads"]),
            num_kv_heads=int(a["num_kv_heads"]),
            head_dim=int(a["head_dim"]),
            rope_theta=float(a["rope_theta"]),
            rms_eps=float(a["rms_eps"]),
            vocab_size=int(a["vocab_size"]),
        )
    m = object.__new__(export_trace.SmolLM2)
    m.config = cfg
    m.embedding = t["token_embd"]
    m.output_norm = t["output_norm"]
    m.layers = []
    for i in range(cfg.num_layers):
        p = f"blk.{i}."
        m.layers.append(
            export_trace.LayerWeights(
                attn_norm=t[p + "attn_norm"],
                wq=np.ascontiguousarray(t[p + "attn_q"].T),
                wk=np.ascontiguousarray(t[p + "attn_k"].T),
                wv=np.ascontiguousarray(t[p + "attn_v"].T),
                wo=np.ascontiguousarray(t[p + "attn_output"].T),
                ffn_norm=t[p + "ffn_norm"],
                w_gate=np.ascontiguousarray(t[p + "ffn_gate"].T),
                w_up=np.ascontiguousarray(t[p + "ffn_up"].T),
                w_down=np.ascontiguousarray(t[p + "ffn_down"].T),
            )
        )
    return m


def numpy_logits(model, tokens) -> np.ndarray:
    hidden, _ = model.forward(np.asarray(tokens, dtype=np.int32))
    return model.logits(hidden)


def run_dgq(dgq_bin: str, *args, check: bool = True) -> subprocess.CompletedProcess:
    # A bound for a hung process only: the slowest call (the literal decoder, --ubatch 1 --row-exact,
    # 256 tokens of SmolLM2) took over 300 s on the 2-core machine while other jobs ran.
    result = subprocess.run([dgq_bin, *map(str, args)], capture_output=True, text=True, timeout=1200)
    if check and result.returncode != 0:
        raise AssertionError(f"dgq {' '.join(map(str, args))} failed ({result.returncode}):\n{result.stderr}")
    return result


def option_args(options: dict[str, object]) -> list[object]:
    """Keyword options as command-line flags, in the order given: underscores spelled as hyphens,
    `out` as -o; True gives the bare flag, None or False leaves it out, a list or a tuple gives the
    flag once per item (--scheme, --level)."""
    args: list[object] = []
    for name, value in options.items():
        flag = "-o" if name == "out" else "--" + name.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            args.append(flag)
        elif isinstance(value, list | tuple):
            for item in value:
                args += [flag, item]
        else:
            args += [flag, value]
    return args


def eval_command(extra: Sequence[object] = (), **options: object) -> list[object]:
    """`dgq eval`'s arguments: option_args of the keyword options, then extra as they are (what has
    no keyword spelling, such as llama.cpp's -ctk, or the options a parametrized test passes)."""
    return ["eval", *option_args(options), *extra]


def run_eval(
    dgq_bin: str, extra: Sequence[object] = (), check: bool = True, **options: object
) -> subprocess.CompletedProcess:
    """`dgq eval` with eval_command's arguments; check: fail the test unless it exits 0."""
    return run_dgq(dgq_bin, *eval_command(extra, **options), check=check)


def eval_runs(dgq_bin, model, text, out, schemes, *options, ctx=128, chunks=2) -> dict:
    """`dgq eval --save-logits` of the schemes on one token file into out: the file's attributes
    ("attrs") and per run, the base first ("runs"), its spec, logits, bits (bits_per_element),
    bits_averaged, stored_bytes, kld (kld_mean) and attn_kl (attn_kl_mean)."""
    run_eval(
        dgq_bin, options, model=model, text=text, ctx=ctx, chunks=chunks, save_logits=True, out=out, scheme=schemes
    )
    with h5py.File(out, "r") as f:
        runs = [f["runs"][str(i)] for i in range(len(f["runs"]))]
        return {
            "attrs": dict(f.attrs),
            "runs": [
                {
                    "spec": r.attrs["spec"],
                    "logits": np.asarray(r["logits"]),
                    "bits": float(r.attrs["bits_per_element"]),
                    "bits_averaged": float(r.attrs["bits_averaged"]),
                    "stored_bytes": int(r.attrs["stored_bytes"]),
                    "kld": float(r.attrs["kld_mean"]),
                    "attn_kl": float(r.attrs["attn_kl_mean"]),
                }
                for r in runs
            ],
        }


def run_attrs(results: Path) -> list[dict]:
    with h5py.File(results, "r") as f:
        return [dict(f["runs"][str(i)].attrs) for i in range(len(f["runs"]))]


def numpy_scores(base_logits: np.ndarray, logits: np.ndarray, targets: np.ndarray) -> dict:
    """The per-token scores and llama.cpp-style summary of docs/eval.md, recomputed in numpy."""

    def log_softmax(z):
        z = z.astype(np.float64)
        peak = z.max(axis=1, keepdims=True)
        return z - (peak + np.log(np.exp(z - peak).sum(axis=1, keepdims=True)))

    lb, lq = log_softmax(base_logits), log_softmax(logits)
    rows = np.arange(len(targets))
    nll, nll_base = -lq[rows, targets], -lb[rows, targets]
    kld = np.sum(np.exp(lb) * (lb - lq), axis=1)
    n = len(targets)
    ppl, ppl_base = np.exp(nll.mean()), np.exp(nll_base.mean())
    ppl_stderr = ppl * np.sqrt(nll.var() / (n - 1))
    base_stderr = ppl_base * np.sqrt(nll_base.var() / (n - 1))
    cov = np.mean((nll - nll.mean()) * (nll_base - nll_base.mean()))
    dp = np.exp(-nll) - np.exp(-nll_base)
    return {
        "ppl": ppl,
        "ppl_stderr": ppl_stderr,
        "dppl": ppl - ppl_base,
        "dppl_stderr": np.sqrt(max(0.0, ppl_stderr**2 + base_stderr**2 - 2 * ppl * ppl_base * cov / (n - 1))),
        "kld_mean": kld.mean(),
        "kld_stderr": np.sqrt(kld.var() / (n - 1)),
        "kld_median": np.percentile(kld, 50),
        "kld_p90": np.percentile(kld, 90),
        "kld_p99": np.percentile(kld, 99),
        "kld_max": kld.max(),
        "rms_dp": np.sqrt(np.mean(dp**2)),
        "same_top1": np.mean(np.argmax(base_logits, axis=1) == np.argmax(logits, axis=1)),
    }


def read_model_file(model_file: Path) -> tuple[dict, dict]:
    """A dgq model file's attributes and its tensors as fp32 arrays (docs/model-format.md)."""
    with h5py.File(model_file, "r") as f:
        return dict(f.attrs), {name: np.asarray(d, dtype=np.float32) for name, d in f["tensors"].items()}


def numpy_gemma3_logits(
    model_file: Path, tokens, key_cache=None, keys_before_rope=False, key_cache_layers=None
) -> np.ndarray:
    """An independent numpy fp32 forward pass of Gemma 3 from a dgq model file (docs/model-format.md),
    written from Hugging Face's Gemma3 modeling code: embeddings * sqrt(hidden), RMSNorm (weights
    hold 1 + w already), Q/K RMSNorm per head, rotate-half RoPE (base 10000 on local layers),
    sliding-window causal mask on local layers, post-attention and post-MLP norms, GeGLU (tanh).
    key_cache, if given, maps each layer's keys [kv_heads, n, d] to what a (prefill) cache gives
    back: after RoPE, or with keys_before_rope before it (KVQuant's pre-RoPE keys), in the layers
    key_cache_layers (None: every layer)."""

    def exact(k):
        return k

    a, t = read_model_file(model_file)
    n, d = len(tokens), int(a["head_dim"])
    hq, hkv = int(a["num_q_heads"]), int(a["num_kv_heads"])
    eps = np.float32(a["rms_eps"])

    def norm(x, w):
        return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)) * w

    def rope(x, theta):  # x [heads, n, d]
        cos, sin = export_trace.rope_tables(np.arange(n), d, theta)
        return export_trace.apply_rope(x, cos, sin)

    x = t["token_embd"][np.asarray(tokens)] * np.float32(a["embedding_scale"])
    pos = np.arange(n)
    for i in range(int(a["num_layers"])):
        p = f"blk.{i}."
        local = a["sliding_window_pattern"] > 0 and i % a["sliding_window_pattern"] != a["sliding_window_pattern"] - 1
        theta = float(a["rope_theta_local"] if local else a["rope_theta"])
        h = norm(x, t[p + "attn_norm"])
        q = (h @ t[p + "attn_q"].T).reshape(n, hq, d).transpose(1, 0, 2)
        k = (h @ t[p + "attn_k"].T).reshape(n, hkv, d).transpose(1, 0, 2)
        v = (h @ t[p + "attn_v"].T).reshape(n, hkv, d).transpose(1, 0, 2)
        q = rope(norm(q, t[p + "attn_q_norm"]), theta) * np.float32(1.0 / np.sqrt(d))
        k = norm(k, t[p + "attn_k_norm"])
        cache = key_cache if key_cache and (key_cache_layers is None or i in key_cache_layers) else exact
        k = rope(cache(k), theta) if keys_before_rope else cache(rope(k, theta))
        visible = pos[None, :] <= pos[:, None]
        if local:
            visible &= pos[:, None] - pos[None, :] < a["sliding_window"]
        out = np.empty((n, hq, d), dtype=np.float32)
        for head in range(hq):
            g = head // (hq // hkv)
            scores = np.where(visible, q[head] @ k[g].T, -np.inf)
            out[:, head] = export_trace.softmax_rows(scores) @ v[g]
        x = x + norm(out.reshape(n, hq * d) @ t[p + "attn_output"].T, t[p + "post_attention_norm"])
        h = norm(x, t[p + "ffn_norm"])
        gate = h @ t[p + "ffn_gate"].T
        gelu = (
            np.float32(0.5)
            * gate
            * (np.float32(1) + np.tanh(np.float32(0.7978845608028654) * (gate + np.float32(0.044715) * gate**3)))
        )
        x = x + norm((gelu * (h @ t[p + "ffn_up"].T)) @ t[p + "ffn_down"].T, t[p + "post_ffw_norm"])
    return norm(x, t["output_norm"]) @ t["token_embd"].T


def numpy_qwen_logits(model_file: Path, tokens) -> np.ndarray:
    """An independent numpy fp32 forward pass of Qwen2 / Qwen3 from a dgq model file, written from
    Hugging Face's Qwen2 and Qwen3 modeling code: RMSNorm, Q/K/V projections with biases (Qwen2),
    RMSNorm per head on Q and K before RoPE (Qwen3), rotate-half RoPE, causal GQA attention,
    SwiGLU, the final norm and the untied output matrix (`output`) when the file has one."""
    a, t = read_model_file(model_file)
    n, d = len(tokens), int(a["head_dim"])
    hq, hkv = int(a["num_q_heads"]), int(a["num_kv_heads"])
    eps = np.float32(a["rms_eps"])
    zero = np.float32(0)

    def norm(x, w):
        return (x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)) * w

    cos, sin = export_trace.rope_tables(np.arange(n), d, float(a["rope_theta"]))
    x = t["token_embd"][np.asarray(tokens)]
    visible = np.arange(n)[None, :] <= np.arange(n)[:, None]
    for i in range(int(a["num_layers"])):
        p = f"blk.{i}."
        h = norm(x, t[p + "attn_norm"])
        q = (h @ t[p + "attn_q"].T + t.get(p + "attn_q.bias", zero)).reshape(n, hq, d).transpose(1, 0, 2)
        k = (h @ t[p + "attn_k"].T + t.get(p + "attn_k.bias", zero)).reshape(n, hkv, d).transpose(1, 0, 2)
        v = (h @ t[p + "attn_v"].T + t.get(p + "attn_v.bias", zero)).reshape(n, hkv, d).transpose(1, 0, 2)
        if a["qk_norm"]:
            q, k = norm(q, t[p + "attn_q_norm"]), norm(k, t[p + "attn_k_norm"])
        q = export_trace.apply_rope(q, cos, sin) * np.float32(1.0 / np.sqrt(d))
        k = export_trace.apply_rope(k, cos, sin)
        out = np.empty((n, hq, d), dtype=np.float32)
        for head in range(hq):
            g = head // (hq // hkv)
            out[:, head] = export_trace.softmax_rows(np.where(visible, q[head] @ k[g].T, -np.inf)) @ v[g]
        x = x + out.reshape(n, hq * d) @ t[p + "attn_output"].T
        h = norm(x, t[p + "ffn_norm"])
        gate = h @ t[p + "ffn_gate"].T
        x = x + ((gate / (np.float32(1) + np.exp(-gate))) * (h @ t[p + "ffn_up"].T)) @ t[p + "ffn_down"].T
    return norm(x, t["output_norm"]) @ t["output" if "output" in t else "token_embd"].T
