#pragma once
// vLLM's TurboQuant presets' stored slots as decode attention reads them
// (decode_attention_vllm.cpp); packed_codes_head dispatches here.
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/registry.hpp"

namespace dgq::cpu {

StoredHead vllm_turboquant_head(const Compressed& c, const turboquant_vllm::Preset& preset, const ParsedSpec& spec);

}  // namespace dgq::cpu
