#include "dgq/tensor.hpp"

#include <cassert>
#include <cstring>
#include <string>

#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq {

std::size_t dtype_size(DType t) {
  switch (t) {
    case DType::f16:
    case DType::bf16:
      return 2;
    case DType::f32:
      return 4;
  }
  assert(false && "unknown dtype");
  return 0;
}

std::string_view dtype_name(DType t) {
  switch (t) {
    case DType::f16:
      return "f16";
    case DType::bf16:
      return "bf16";
    case DType::f32:
      return "f32";
  }
  return "?";
}

DType parse_dtype(std::string_view s) {
  if (s == "f16" || s == "fp16" || s == "float16") return DType::f16;
  if (s == "bf16" || s == "bfloat16") return DType::bf16;
  if (s == "f32" || s == "fp32" || s == "float32") return DType::f32;
  throw ParameterError("unknown dtype '" + std::string(s) + "' (expected f16, bf16 or f32)");
}

Tensor3::Tensor3(DType t, std::int64_t h, std::int64_t l, std::int64_t d)
    : dtype(t), heads(h), tokens(l), channels(d),
      storage(static_cast<std::size_t>(h * l * d) * dtype_size(t)) {}

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
    case DType::f32:
      std::memcpy(base + 4 * i, &value, 4);
      return;
  }
}

std::vector<float> to_float(ConstTensor t) {
  const std::int64_t n = t.tokens * t.channels;
  std::vector<float> out(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) out[i] = load_element(t, i);
  return out;
}

void from_float(const float* values, MutTensor t) {
  const std::int64_t n = t.tokens * t.channels;
  for (std::int64_t i = 0; i < n; ++i) store_element(t, i, values[i]);
}

}  // namespace dgq
