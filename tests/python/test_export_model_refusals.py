"""tools/export-model.py refuses the GGUF settings the model runner does not implement, by
name, instead of writing a model file that runs and is silently wrong. The shipped GGUFs
(SmolLM2-135M, Gemma 3 270M) must pass; each refused setting is added to the real metadata of
one of them, so the check is known to fire on exactly that key."""

import pytest

from dgqtools import export_model, export_trace


class Field:
    def __init__(self, value):
        self.value = value

    def contents(self):
        return self.value


class Tensor:
    def __init__(self, name):
        self.name = name


class ReaderWith:
    """A real GGUF reader's metadata and tensor list with some keys and tensors added."""

    def __init__(self, reader, extra_fields=None, extra_tensors=()):
        self.fields = dict(reader.fields)
        self.fields.update({k: Field(v) for k, v in (extra_fields or {}).items()})
        self.tensors = list(reader.tensors) + [Tensor(name) for name in extra_tensors]


@pytest.fixture(scope="module")
def smollm2_reader():
    import gguf

    return gguf.GGUFReader(str(export_trace.bundled_gguf_path()))


@pytest.fixture(scope="module")
def gemma3_reader():
    import gguf

    return gguf.GGUFReader(str(export_model.gemma3_gguf_path()))


def test_the_shipped_models_have_no_unimplemented_setting(smollm2_reader, gemma3_reader):
    for reader in (smollm2_reader, gemma3_reader):
        cfg = export_model.config_from_gguf(reader)
        assert export_model.unimplemented_settings(reader, cfg) == []


@pytest.mark.parametrize(
    "extra, named",
    [
        (
            {"gemma3.rope.scaling.type": "linear", "gemma3.rope.scaling.factor": 8.0},
            "gemma3.rope.scaling.type=linear (factor 8): RoPE scaling",
        ),
        ({"gemma3.final_logit_softcapping": 30.0}, "gemma3.final_logit_softcapping"),
        ({"gemma3.attention.value_length": 128}, "gemma3.attention.value_length=128"),
        # Gemma 3 27B's shape: 62 layers, hidden 5376, 32 heads of 128 (hidden / heads = 168).
        (
            {
                "gemma3.block_count": 62,
                "gemma3.embedding_length": 5376,
                "gemma3.attention.head_count": 32,
                "gemma3.attention.key_length": 128,
                "gemma3.attention.value_length": 128,
            },
            "query_pre_attn_scalar",
        ),
    ],
)
def test_a_gemma3_setting_the_runner_lacks_is_refused_by_name(gemma3_reader, extra, named):
    with pytest.raises(export_trace.ExportError, match="does not implement") as err:
        export_model.config_from_gguf(ReaderWith(gemma3_reader, extra))
    assert named in str(err.value)


@pytest.mark.parametrize(
    "extra, tensors, named",
    [
        ({"llama.rope.scaling.type": "yarn", "llama.rope.scaling.factor": 4.0}, (), "RoPE scaling"),
        ({}, ("rope_freqs.weight",), "rope_freqs.weight"),
        ({"llama.rope.dimension_count": 32}, (), "partial RoPE"),
        ({"llama.expert_count": 8}, (), "mixture of experts"),
    ],
)
def test_a_llama_setting_the_runner_lacks_is_refused_by_name(smollm2_reader, extra, tensors, named):
    with pytest.raises(export_trace.ExportError, match="does not implement") as err:
        export_model.config_from_gguf(ReaderWith(smollm2_reader, extra, tensors))
    assert named in str(err.value)


def test_every_refused_setting_is_listed_in_one_message(gemma3_reader):
    extra = {
        "gemma3.rope.scaling.type": "linear",
        "gemma3.rope.scaling.factor": 8.0,
        "gemma3.attn_logit_softcapping": 50.0,
    }
    with pytest.raises(export_trace.ExportError) as err:
        export_model.config_from_gguf(ReaderWith(gemma3_reader, extra))
    assert "RoPE scaling" in str(err.value) and "attn_logit_softcapping" in str(err.value)
