#pragma once
// Shared helpers of the scheme tests (test_scheme_*.cpp): owned tensors in any dtype, seeded
// random data, round trips and the error-bound arithmetic each test states.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"
#include "owned_tensor.hpp"
#include "test_seed.hpp"

namespace dgq::test {

// Whether a spec stores its values in llama.cpp's Hadamard basis: its family's own `rot`
// parameter (dgq2, dgq3) or the registered modifier, read by the registry's parser rather than
// by looking for "rot=" in the text.
inline bool spec_rotates(const std::string& spec) {
  const ParsedSpec parsed = parse_spec(spec);
  for (const SchemeParam& p : parsed.family->params)
    if (p.key == "rot") return parsed.args.word("rot") == "hadamard";
  return parsed.modifier("rot") == "hadamard";
}

// The error f raises with its type ("ParameterError: ...", "InputError: ..."), or "" when f
// returns: for comparing two implementations' refusals, type included.
inline std::string typed_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ParameterError& e) {
    return std::string("ParameterError: ") + e.what();
  } catch (const InputError& e) {
    return std::string("InputError: ") + e.what();
  }
  return "";
}

// The message of the Error (a type derived from std::exception) f throws, or "" when f throws
// none; any other exception propagates and fails the test.
template <class Error = std::exception>
std::string error_message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

// The shapes around every block edge of the baselines (32-channel q8_0 blocks, 64-channel
// groups, 32-token KIVI groups and residual).
inline const std::vector<std::int64_t> kEdgeTokens{0, 1, 31, 32, 33, 64, 65, 100};
inline const std::vector<std::int64_t> kEdgeChannels{1, 31, 32, 33, 64, 65, 128};

// Values are rounded to dtype, so the tensor holds exactly what at() returns.
inline OwnedTensor tensor_from(const std::vector<float>& values, std::int64_t l, std::int64_t d, DType t = DType::f16) {
  OwnedTensor x(t, l, d);
  from_float(values.data(), x.mut());
  return x;
}

inline std::mt19937_64 rng(std::uint64_t stream) { return std::mt19937_64(seed() * 1000003u + stream); }

// n independent standard normal values from the test seed's stream `stream`.
inline std::vector<float> gaussian_values(std::int64_t n, std::uint64_t stream) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& e : v) e = normal(gen);
  return v;
}

// Token rows with their own offset and spread plus the occasional outlier channel, the shape
// real K/V activations have.
inline OwnedTensor random_tensor(std::int64_t l, std::int64_t d, std::uint64_t stream, DType t = DType::f16) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t tok = 0; tok < l; ++tok) {
    const float offset = normal(gen), spread = 0.1f + 3.0f * uniform(gen);
    for (std::int64_t c = 0; c < d; ++c) {
      float e = offset + spread * normal(gen);
      if (uniform(gen) < 0.01f) e *= 20.0f;
      v[tok * d + c] = e;
    }
  }
  return tensor_from(v, l, d, t);
}

// `wanted` if the CPU family takes that many channels (SchemeFamily::accepts_channels), else the
// next count above it that it takes: shape loops written for any head_dim stay valid for
// families with a head_dim rule (turboquant: powers of two in [16, 512]).
inline bool takes_channels(std::string_view family, std::int64_t channels) {
  const SchemeFamily* f = find_scheme_family(family, Device::cpu);
  return f == nullptr || f->accepts_channels == nullptr || f->accepts_channels(channels);
}
inline std::int64_t accepted_channels(std::string_view family, std::int64_t wanted) {
  const SchemeFamily* f = find_scheme_family(family, Device::cpu);
  if (f == nullptr || f->accepts_channels == nullptr) return wanted;
  std::int64_t d = wanted;
  while (!f->accepts_channels(d)) ++d;
  return d;
}

inline OwnedTensor decompressed(const Scheme& s, const Compressed& c) {
  OwnedTensor out(c.dtype, c.tokens, c.channels);
  s.decompress(c, out.mut());
  return out;
}

// Half the spacing of dtype around y: what rounding an fp32 result to dtype may add.
inline float half_ulp(DType t, float y) {
  if (t == DType::f32) return 0.0f;
  const int mantissa_bits = t == DType::f16 ? 10 : 7;
  const int min_exponent = t == DType::f16 ? -14 : -126;
  int e = 0;
  std::frexp(y, &e);  // |y| in [2^(e-1), 2^e)
  const int exponent = std::max(e - 1, min_exponent);
  return std::ldexp(1.0f, exponent - mantissa_bits - 1);
}

// The bound of an asymmetric min/max quantizer with `levels` steps over [lo, hi]: half a
// step, plus the fp32 roundings of hi - lo, inv, (x - lo)*inv, the scale and the fma, each at
// most 2^-24 relative to a quantity below |lo| + |hi| (2^-20 covers them with margin).
inline float affine_bound(float lo, float hi, int levels) {
  return 0.5f * (hi - lo) / static_cast<float>(levels) + std::ldexp(std::fabs(lo) + std::fabs(hi), -20);
}

inline std::string hex_byte(std::uint8_t b) {
  const char* digits = "0123456789abcdef";
  return std::string{digits[b >> 4], digits[b & 15]};
}

}  // namespace dgq::test
