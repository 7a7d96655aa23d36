// The cache settings' names (cache_settings.hpp), as the command line and sweep configs give them.
#include <optional>
#include <string>

#include "cache/layer_plan.hpp"
#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"
#include "dgq/registry.hpp"
#include "dgq/sim/eval/cache_settings.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"

namespace dgq::sim {

CacheMode parse_cache_mode(const std::string& name) {
  if (name == "prefill") return CacheMode::prefill;
  if (name == "causal") return CacheMode::causal;
  throw ParameterError("--cache '" + name + "': expected prefill or causal");
}

std::string cache_mode_name(CacheMode mode) { return mode == CacheMode::causal ? "causal" : "prefill"; }

KeyPosition parse_key_position(const std::string& name) {
  if (name == "post-rope") return KeyPosition::post_rope;
  if (name == "pre-rope") return KeyPosition::pre_rope;
  throw ParameterError("--keys '" + name + "': expected post-rope or pre-rope");
}

std::string key_position_name(KeyPosition keys) { return keys == KeyPosition::pre_rope ? "pre-rope" : "post-rope"; }

DType parse_raw_dtype(const std::string& name) {
  if (name == "fp16" || name == "f16") return DType::f16;
  if (name == "bf16") return DType::bf16;
  if (name == "fp32" || name == "f32") return DType::f32;
  throw ParameterError("--raw-dtype '" + name + "': expected fp16, bf16 or fp32");
}

std::string raw_dtype_label(const std::string& spec, DType raw_dtype) {
  return SchemeCache::keeps_raw_rows(spec) ? std::string(dtype_name(raw_dtype)) : "none";
}

QueryRounding parse_query_rounding(const std::string& name) {
  if (name == "off") return QueryRounding::off;
  if (name == "q8_0") return QueryRounding::q8_0;
  throw ParameterError("--query-rounding '" + name + "': expected off or q8_0");
}

bool names_exact_cache(std::string_view spec) { return spec == "fp32" || spec == "f32"; }

std::string canonical_cache_spec(const std::string& spec) {
  if (std::optional<LayerPlan> plan = split_layer_plan(spec)) {
    plan->default_spec = canonical_cache_spec(plan->default_spec);
    for (LayerOverride& o : plan->overrides) o.spec = canonical_cache_spec(o.spec);
    return join_layer_plan(*plan);
  }
  if (const auto pair = split_kv_pair_spec(spec))
    return join_kv_pair_spec(canonical_cache_spec(pair->k), canonical_cache_spec(pair->v));
  return names_exact_cache(spec) ? "fp32" : make_scheme(spec)->spec();
}

}  // namespace dgq::sim
