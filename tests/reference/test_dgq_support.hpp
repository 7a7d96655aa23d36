#pragma once
// Deterministic inputs for the DGQ tests: a tiny own PRNG (splitmix64) so inputs and golden
// digests do not depend on the standard library's distributions.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/dgq.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/scheme.hpp"
#include "dgq/tensor.hpp"
#include "owned_tensor.hpp"

namespace dgq::test {

struct SplitMix64 {
  std::uint64_t state;
  explicit SplitMix64(std::uint64_t seed) : state(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1) with 24 random bits: exact in fp32.
  float unit() { return static_cast<float>(next() >> 40) * 0x1p-24f; }
  // Uniform in [-a, a).
  float symmetric(float a) { return (unit() * 2.0f - 1.0f) * a; }
};

// Random values whose per-token spread is `amplitude(t)`: variance steps make segments.
template <class Amplitude>
OwnedTensor random_tensor(DType dt, std::int64_t tokens, std::int64_t channels, std::uint64_t seed,
                          Amplitude amplitude) {
  OwnedTensor x(dt, tokens, channels);
  SplitMix64 rng(seed);
  for (std::int64_t t = 0; t < tokens; ++t)
    for (std::int64_t d = 0; d < channels; ++d) x.set(t, d, rng.symmetric(amplitude(t)));
  return x;
}

inline OwnedTensor random_tensor(DType dt, std::int64_t tokens, std::int64_t channels, std::uint64_t seed,
                                 float amplitude = 4.0f) {
  return random_tensor(dt, tokens, channels, seed, [=](std::int64_t) { return amplitude; });
}

// FNV-1a, 64 bit, over raw bytes: the golden digests.
inline std::uint64_t fnv1a(const void* data, std::size_t n, std::uint64_t h = 0xcbf29ce484222325ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (std::size_t i = 0; i < n; ++i) {
    h ^= p[i];
    h *= 0x100000001b3ull;
  }
  return h;
}

inline std::string hex64(std::uint64_t v) {
  static const char* digits = "0123456789abcdef";
  std::string s(16, '0');
  for (int i = 15; i >= 0; --i, v >>= 4) s[i] = digits[v & 15];
  return s;
}

// FNV-1a over every part's bytes in order: the digest golden-vector tests pin.
inline std::string parts_digest(const Compressed& c) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (const Part& p : c.parts) h = fnv1a(p.bytes.data(), p.bytes.size(), h);
  return hex64(h);
}

// An independent decoder written straight from docs/spec.md rules 7-8, element by element,
// with the edges given explicitly (the round-trip tests compare dgq_decode with it).
inline OwnedTensor scalar_decode(const DgqV1Encoded& enc, const std::vector<std::uint32_t>& edges) {
  OwnedTensor out(enc.dtype, enc.tokens, enc.channels);
  const bool per_channel = enc.params.granularity == Granularity::segment_channel;
  for (int s = 0; s < enc.segments; ++s) {
    for (std::int64_t t = edges[s]; t < edges[s + 1]; ++t) {
      for (std::int64_t d = 0; d < enc.channels; ++d) {
        const std::size_t r = static_cast<std::size_t>(per_channel ? s * enc.channels + d : s);
        std::int8_t code = enc.codes[static_cast<std::size_t>(t * enc.channels + d)];
        if (enc.params.markers == Markers::inband && d == 0) code = rules::inband_unmark(code);
        const float v = rules::dequantize_code(code, enc.lo[r], rules::dequant_scale(enc.lo[r], enc.hi[r]));
        out.set(t, d, v);
      }
    }
  }
  return out;
}

inline DgqV1Params params_with(Granularity g, Markers m) {
  DgqV1Params p;
  p.granularity = g;
  p.markers = m;
  return p;
}

}  // namespace dgq::test
