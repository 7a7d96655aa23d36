// Scheme::compress_into must give exactly what compress gives, whatever the Compressed it is
// handed: empty, another scheme's result of another shape (its buffers too small or too
// large), or the previous result of the same shape (the reused buffers of a KV cache). Every
// registered family, DGQ included; schemes without an override use the default.
#include "test_scheme_support.hpp"

#include <limits>

#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

void check_same_as_compress(const Compressed& got, const Compressed& want) {
  CHECK(got.scheme == want.scheme);
  CHECK(got.tokens == want.tokens);
  CHECK(got.channels == want.channels);
  CHECK(got.dtype == want.dtype);
  CHECK(got.role == want.role);
  CHECK(got.parts == want.parts);
  CHECK(got.segment_edges() == want.segment_edges());
}

}  // namespace

TEST_CASE("compress_into equals compress into empty, foreign and reused outputs", "[scheme][registry]") {
  for (const std::string& f : scheme_families()) {
    for (const DType t : {DType::f16, DType::f32}) {
      CAPTURE(f, dtype_name(t));
      const auto s = make_scheme(f);
      const OwnedTensor x = random_tensor(97, accepted_channels(f, 80), 11, t);
      const OwnedTensor y = random_tensor(200, accepted_channels(f, 64), 12, t);  // another shape, more bytes
      const OwnedTensor z = random_tensor(5, accepted_channels(f, 40), 13, t);    // fewer bytes
      const Compressed want = s->compress(x.view(), TensorRole::key);

      Compressed out;
      s->compress_into(x.view(), TensorRole::key, out);
      check_same_as_compress(out, want);
      s->compress_into(x.view(), TensorRole::key, out);  // reused, same shape
      check_same_as_compress(out, want);
      for (const OwnedTensor* other : {&y, &z}) {
        Compressed foreign = make_scheme("int8-token")->compress(other->view(), TensorRole::value);
        s->compress_into(x.view(), TensorRole::key, foreign);
        check_same_as_compress(foreign, want);
        Compressed same_family = s->compress(other->view(), TensorRole::value);
        s->compress_into(x.view(), TensorRole::key, same_family);
        check_same_as_compress(same_family, want);
      }
    }
  }
}

TEST_CASE("compress_into reports NaN/Inf as compress does, also into a reused output", "[scheme][registry][errors]") {
  for (const std::string& f : {std::string("q8_0"), std::string("dgq")}) {
    CAPTURE(f);
    const auto s = make_scheme(f);
    OwnedTensor x = random_tensor(64, 64, 14);
    Compressed out = s->compress(x.view(), TensorRole::key);
    store_element(x.mut(), 40 * 64 + 7, std::numeric_limits<float>::quiet_NaN());
    CHECK_THROWS_WITH(s->compress_into(x.view(), TensorRole::key, out),
                      Catch::Matchers::Contains("non-finite value nan at token 40, channel 7"));
  }
}
