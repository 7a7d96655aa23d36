#!/usr/bin/env bash
# `dgq memory`'s inputs: token counts with k/m, a shape from a Hugging Face config.json (the
# language model's part of a multimodal one), the table's compact names, and the article's note
# only when asked. Usage: memory_options_case.sh DGQ CONFIG_DIR
set -u
dgq=$1 configs=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

out=$("$dgq" memory --model llama-3.1-8b --tokens 8k,128K --scheme fp16 2>&1) || fail "8k,128K: $out"
grep -Eq '^8192 +fp16 +1073741824 ' <<<"$out" || fail "8k is not 8192 tokens: $out"
grep -Eq '^131072 +fp16 +17179869184 ' <<<"$out" || fail "128K is not 131072 tokens: $out"
grep -q "note:" <<<"$out" && fail "the article's note printed without --article-note: $out"
out=$("$dgq" memory --model llama-3.1-8b --tokens 128k --scheme fp16 --article-note 2>&1) || fail "note: $out"
grep -q '2.17 GB -> 0.54 GB' <<<"$out" || fail "--article-note printed no note: $out"

# Every family by default, each named by its family alone (dgq2's canonical spec is 250 characters).
out=$("$dgq" memory --model llama-3.1-8b --tokens 8k 2>&1) || fail "default schemes: $out"
grep -Eq '^8192 +dgq2 +[0-9]+ ' <<<"$out" || fail "dgq2 not named by its family: $out"
grep -q 'kgran=' <<<"$out" && fail "a canonical spec in the table: $out"

for bad in 8x 1.5k -8 k '' 99999999999999; do
  out=$("$dgq" memory --model llama-3.1-8b --tokens "$bad" 2>&1) && fail "--tokens '$bad' accepted: $out"
  grep -q "dgq: error: .*--tokens: '$bad' is not a token count" <<<"$out" || fail "--tokens '$bad': $out"
done

# Zero tokens: no cache to size (it printed a ratio of 0.0000, exit 0).
out=$("$dgq" memory --model llama-3.1-8b --tokens 8k,0 --scheme fp16 2>&1) && fail "--tokens 0 accepted: $out"
[ "$out" = "dgq: error: memory: --tokens: must be >= 1, got 0; run 'dgq memory --help'" ] || fail "--tokens 0: $out"

# A head_dim some families cannot hold: by default they are left out and named; asked for, refused.
out=$("$dgq" memory --layers 2 --kv-heads 2 --head-dim 96 --tokens 8 2>&1) || fail "head_dim 96: $out"
grep -Eq '^8 +q8_0 +' <<<"$out" || fail "q8_0 (blocks of 32 divide 96) not listed: $out"
grep -Eq '^8 +(turboquant|dgq3) ' <<<"$out" && fail "a family that cannot hold head_dim 96 listed: $out"
grep -q '^not listed (they cannot hold head_dim 96; .*): .*dgq3' <<<"$out" || fail "no note naming dgq3: $out"
out=$("$dgq" memory --layers 2 --kv-heads 2 --head-dim 100 --tokens 8 2>&1) || fail "head_dim 100: $out"
grep -Eq '^not listed .*: .*q8_0.*turboquant' <<<"$out" || fail "q8_0 and turboquant not named at head_dim 100: $out"
out=$("$dgq" memory --layers 2 --kv-heads 2 --head-dim 100 --tokens 8 --scheme q8_0 2>&1) && fail "q8_0 at 100 accepted: $out"
grep -q "^dgq: error: memory: head_dim 100: q8_0: llama.cpp stores it in blocks of 32 channels" <<<"$out" || fail "q8_0 at 100: $out"

# Qwen2.5-0.5B: 24 layers x 2 KV heads x 896/14 = 64; fp16 at 8K = 2 x 24 x 2 x 8192 x 64 x 2 B.
out=$("$dgq" memory --config "$configs/qwen2.5-0.5b.json" --tokens 8k --scheme fp16 2>&1) || fail "qwen2 config: $out"
grep -q 'KV cache of qwen2 (.*qwen2.5-0.5b.json): 24 layers x 2 KV heads x head_dim 64' <<<"$out" || fail "qwen2 shape: $out"
grep -Eq '^8192 +fp16 +100663296 ' <<<"$out" || fail "qwen2 bytes: $out"
out=$("$dgq" memory --config "$configs/gemma3-4b-text-config.json" --tokens 8k --scheme fp16 2>&1) || fail "gemma3: $out"
grep -q '34 layers x 4 KV heads x head_dim 256' <<<"$out" || fail "gemma3 text_config shape: $out"
out=$("$dgq" memory --config "$configs/no-layers.json" 2>&1) && fail "a config without layers accepted: $out"
grep -q "dgq: error: .*no-layers.json: config has no num_hidden_layers" <<<"$out" || fail "no-layers message: $out"
out=$("$dgq" memory --config "$configs/qwen2.5-0.5b.json" --model llama-3-8b 2>&1) && fail "--config with --model accepted"
grep -q "give --model or --config, not both" <<<"$out" || fail "both: $out"
echo "memory options ok"
