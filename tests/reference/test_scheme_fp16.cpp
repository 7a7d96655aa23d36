// fp16: identity in the input dtype, bit for bit, extremes and subnormals included.
#include "test_scheme_support.hpp"

using namespace dgq;
using namespace dgq::test;

TEST_CASE("fp16 keeps every finite fp16 bit pattern", "[scheme][fp16][edge]") {
  // All 63488 finite fp16 values (the 2048 Inf/NaN patterns are rejected by compress).
  OwnedTensor x(DType::f16, 0, 0);
  std::vector<std::uint16_t> finite;
  for (std::uint32_t h = 0; h < 65536; ++h) {
    if ((h & 0x7c00u) != 0x7c00u) finite.push_back(static_cast<std::uint16_t>(h));
  }
  x = OwnedTensor(DType::f16, static_cast<std::int64_t>(finite.size() / 32), 32);
  std::memcpy(x.bytes.data(), finite.data(), x.bytes.size());
  const auto s = make_scheme("fp16");
  const Compressed c = s->compress(x.view(), TensorRole::key);
  CHECK(c.part_bytes("values") == x.bytes.size());
  CHECK(decompressed(*s, c).bytes == x.bytes);
}

TEST_CASE("fp16 round trip is bit-identical for every dtype and edge shape", "[scheme][fp16][roundtrip]") {
  const auto s = make_scheme("fp16");
  for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
    for (const std::int64_t l : kEdgeTokens) {
      for (const std::int64_t d : kEdgeChannels) {
        CAPTURE(dtype_name(t), l, d);
        OwnedTensor x = random_tensor(l, d, static_cast<std::uint64_t>(l + 1000 * d), t);
        if (x.size() >= 3) {
          store_element(x.mut(), 0, 65504.0f);
          store_element(x.mut(), 1, -65504.0f);
          store_element(x.mut(), 2, 6e-8f);
        }
        const Compressed c = s->compress(x.view(), TensorRole::value);
        CHECK(c.total_bytes() == x.bytes.size());
        CHECK(decompressed(*s, c).bytes == x.bytes);
      }
    }
  }
}
