#include "dgq/tensor.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>
#include <sstream>
#include <string>
#include <string_view>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/non_finite_name.hpp"

#if defined(__AVX2__) && defined(__F16C__)
#include <immintrin.h>
#define DGQ_TENSOR_AVX2 1
#endif

namespace dgq {
namespace {

// Whole-buffer conversions with the same bits as load_element/store_element. The hardware
// conversions agree with dgq::rules except on NaN payloads (F16C quiets a signalling NaN and
// keeps payload bits that rules::float_to_half drops), so any group of 8 holding a NaN goes
// through the scalar rules.
void widen_halves(const std::uint16_t* h, float* f, std::int64_t n) {
  std::int64_t i = 0;
#ifdef DGQ_TENSOR_AVX2
  const __m128i exponent = _mm_set1_epi16(0x7c00);
  for (; i + 8 <= n; i += 8) {
    const __m128i x = _mm_loadu_si128(reinterpret_cast<const __m128i*>(h + i));
    if (_mm_movemask_epi8(_mm_cmpeq_epi16(_mm_and_si128(x, exponent), exponent)) != 0) {
      for (std::int64_t k = i; k < i + 8; ++k) f[k] = rules::half_to_float(h[k]);
      continue;
    }
    _mm256_storeu_ps(f + i, _mm256_cvtph_ps(x));
  }
#endif
  for (; i < n; ++i) f[i] = rules::half_to_float(h[i]);
}

void widen_bf16(const std::uint16_t* b, float* f, std::int64_t n) {
  std::int64_t i = 0;
#ifdef DGQ_TENSOR_AVX2
  for (; i + 8 <= n; i += 8) {
    const __m256i x = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(b + i)));
    _mm256_storeu_ps(f + i, _mm256_castsi256_ps(_mm256_slli_epi32(x, 16)));  // exact, NaN bits kept
  }
#endif
  for (; i < n; ++i) f[i] = rules::bf16_to_float(b[i]);
}

#ifdef DGQ_TENSOR_AVX2
bool has_nan(__m256 v) { return _mm256_movemask_ps(_mm256_cmp_ps(v, v, _CMP_UNORD_Q)) != 0; }
#endif

void narrow_halves(const float* f, std::uint16_t* h, std::int64_t n) {
  std::int64_t i = 0;
#ifdef DGQ_TENSOR_AVX2
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(f + i);
    if (has_nan(v)) {
      for (std::int64_t k = i; k < i + 8; ++k) h[k] = rules::float_to_half(f[k]);
      continue;
    }
    // Round to nearest even, subnormals included (F16C ignores FTZ/DAZ).
    _mm_storeu_si128(reinterpret_cast<__m128i*>(h + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
#endif
  for (; i < n; ++i) h[i] = rules::float_to_half(f[i]);
}

void narrow_bf16(const float* f, std::uint16_t* b, std::int64_t n) {
  std::int64_t i = 0;
#ifdef DGQ_TENSOR_AVX2
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_loadu_ps(f + i);
    if (has_nan(v)) {
      for (std::int64_t k = i; k < i + 8; ++k) b[k] = rules::float_to_bf16(f[k]);
      continue;
    }
    // rules::float_to_bf16 for non-NaN x: (x + 0x7fff + ((x >> 16) & 1)) >> 16, modulo 2^32.
    const __m256i u = _mm256_castps_si256(v);
    const __m256i odd = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    const __m256i r = _mm256_srli_epi32(_mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m128i packed = _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(b + i), packed);
  }
#endif
  for (; i < n; ++i) b[i] = rules::float_to_bf16(f[i]);
}

}  // namespace

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16: return 2;
    case DType::f32: return 4;
  }
  assert(false && "unknown dtype");
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16: return "f16";
    case DType::bf16: return "bf16";
    case DType::f32: return "f32";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  if (s == "f16" || s == "fp16" || s == "float16") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "f32" || s == "fp32" || s == "float32") return DType::f32;
  throw ParameterError("unknown dtype '" + std::string(s) + "' (expected f16, bf16 or f32)");
}

namespace {
// heads x tokens x channels x element size, refusing negative or overflowing shapes (a file
// may claim any shape; a signed overflow here would be undefined behaviour).
std::size_t tensor3_bytes(DType t, std::int64_t h, std::int64_t l, std::int64_t d) {
  std::int64_t n = 0;
  if (h < 0 || l < 0 || d < 0 || __builtin_mul_overflow(h, l, &n) || __builtin_mul_overflow(n, d, &n) ||
      __builtin_mul_overflow(n, static_cast<std::int64_t>(dtype_size(t)), &n))
    throw ParameterError("tensor shape [" + std::to_string(h) + ", " + std::to_string(l) + ", " + std::to_string(d) +
                         "] is negative or too large");
  return static_cast<std::size_t>(n);
}
}  // namespace

Tensor3::Tensor3(DType t, std::int64_t h, std::int64_t l, std::int64_t d)
    : dtype(t), heads(h), tokens(l), channels(d), storage(tensor3_bytes(t, h, l, d)) {}

ConstTensor Tensor3::head(std::int64_t h) const {
  assert(h >= 0 && h < heads);
  return {storage.data() + static_cast<std::size_t>(h) * head_bytes(), dtype, tokens, channels};
}

MutTensor Tensor3::head(std::int64_t h) {
  assert(h >= 0 && h < heads);
  return {storage.data() + static_cast<std::size_t>(h) * head_bytes(), dtype, tokens, channels};
}

float load_element(ConstTensor t, std::int64_t i) {
  const auto* base = static_cast<const unsigned char*>(t.data);
  switch (t.dtype) {
    case DType::f16: {
      std::uint16_t h;
      std::memcpy(&h, base + 2 * i, 2);
      return rules::half_to_float(h);
    }
    case DType::bf16: {
      std::uint16_t b;
      std::memcpy(&b, base + 2 * i, 2);
      return rules::bf16_to_float(b);
    }
    case DType::f32: {
      float f;
      std::memcpy(&f, base + 4 * i, 4);
      return f;
    }
  }
  return 0.0f;
}

void store_element(MutTensor t, std::int64_t i, float value) {
  auto* base = static_cast<unsigned char*>(t.data);
  switch (t.dtype) {
    case DType::f16: {
      const std::uint16_t h = rules::float_to_half(value);
      std::memcpy(base + 2 * i, &h, 2);
      return;
    }
    case DType::bf16: {
      const std::uint16_t b = rules::float_to_bf16(value);
      std::memcpy(base + 2 * i, &b, 2);
      return;
    }
    case DType::f32: std::memcpy(base + 4 * i, &value, 4); return;
  }
}

std::vector<float> to_float(ConstTensor t) {
  std::vector<float> out;
  to_float(t, out);
  return out;
}

void to_float(ConstTensor t, std::vector<float>& out) {
  out.resize(static_cast<std::size_t>(t.tokens * t.channels));
  to_float(t, out.data());
}

void to_float(ConstTensor t, float* out) {
  const std::int64_t n = t.tokens * t.channels;
  switch (t.dtype) {
    case DType::f16: widen_halves(static_cast<const std::uint16_t*>(t.data), out, n); break;
    case DType::bf16: widen_bf16(static_cast<const std::uint16_t*>(t.data), out, n); break;
    case DType::f32:
      if (n > 0) std::memcpy(out, t.data, static_cast<std::size_t>(n) * sizeof(float));
      break;
  }
}

void from_float(const float* values, MutTensor t) {
  const std::int64_t n = t.tokens * t.channels;
  switch (t.dtype) {
    case DType::f16: return narrow_halves(values, static_cast<std::uint16_t*>(t.data), n);
    case DType::bf16: return narrow_bf16(values, static_cast<std::uint16_t*>(t.data), n);
    case DType::f32:
      if (n > 0) std::memcpy(t.data, values, static_cast<std::size_t>(n) * sizeof(float));
      return;
  }
}

ConstTensor convert_tensor(ConstTensor x, DType to, std::vector<std::uint8_t>& out, std::string_view who,
                           std::int64_t first_token) {
  if (x.dtype == to) return x;
  const std::vector<float> values = to_float(x);
  out.resize(static_cast<std::size_t>(x.tokens * x.channels) * dtype_size(to));
  const MutTensor converted{out.data(), to, x.tokens, x.channels};
  from_float(values.data(), converted);
  if (to == DType::f32) return converted;
  // x is finite, so a non-finite element of the narrowed tensor is an overflow.
  const auto* h = reinterpret_cast<const std::uint16_t*>(out.data());
  const std::uint16_t exponent_mask = to == DType::f16 ? 0x7c00u : 0x7f80u;
  for (std::size_t i = 0; i < values.size(); ++i) {
    if ((h[i] & exponent_mask) != exponent_mask) continue;
    const auto index = static_cast<std::int64_t>(i);
    std::ostringstream value;
    value << values[i];
    throw InputError(std::string(who) + ": value " + value.str() + " at token " +
                     std::to_string(first_token + index / x.channels) + ", channel " +
                     std::to_string(index % x.channels) + " overflows " + std::string(dtype_name(to)) +
                     (to == DType::f16 ? " (the largest finite is 65504)" : " (the largest finite is 3.39e+38)"));
  }
  return converted;
}

void throw_non_finite(std::string_view who, float v, std::int64_t index, std::int64_t channels,
                      std::int64_t first_token) {
  throw InputError(std::string(who) + ": non-finite value " + std::string(non_finite_name(v)) + " at token " +
                   std::to_string(first_token + index / channels) + ", channel " + std::to_string(index % channels));
}

void check_finite(ConstTensor x, std::string_view who, std::int64_t first_token) {
  const std::int64_t n = x.tokens * x.channels;
  // Chunks of elements are tested with an OR over "exponent bits all set" (NaN/Inf), a loop
  // the compiler vectorizes; only a chunk that has one is searched for its first.
  constexpr std::int64_t kChunk = 4096;
  if (x.dtype == DType::f32) {
    const auto* f = static_cast<const float*>(x.data);
    for (std::int64_t start = 0; start < n; start += kChunk) {
      const std::int64_t end = std::min(n, start + kChunk);
      std::uint32_t any = 0;
      for (std::int64_t i = start; i < end; ++i)
        any |= (rules::float_bits(f[i]) & 0x7f800000u) == 0x7f800000u ? 1u : 0u;
      if (any == 0) continue;
      for (std::int64_t i = start; i < end; ++i) {
        if (!std::isfinite(f[i])) throw_non_finite(who, f[i], i, x.channels, first_token);
      }
    }
    return;
  }
  // fp16 and bf16 are non-finite exactly when all exponent bits are set.
  const std::uint16_t exponent_mask = x.dtype == DType::f16 ? 0x7c00u : 0x7f80u;
  const auto* h = static_cast<const std::uint16_t*>(x.data);
  for (std::int64_t start = 0; start < n; start += kChunk) {
    const std::int64_t end = std::min(n, start + kChunk);
    std::uint16_t any = 0;
    for (std::int64_t i = start; i < end; ++i) any |= (h[i] & exponent_mask) == exponent_mask ? 1u : 0u;
    if (any == 0) continue;
    for (std::int64_t i = start; i < end; ++i) {
      if ((h[i] & exponent_mask) == exponent_mask) {
        const float v = x.dtype == DType::f16 ? rules::half_to_float(h[i]) : rules::bf16_to_float(h[i]);
        throw_non_finite(who, v, i, x.channels, first_token);
      }
    }
  }
}

}  // namespace dgq
