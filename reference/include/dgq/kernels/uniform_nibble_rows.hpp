#pragma once
// How a run of 4-bit uniform codes reads its input, shared by the reference's scalar runs
// (reference/src/schemes/uniform_code_runs.cpp) and cpu/'s AVX2 ones
// (cpu/src/uniform_codes_avx2.cpp): the sources (a row in fp32, or fp16/bf16 widened exactly),
// the ranges (one per channel or one for all), and the entry points that pair them. A backend
// supplies only the walk over the run, `Walk::nibbles(src, n, lo, inv, levels, offset, out)`,
// and may extend each source with its vector loads (Walk's FloatSrc ... Broadcast, which
// derive from the scalar ones below and are built from the same single member).
#include <cstdint>

#include "dgq/element_rules.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/tensor.hpp"

namespace dgq::schemes::nibble_sources {

struct Float {
  const float* p;
  float s(std::int64_t j) const { return p[j]; }
};
struct Half {
  const std::uint16_t* p;
  float s(std::int64_t j) const { return rules::half_to_float(p[j]); }
};
struct Bf16 {
  const std::uint16_t* p;
  float s(std::int64_t j) const { return rules::bf16_to_float(p[j]); }
};

struct PerChannel {
  const float* p;
  float s(std::int64_t j) const { return p[j]; }
};
struct Broadcast {
  float x;
  float s(std::int64_t) const { return x; }
};

}  // namespace dgq::schemes::nibble_sources

namespace dgq::schemes {

// The codes of x[j .. n) (j even; an odd last element is left to the caller) packed two to a
// byte, low nibble first (dgq2 rule V5): the scalar walk, and the tail of a vector one.
template <class Src, class Lo, class Inv>
void scalar_nibbles(Src x, std::int64_t j, std::int64_t n, Lo lo_at, Inv inv_at, int levels, int offset,
                    std::uint8_t* out) {
  for (; j + 2 <= n; j += 2) {
    const unsigned c0 = uniform_code(x.s(j), lo_at.s(j), inv_at.s(j), levels) + offset;
    const unsigned c1 = uniform_code(x.s(j + 1), lo_at.s(j + 1), inv_at.s(j + 1), levels) + offset;
    out[j / 2] = static_cast<std::uint8_t>(c0 | c1 << 4);
  }
}

template <class Walk>
struct UniformNibbleRows {
  static void per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels, int offset,
                          std::uint8_t* out) {
    Walk::nibbles(typename Walk::FloatSrc{x}, n, typename Walk::PerChannel{lo}, typename Walk::PerChannel{inv}, levels,
                  offset, out);
  }

  static void one_range(const float* x, std::int64_t n, float lo, float inv, int levels, int offset,
                        std::uint8_t* out) {
    Walk::nibbles(typename Walk::FloatSrc{x}, n, typename Walk::Broadcast{lo}, typename Walk::Broadcast{inv}, levels,
                  offset, out);
  }

  static void row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, bool per_channel,
                  int levels, int offset, std::uint8_t* out) {
    if (per_channel) {
      from_dtype(src, dt, n, typename Walk::PerChannel{lo}, typename Walk::PerChannel{inv}, levels, offset, out);
    } else {
      from_dtype(src, dt, n, typename Walk::Broadcast{lo[0]}, typename Walk::Broadcast{inv[0]}, levels, offset, out);
    }
  }

 private:
  template <class Lo, class Inv>
  static void from_dtype(const void* src, DType dt, std::int64_t n, Lo lo, Inv inv, int levels, int offset,
                         std::uint8_t* out) {
    switch (dt) {
      case DType::f16:
        return Walk::nibbles(typename Walk::HalfSrc{static_cast<const std::uint16_t*>(src)}, n, lo, inv, levels, offset,
                             out);
      case DType::bf16:
        return Walk::nibbles(typename Walk::Bf16Src{static_cast<const std::uint16_t*>(src)}, n, lo, inv, levels, offset,
                             out);
      case DType::f32:
        return Walk::nibbles(typename Walk::FloatSrc{static_cast<const float*>(src)}, n, lo, inv, levels, offset, out);
    }
  }
};

}  // namespace dgq::schemes
