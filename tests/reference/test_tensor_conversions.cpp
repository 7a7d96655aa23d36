// to_float / from_float (vectorised where F16C/AVX2 is compiled in) against the per-element
// rules (load_element / store_element): identical bits for every fp16 and bf16 pattern and for
// fp32 values at every rounding boundary, NaNs with payloads and signalling NaNs included.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>
#include <vector>

#include "dgq/element_rules.hpp"
#include "dgq/tensor.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace {

using dgq::DType;

// All 65536 16-bit patterns, in an order that puts NaNs next to ordinary values inside one
// group of 8, plus a tail that is not a multiple of 8.
std::vector<std::uint16_t> all_patterns() {
  std::vector<std::uint16_t> p;
  for (std::uint32_t i = 0; i < 65536; ++i) p.push_back(static_cast<std::uint16_t>(i * 40503u));  // odd: a bijection
  p.push_back(0x7c01);                                                                            // fp16 signalling NaN
  p.push_back(0x7f81);                                                                            // bf16 signalling NaN
  p.push_back(0x0001);
  return p;
}

std::vector<float> boundary_floats(std::uint64_t seed) {
  std::vector<float> v;
  const std::uint32_t specials[] = {0x00000000, 0x80000000, 0x00000001, 0x807fffff, 0x7f7fffff, 0xff7fffff,
                                    0x7f800000, 0xff800000, 0x7fc00000, 0xffc00001, 0x7f800001, 0xff812345,
                                    0x477fefff, 0x477ff000, 0x33000000, 0x33000001, 0x38800000, 0x387fffff,
                                    0x7f7f8000, 0x7f7f7fff, 0x3f808000, 0x3f818000};
  for (std::uint32_t s : specials) v.push_back(dgq::rules::bits_float(s));
  // Values near fp16 and bf16 rounding ties: low bits 0x1000 / 0x8000 +- 1 on random heads.
  dgq::test::SplitMix64 rng(seed);
  for (int i = 0; i < 20000; ++i) {
    const std::uint32_t head = static_cast<std::uint32_t>(rng.next());
    const std::uint32_t tails[] = {0x0fff, 0x1000, 0x1001, 0x3000, 0x7fff, 0x8000, 0x8001, 0x18000};
    v.push_back(dgq::rules::bits_float((head & ~0x1ffffu) | tails[i % 8]));
    v.push_back(dgq::rules::bits_float(head));
  }
  v.push_back(1.0f);  // odd length: a scalar tail
  return v;
}

}  // namespace

TEST_CASE("to_float: every fp16 and bf16 bit pattern widens as load_element does", "[tensor]") {
  const std::vector<std::uint16_t> patterns = all_patterns();
  const std::int64_t n = static_cast<std::int64_t>(patterns.size());
  for (const DType dt : {DType::f16, DType::bf16}) {
    CAPTURE(dgq::dtype_name(dt));
    const dgq::ConstTensor t{patterns.data(), dt, 1, n};
    const std::vector<float> fast = dgq::to_float(t);
    REQUIRE(fast.size() == patterns.size());
    for (std::int64_t i = 0; i < n; ++i) {
      CAPTURE(i, patterns[i]);
      REQUIRE(dgq::rules::float_bits(fast[i]) == dgq::rules::float_bits(dgq::load_element(t, i)));
    }
  }
}

TEST_CASE("from_float: fp32 values at rounding ties, extremes and NaNs narrow as store_element does", "[tensor]") {
  const std::vector<float> values = boundary_floats(dgq::test::seed());
  const std::int64_t n = static_cast<std::int64_t>(values.size());
  for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
    CAPTURE(dgq::dtype_name(dt));
    dgq::test::OwnedTensor fast(dt, 1, n), oracle(dt, 1, n);
    dgq::from_float(values.data(), fast.mut());
    for (std::int64_t i = 0; i < n; ++i) dgq::store_element(oracle.mut(), i, values[i]);
    REQUIRE(fast.bytes == oracle.bytes);
  }
}

TEST_CASE("to_float of an f32 tensor and from_float into one copy the bits", "[tensor]") {
  const std::vector<float> values = boundary_floats(dgq::test::seed() + 1);
  const dgq::ConstTensor t{values.data(), DType::f32, 1, static_cast<std::int64_t>(values.size())};
  const std::vector<float> wide = dgq::to_float(t);
  REQUIRE(std::memcmp(wide.data(), values.data(), 4 * values.size()) == 0);
}
