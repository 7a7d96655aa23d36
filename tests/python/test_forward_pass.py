"""The numpy forward pass of SmolLM2-135M: it is right if the model predicts real text well."""

import numpy as np

from dgqtools import export_trace

# A 135M model gets single digits to low tens on ordinary English and C++; a broken forward pass
# (wrong RoPE pairing, wrong norm, wrong head grouping) gets hundreds or thousands.
PLAUSIBLE_PPL_BOUND = 30.0
# On a 178-token prompt the wrong RoPE pairing measured 6.5x the right perplexity (75.6 vs 11.7);
# on 512 tokens of C++, 239 vs under 5. Position information matters more as the context grows.
BROKEN_PPL_RATIO = 4.0
DECODE_REL_TOL = 1e-4  # fp32, different reduction shapes: agreement to ~1e-6 is typical


def perplexity(model, tokens):
    hidden, _ = model.forward(tokens)
    return export_trace.next_token_quality(model, hidden, tokens)


def test_english_prose_perplexity_is_plausible(model, prose_tokens):
    ppl, top1 = perplexity(model, prose_tokens)
    print(f"prose: {len(prose_tokens)} tokens, ppl {ppl:.3f}, top-1 {top1:.3f}")
    assert ppl < PLAUSIBLE_PPL_BOUND
    assert top1 > 0.3


def test_cxx_code_perplexity_is_plausible(model, code_tokens):
    ppl, top1 = perplexity(model, code_tokens)
    print(f"code: {len(code_tokens)} tokens, ppl {ppl:.3f}, top-1 {top1:.3f}")
    assert ppl < PLAUSIBLE_PPL_BOUND
    assert top1 > 0.3


def test_keeping_gguf_qk_row_order_under_rotate_half_rope_breaks_the_model(model, prose_tokens):
    # Proves the permutation is undone correctly: the same weights with GGUF's q/k row order
    # (adjacent RoPE pairs) fed to rotate-half RoPE must give a far worse model.
    right_ppl, _ = perplexity(model, prose_tokens)
    wrong = export_trace.SmolLM2(undo_gguf_qk_permutation=False)
    wrong_ppl, _ = perplexity(wrong, prose_tokens)
    print(f"prose: ppl {right_ppl:.1f} with the right RoPE pairing, {wrong_ppl:.1f} with the wrong one")
    assert wrong_ppl > BROKEN_PPL_RATIO * right_ppl


def test_unpermute_inverts_the_converter_permutation():
    # convert_hf_to_gguf's permute: reshape(heads, 2, d/2, cols).swapaxes(1, 2).
    heads, head_dim, cols = 3, 8, 5
    hf = np.arange(heads * head_dim * cols, dtype=np.float32).reshape(heads * head_dim, cols)
    gguf_order = hf.reshape(heads, 2, head_dim // 2, cols).swapaxes(1, 2).reshape(hf.shape)
    assert np.array_equal(export_trace.unpermute_rope_rows(gguf_order, heads), hf)


def test_decode_step_with_kv_cache_matches_the_prefill(model, prose_tokens):
    tokens = prose_tokens[:97]  # odd length: the decode position is not a chunk boundary
    prefill_hidden, _ = model.forward(tokens)
    rel_err = export_trace.decode_step_relative_error(model, tokens, prefill_hidden[-1])
    assert rel_err < DECODE_REL_TOL


def test_chunked_attention_matches_dense_causal_attention(model):
    cfg = model.config
    rng = np.random.default_rng(7)
    start, n = 300, export_trace.ATTENTION_QUERY_CHUNK + 37  # several chunks, a ragged last one
    q = rng.standard_normal((cfg.num_q_heads, n, cfg.head_dim), dtype=np.float32)
    k = rng.standard_normal((cfg.num_kv_heads, start + n, cfg.head_dim), dtype=np.float32)
    v = rng.standard_normal((cfg.num_kv_heads, start + n, cfg.head_dim), dtype=np.float32)
    got = model._attention(q, k, v, start)

    group = cfg.num_q_heads // cfg.num_kv_heads
    expected = np.empty((n, cfg.num_q_heads, cfg.head_dim))
    for h in range(cfg.num_q_heads):
        kh, vh = k[h // group].astype(np.float64), v[h // group].astype(np.float64)
        for i in range(n):
            scores = kh[: start + i + 1] @ q[h, i].astype(np.float64) / np.sqrt(cfg.head_dim)
            weights = np.exp(scores - scores.max())
            expected[i, h] = (weights / weights.sum()) @ vh[: start + i + 1]
    np.testing.assert_allclose(got.reshape(n, cfg.num_q_heads, cfg.head_dim), expected, rtol=1e-4, atol=1e-5)
