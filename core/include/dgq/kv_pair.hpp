#pragma once
// A cache whose keys and values use different schemes, as llama.cpp's `-ctk q8_0 -ctv q4_0`
// and vLLM's k8v4 presets do. Its spec is "K_SPEC/V_SPEC" (read "K/V"): one string, so that
// everything that takes a scheme spec (replay, eval, sweeps, memory, the results' identity)
// takes a pair without a second code path. '/' because no family, parameter or modifier
// uses it and a shell needs no quotes for it; the CLI's --cache-k/--cache-v build the text.
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"

namespace dgq {

inline constexpr char kKvPairSeparator = '/';

struct KvPairSpec {
  std::string k, v;
};

// The two sides of "K/V"; std::nullopt for a spec without '/' (one scheme for both roles).
// ParameterError for an empty side or a second '/'.
std::optional<KvPairSpec> split_kv_pair_spec(std::string_view spec);
// "K/V"; K alone when the two texts are equal, so that a pair of one scheme is that scheme.
std::string join_kv_pair_spec(std::string_view k, std::string_view v);

// The pairs of two lists of specs, as the CLI's --cache-k/--cache-v and a sweep's cache_k/cache_v
// give them: the i-th K with the i-th V; a list of one goes with every entry of the other; an
// empty list is fp16 (llama.cpp's default cache type). ParameterError (naming k_name, v_name)
// for lists of other lengths or an entry that is itself a pair.
std::vector<std::string> kv_pair_specs(const std::vector<std::string>& k, const std::vector<std::string>& v,
                                       std::string_view k_name = "--cache-k", std::string_view v_name = "--cache-v");

// A scheme that hands each role to its own scheme. make_scheme builds it for a "K/V" spec
// whose sides differ once canonical; its spec() is "K/V" of the canonical sides and its
// family() "K_FAMILY/V_FAMILY". Compressed tensors carry the side's spec: they are that
// side's bytes.
// device: the one the sides were made for (a side whose causal form is itself is made again there).
std::unique_ptr<Scheme> make_kv_pair_scheme(std::unique_ptr<Scheme> k, std::unique_ptr<Scheme> v,
                                            Device device = Device::cpu);

}  // namespace dgq
