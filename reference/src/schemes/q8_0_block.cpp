// ggml's q8_0 runtime quantizer, scalar but with the AVX2 path's arithmetic: amax in fp32,
// d = amax/127 rounded to fp16 (nearest-even, F16C), id = 127/amax, q = nearbyint(x*id).
#include <cmath>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::q8_0 {

void quantize_block(const float* x, int n, Block& block) {
  float amax = 0.0f;
  for (int j = 0; j < n; ++j) amax = std::fabs(x[j]) > amax ? std::fabs(x[j]) : amax;  // finite input: same as fmax, inlined
  block.d = rules::float_to_half(amax / 127.0f);
  const float id = amax != 0.0f ? 127.0f / amax : 0.0f;
  for (int j = 0; j < kBlockValues; ++j) {
    // |x*id| <= 127 up to one rounding, so the int8 conversion never saturates.
    block.qs[j] = j < n ? static_cast<std::int8_t>(std::nearbyint(x[j] * id)) : std::int8_t{0};
  }
}

void dequantize_block(const Block& block, int n, float* out) {
  const float d = rules::half_to_float(block.d);
  for (int j = 0; j < n; ++j) out[j] = static_cast<float>(block.qs[j]) * d;
}

}  // namespace dgq::q8_0
