#pragma once
// The helpers of the causal suite (test_causal_conformance.cpp: every registered family;
// test_causal_families.cpp: each family's own rule): the specs and shapes it runs, regime tensors,
// and the check of the literal cache against the timeline.
#include "test_scheme_support.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/errors.hpp"

namespace dgq::test {

// The specs with no causal form (rules C3 and C5): causal_schedule throws ParameterError.
inline const std::set<std::string> kCausalRefused{"fp8-e4m3", "dgq2:boundaries=fixed"};

// The formats the causal rule treats as per token (rule C1): final on append.
inline const std::vector<std::string> kCausalPerToken{"fp16",
                                                      "q8_0",
                                                      "q4_0",
                                                      "q4_1",
                                                      "q5_0",
                                                      "q5_1",
                                                      "iq4_nl",
                                                      "int8-token",
                                                      "int8-group64",
                                                      "int4-group64",
                                                      "turboquant",
                                                      "turboquant:bits=2,variant=prod",
                                                      "q4_0:rot=hadamard",
                                                      "fp8-e4m3:scale=token",
                                                      "q4_0:sink=3,rot=hadamard",
                                                      "turboquant_k8v4",
                                                      "turboquant_4bit_nc",
                                                      "turboquant_k3v4_nc",
                                                      "turboquant_3bit_nc"};

// Every registered family's default spec, then parameterised ones: dgq2's group granularity
// (with G a multiple of win, and G = 5 that divides no block), residual and rotation, several
// segments under budget=max_groups, KIVI with a residual, fp8's causal scales, TurboQuant's
// second variant, the rotation modifier around a per-token format and around dgq, and dgq's
// online boundaries, and the sink modifier around each kind of rule.
inline std::vector<std::string> causal_specs() {
  std::vector<std::string> out;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device == Device::cpu) out.emplace_back(f.name);
  }
  for (const char* spec :
       {"dgq2:kgran=segment-channel-group,kgroup=32",
        "dgq2:residual=8",
        "dgq2:rot=hadamard",
        "dgq2:budget=max_groups,max_groups=8,kgran=segment-channel-group,kgroup=5,markers=inband",
        "dgq2:budget=max_groups,max_groups=4,kgran=segment,vgran=segment-channel,markers=bitmap,"
        "residual=3,bits=3",
        "dgq2:boundaries=online,vgran=segment-channel-group,vgroup=20,residual=8,rot=hadamard",
        "kivi-4:residual=8",
        "kivi-2:group=16,residual=0",
        "fp8-e4m3:scale=prefix,prefix=16",
        "fp8-e4m3:scale=token",
        "turboquant:bits=2,variant=prod",
        "q4_0:rot=hadamard",
        "dgq:boundaries=online",
        "dgq:granularity=segment-channel,markers=bitmap,max_groups=2",
        "dgq:markers=inband,rot=hadamard",
        "q4_0:sink=3,rot=hadamard",
        "kivi-4:residual=8,sink=4",
        "fp8-e4m3:scale=prefix,prefix=16,sink=3",
        "dgq2:boundaries=online,kgran=segment-channel-group,kgroup=32,sink=5",
        "dgq:sink=20",
        "dgq3:hi_frac=0.1,center=kv,cnorm=kv,calib=16",
        "dgq3:kbits=3,vbits=5,hi_bits=4,hi_frac=0.5,hi_ratio=0,sink=3",
        "dgq3:vbits=3,center=kv,hi_frac=0.05,nl=kv",  // a level of docs/spec.md's frontier configuration
        "dgq3:kbits=2,hi_bits=5,hi_frac=0.2,nl=v"}) {
    out.emplace_back(spec);
  }
  return out;
}

// The head dims a spec is tested at: 64 and 33 where the family takes them (the registry's
// accepts_channels), multiples of 64 only under the rotation modifier.
inline std::vector<std::int64_t> causal_channels(const std::string& spec) {
  std::vector<std::int64_t> out;
  for (const std::int64_t d : {64, 33}) {
    if (!takes_channels(scheme_family_of(spec), d)) continue;
    if (spec_rotates(spec) && d % 64 != 0) continue;
    out.push_back(d);
  }
  return out;
}

inline const std::vector<std::int64_t> kCausalTokens{0, 1, 15, 16, 17, 100, 300};

// Token rows whose spread changes regime at tokens 48, 112, 200 (block edges of win = 16) and
// 250 (inside a block), with a per-channel offset and an outlier now and then: the variance
// rule finds several change points, of different strengths.
inline OwnedTensor causal_regime_tensor(std::int64_t l, std::int64_t d, std::uint64_t stream, DType t = DType::f16) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t tok = 0; tok < l; ++tok) {
    const float spread = tok < 48 ? 1.0f : tok < 112 ? 5.0f : tok < 200 ? 0.2f : tok < 250 ? 3.0f : 0.5f;
    for (std::int64_t c = 0; c < d; ++c) {
      float e = 0.1f * static_cast<float>(c % 7) + spread * normal(gen);
      if (uniform(gen) < 0.005f) e *= 8.0f;
      v[tok * d + c] = e;
    }
  }
  return tensor_from(v, l, d, t);
}

inline ConstTensor causal_rows(const OwnedTensor& x, std::int64_t first, std::int64_t count) {
  return {x.bytes.data() + static_cast<std::size_t>(first * x.channels) * dtype_size(x.dtype), x.dtype, count,
          x.channels};
}

inline std::vector<std::uint32_t> causal_bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = rules::float_bits(v[i]);
  return out;
}

// The schedule's own invariants: one entry per token, non-decreasing, at most T + 1.
inline void check_schedule_shape(const CausalSchedule& s, std::int64_t tokens) {
  REQUIRE(s.final_tokens.size() == static_cast<std::size_t>(tokens));
  REQUIRE(s.final_bytes.size() == static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t) {
    CAPTURE(t);
    const auto at = static_cast<std::size_t>(t);
    REQUIRE(s.final_tokens[at] <= static_cast<std::uint32_t>(t + 1));
    if (t > 0) REQUIRE(s.final_tokens[at] >= s.final_tokens[at - 1]);
  }
}

// The literal cache fed `batch` tokens at a time (after an empty append) against the timeline:
// after every append, the final values below final_tokens, the raw input above, the bytes held.
inline void check_cache_against_timeline(const Scheme& s, const OwnedTensor& x, TensorRole role, std::int64_t batch) {
  const CausalTimeline timeline = causal_timeline(s, x.view(), role);
  check_schedule_shape(timeline.schedule, x.tokens);
  REQUIRE(timeline.final_values.size() == static_cast<std::size_t>(x.size()));
  const std::vector<float> raw = to_float(x.view());
  CausalCache cache(s, role, x.channels, x.dtype);
  cache.append(causal_rows(x, 0, 0));
  CHECK(cache.tokens() == 0);
  CHECK(cache.held_bytes() == 0);
  std::vector<float> got, expected;
  for (std::int64_t first = 0; first < x.tokens; first += batch) {
    const std::int64_t count = std::min(batch, x.tokens - first);
    cache.append(causal_rows(x, first, count));
    const std::int64_t t = first + count - 1;
    const auto final_rows = static_cast<std::int64_t>(timeline.schedule.final_tokens[static_cast<std::size_t>(t)]);
    CAPTURE(batch, t, final_rows);
    REQUIRE(cache.tokens() == t + 1);
    REQUIRE(cache.final_tokens() == final_rows);
    REQUIRE(cache.held_bytes() == causal_held_bytes(timeline.schedule, t, x.channels, x.dtype));
    cache.read(got);
    expected.assign(timeline.final_values.begin(), timeline.final_values.begin() + final_rows * x.channels);
    expected.insert(expected.end(), raw.begin() + final_rows * x.channels, raw.begin() + (t + 1) * x.channels);
    REQUIRE(causal_bits(got) == causal_bits(expected));
  }
}

// A tensor of win-token blocks (win = 16, 64 channels), block i with values offset[i] +
// spread[i]*N(0, 1) (offset 0 when not given): the token variance (rule 1) is about spread[i]^2,
// so the candidates of rule 3 are where the spread changes. An offset leaves it alone, but not
// the variance of the rotated rows (the rotation gathers a constant row into one channel).
inline OwnedTensor causal_block_tensor(const std::vector<float>& spread, std::uint64_t stream,
                                       const std::vector<float>& offset = {}) {
  const std::int64_t d = 64, l = 16 * static_cast<std::int64_t>(spread.size());
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t t = 0; t < l; ++t) {
    const auto block = static_cast<std::size_t>(t / 16);
    const float shift = offset.empty() ? 0.0f : offset[block];
    for (std::int64_t c = 0; c < d; ++c) v[t * d + c] = shift + spread[block] * normal(gen);
  }
  return tensor_from(v, l, d);
}

inline std::vector<std::uint32_t> causal_edges(const std::string& spec, const OwnedTensor& x) {
  return make_scheme(spec)->compress(x.view(), TensorRole::key).segment_edges();
}

// body(scheme, x, role) for every spec with a causal form, at every head dim it takes
// (causal_channels), every length of kCausalTokens (a regime tensor from its own stream) and
// both roles, the case captured for a failure's message.
template <class Body>
inline void for_each_causal_case(const std::vector<std::string>& specs, std::uint64_t stream, Body body) {
  for (const std::string& spec : specs) {
    if (kCausalRefused.count(spec) != 0) continue;
    const auto s = make_scheme(spec);
    for (const std::int64_t d : causal_channels(spec)) {
      for (const std::int64_t l : kCausalTokens) {
        const OwnedTensor x = causal_regime_tensor(l, d, ++stream);
        for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
          CAPTURE(spec, d, l, role_name(role));
          body(*s, x, role);
        }
      }
    }
  }
}

}  // namespace dgq::test
