#pragma once
// The settings of a `dgq eval` cache, as the command line and sweep configs name them: the cache
// spec, the query rounding, the cache mode, where keys are taken and the dtype of raw rows
// (docs/eval.md).
#include <string>
#include <string_view>

#include "dgq/sim/model/forward.hpp"
#include "dgq/tensor.hpp"

namespace dgq::sim {

// "fp32" (or llama.cpp's "f32") is the exact cache (no scheme); every other name is a
// make_scheme spec, a K/V pair "K_SPEC/V_SPEC" included (dgq/kv_pair.hpp; either side may be
// fp32). The fp16 family stores fp16: its input is the fp32 K/V rounded to nearest-even
// (llama.cpp's f32 -> f16 copy); a role whose scheme keeps rows raw gets them in the raw dtype
// (parse_raw_dtype below); every other scheme gets the fp32 K/V as computed.
// A layer plan "DEFAULT;LAYERS=SPEC;..." gives some layers their own cache spec (docs/eval.md,
// "Layer plans"; sim/eval/src/cache/layer_plan.hpp).
// The canonical text of a cache spec: "fp32" for the exact cache (f32 too), a scheme's
// canonical spec, a K/V pair of those (a pair of one scheme is that scheme), a layer plan of
// those, so that "dgq" and "dgq:win=16,..." are one configuration in a run's identity.
std::string canonical_cache_spec(const std::string& spec);
enum class QueryRounding { off, q8_0 };
QueryRounding parse_query_rounding(const std::string& name);  // "off" | "q8_0"

// How the cache is written (docs/eval.md, "The causal cache"): `prefill` hands every scheme the
// whole chunk at once (what dgq measured before 2026-12; schemes may look ahead); `causal`
// writes it as a decoder does, token by token, each family by its causal rule (docs/spec.md,
// "Causal caches"): a query reads every earlier token as the cache held it when the query's
// token was appended.
enum class CacheMode { prefill, causal };
CacheMode parse_cache_mode(const std::string& name);  // "prefill" | "causal"
std::string cache_mode_name(CacheMode mode);
KeyPosition parse_key_position(const std::string& name);  // "post-rope" | "pre-rope"
std::string key_position_name(KeyPosition keys);

// The dtype in which a cache holds the rows it keeps raw (docs/spec.md rule C9, docs/eval.md
// "Raw rows"): fp16 by default, as llama.cpp, vLLM, SGLang and transformers hold them; bf16; or
// fp32, the runner's own dtype. It applies to the roles whose
// scheme keeps rows raw (a causal raw tail: KIVI, DGQ v1/v2's open segment or group, KVarN's
// open tile, a prefix scale; rows stored as they came: sink=N, KVarN's sink block, a residual),
// in both cache modes; the per-token formats get the K/V as computed, in fp32.
DType parse_raw_dtype(const std::string& name);  // "fp16" | "bf16" | "fp32" (or f16, f32): ParameterError
// What a run records: the raw dtype's name ("f16", "bf16", "f32") when some layer and role of the
// cache spec keeps rows raw, "none" when none does (the option changes nothing there).
std::string raw_dtype_label(const std::string& spec, DType raw_dtype);
// "fp32" or llama.cpp's "f32": the exact cache, which no scheme stands for.
bool names_exact_cache(std::string_view spec);

}  // namespace dgq::sim
