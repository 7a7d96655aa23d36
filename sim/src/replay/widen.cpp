#include "replay/widen.hpp"

#include <cstdint>
#include <cstring>

#include "dgq/element_rules.hpp"

#if defined(__F16C__) && defined(__AVX__)
#include <immintrin.h>
#endif

namespace dgq::sim {

namespace {

void widen_f16(const std::uint16_t* in, float* out, std::size_t n) {
  std::size_t i = 0;
#if defined(__F16C__) && defined(__AVX__)
  // vcvtph2ps widens exactly (subnormals included: the conversion does not consult DAZ).
  for (; i + 8 <= n; i += 8) {
    const __m128i h = _mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i));
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(h));
  }
#endif
  for (; i < n; ++i) out[i] = rules::half_to_float(in[i]);
}

}  // namespace

void widen_to_float(ConstTensor t, std::vector<float>& out) {
  const auto n = static_cast<std::size_t>(t.tokens * t.channels);
  out.resize(n);
  switch (t.dtype) {
    case DType::f16:
      widen_f16(static_cast<const std::uint16_t*>(t.data), out.data(), n);
      return;
    case DType::f32:
      std::memcpy(out.data(), t.data, n * sizeof(float));
      return;
    case DType::bf16: {
      const auto* in = static_cast<const std::uint16_t*>(t.data);
      for (std::size_t i = 0; i < n; ++i) out[i] = rules::bf16_to_float(in[i]);
      return;
    }
  }
}

}  // namespace dgq::sim
