// K and V apart (dgq/kv_pair.hpp): the spec "K_SPEC/V_SPEC" gives each role its own scheme,
// with exactly the bytes each side gives alone; a pair of one scheme is that scheme. And the
// other tools' names of a family (registry aliases: llama.cpp's f16, vLLM's fp8).
#include "test_scheme_support.hpp"

#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/kv_pair.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;

TEST_CASE("split_kv_pair_spec: edge cases first", "[scheme][kv-pair]") {
  CHECK_FALSE(split_kv_pair_spec("q8_0").has_value());
  CHECK_FALSE(split_kv_pair_spec("").has_value());
  CHECK_THROWS_WITH(split_kv_pair_spec("/q4_0"), Contains("needs a scheme on both sides of '/'"));
  CHECK_THROWS_WITH(split_kv_pair_spec("q8_0/"), Contains("needs a scheme on both sides of '/'"));
  CHECK_THROWS_WITH(split_kv_pair_spec("q8_0/ "), Contains("needs a scheme on both sides of '/'"));
  CHECK_THROWS_WITH(split_kv_pair_spec("q8_0/q4_0/q4_1"), Contains("has one '/'"));
  const auto pair = split_kv_pair_spec("dgq2:kbits=4,vbits=4/q8_0:rot=hadamard");
  REQUIRE(pair.has_value());
  CHECK(pair->k == "dgq2:kbits=4,vbits=4");
  CHECK(pair->v == "q8_0:rot=hadamard");
  CHECK(join_kv_pair_spec("q8_0", "q8_0") == "q8_0");
  CHECK(join_kv_pair_spec("q8_0", "q4_0") == "q8_0/q4_0");
}

TEST_CASE("a pair of one scheme is that scheme, once canonical", "[scheme][kv-pair]") {
  CHECK(make_scheme("q8_0/q8_0")->spec() == "q8_0");
  CHECK(make_scheme("dgq/dgq:win=16")->spec() == make_scheme("dgq")->spec());
  CHECK(make_scheme("q8_0/q8_0")->family() == "q8_0");
}

TEST_CASE("a K/V pair names both sides in its spec and family", "[scheme][kv-pair]") {
  const auto pair = make_scheme("q8_0/kivi-2");
  CHECK(pair->spec() == "q8_0/" + make_scheme("kivi-2")->spec());
  CHECK(pair->family() == "q8_0/kivi-2");
  CHECK(scheme_family_of("q8_0/kivi-2:group=16") == "q8_0/kivi-2");
  CHECK(make_scheme(pair->spec())->spec() == pair->spec());  // the canonical spec round-trips
}

TEST_CASE("each role gets exactly the bytes its side gives alone", "[scheme][kv-pair]") {
  const auto pair = make_scheme("q8_0/dgq2:kbits=3,vbits=2");
  const auto k_side = make_scheme("q8_0"), v_side = make_scheme("dgq2:kbits=3,vbits=2");
  for (const std::int64_t tokens : {1, 33, 200}) {
    const OwnedTensor x = random_tensor(tokens, 64, static_cast<std::uint64_t>(tokens));
    const Compressed k = pair->compress(x.view(), TensorRole::key);
    const Compressed v = pair->compress(x.view(), TensorRole::value);
    CHECK(k.parts == k_side->compress(x.view(), TensorRole::key).parts);
    CHECK(v.parts == v_side->compress(x.view(), TensorRole::value).parts);
    // The two sides differ, so a pair that swapped them (or used one for both) fails here.
    CHECK(k.total_bytes() != v.total_bytes());
    CHECK(pair->planned_bytes(tokens, 64, DType::f16, TensorRole::key) ==
          k_side->planned_bytes(tokens, 64, DType::f16, TensorRole::key));
    CHECK(pair->planned_bytes(tokens, 64, DType::f16, TensorRole::value) ==
          v_side->planned_bytes(tokens, 64, DType::f16, TensorRole::value));
    CHECK(decompressed(*pair, v).bytes == decompressed(*v_side, v).bytes);
    CHECK(decompressed(*pair, k).bytes == decompressed(*k_side, k).bytes);
  }
}

TEST_CASE("a pair's causal rule is each side's", "[scheme][kv-pair][causal]") {
  const auto pair = make_scheme("kivi-4:group=16,residual=8/q4_0");
  const OwnedTensor x = random_tensor(70, 32, 7, DType::f32);
  const CausalTimeline k = causal_timeline(*pair, x.view(), TensorRole::key);
  const CausalTimeline v = causal_timeline(*pair, x.view(), TensorRole::value);
  const auto kivi = make_scheme("kivi-4:group=16,residual=8"), q4 = make_scheme("q4_0");
  CHECK(k.final_values == causal_timeline(*kivi, x.view(), TensorRole::key).final_values);
  CHECK(v.final_values == causal_timeline(*q4, x.view(), TensorRole::value).final_values);
  CHECK(k.schedule.final_tokens != v.schedule.final_tokens);  // KIVI keeps a raw tail, q4_0 none
  // The literal cache through the pair's causal form holds what the side's own cache holds.
  CausalCache through_pair(*pair, TensorRole::key, 32, DType::f32), alone(*kivi, TensorRole::key, 32, DType::f32);
  through_pair.append(x.view());
  alone.append(x.view());
  std::vector<float> read_pair, read_alone;
  through_pair.read(read_pair);
  alone.read(read_alone);
  CHECK(read_pair == read_alone);
  CHECK(through_pair.held_bytes() == alone.held_bytes());
}

TEST_CASE("a pair with a side that has no causal form is refused as that side is", "[scheme][kv-pair][causal]") {
  const auto pair = make_scheme("q8_0/fp8-e4m3");
  const OwnedTensor x = random_tensor(4, 32, 1, DType::f32);
  CHECK_NOTHROW(pair->causal_schedule(x.view(), TensorRole::key));
  CHECK_THROWS_AS(pair->causal_schedule(x.view(), TensorRole::value), ParameterError);
}

TEST_CASE("a bad side is reported as make_scheme reports it alone", "[scheme][kv-pair][errors]") {
  CHECK_THROWS_WITH(make_scheme("q8_0/q3_0"), Contains("unknown scheme family 'q3_0'"));
  CHECK_THROWS_WITH(make_scheme("dgq:group=0.5/q8_0"), Contains("did you mean 'group_ratio'?"));
}

TEST_CASE("other tools' names of a family make that family's scheme", "[scheme][registry][aliases]") {
  CHECK(make_scheme("f16")->spec() == "fp16");
  CHECK(make_scheme("fp8")->spec() == make_scheme("fp8-e4m3")->spec());
  CHECK(make_scheme("fp8_e4m3:scale=token")->spec() == make_scheme("fp8-e4m3:scale=token")->spec());
  CHECK(make_scheme("f16/fp8")->spec() == "fp16/" + make_scheme("fp8-e4m3")->spec());
  CHECK_THROWS_WITH(make_scheme("FP8"), Contains("did you mean 'fp8'?"));
  CHECK(find_scheme_family("fp8", Device::reference) == find_scheme_family("fp8-e4m3", Device::reference));
}
