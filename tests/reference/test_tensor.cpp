// Tensor views and element conversion (rule 0 at the tensor level).
#include <catch2/catch.hpp>

#include <cstring>

#include "dgq/errors.hpp"
#include "dgq/tensor.hpp"

TEST_CASE("dtype names, sizes and parsing; unknown names are a ParameterError", "[tensor]") {
  REQUIRE(dgq::dtype_size(dgq::DType::f16) == 2);
  REQUIRE(dgq::dtype_size(dgq::DType::bf16) == 2);
  REQUIRE(dgq::dtype_size(dgq::DType::f32) == 4);
  for (auto t : {dgq::DType::f16, dgq::DType::bf16, dgq::DType::f32})
    REQUIRE(dgq::parse_dtype(dgq::dtype_name(t)) == t);
  REQUIRE(dgq::parse_dtype("float16") == dgq::DType::f16);
  REQUIRE_THROWS_AS(dgq::parse_dtype("f64"), dgq::ParameterError);
  REQUIRE_THROWS_WITH(dgq::parse_dtype("int8"), Catch::Contains("int8"));
}

TEST_CASE("load_element/store_element: fp16 and bf16 bit patterns, fp32 passthrough", "[tensor]") {
  std::uint16_t h[3] = {0x3c00, 0xc000, 0x0001};  // 1, -2, smallest subnormal
  const dgq::ConstTensor half{h, dgq::DType::f16, 1, 3};
  REQUIRE(dgq::load_element(half, 0) == 1.0f);
  REQUIRE(dgq::load_element(half, 1) == -2.0f);
  REQUIRE(dgq::load_element(half, 2) == 0x1p-24f);

  std::uint16_t b[2] = {};
  const dgq::MutTensor bf{b, dgq::DType::bf16, 1, 2};
  dgq::store_element(bf, 0, 1.0f + 0x1p-8f);  // tie between 1 and 1 + 2^-7: even (1)
  dgq::store_element(bf, 1, -3.0f);
  REQUIRE(b[0] == 0x3f80);
  REQUIRE(b[1] == 0xc040);

  float f[2] = {};
  const dgq::MutTensor fm{f, dgq::DType::f32, 1, 2};
  dgq::store_element(fm, 1, 1e-40f);  // fp32 denormals are kept
  REQUIRE(dgq::load_element(fm, 1) == 1e-40f);
}

TEST_CASE("to_float/from_float round-trip a fp16 matrix exactly", "[tensor]") {
  std::uint16_t h[6] = {0x0000, 0x8000, 0x7bff, 0xfbff, 0x0200, 0x3555};
  const dgq::ConstTensor in{h, dgq::DType::f16, 2, 3};
  const std::vector<float> f = dgq::to_float(in);
  REQUIRE(f.size() == 6);
  REQUIRE(f[2] == 65504.0f);
  REQUIRE(f[3] == -65504.0f);
  std::uint16_t back[6] = {};
  dgq::from_float(f.data(), dgq::MutTensor{back, dgq::DType::f16, 2, 3});
  REQUIRE(std::memcmp(back, h, sizeof h) == 0);
}

TEST_CASE("Tensor3: heads are consecutive [tokens][channels] blocks", "[tensor]") {
  dgq::Tensor3 t(dgq::DType::f32, 3, 4, 5);
  REQUIRE(t.storage.size() == 3 * 4 * 5 * 4);
  REQUIRE(t.head_bytes() == 4 * 5 * 4);
  const dgq::MutTensor h2 = t.head(2);
  REQUIRE(h2.tokens == 4);
  REQUIRE(h2.channels == 5);
  dgq::store_element(h2, 0, 7.0f);
  float first;
  std::memcpy(&first, t.storage.data() + 2 * t.head_bytes(), 4);
  REQUIRE(first == 7.0f);
}
