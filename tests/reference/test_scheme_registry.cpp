// make_scheme, spec round trips and the contract every baseline shares: exact planned bytes,
// empty tensors, NaN/Inf and corrupt-part errors, inputs left unchanged.
#include "test_scheme_support.hpp"

#include <limits>

#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;

TEST_CASE("scheme_families lists every baseline family", "[scheme][registry]") {
  const std::vector<std::string> families = scheme_families();
  for (const std::string& f : kBaselineFamilies) {
    CAPTURE(f);
    CHECK(std::find(families.begin(), families.end(), f) != families.end());
  }
}

TEST_CASE("make_scheme rejects unknown families and keys by name", "[scheme][registry][errors]") {
  CHECK_THROWS_WITH(make_scheme("int3"), Contains("unknown scheme family 'int3'"));
  CHECK_THROWS_AS(make_scheme(""), ParameterError);
  CHECK_THROWS_WITH(make_scheme("fp16:bits=4"), Contains("unknown parameter 'bits'"));
  CHECK_THROWS_WITH(make_scheme("kivi-2:groups=32"), Contains("unknown parameter 'groups'"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group=0"), Contains("'group'"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group=abc"), Contains("is not an integer"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:residual=-1"), Contains("'residual'"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group=32,group=16"), Contains("given twice"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:group"), Contains("not key=value"));
  CHECK_THROWS_WITH(make_scheme("kivi-4:=3"), Contains("has no key"));
  CHECK_THROWS_AS(make_scheme("kivi-4:group=32,"), ParameterError);
}

TEST_CASE("every family's canonical spec round-trips through make_scheme", "[scheme][registry]") {
  for (const std::string& f : scheme_families()) {
    CAPTURE(f);
    const auto s = make_scheme(f);
    CHECK(s->family() == f);
    const auto again = make_scheme(s->spec());
    CHECK(again->spec() == s->spec());
    CHECK(again->family() == f);
  }
}

TEST_CASE("kivi spec records its parameters and keeps non-default ones", "[scheme][registry]") {
  CHECK(make_scheme("kivi-2")->spec() == "kivi-2:group=32,residual=32");
  const auto s = make_scheme("kivi-4: residual=128 , group=16");
  CHECK(s->spec() == "kivi-4:group=16,residual=128");
  CHECK(make_scheme(s->spec())->spec() == s->spec());
}

TEST_CASE("planned_bytes equals the stored bytes of every baseline at every edge shape",
          "[scheme][registry][bytes]") {
  for (const std::string& f : kBaselineFamilies) {
    const auto s = make_scheme(f);
    for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
      for (const std::int64_t l : kEdgeTokens) {
        for (const std::int64_t d : kEdgeChannels) {
          for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
            CAPTURE(f, dtype_name(t), l, d, role_name(role));
            const OwnedTensor x = random_tensor(l, d, static_cast<std::uint64_t>(l * 131 + d), t);
            const Compressed c = s->compress(x.view(), role);
            CHECK(c.total_bytes() == s->planned_bytes(l, d, t, role));
            CHECK(c.scheme == s->spec());
            CHECK(c.tokens == l);
            CHECK(c.channels == d);
            CHECK(c.dtype == t);
            CHECK(c.role == role);
          }
        }
      }
    }
  }
}

TEST_CASE("an empty tensor compresses to empty parts and decompresses", "[scheme][registry][edge]") {
  for (const std::string& f : kBaselineFamilies) {
    const auto s = make_scheme(f);
    for (const auto& [l, d] : {std::pair<std::int64_t, std::int64_t>{0, 128}, {0, 1}, {5, 0}}) {
      CAPTURE(f, l, d);
      OwnedTensor x(DType::f16, l, d);
      const Compressed c = s->compress(x.view(), TensorRole::key);
      CHECK(c.total_bytes() == 0);
      CHECK_FALSE(c.parts.empty());
      CHECK(s->planned_bytes(l, d, DType::f16, TensorRole::key) == 0);
      OwnedTensor out(DType::f16, l, d);
      CHECK_NOTHROW(s->decompress(c, out.mut()));
    }
  }
}

TEST_CASE("NaN and Inf are rejected naming token and channel", "[scheme][registry][errors]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (const std::string& f : kBaselineFamilies) {
    const auto s = make_scheme(f);
    for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
      for (const float bad : {nan, inf, -inf}) {
        CAPTURE(f, dtype_name(t), bad);
        OwnedTensor x = random_tensor(40, 33, 7, t);
        store_element(x.mut(), 3 * 33 + 17, bad);
        CHECK_THROWS_AS(s->compress(x.view(), TensorRole::value), InputError);
        CHECK_THROWS_WITH(s->compress(x.view(), TensorRole::value), Contains("token 3, channel 17"));
        CHECK_THROWS_WITH(s->compress(x.view(), TensorRole::value), Contains(std::isnan(bad) ? "nan" : "inf"));
      }
    }
  }
}

TEST_CASE("decompress rejects a part of the wrong size, naming part and sizes", "[scheme][registry][errors]") {
  for (const std::string& f : kBaselineFamilies) {
    const auto s = make_scheme(f);
    const OwnedTensor x = random_tensor(70, 65, 11);
    const Compressed good = s->compress(x.view(), TensorRole::key);
    for (std::size_t p = 0; p < good.parts.size(); ++p) {
      CAPTURE(f, good.parts[p].name);
      REQUIRE_FALSE(good.parts[p].bytes.empty());
      Compressed shorter = good;
      shorter.parts[p].bytes.pop_back();
      OwnedTensor out(x.dtype, x.tokens, x.channels);
      const std::string expected = "part '" + good.parts[p].name + "' has " +
                                   std::to_string(good.parts[p].bytes.size() - 1) + " bytes, expected " +
                                   std::to_string(good.parts[p].bytes.size());
      CHECK_THROWS_AS(s->decompress(shorter, out.mut()), InputError);
      CHECK_THROWS_WITH(s->decompress(shorter, out.mut()), Contains(expected));
      Compressed missing = good;
      missing.parts.erase(missing.parts.begin() + static_cast<std::ptrdiff_t>(p));
      CHECK_THROWS_WITH(s->decompress(missing, out.mut()), Contains("part '" + good.parts[p].name + "' is missing"));
    }
  }
}

TEST_CASE("decompress rejects another scheme's data and a mismatched output", "[scheme][registry][errors]") {
  const OwnedTensor x = random_tensor(8, 32, 3);
  const Compressed c = make_scheme("int8-token")->compress(x.view(), TensorRole::key);
  OwnedTensor out(DType::f16, 8, 32);
  CHECK_THROWS_WITH(make_scheme("q8_0")->decompress(c, out.mut()), Contains("made by scheme 'int8-token'"));
  OwnedTensor wrong_shape(DType::f16, 8, 31);
  CHECK_THROWS_AS(make_scheme("int8-token")->decompress(c, wrong_shape.mut()), InputError);
  OwnedTensor wrong_dtype(DType::f32, 8, 32);
  CHECK_THROWS_AS(make_scheme("int8-token")->decompress(c, wrong_dtype.mut()), InputError);
}

TEST_CASE("compress leaves its input unchanged and is deterministic", "[scheme][registry]") {
  for (const std::string& f : kBaselineFamilies) {
    CAPTURE(f);
    const auto s = make_scheme(f);
    const OwnedTensor x = random_tensor(97, 80, 5);
    const std::vector<std::uint8_t> before = x.bytes;
    const Compressed a = s->compress(x.view(), TensorRole::value);
    const Compressed b = s->compress(x.view(), TensorRole::value);
    CHECK(x.bytes == before);
    CHECK(a.parts == b.parts);
  }
}
