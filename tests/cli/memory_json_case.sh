#!/usr/bin/env bash
# `dgq memory --json PATH`: the file holds every (tokens, scheme) row with exact bytes, and no
# PATH.partial is left. Usage: memory_json_case.sh DGQ SCRATCH_DIR
set -eu
dgq=$1 dir=$2
mkdir -p "$dir"
json="$dir/memory.json"
rm -f "$json" "$json.partial"
"$dgq" memory --model llama-3.1-8b --tokens 8192,131072 --scheme fp16 --scheme q8_0 --json "$json" >/dev/null
fail() { echo "FAIL: $*" >&2; cat "$json" >&2; exit 1; }
[ ! -e "$json.partial" ] || fail "partial file left behind"
grep -q '"format" : "dgq-memory"' "$json" || fail "format"
grep -q '"layers" : 32' "$json" || fail "layers"
[ "$(grep -c '"scheme" :' "$json")" -eq 4 ] || fail "expected 4 rows (2 lengths x 2 schemes)"
# fp16 at 8K: 2 tensors x 32 layers x 8 heads x 8192 tokens x 128 x 2 bytes; at 128K: 16x that.
grep -q '"bytes" : 1073741824,' "$json" || fail "fp16 bytes at 8K"
grep -q '"bytes" : 17179869184,' "$json" || fail "fp16 bytes at 128K"
# q8_0: 34 bytes per 32 elements.
grep -q '"bytes" : 570425344,' "$json" || fail "q8_0 bytes at 8K"
echo "memory --json ok"
