// Decode attention on TurboQuant's codebook codes and on vLLM's TurboQuant presets in their slots,
// and the heads it refuses (the checks: decode_attention_cases.hpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "decode_attention_cases.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/rotation.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace decode_test {

TEST_CASE("decode attention on TurboQuant codes: 2, 3 and 4 bits, seeds, head_dim 32 to 256, chunk edges",
          "[decode_attention][codebook]") {
  const std::int64_t K = ar::kChunkTokens;
  for (const char* spec : {"turboquant:bits=2", "turboquant:bits=3,seed=7", "turboquant:bits=4"}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 4, 128, 2 * K + 9}, Values::regimes};
    c.uniform_spec = spec;
    const Problem p = make_problem(c, dgq::test::seed() + 71);
    REQUIRE(p.stored.query_rotation);
    REQUIRE(p.stored.output_rotation);
    check_case(c, dgq::test::seed() + 71);
  }
  for (std::int64_t L : {std::int64_t{1}, K, K + 1}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 3, 64, L}};
    c.uniform_spec = "turboquant:bits=3";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(L));
  }
  for (int D : {32, 256}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 2, D, 300}};
    c.uniform_spec = "turboquant:bits=4,seed=3";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D));
  }
}

// vLLM's TurboQuant presets (docs/spec.md rules TV1-TV12): keys as codebook codes of the WHT-
// rotated key times each token's corrected norm, the rotation moved to the query; values as
// uniform codes with a per-token fp16 scale and zero; both read inside vLLM's slots, a slot apart.
// Bit for bit the twin (the reference kernels' WHT with the preset's signs), within the bound of
// attention on the decompressed cache (which rounds n * (c * inv) where the kernel rounds c * g).
TEST_CASE("decode attention on vLLM's TurboQuant presets: 4bit_nc, k3v4_nc, 3bit_nc, seeds, chunk edges",
          "[decode_attention][codebook]") {
  const std::int64_t K = ar::kChunkTokens;
  for (const char* spec : {"turboquant_4bit_nc", "turboquant_k3v4_nc:seed=7", "turboquant_3bit_nc:seed=1379"}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 4, 128, 2 * K + 9}, Values::regimes};
    c.uniform_spec = spec;
    CAPTURE(spec);
    const Problem p = make_problem(c, dgq::test::seed() + 73);
    REQUIRE(p.stored.query_rotation);
    REQUIRE_FALSE(p.stored.output_rotation);
    REQUIRE(p.stored.k_row_stride == (std::string(spec).find("4bit") != std::string::npos ? 68 : 52));
    check_case(c, dgq::test::seed() + 73);
  }
  for (std::int64_t L : {std::int64_t{1}, K, K + 1}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 3, 64, L}};
    c.uniform_spec = "turboquant_k3v4_nc";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(L));
  }
  for (int D : {32, 256}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 2, D, 300}};
    c.uniform_spec = "turboquant_3bit_nc";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D));
  }
}

TEST_CASE(
    "decode attention on vLLM's TurboQuant presets: FP8 keys, a rotation before the preset and corrupt slots are "
    "refused",
    "[decode_attention][codebook]") {
  const auto x = head_values({StoredFormat::q8_0, false, {1, 1, 64, 40}}, 11);
  const auto stored = [&x](const char* spec, dgq::TensorRole role) {
    return dgq::make_scheme(spec)->compress(x.view(), role);
  };
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(stored("turboquant_k8v4", dgq::TensorRole::key)),
                      Catch::Contains("FP8 keys"));
  REQUIRE(dgq::cpu::packed_codes_head(stored("turboquant_k8v4", dgq::TensorRole::value)).format ==
          StoredFormat::uniform4);
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(stored("turboquant_4bit_nc:rot=hadamard", dgq::TensorRole::key)),
                      Catch::Contains("before the preset's own"));
  dgq::Compressed c = stored("turboquant_4bit_nc", dgq::TensorRole::key);
  c.parts[0].bytes.pop_back();
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(c), Catch::Contains("part 'slots' has the wrong size"));
  c = stored("turboquant_4bit_nc", dgq::TensorRole::value);
  c.parts[0].bytes[32 + 1] = 0x7c;  // token 0's scale: fp16 infinity
  c.parts[0].bytes[32] = 0x00;
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(c), Catch::Contains("not finite (corrupt data)"));
}

}  // namespace decode_test
