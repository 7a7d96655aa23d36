// Decode attention on dgq2's and KIVI's packed codes with their span ranges: every width,
// granularity and range dtype, K and V apart, the Hadamard rotation, raw rows, and the heads it
// refuses (the checks: decode_attention_cases.hpp).
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

TEST_CASE("decode attention on dgq2 and KIVI codes: every width, granularity and range dtype, K and V apart",
          "[decode_attention][uniform]") {
  const std::int64_t K = ar::kChunkTokens;
  const DecodeAttentionShape several{2, 4, 128, 3 * K + 5};
  for (const char* spec : {"dgq2:bits=4", "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128",
                           "dgq2:kbits=3,vbits=2,markers=bitmap", "dgq2:bits=8,kgran=segment,vgran=segment-channel",
                           "dgq2:kbits=2,vbits=8,vgran=segment-channel-group,vgroup=64,range_dtype=fp32",
                           "dgq2:bits=3,kgran=segment,vgran=segment-channel-group,vgroup=32",
                           "kivi-4:group=32,residual=0", "kivi-2:group=32,residual=0"}) {
    DecodeCase c{StoredFormat::q8_0, false, several, Values::regimes};
    c.uniform_spec = spec;
    c.shape.tokens = spec[0] == 'k' ? 25 * 32 : several.tokens;  // KIVI: whole key groups
    const Problem p = make_problem(c, dgq::test::seed() + 61);
    if (std::string(spec).find("kgran=segment,") != std::string::npos || std::string(spec) == "dgq2:bits=4") {
      for (const auto& r : p.k.ranges) REQUIRE(r.edges.size() >= 3);  // several segments, per-token ranges exercised
    }
    check_case(c, dgq::test::seed() + 61);
  }
}

TEST_CASE("decode attention on dgq2 and KIVI codes: one token, chunk edges, head_dim 32 and 256, GQA 1 and 3",
          "[decode_attention][uniform]") {
  const std::int64_t K = ar::kChunkTokens;
  for (std::int64_t L : {std::int64_t{1}, std::int64_t{7}, K - 1, K, K + 1}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 3, 64, L}, Values::regimes};
    c.uniform_spec = "dgq2:kbits=3,vbits=4,kgran=segment-channel-group,kgroup=16";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(L));
  }
  for (int D : {32, 256}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 1, D, 320}};
    c.uniform_spec = "kivi-2:group=32,residual=0";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D));
    c.uniform_spec = "dgq2:bits=3";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D) + 1);
  }
  DecodeCase constant{StoredFormat::q8_0, false, {1, 4, 128, 520}, Values::constant_rows};
  constant.uniform_spec = "dgq2:bits=2";
  check_case(constant, dgq::test::seed() + 62);
  DecodeCase large{StoredFormat::q8_0, false, {1, 2, 128, 512}, Values::large};
  large.uniform_spec = "kivi-4:group=32,residual=0";
  check_case(large, dgq::test::seed() + 63);
}

// dgq2 reads rot itself (rot_on picks the roles); KIVI takes it as the scheme modifier, whose
// parts are KIVI's codes of the rotated tensor (a reader that ignores the modifier reads a rotated
// KIVI head in the wrong basis).
TEST_CASE("decode attention on dgq2 and KIVI codes with the Hadamard rotation: V only and both roles",
          "[decode_attention][uniform]") {
  for (const char* spec : {"dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v",
                           "dgq2:bits=4,rot=hadamard", "dgq2:bits=3,rot=hadamard,rot_on=k",
                           "kivi-4:group=32,residual=0,rot=hadamard", "kivi-2:group=64,residual=0,rot=hadamard"}) {
    const bool kivi = spec[0] == 'k';
    DecodeCase c{StoredFormat::q8_0, false, {2, 4, 128, 2 * ar::kChunkTokens + (kivi ? 64 : 9)}, Values::regimes};
    c.uniform_spec = spec;
    const Problem p = make_problem(c, dgq::test::seed() + 64);
    const std::string s(spec);
    REQUIRE(p.stored.k_rotated == (s.find("rot_on=v") == std::string::npos));
    REQUIRE(p.stored.v_rotated == (s.find("rot_on=k") == std::string::npos));
    check_case(c, dgq::test::seed() + 64);
  }
}

// Raw rows: dgq2's and KIVI's residual tokens (KIVI's keys also keep an incomplete group raw),
// read from the part "residual" after the codes; chunks that hold codes and raw rows, chunks of
// raw rows only, a head with no codes at all (L <= residual), K and V with different raw counts;
// bit for bit the twin (which decodes the raw rows as the input's values) on both paths.
TEST_CASE("decode attention on dgq2 and KIVI codes with raw rows: residual tokens and KIVI's incomplete key group",
          "[decode_attention][uniform]") {
  const std::int64_t K = ar::kChunkTokens;
  struct RawCase {
    const char* spec;
    std::int64_t tokens;
  };
  for (const RawCase& rc : {RawCase{"kivi-4:group=32,residual=32", 3 * K + 45},   // K: 13 + 32 raw, V: 32
                            RawCase{"kivi-2:group=128,residual=300", 2 * K + 7},  // raw rows over a chunk edge
                            RawCase{"kivi-4:group=32,residual=32", 20},           // no codes at all
                            RawCase{"dgq2:bits=4,residual=64", 2 * K + 9},
                            RawCase{"dgq2:kbits=4,vbits=2,kgran=segment-channel-group,kgroup=64,residual=16", K + 3}}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 3, 64, rc.tokens}, Values::regimes};
    c.uniform_spec = rc.spec;
    CAPTURE(rc.spec, rc.tokens);
    const Problem p = make_problem(c, dgq::test::seed() + 65);
    REQUIRE(p.stored.k_raw_tokens > 0);
    REQUIRE(p.stored.v_raw_tokens > 0);
    check_case(c, dgq::test::seed() + 65);
  }
  // KIVI keys keep the incomplete group: 45 = 13 + 32 raw keys, 32 raw values.
  DecodeCase kivi{StoredFormat::q8_0, false, {1, 1, 64, 3 * K + 45}};
  kivi.uniform_spec = "kivi-4:group=32,residual=32";
  const Problem p = make_problem(kivi, 66);
  REQUIRE(p.stored.k_raw_tokens == 45);
  REQUIRE(p.stored.v_raw_tokens == 32);
  // A cache that says it has raw rows must hand them over.
  dgq::cpu::StoredKv kv = p.stored;
  kv.v_raw.clear();
  float out[64];
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("raw rows of every"));
  kv = p.stored;
  kv.k_raw_tokens = p.c.shape.tokens + 1;
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("raw tokens must be in"));
  kv = p.stored;
  kv.k_raw_tokens = 44;  // the ranges then miss a token
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("do not cover"));
}

// fp32 input keeps fp32 raw rows: the vector path reads them as stored, bit for bit the scalar
// path, and the result is attention on the decompressed cache within rounding.
TEST_CASE("decode attention on KIVI codes with fp32 raw rows: both paths agree", "[decode_attention][uniform]") {
  const DecodeAttentionShape shape{1, 2, 64, ar::kChunkTokens + 40};
  const auto x = head_values({StoredFormat::q8_0, false, shape}, 67);  // fp32
  const auto scheme = dgq::make_scheme("kivi-4:group=32,residual=50");
  const dgq::Compressed k = scheme->compress(x.view(), dgq::TensorRole::key);
  const dgq::Compressed v = scheme->compress(x.view(), dgq::TensorRole::value);
  const dgq::cpu::StoredHead kh = dgq::cpu::packed_codes_head(k), vh = dgq::cpu::packed_codes_head(v);
  REQUIRE_FALSE(kh.ranges.f16);
  dgq::cpu::StoredKv kv;
  kv.format = kh.format;
  kv.k = {kh.codes};
  kv.v = {vh.codes};
  kv.k_ranges = {&kh.ranges};
  kv.v_ranges = {&vh.ranges};
  kv.k_raw = {kh.raw};
  kv.v_raw = {vh.raw};
  kv.k_raw_tokens = kh.raw_tokens;
  kv.v_raw_tokens = vh.raw_tokens;
  kv.raw_f16 = false;
  REQUIRE(kv.k_raw_tokens == 50 + (shape.tokens - 50) % 32);
  std::vector<float> q(static_cast<std::size_t>(shape.query_heads() * shape.head_dim));
  dgq::test::SplitMix64 rng(68);
  for (auto& value : q) value = rng.symmetric(1.0f);
  std::vector<float> best(q.size()), scalar(q.size());
  dgq::cpu::decode_attention(kv, shape, q.data(), 0.125f, best.data(), 2, DecodePath::best);
  dgq::cpu::decode_attention(kv, shape, q.data(), 0.125f, scalar.data(), 1, DecodePath::scalar);
  REQUIRE(std::memcmp(best.data(), scalar.data(), best.size() * sizeof(float)) == 0);
  // Against plain attention on the decompressed cache (fp32: the raw rows exactly).
  dgq::test::OwnedTensor kd(dgq::DType::f32, shape.tokens, shape.head_dim),
      vd(dgq::DType::f32, shape.tokens, shape.head_dim);
  scheme->decompress(k, kd.mut());
  scheme->decompress(v, vd.mut());
  const std::vector<float> kf = dgq::to_float(kd.view()), vf = dgq::to_float(vd.view());
  for (int h = 0; h < shape.group; ++h) {
    std::vector<double> s(static_cast<std::size_t>(shape.tokens));
    double m = -1e300, l = 0;
    for (std::int64_t t = 0; t < shape.tokens; ++t) {
      double dot = 0;
      for (int d = 0; d < shape.head_dim; ++d) dot += double(q[h * shape.head_dim + d]) * kf[t * shape.head_dim + d];
      s[t] = dot * 0.125;
      m = std::max(m, s[t]);
    }
    for (auto& e : s) l += (e = std::exp(e - m));
    for (int d = 0; d < shape.head_dim; ++d) {
      double o = 0;
      for (std::int64_t t = 0; t < shape.tokens; ++t) o += s[t] * vf[t * shape.head_dim + d];
      CHECK(std::abs(o / l - best[h * shape.head_dim + d]) <= 1e-4);
    }
  }
}

TEST_CASE("decode attention on dgq2 and KIVI codes: in-band markers, other families and mixed formats are refused",
          "[decode_attention][uniform]") {
  const auto x = head_values({StoredFormat::q8_0, false, {1, 1, 64, 40}}, 9);
  const auto head_of = [&x](const char* spec, dgq::TensorRole role = dgq::TensorRole::key) {
    return dgq::cpu::packed_codes_head(dgq::make_scheme(spec)->compress(x.view(), role));
  };
  REQUIRE(head_of("dgq2:bits=4,residual=8").raw_tokens == 8);
  REQUIRE_THROWS_WITH(head_of("dgq2:bits=4,residual=8,rot=hadamard"),
                      Catch::Contains("unrotated beside rotated codes"));
  REQUIRE_THROWS_WITH(head_of("dgq2:bits=4,markers=inband"), Catch::Contains("marks segments in-band"));
  // A token role has nothing to mark: in-band is table there (rule V5) and is read.
  REQUIRE(head_of("dgq2:bits=4,markers=inband", dgq::TensorRole::value).format == StoredFormat::uniform4);
  REQUIRE(head_of("kivi-4:group=32,residual=0").raw_tokens == 8);  // the incomplete key group
  REQUIRE(head_of("kivi-2:group=8,residual=16", dgq::TensorRole::value).raw_tokens == 16);
  REQUIRE(head_of("kivi-2:group=8,residual=0").ranges.edges.size() == 6);
  REQUIRE_THROWS_WITH(head_of("q8_0"), Catch::Contains("not 'q8_0'"));
  REQUIRE_THROWS_WITH(head_of("dgq"), Catch::Contains("dgq2, KIVI, TurboQuant or vLLM"));
  REQUIRE_THROWS_WITH(head_of("turboquant:bits=3,variant=prod"), Catch::Contains("QJL residual"));
  // A modifier the kernel does not read is refused by name, never ignored.
  REQUIRE_THROWS_WITH(head_of("kivi-4:group=8,residual=0,sink=4"), Catch::Contains("modifier sink="));
  REQUIRE_THROWS_WITH(head_of("dgq2:bits=4,sink=2"), Catch::Contains("modifier sink="));
  REQUIRE_THROWS_WITH(head_of("turboquant:bits=3,rot=hadamard"), Catch::Contains("before TurboQuant's own"));
  // Corrupt parts: a truncated codes part, a missing one, ranges or norms of the wrong size.
  const auto corrupt = [&x](const char* spec, const char* part, bool drop) {
    dgq::Compressed c = dgq::make_scheme(spec)->compress(x.view(), dgq::TensorRole::value);
    for (auto it = c.parts.begin(); it != c.parts.end(); ++it) {
      if (it->name != part) continue;
      if (drop) {
        c.parts.erase(it);
      } else {
        it->bytes.pop_back();
      }
      break;
    }
    return c;
  };
  REQUIRE_THROWS_AS(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "codes", false)), dgq::InputError);
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "codes", false)),
                      Catch::Contains("corrupt dgq2 data"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "ranges", false)),
                      Catch::Contains("corrupt dgq2 data"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "codes", true)),
                      Catch::Contains("part 'codes' is missing"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("kivi-4:group=8,residual=0", "ranges", false)),
                      Catch::Contains("corrupt KIVI data"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("kivi-4:group=8,residual=8", "residual", false)),
                      Catch::Contains("corrupt KIVI data: part 'residual'"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4,residual=8", "residual", true)),
                      Catch::Contains("part 'residual' is missing"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("turboquant:bits=3", "norms", false)),
                      Catch::Contains("corrupt TurboQuant data"));
  REQUIRE_THROWS_WITH(head_of("turboquant:bits=1"), Catch::Contains("2 to 4 bits"));
  // K and V of different formats: only between uniform widths.
  DecodeCase c{StoredFormat::q8_0, false, {1, 1, 64, 40}};
  c.uniform_spec = "dgq2:kbits=4,vbits=2";
  const Problem p = make_problem(c, 10);
  REQUIRE(p.stored.format == StoredFormat::uniform4);
  REQUIRE(p.stored.value_format() == StoredFormat::uniform2);
  dgq::cpu::StoredKv kv = p.stored;
  kv.format = StoredFormat::q4_0;
  float out[64];
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("only among the uniform and codebook formats"));
  kv = p.stored;
  kv.v_format = StoredFormat::dgq;
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("only among the uniform and codebook formats"));
  // A row stride shorter than a packed row of the format.
  kv = p.stored;
  kv.v_row_stride = 31;  // K: 64 channels of 4-bit codes take 32 bytes
  kv.k_row_stride = 31;
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("shorter than a row of uniform4 codes (32)"));
}

// TurboQuant_mse (formats codebook2 .. codebook4): the codes index the codebook of (head_dim,
// bits), times each token's norm, in the basis of the role's rotation Pi, which the kernel moves
// to the query (K) and the output (V); bit for bit the twin with the reference's Pi, and within
// the bound of plain attention on the decompressed cache (rounded to fp16 after rotating back).

}  // namespace decode_test
