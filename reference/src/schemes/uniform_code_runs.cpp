#include "schemes/uniform_code_runs.hpp"

#include "dgq/element_rules.hpp"

namespace dgq::schemes {
namespace {

template <class Src, class Lo, class Inv>
void nibbles(Src x, std::int64_t n, Lo lo_at, Inv inv_at, int levels, int offset, std::uint8_t* out) {
  std::int64_t j = 0;
  for (; j + 2 <= n; j += 2) {
    const unsigned c0 = uniform_code(x.s(j), lo_at.s(j), inv_at.s(j), levels) + offset;
    const unsigned c1 = uniform_code(x.s(j + 1), lo_at.s(j + 1), inv_at.s(j + 1), levels) + offset;
    out[j / 2] = static_cast<std::uint8_t>(c0 | c1 << 4);
  }
}

// Where nibbles reads its values: fp32, or fp16/bf16 widened exactly (exact).
struct FloatSrc {
  const float* p;
  float s(std::int64_t j) const { return p[j]; }
};
struct HalfSrc {
  const std::uint16_t* p;
  float s(std::int64_t j) const { return rules::half_to_float(p[j]); }
};
struct Bf16Src {
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

}  // namespace

void uniform_nibbles_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                 int offset, std::uint8_t* out) {
  nibbles(FloatSrc{x}, n, PerChannel{lo}, PerChannel{inv}, levels, offset, out);
}

void uniform_nibbles(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* out) {
  nibbles(FloatSrc{x}, n, Broadcast{lo}, Broadcast{inv}, levels, offset, out);
}

template <class Lo, class Inv>
void nibbles_from(const void* src, DType dt, std::int64_t n, Lo lo, Inv inv, int levels, int offset,
                  std::uint8_t* out) {
  switch (dt) {
    case DType::f16:
      return nibbles(HalfSrc{static_cast<const std::uint16_t*>(src)}, n, lo, inv, levels, offset, out);
    case DType::bf16:
      return nibbles(Bf16Src{static_cast<const std::uint16_t*>(src)}, n, lo, inv, levels, offset, out);
    case DType::f32:
      return nibbles(FloatSrc{static_cast<const float*>(src)}, n, lo, inv, levels, offset, out);
  }
}

void uniform_nibbles_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv,
                         bool per_channel, int levels, int offset, std::uint8_t* out) {
  if (per_channel) {
    nibbles_from(src, dt, n, PerChannel{lo}, PerChannel{inv}, levels, offset, out);
  } else {
    nibbles_from(src, dt, n, Broadcast{lo[0]}, Broadcast{inv[0]}, levels, offset, out);
  }
}

MinMax min_max(const float* x, std::int64_t n) {
  MinMax r;
  std::int64_t j = 0;
  for (; j < n; ++j) r.add(x[j]);
  return r;
}

void uniform_codes(const float* x, std::int64_t n, float lo, float inv, int levels, std::uint8_t* q) {
  std::int64_t j = 0;
  for (; j < n; ++j) q[j] = uniform_code(x[j], lo, inv, levels);
}

void uniform_codes_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                               int offset, std::uint8_t* q) {
  std::int64_t j = 0;
  for (; j < n; ++j) q[j] = static_cast<std::uint8_t>(uniform_code(x[j], lo[j], inv[j], levels) + offset);
}

void uniform_codes_offset(const float* x, std::int64_t n, float lo, float inv, int levels, int offset,
                          std::uint8_t* q) {
  std::int64_t j = 0;
  for (; j < n; ++j) q[j] = static_cast<std::uint8_t>(uniform_code(x[j], lo, inv, levels) + offset);
}

void rule7_codes(const float* x, std::int64_t n, float lo, float inv, std::uint8_t* q) {
  std::int64_t j = 0;
  for (; j < n; ++j) q[j] = static_cast<std::uint8_t>(rule7_code(x[j], lo, inv));
}

}  // namespace dgq::schemes
