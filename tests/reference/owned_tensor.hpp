#pragma once
// A [tokens][channels] tensor that owns its bytes, in any dtype: the one the DGQ tests
// (test_dgq_support.hpp) and the scheme tests (test_scheme_support.hpp) both build inputs in.
#include <cstdint>
#include <vector>

#include "dgq/element_rules.hpp"
#include "dgq/tensor.hpp"

namespace dgq::test {

struct OwnedTensor {
  DType dtype = DType::f16;
  std::int64_t tokens = 0, channels = 0;
  std::vector<std::uint8_t> bytes;

  OwnedTensor(DType t, std::int64_t l, std::int64_t d)
      : dtype(t), tokens(l), channels(d), bytes(static_cast<std::size_t>(l * d) * dtype_size(t)) {}
  ConstTensor view() const { return {bytes.data(), dtype, tokens, channels}; }
  MutTensor mut() { return {bytes.data(), dtype, tokens, channels}; }
  std::int64_t size() const { return tokens * channels; }
  // Element i in token-major order, or (token, channel), widened to float.
  float at(std::int64_t i) const { return load_element(view(), i); }
  float get(std::int64_t t, std::int64_t d) const { return at(t * channels + d); }
  void set(std::int64_t t, std::int64_t d, float v) { store_element(mut(), t * channels + d, v); }
};

}  // namespace dgq::test
