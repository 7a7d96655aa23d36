#include "schemes/uniform_code_runs.hpp"

#include "dgq/element_rules.hpp"
#include "dgq/kernels/uniform_nibble_rows.hpp"

namespace dgq::schemes {
namespace {

struct ScalarWalk {
  using FloatSrc = nibble_sources::Float;
  using HalfSrc = nibble_sources::Half;
  using Bf16Src = nibble_sources::Bf16;
  using PerChannel = nibble_sources::PerChannel;
  using Broadcast = nibble_sources::Broadcast;

  template <class Src, class Lo, class Inv>
  static void nibbles(Src x, std::int64_t n, Lo lo_at, Inv inv_at, int levels, int offset, std::uint8_t* out) {
    scalar_nibbles(x, 0, n, lo_at, inv_at, levels, offset, out);
  }
};
using Rows = UniformNibbleRows<ScalarWalk>;

}  // namespace

void uniform_nibbles_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                 int offset, std::uint8_t* out) {
  Rows::per_channel(x, n, lo, inv, levels, offset, out);
}

void uniform_nibbles(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* out) {
  Rows::one_range(x, n, lo, inv, levels, offset, out);
}

void uniform_nibbles_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, bool per_channel,
                         int levels, int offset, std::uint8_t* out) {
  Rows::row(src, dt, n, lo, inv, per_channel, levels, offset, out);
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
