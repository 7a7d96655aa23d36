"""dgq.CausalCache from Python (python/src/causal_cache_bindings.cpp): the literal causal cache
of docs/spec.md "Causal caches", as `dgq eval --cache causal --ubatch N` appends to it."""

import numpy as np
import pytest

import dgq

pytestmark = pytest.mark.bindings


def rows(tokens=70, channels=32, seed=5):
    return np.random.default_rng(seed).standard_normal((tokens, channels)).astype(np.float32)


def test_an_empty_cache_reads_nothing():
    c = dgq.CausalCache("q8_0", "k", 32)
    assert c.tokens == 0 and c.final_tokens == 0 and c.held_bytes == 0
    assert c.read().shape == (0, 32)
    c.append(np.empty((0, 32), np.float32))
    assert c.tokens == 0


def test_a_per_token_format_is_final_on_append():
    x = rows()
    c = dgq.CausalCache("q8_0", "v", 32)
    for t in range(len(x)):
        c.append(x[t : t + 1])
        assert c.final_tokens == t + 1
    assert np.array_equal(c.read(), dgq.compress(x, "q8_0", "v").decompress())
    assert c.held_bytes == dgq.compress(x, "q8_0", "v").bytes


@pytest.mark.parametrize("role", ["k", "v"])
@pytest.mark.parametrize("raw_dtype", ["f16", "f32"])
def test_kivi_after_every_append_is_its_prefill_of_the_tokens_so_far(role, raw_dtype):
    # Rule C9: KIVI keeps rows raw, so its cache holds the fp32 rows in the raw dtype and is the
    # prefill of the rows as held: in fp16 (the default) its residual costs 2 bytes an element.
    x = rows()
    held = x.astype(np.float16) if raw_dtype == "f16" else x
    c = dgq.CausalCache("kivi-2:group=16,residual=8", role, 32, "f32", raw_dtype)
    assert c.row_dtype == raw_dtype
    for start, size in [(0, 1), (1, 7), (8, 1), (9, 30), (39, 31)]:
        c.append(x[start : start + size])
        prefill = dgq.compress(held[: start + size], "kivi-2:group=16,residual=8", role)
        assert np.array_equal(c.read(), prefill.decompress("f32")), (role, start + size)
        assert c.held_bytes == prefill.bytes
    assert c.final_tokens == (70 - 8) // 16 * 16 if role == "k" else 70 - 8
    assert dgq.CausalCache("q8_0", role, 32, "f32", raw_dtype).row_dtype == "f32"  # a per-token format keeps its input


def test_fp16_and_bf16_rows_read_back_widened_exactly():
    x16 = rows().astype(np.float16)
    c = dgq.CausalCache("kivi-4", "k", 32, "f16")
    c.append(x16)
    assert c.final_tokens < c.tokens  # a raw tail: read back as the input, widened
    tail = c.read()[c.final_tokens :]
    assert np.array_equal(tail, x16[c.final_tokens :].astype(np.float32))
    bits = (rows().view(np.uint32) >> 16).astype(np.uint16)
    b = dgq.CausalCache("q4_0", "v", 32, "bf16")
    b.append(bits)
    assert np.array_equal(b.read(), dgq.compress(bits, "q4_0", "v", dtype="bf16").decompress("f32"))


def test_read_into_out():
    c = dgq.CausalCache("q8_0", "k", 32)
    c.append(rows(5))
    out = np.empty((5, 32), np.float32)
    assert c.read(out=out) is out and np.array_equal(out, c.read())
    with pytest.raises(dgq.InputError, match="CausalCache.read"):
        c.read(out=np.empty((4, 32), np.float32))


@pytest.mark.parametrize(
    "make, error, message",
    [
        (lambda: dgq.CausalCache("fp8-e4m3", "k", 32), dgq.ParameterError, "has no causal form"),
        (lambda: dgq.CausalCache("dgq2:boundaries=fixed", "k", 32), dgq.ParameterError, "has no causal form"),
        (lambda: dgq.CausalCache("q8_O", "k", 32), dgq.ParameterError, "did you mean 'q8_0'"),
        (lambda: dgq.CausalCache("q8_0", "x", 32), dgq.ParameterError, "role must be 'k'"),
        (lambda: dgq.CausalCache("q8_0", "k", 0), dgq.ParameterError, "channels must be at least 1"),
        (lambda: dgq.CausalCache("q8_0", "k", 32, "f64"), dgq.ParameterError, "f64"),
        (lambda: dgq.CausalCache("kivi-4", "k", 32, "f32", "f8"), dgq.ParameterError, "f8"),
        (
            lambda: dgq.CausalCache("kivi-4", "k", 32).append(np.full((1, 32), 7e4, np.float32)),
            dgq.InputError,
            "overflows f16",
        ),
        (
            lambda: dgq.CausalCache("q8_0", "k", 32).append(rows().astype(np.float16)),
            dgq.InputError,
            "needs a float32 array",
        ),
        (lambda: dgq.CausalCache("q8_0", "k", 16).append(rows()), dgq.InputError, "the cache takes 16"),
        (
            lambda: dgq.CausalCache("q8_0", "k", 32).append(np.full((2, 32), np.nan, np.float32)),
            dgq.InputError,
            "NaN|non-finite",
        ),
    ],
)
def test_bad_arguments_and_data_are_refused_with_dgqs_messages(make, error, message):
    with pytest.raises(error, match=message):
        make()


def test_a_refused_append_keeps_what_the_cache_held():
    c = dgq.CausalCache("q8_0", "k", 32)
    c.append(rows(3))
    before = c.read()
    with pytest.raises(dgq.InputError):
        c.append(np.full((1, 32), np.inf, np.float32))
    assert c.tokens == 3 and np.array_equal(c.read(), before)


def causal_specs() -> list[str]:
    """Every registered family's default spec that has a causal form, and the parameterised specs
    the dgq.hf tests use (groups and segments that close inside a short text, the modifiers)."""
    specs = []
    for family in dgq.schemes():
        try:
            dgq.CausalCache(family["name"], "k", 64)
        except dgq.ParameterError:  # no causal form (fp8-e4m3's default per-tensor scale)
            continue
        specs.append(family["name"])
    return specs + [
        "kivi-2:group=16,residual=8",
        "dgq2:bits=3,kgran=segment-channel-group,kgroup=16,residual=8,win=8,group_ratio=0.95",
        "fp8-e4m3:scale=prefix",
        "q4_0:rot=hadamard",
        "q8_0:sink=4",
    ]


@pytest.mark.parametrize("raw_dtype", ["f16", "f32"])
@pytest.mark.parametrize("role", ["k", "v"])
@pytest.mark.parametrize("spec", causal_specs())
def test_a_causal_caches_state_does_not_depend_on_how_its_rows_were_appended(spec, role, raw_dtype):
    # dgq.hf's crop, beam search and batch reshuffles rebuild a cache by appending the rows it
    # kept at once: exact only because the state after T rows is the same however they came.
    x = rows(150, 64, seed=9)  # 64 channels: the Hadamard rotation's smallest
    at_once = dgq.CausalCache(spec, role, 64, "f32", raw_dtype)
    at_once.append(x)
    one_by_one = dgq.CausalCache(spec, role, 64, "f32", raw_dtype)
    in_pieces = dgq.CausalCache(spec, role, 64, "f32", raw_dtype)
    for t in range(len(x)):
        one_by_one.append(x[t : t + 1])
    start = 0
    for size in (1, 7, 1, 33, 2, 50, 56):
        in_pieces.append(x[start : start + size])
        start += size
    for other in (one_by_one, in_pieces):
        assert other.tokens == at_once.tokens and other.final_tokens == at_once.final_tokens
        assert other.held_bytes == at_once.held_bytes
        assert np.array_equal(other.read(), at_once.read())
