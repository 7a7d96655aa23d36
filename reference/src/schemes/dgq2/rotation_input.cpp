// Rule V0.2: the input bound of dgq2's Hadamard rotation.
//
// Why this bound: the butterflies run unnormalised (rules::hadamard_butterfly) and 1/sqrt(n)
// is applied after the last stage, so an element of a block whose inputs are all below M in
// magnitude reaches at most n*M inside the transform and sqrt(n)*M after it (each rounding is
// monotone and n*pred(M) is a float, so the float sums stay within the exact bound). The decoder
// rotates back values of the stored ranges, up to sqrt(n)*M (times a few ulps: the fma of rule
// V5 may pass hi), and its sums reach n*sqrt(n)*M = 2^(1.5*log2 n)*M. With
// M = 2^(127 - ceil(1.5*log2 n)) that is at most 2^127: a factor of two below FLT_MAX covers the
// ulps. The encoder alone would allow 2^(128 - log2 n); the smaller bound makes every stored
// tensor decodable.
#include "dgq/schemes/dgq2/rotation_input.hpp"

#include <charconv>
#include <cmath>
#include <string>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq::schemes::dgq2 {

int rotation_bound_exponent(int block) {
  int log2n = 0;
  while ((1 << log2n) < block) ++log2n;
  return 127 - (3 * log2n + 1) / 2;
}

void check_rotation_input(ConstTensor x, std::int64_t rows, int block) {
  const int e = rotation_bound_exponent(block);
  // fp16's largest value, 65504 < 2^16, is below the bound of every block up to 2^73 channels.
  if (x.dtype == DType::f16 && e > 16) return;
  const float bound = std::ldexp(1.0f, e);
  const std::int64_t n = rows * x.channels;
  for (std::int64_t i = 0; i < n; ++i) {
    const float v = x.dtype == DType::f32    ? static_cast<const float*>(x.data)[i]
                    : x.dtype == DType::bf16 ? rules::bf16_to_float(static_cast<const std::uint16_t*>(x.data)[i])
                                             : rules::half_to_float(static_cast<const std::uint16_t*>(x.data)[i]);
    if (std::fabs(v) < bound) continue;
    char buf[32];
    const auto r = std::to_chars(buf, buf + sizeof buf, v);
    throw InputError("dgq2: value " + std::string(buf, r.ptr) + " at token " + std::to_string(i / x.channels) +
                     ", channel " + std::to_string(i % x.channels) +
                     " exceeds the Hadamard rotation's input bound |x| < 2^" + std::to_string(e) + " (" +
                     std::to_string(block) + "-channel blocks)");
  }
}

}  // namespace dgq::schemes::dgq2
