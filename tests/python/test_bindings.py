"""The Python module (python/, docs/python.md) against the C++ it binds: every registry family
compressed through `dgq.compress` gives the bytes `dgq compress` stores, and decompresses to
what `dgq decompress` writes, for fp16, fp32 and bf16 inputs; errors are the C++ ones, with
the C++ messages. Run by the ctest python:bindings (tests/python/CMakeLists.txt), which puts the
module built with -DDGQ_PYTHON=ON on PYTHONPATH."""

import subprocess

import h5py
import numpy as np
import pytest

pytestmark = pytest.mark.bindings

TOKENS = 37  # not a multiple of any block or group of tokens (32, 64, 128), nor of win=16
CHANNELS = 128  # a head dim every family takes (turboquant's and dgq3's included)
KV_HEADS = 2
SEED = 20261203
DTYPES = ("f16", "f32", "bf16")
# Beyond every family's defaults: a modifier and non-default parameters, parsed the same way.
EXTRA_SPECS = ("q4_0:rot=hadamard", "dgq2:bits=3,residual=8", "kivi-2:group=32")


@pytest.fixture(scope="module")
def dgq():
    try:
        import dgq as module
    except ImportError as e:
        pytest.fail(
            f"import dgq failed ({e}): configure with -DDGQ_PYTHON=ON "
            "(tools/setup.sh does); ctest puts <build>/python on PYTHONPATH"
        )
    return module


def bf16_bits(x32):
    """fp32 -> bf16 bits, round to nearest even (the values are finite)."""
    u = x32.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_to_f32(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def as_dtype(x32, dtype):
    return {
        "f16": lambda: x32.astype(np.float16),
        "f32": lambda: x32.astype(np.float32),
        "bf16": lambda: bf16_bits(x32),
    }[dtype]()


def kv_data(dtype, tokens=TOKENS, channels=CHANNELS, heads=KV_HEADS):
    """[heads, tokens, channels] keys and values with a few outlier key channels (what DGQ and
    KIVI treat specially), in dtype (bf16 as bits)."""
    rng = np.random.default_rng(SEED)
    k = rng.normal(size=(heads, tokens, channels)).astype(np.float32)
    k[:, :, [3, 70]] *= 12
    v = rng.normal(size=(heads, tokens, channels)).astype(np.float32)
    return as_dtype(k, dtype), as_dtype(v, dtype)


def write_trace(path, k, v, dtype):
    """A one-layer trace (docs/trace-format.md) holding k and v; bf16 as tagged uint16."""
    heads, tokens, channels = k.shape
    with h5py.File(path, "w") as f:
        for name, value in (
            ("format", "dgq-trace"),
            ("version", 1),
            ("model", "bindings-test"),
            ("num_layers", 1),
            ("num_q_heads", heads),
            ("num_kv_heads", heads),
            ("head_dim", channels),
            ("rope_applied", 0),
            ("source", "synthetic"),
            ("prompt_kind", "random"),
            ("seed", SEED),
        ):
            f.attrs[name] = value
        f["q_pos"] = np.array([tokens - 1], dtype=np.int32)
        for name, x in (("q", k[:, -1:, :]), ("k", k), ("v", v)):
            ds = f.create_dataset(f"layers/0/{name}", data=x)
            if dtype == "bf16":
                ds.attrs["dtype"] = "bf16"


@pytest.fixture(scope="module")
def traces(tmp_path_factory):
    """dtype -> (trace path, k, v)."""
    folder = tmp_path_factory.mktemp("bindings")
    out = {}
    for dtype in DTYPES:
        k, v = kv_data(dtype)
        path = folder / f"trace-{dtype}.h5"
        write_trace(path, k, v, dtype)
        out[dtype] = (path, k, v)
    return out


def run_dgq(dgq_bin, *args):
    return subprocess.run([dgq_bin, *map(str, args)], capture_output=True, text=True)


def cli_error(dgq_bin, *args):
    """The message of the one error line the CLI prints ("dgq: error: MESSAGE"), exit code 2."""
    r = run_dgq(dgq_bin, *args)
    assert r.returncode == 2, (r.returncode, r.stdout, r.stderr)
    line = r.stderr.strip()
    assert line.startswith("dgq: error: "), line
    return line[len("dgq: error: ") :]


def all_specs(dgq):
    return [f["name"] for f in dgq.schemes()] + list(EXTRA_SPECS)


# --- The registry -------------------------------------------------------------------------------


def test_schemes_lists_every_family_with_its_parameters_and_defaults(dgq):
    families = dgq.schemes()
    names = [f["name"] for f in families]
    assert len(names) == len(set(names)) and {"fp16", "q8_0", "dgq", "dgq2", "kivi-2"} <= set(names)
    for f in families:
        assert f["summary"] and f["stored_size"] in ("exact", "at_most")
        default_spec = dgq.Scheme(f["name"]).spec
        for p in f["params"]:
            assert p["kind"] in ("integer", "number", "word") and p["help"]
            if p["kind"] == "integer":
                assert p["min"] <= int(p["default"]) <= p["max"], p
            # The listed default is the family's: spelling it out changes nothing.
            assert dgq.Scheme(f"{f['name']}:{p['key']}={p['default']}").spec == default_spec, p
    assert any(m["key"] == "rot" for m in dgq.modifiers())


@pytest.mark.needs_dgq
def test_scheme_help_is_what_dgq_schemes_prints(dgq, dgq_bin):
    r = run_dgq(dgq_bin, "schemes")
    assert r.returncode == 0, r.stderr
    assert dgq.scheme_help() == r.stdout


# --- Bytes and values equal the CLI's ------------------------------------------------------------


@pytest.mark.needs_dgq
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_family_gives_the_cli_bytes_and_decompresses_as_the_cli(dgq, dgq_bin, traces, tmp_path, dtype):
    trace, k, v = traces[dtype]
    bits = {"f16": np.uint16, "bf16": np.uint16, "f32": np.uint32}[dtype]
    for spec in all_specs(dgq):
        scheme = dgq.Scheme(spec)
        packed = tmp_path / "out.dgqz.h5"
        back = tmp_path / "back.h5"
        r = run_dgq(dgq_bin, "compress", trace, "-o", packed, "--scheme", spec)
        assert r.returncode == 0, (spec, r.stderr)
        r = run_dgq(dgq_bin, "decompress", packed, "-o", back)
        assert r.returncode == 0, (spec, r.stderr)
        with h5py.File(packed, "r") as fc, h5py.File(back, "r") as fb:
            assert fc.attrs["scheme"] == scheme.spec
            for role, x in (("k", k), ("v", v)):
                decoded = fb[f"layers/0/{role}"][...]
                for head in range(KV_HEADS):
                    where = f"{spec} {dtype} {role} head {head}"
                    c = scheme.compress(x[head], role, dtype="bf16" if dtype == "bf16" else None)
                    unit = fc[f"layers/0/{role}/{head}"]
                    assert c.scheme == scheme.spec and c.dtype == dtype and c.role == role, where
                    assert list(c.parts) == (unit.attrs["parts"].split(",") if unit.attrs["parts"] else []), where
                    for name, got in c.parts.items():
                        assert np.array_equal(got, unit[name][...]), f"{where}: part {name} differs from the CLI's"
                    assert c.bytes == sum(p.size for p in c.parts.values()), where
                    # The values, as bits: equal numbers and equal signs of zero.
                    assert np.array_equal(c.decompress().view(bits), decoded[head].view(bits)), (
                        f"{where}: decompress differs from dgq decompress"
                    )


# --- Results and conversions -------------------------------------------------------------------


def test_bits_per_element_bytes_and_planned_bytes_agree(dgq):
    k, _ = kv_data("f16")
    for f in dgq.schemes():
        scheme = dgq.Scheme(f["name"])
        c = scheme.compress(k[0])
        assert c.bits_per_element == c.bytes * 8 / (TOKENS * CHANNELS), f["name"]
        planned = scheme.planned_bytes(TOKENS, CHANNELS, "f16", "k")
        assert c.bytes == planned if f["stored_size"] == "exact" else c.bytes <= planned, f["name"]
    assert dgq.compress(k[0], "q8_0").bits_per_element == 8.5  # 34-byte blocks of 32 values


def test_decompress_converts_to_another_dtype_by_the_exact_rules(dgq):
    k, _ = kv_data("bf16")
    c = dgq.compress(k[0], "q4_0", dtype="bf16")
    native = c.decompress()
    assert native.dtype == np.uint16 and native.shape == (TOKENS, CHANNELS)
    wide = c.decompress("f32")
    assert wide.dtype == np.float32 and np.array_equal(wide, bf16_to_f32(native))  # widening is exact
    assert np.array_equal(c.decompress("f16"), wide.astype(np.float16))  # numpy also rounds to nearest even


def test_a_non_contiguous_array_gives_the_bytes_of_its_contiguous_copy(dgq):
    k, _ = kv_data("f32")
    wide = np.zeros((TOKENS, 2 * CHANNELS), np.float32)
    wide[:, ::2] = k[0]
    strided = wide[:, ::2]
    assert not strided.flags.c_contiguous
    a, b = dgq.compress(strided, "dgq2"), dgq.compress(k[0], "dgq2")
    assert list(a.parts) == list(b.parts)
    for name in a.parts:
        assert np.array_equal(a.parts[name], b.parts[name]), name


def test_parts_are_read_only_views_that_outlive_their_result(dgq):
    k, _ = kv_data("f16")
    parts = dgq.compress(k[0], "q8_0").parts  # the Compressed itself is dropped here
    blocks = parts["blocks"]
    assert blocks.dtype == np.uint8 and not blocks.flags.writeable
    assert np.array_equal(blocks, dgq.compress(k[0], "q8_0").parts["blocks"])
    with pytest.raises(ValueError):
        blocks[0] = 1


def test_an_empty_array_compresses_to_the_planned_bytes(dgq):
    c = dgq.compress(np.zeros((0, CHANNELS), np.float16), "q8_0")
    assert c.bytes == 0 and np.isnan(c.bits_per_element) and c.decompress().shape == (0, CHANNELS)


# --- Errors: the C++ exceptions, with the C++ messages -----------------------------------------


def test_errors_are_value_errors(dgq):
    assert issubclass(dgq.Error, ValueError)
    assert issubclass(dgq.InputError, dgq.Error) and issubclass(dgq.ParameterError, dgq.Error)


@pytest.mark.parametrize("value, word", [(np.nan, "nan"), (np.inf, "inf"), (-np.inf, "-inf")])
@pytest.mark.parametrize("dtype", DTYPES)
def test_a_non_finite_value_is_an_input_error_naming_token_and_channel(dgq, dtype, value, word):
    x = np.ones((TOKENS, CHANNELS), np.float32)
    x[3, 5] = value
    kw = {"dtype": "bf16"} if dtype == "bf16" else {}
    data = bf16_bits(x) if dtype == "bf16" else as_dtype(x, dtype)
    if dtype == "bf16":  # bf16_bits' rounding would carry NaN's payload: set the bits directly
        data[3, 5] = {"nan": 0x7FC0, "inf": 0x7F80, "-inf": 0xFF80}[word]
    for spec in ("q8_0", "dgq2", "kivi-2"):
        with pytest.raises(dgq.InputError) as e:
            dgq.compress(data, spec, **kw)
        # The message starts with the family's name or its spec, as the scheme's compress words it.
        message = str(e.value)
        assert message.startswith(spec) and message.endswith(f": non-finite value {word} at token 3, channel 5"), (
            message
        )


@pytest.mark.needs_dgq
@pytest.mark.parametrize(
    "spec, expected",
    [
        ("q8_O", "did you mean 'q8_0'?"),
        ("dgq2:bits=9", "bits"),
        ("dgq2:bitz=3", "did you mean 'bits'?"),
        ("q4_0:rot=walsh", "rot"),
    ],
)
def test_a_bad_spec_is_a_parameter_error_with_the_cli_message(dgq, dgq_bin, traces, tmp_path, spec, expected):
    with pytest.raises(dgq.ParameterError) as e:
        dgq.compress(np.ones((4, CHANNELS), np.float16), spec)
    message = str(e.value)
    assert expected in message
    trace = traces["f16"][0]
    assert cli_error(dgq_bin, "compress", trace, "-o", tmp_path / "x.h5", "--scheme", spec) == message


@pytest.mark.parametrize(
    "shape, text",
    [
        ((CHANNELS,), "expected a 2-D array (tokens x channels), got 1-D shape (128,)"),
        ((2, 3, CHANNELS), "expected a 2-D array (tokens x channels), got 3-D shape (2, 3, 128)"),
    ],
)
def test_an_array_that_is_not_2d_is_an_input_error(dgq, shape, text):
    with pytest.raises(dgq.InputError) as e:
        dgq.compress(np.ones(shape, np.float16), "q8_0")
    assert str(e.value) == f"compress: {text}"


@pytest.mark.parametrize(
    "array, kw, error, text",
    [
        (
            np.ones((4, 8), np.float64),
            {},
            "InputError",
            "compress: unsupported dtype float64; dgq takes float16, float32, or uint16 holding bf16 bits with dtype='bf16'",
        ),
        (
            np.ones((4, 8), np.int32),
            {},
            "InputError",
            "compress: unsupported dtype int32; dgq takes float16, float32, or uint16 holding bf16 bits with dtype='bf16'",
        ),
        (
            np.ones((4, 8), np.uint16),
            {},
            "InputError",
            "compress: a uint16 array needs dtype='bf16' (bf16 is passed as its bits)",
        ),
        (
            np.ones((4, 8), np.float32),
            {"dtype": "bf16"},
            "InputError",
            "compress: dtype='bf16' needs a uint16 array (the bf16 bits), got float32",
        ),
        (
            np.ones((4, 8), np.float32),
            {"dtype": "f16"},
            "InputError",
            "compress: dtype='f16' needs a float16 array, got float32",
        ),
        (
            np.ones((4, 8), np.float32),
            {"role": "q"},
            "ParameterError",
            "role must be 'k' (keys) or 'v' (values), got 'q'",
        ),
    ],
)
def test_a_wrong_dtype_or_role_is_refused_with_a_message_saying_what_is_taken(dgq, array, kw, error, text):
    with pytest.raises(getattr(dgq, error)) as e:
        dgq.compress(array, "fp16", **kw)
    assert str(e.value) == text


def test_an_ml_dtypes_bfloat16_array_is_taken_as_its_bits(dgq):
    import ml_dtypes

    x = np.random.default_rng(4).standard_normal((37, 128)).astype(np.float32).astype(ml_dtypes.bfloat16)
    bits = x.view(np.uint16)
    for spec in ("q8_0", "kivi-2", "dgq2:bits=3"):
        ours, theirs = dgq.compress(x, spec, role="v"), dgq.compress(bits, spec, role="v", dtype="bf16")
        assert ours.dtype == "bf16" and list(ours.parts) == list(theirs.parts), spec
        assert all(np.array_equal(ours.parts[k], theirs.parts[k]) for k in ours.parts), spec
    cache = dgq.CausalCache("q8_0", "k", 128, "bf16")
    cache.append(x)
    assert np.array_equal(cache.read(), dgq.compress(bits, "q8_0", dtype="bf16").decompress("f32"))


@pytest.mark.parametrize(
    "call, text",
    [
        (
            lambda dgq, x: dgq.Scheme("q8_0").compress(x, dtype="f16"),
            "compress: a bfloat16 array with dtype='f16'; it is bf16",
        ),
        (
            lambda dgq, x: dgq.CausalCache("q8_0", "k", 128).append(x),
            "CausalCache.append: a bfloat16 array with dtype='f32'; it is bf16",
        ),
        (
            lambda dgq, x: dgq.Scheme("q8_0").compress([[1.0] * 128]),
            "compress: a list is not an array; dgq takes float16, float32, or uint16 holding bf16 bits with dtype='bf16' "
            "(or an ml_dtypes bfloat16 array)",
        ),
    ],
)
def test_a_bfloat16_array_with_another_dtype_or_a_non_array_is_refused(dgq, call, text):
    import ml_dtypes

    x = np.ones((4, 128), ml_dtypes.bfloat16)
    with pytest.raises(dgq.InputError) as e:
        call(dgq, x)
    assert str(e.value) == text


def test_an_unknown_dtype_name_is_parse_dtypes_parameter_error(dgq):
    x = np.ones((4, 8), np.float16)
    for call in (lambda: dgq.compress(x, "fp16", dtype="f64"), lambda: dgq.compress(x, "fp16").decompress("f64")):
        with pytest.raises(dgq.ParameterError) as e:
            call()
        assert str(e.value) == "unknown dtype 'f64' (expected f16, bf16 or f32)"


def test_decompress_into_out_writes_and_returns_that_array(dgq):
    k, _ = kv_data("bf16")
    c = dgq.compress(k[0], "dgq2", dtype="bf16")
    out = np.full((TOKENS, CHANNELS), 0xFFFF, np.uint16)
    assert c.decompress(out=out) is out
    assert np.array_equal(out, c.decompress())
    wide = np.zeros((TOKENS, CHANNELS), np.float32)
    assert c.decompress("f32", out=wide) is wide and np.array_equal(wide, c.decompress("f32"))


@pytest.mark.parametrize(
    "out, got",
    [
        (np.zeros((TOKENS, CHANNELS), np.float32), "float32 shape (37, 128)"),
        (np.zeros((TOKENS + 1, CHANNELS), np.float16), "float16 shape (38, 128)"),
        (np.zeros((CHANNELS, TOKENS), np.float16).T, "float16 shape (37, 128), not C-contiguous"),
    ],
)
def test_a_wrong_out_array_is_an_input_error_saying_what_it_must_be(dgq, out, got):
    k, _ = kv_data("f16")
    c = dgq.compress(k[0], "q8_0")
    with pytest.raises(dgq.InputError) as e:
        c.decompress(out=out)
    assert str(e.value) == (
        f"decompress: out must be a writable C-contiguous float16 array of shape (37, 128), got {got}"
    )


def test_a_read_only_out_array_is_refused_and_left_unchanged(dgq):
    k, _ = kv_data("f16")
    c = dgq.compress(k[0], "q8_0")
    out = np.zeros((TOKENS, CHANNELS), np.float16)
    out.flags.writeable = False
    with pytest.raises(dgq.InputError) as e:
        c.decompress(out=out)
    assert "out must be a writable C-contiguous float16 array of shape (37, 128)" in str(e.value)
    assert not out.any()


def test_threads_compressing_at_once_get_the_bytes_of_one_thread(dgq):
    """compress and decompress run with the GIL released: four threads on one Scheme at once
    must give what one thread gives (nothing of Python is touched while the GIL is free)."""
    from concurrent.futures import ThreadPoolExecutor

    k, v = kv_data("f16", tokens=512)
    scheme = dgq.Scheme("dgq2")
    jobs = [(x[h], role) for x, role in ((k, "k"), (v, "v")) for h in range(KV_HEADS)] * 4

    def run(job):
        c = scheme.compress(*job)
        return {name: bytes(p) for name, p in c.parts.items()}, c.decompress().tobytes()

    alone = [run(job) for job in jobs]
    with ThreadPoolExecutor(max_workers=4) as pool:
        together = list(pool.map(run, jobs))
    assert together == alone
