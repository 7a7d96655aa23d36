#pragma once
// Whole-run versions of dgq/kernels/uniform_codes.hpp's per-element rules, scalar: the
// reference's entries of dgq/kernels/cpu_kernels.hpp (cpu/ has the AVX2 ones, which
// give exactly the bytes of the scalar rules: the same sub, mul and rint per element (no
// fused multiply-add), clamps that commute with the conversion, and min/max whose only
// order dependence is the sign of a zero extreme, which MinMax's stored endpoints drop.
#include <cstdint>

#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/tensor.hpp"

namespace dgq::schemes {

// The extremes of x[0 .. n) (finite values): the stored_lo()/stored_hi() of adding each to a
// MinMax in order.
MinMax min_max(const float* x, std::int64_t n);

// q[j] = uniform_code(x[j], lo, inv, levels), levels <= 255.
void uniform_codes(const float* x, std::int64_t n, float lo, float inv, int levels, std::uint8_t* q);

// q[j] = uniform_code(x[j], lo[j], inv[j], levels) + offset (a range per channel), with
// levels + offset <= 255.
void uniform_codes_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                               int offset, std::uint8_t* q);

// q[j] = uniform_code(x[j], lo, inv, levels) + offset, levels + offset <= 255.
void uniform_codes_offset(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* q);

// The same codes packed two to a byte (4-bit codes, low nibble first: dgq2 rule V5 for a run
// that starts on a byte): out[k] = c(2k) | c(2k + 1) << 4 for k < n/2, where c(j) =
// uniform_code(x[j], lo[j], inv[j], levels) + offset; n even, levels + offset <= 15.
void uniform_nibbles_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                 int offset, std::uint8_t* out);
// ... with one range: c(j) = uniform_code(x[j], lo, inv, levels) + offset.
void uniform_nibbles(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* out);
// The same on a row of the input itself (n elements of dtype dt, widened exactly): with
// per_channel, lo[j]/inv[j] per element, else lo[0]/inv[0] for all.
void uniform_nibbles_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, bool per_channel,
                         int levels, int offset, std::uint8_t* out);

// q[j] = rule7_code(x[j], lo, inv) stored as its byte.
void rule7_codes(const float* x, std::int64_t n, float lo, float inv, std::uint8_t* q);

}  // namespace dgq::schemes
