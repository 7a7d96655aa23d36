"""dgq.decode_attention: the CPU decode kernel on compressed heads from Python. It must equal
softmax attention over the heads' decompressed values (computed here in float64) within
rounding for the families the kernel reads, GQA included, and refuse what it cannot read.
By hand: tests/python/run_pytest.sh -k decode_attention
"""

import numpy as np
import pytest

import dgq


def attention(q, k_heads, v_heads, scale):
    group = q.shape[0] // len(k_heads)
    out = np.empty(q.shape, dtype=np.float64)
    for h in range(q.shape[0]):
        k = k_heads[h // group].astype(np.float64)
        v = v_heads[h // group].astype(np.float64)
        s = k @ q[h].astype(np.float64) * scale
        p = np.exp(s - s.max())
        out[h] = p @ v / p.sum()
    return out


def layer(spec, kv_heads=2, tokens=300, head_dim=128, dtype=np.float16, seed=1):
    rng = np.random.default_rng(seed)
    scheme = dgq.Scheme(spec)
    keys, values = [], []
    for _ in range(kv_heads):
        keys.append(scheme.compress(rng.normal(0, 1, (tokens, head_dim)).astype(dtype), "k"))
        values.append(scheme.compress(rng.normal(0, 1, (tokens, head_dim)).astype(dtype), "v"))
    return keys, values


@pytest.mark.parametrize(
    "spec",
    ["q8_0", "q4_0:rot=hadamard", "dgq", "dgq2:kbits=4,vbits=3", "kivi-4", "turboquant:bits=3", "turboquant_4bit_nc"],
)
def test_equals_attention_on_the_decompressed_heads(spec):
    keys, values = layer(spec)
    q = np.random.default_rng(2).normal(0, 1, (8, 128)).astype(np.float32)  # GQA 4
    got = dgq.decode_attention(q, keys, values, threads=2)
    assert got.shape == (8, 128) and got.dtype == np.float32
    want = attention(q, [c.decompress("f32") for c in keys], [c.decompress("f32") for c in values], 1 / np.sqrt(128))
    # fp16 input: the decompressed values are rounded to fp16, the kernel's block products not.
    assert np.max(np.abs(got - want)) <= 2e-3 * max(np.max(np.abs(want)), 1.0)


def test_scale_is_used_and_threads_do_not_change_the_bits():
    keys, values = layer("q8_0")
    q = np.random.default_rng(3).normal(0, 1, (2, 128))
    one = dgq.decode_attention(q, keys, values, scale=0.5, threads=1)
    assert np.array_equal(one, dgq.decode_attention(q, keys, values, scale=0.5, threads=3))
    assert not np.array_equal(one, dgq.decode_attention(q, keys, values))


def test_refusals_name_the_problem():
    keys, values = layer("q8_0")
    q = np.zeros((2, 128), np.float32)
    with pytest.raises(ValueError, match="not 'fp8-e4m3"):
        k8, v8 = layer("fp8-e4m3", kv_heads=1)
        dgq.decode_attention(q[:1], k8, v8)
    with pytest.raises(ValueError, match="compressed as keys"):
        dgq.decode_attention(q, values, keys)
    with pytest.raises(dgq.ParameterError, match="multiple of the 2 KV heads"):
        dgq.decode_attention(np.zeros((3, 128), np.float32), keys, values)
    with pytest.raises(dgq.ParameterError, match="threads must be in"):
        dgq.decode_attention(q, keys, values, threads=0)
    with pytest.raises(ValueError, match="differs from head 0"):
        other, _ = layer("q4_0")
        dgq.decode_attention(q, [keys[0], other[1]], values)
