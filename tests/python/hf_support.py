"""Helpers of the dgq.hf tests: dgq's tiny random llama (export_model.random_model) as a Hugging
Face LlamaForCausalLM with the same weights, and decoding with a transformers cache."""

from __future__ import annotations

import numpy as np
import torch

# dgq model file tensor (blk.i.NAME) -> transformers' LlamaForCausalLM parameter (model.layers.i.NAME).
# Both keep Q/K rows in rotate-half order (the exporter undoes llama.cpp's permutation).
LLAMA_LAYER_NAMES = {
    "attn_norm": "input_layernorm",
    "attn_q": "self_attn.q_proj",
    "attn_k": "self_attn.k_proj",
    "attn_v": "self_attn.v_proj",
    "attn_output": "self_attn.o_proj",
    "ffn_norm": "post_attention_layernorm",
    "ffn_gate": "mlp.gate_proj",
    "ffn_up": "mlp.up_proj",
    "ffn_down": "mlp.down_proj",
}


def hf_llama(cfg: dict, tensors: dict):
    """A LlamaForCausalLM (fp32, eval mode) holding the weights of a dgq llama model (cfg, tensors
    of export_model.random_model or a model file)."""
    from transformers import LlamaConfig, LlamaForCausalLM

    assert cfg["architecture"] == "llama" and cfg.get("tied_output", 1)
    config = LlamaConfig(
        vocab_size=cfg["vocab_size"],
        hidden_size=cfg["hidden"],
        intermediate_size=cfg["ffn"],
        num_hidden_layers=cfg["num_layers"],
        num_attention_heads=cfg["num_q_heads"],
        num_key_value_heads=cfg["num_kv_heads"],
        head_dim=cfg["head_dim"],
        rms_norm_eps=cfg["rms_eps"],
        rope_theta=cfg["rope_theta"],
        tie_word_embeddings=True,
        max_position_embeddings=cfg["context_length"],
        bos_token_id=cfg["bos_token_id"],
        eos_token_id=None,
        pad_token_id=None,
    )
    model = LlamaForCausalLM(config).eval()
    state = {
        "model.embed_tokens.weight": tensors["token_embd"],
        "model.norm.weight": tensors["output_norm"],
        "lm_head.weight": tensors["token_embd"],
    }
    for i in range(cfg["num_layers"]):
        for ours, theirs in LLAMA_LAYER_NAMES.items():
            state[f"model.layers.{i}.{theirs}.weight"] = tensors[f"blk.{i}.{ours}"]
    model.load_state_dict(
        {k: torch.from_numpy(np.ascontiguousarray(v, dtype=np.float32)) for k, v in state.items()}, strict=True
    )
    return model


def decode_logits(model, ids, cache) -> torch.Tensor:
    """The token ids fed one at a time (a decoder writing its cache token by token); the logits
    after each, [len(ids), vocab] float64."""
    out = []
    with torch.no_grad():
        for token in ids:
            step = model(torch.tensor([[int(token)]]), cache=cache, use_cache=True)
            out.append(step.logits[0, -1].double())
    return torch.stack(out)


def prefill_logits(model, ids, cache) -> torch.Tensor:
    """The token ids in one forward (one micro-batch); the logits of every position, float64."""
    with torch.no_grad():
        return model(torch.tensor([[int(t) for t in ids]]), cache=cache, use_cache=True).logits[0].double()


def log_softmax(logits) -> torch.Tensor:
    return torch.log_softmax(torch.as_tensor(np.asarray(logits), dtype=torch.float64), dim=-1)


def kld(base_logits, logits) -> torch.Tensor:
    """Per position KL(base || other), as dgq eval's kld (docs/eval.md, "Metrics")."""
    p, q = log_softmax(base_logits), log_softmax(logits)
    return (p.exp() * (p - q)).sum(-1)


def tiny_hf_llama(folder, ctx: int) -> dict:
    """dgq's tiny random llama in folder (model.h5, and tokens.h5 of ctx tokens) and the same
    weights as transformers' LlamaForCausalLM: its config, model and the chunk's token ids (the
    first replaced by BOS, as dgq eval's add_bos does)."""
    from eval_support import write_tiny_model, write_token_file

    cfg, tensors = write_tiny_model(folder / "model.h5", "llama")
    tokens = np.random.default_rng(11).integers(2, cfg["vocab_size"], size=ctx).astype(np.int32)
    write_token_file(folder / "tokens.h5", tokens, "tiny-llama")
    ids = tokens.copy()
    ids[0] = cfg["bos_token_id"]
    return {"dir": folder, "cfg": cfg, "model": hf_llama(cfg, tensors), "ids": ids}
