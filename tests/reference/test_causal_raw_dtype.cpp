// Rule C9 (docs/spec.md, "Causal caches"): the raw dtype. Scheme::keeps_raw_rows agrees with the
// rules for every registered family (a raw tail, or rows stored as they came); a role that keeps
// rows raw holds every row in the raw dtype (fp16, bf16) and is counted at its size, pinned to
// each windowed family's own rule by hand; the per-token formats keep their input; a value the raw
// dtype cannot hold is refused on append, leaving the cache as it was.
#include <limits>

#include "test_causal_support.hpp"

namespace dgq::test {
namespace {

constexpr std::int64_t kTokens = 300;  // past KVarN's 128-token sink block and its first tile

// What the rules say, read off the schedule and the byte count: a raw tail somewhere on a
// 300-token regime tensor, or rows stored as they came (planned_bytes follows the input dtype).
bool rules_keep_raw_rows(const Scheme& s, TensorRole role, std::int64_t d, bool has_causal_form) {
  const bool stored_as_they_came =
      s.planned_bytes(kTokens, d, DType::f16, role) != s.planned_bytes(kTokens, d, DType::f32, role);
  if (stored_as_they_came || !has_causal_form) return stored_as_they_came;
  const OwnedTensor x = causal_regime_tensor(kTokens, d, 41);
  const CausalSchedule schedule = s.causal_schedule(x.view(), role);
  for (std::size_t t = 0; t < schedule.final_tokens.size(); ++t)
    if (schedule.final_tokens[t] != t + 1) return true;
  return false;
}

// x's rows converted to `dtype` (rule 0), as the cache of a role that keeps rows raw holds them.
OwnedTensor converted(const OwnedTensor& x, DType dtype) {
  return tensor_from(to_float(x.view()), x.tokens, x.channels, dtype);
}

// Appends x token by token to a cache of fp32 rows held in raw_dtype; after every append the
// bytes held must be held_by_rule(T) and the rows read the timeline of x as held.
void check_held_bytes(const std::string& spec, TensorRole role, DType raw_dtype,
                      const std::function<std::uint64_t(const Scheme&, std::int64_t)>& held_by_rule) {
  const auto s = make_scheme(spec);
  REQUIRE(s->keeps_raw_rows(role));
  const OwnedTensor x = causal_regime_tensor(kTokens, 64, 77, DType::f32);
  const OwnedTensor held = converted(x, raw_dtype);
  CausalCache cache(*s, role, 64, DType::f32, raw_dtype);
  REQUIRE(cache.row_dtype() == raw_dtype);
  const CausalTimeline timeline = causal_timeline(*s, x.view(), role, raw_dtype);
  REQUIRE(timeline.row_dtype == raw_dtype);
  REQUIRE(causal_bits(timeline.held_rows) == causal_bits(to_float(held.view())));
  std::vector<float> got;
  for (std::int64_t t = 0; t < kTokens; ++t) {
    CAPTURE(spec, role_name(role), dtype_name(raw_dtype), t);
    cache.append(causal_rows(x, t, 1));
    REQUIRE(cache.held_bytes() == held_by_rule(*s, t));
    REQUIRE(cache.held_bytes() == causal_held_bytes(timeline.schedule, t, 64, raw_dtype));
  }
  // What attention reads: the final values of the rows as held, then the rows as held.
  cache.read(got);
  const auto final_rows = static_cast<std::int64_t>(timeline.schedule.final_tokens.back());
  std::vector<float> want(timeline.final_values.begin(), timeline.final_values.begin() + final_rows * 64);
  want.insert(want.end(), timeline.held_rows.begin() + final_rows * 64, timeline.held_rows.end());
  CHECK(causal_bits(got) == causal_bits(want));
}

}  // namespace

TEST_CASE("causal raw dtype: keeps_raw_rows says what the rules say, for every registered family", "[causal][raw]") {
  for (const std::string& spec : causal_specs()) {
    const auto s = make_scheme(spec);
    const SchemeFamily* family = find_scheme_family(scheme_family_of(spec), Device::cpu);
    REQUIRE(family != nullptr);
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      CAPTURE(spec, role_name(role));
      if (family->stores_input_bytes) {  // fp16: its dtype is its format, not a raw window
        CHECK_FALSE(s->keeps_raw_rows(role));
        continue;
      }
      const std::int64_t d = causal_channels(spec).front();
      CHECK(s->keeps_raw_rows(role) == rules_keep_raw_rows(*s, role, d, kCausalRefused.count(spec) == 0));
    }
  }
  // Each kind of rule, by name: the windowed families and modifiers, and their per-token peers.
  for (const std::string spec : {"dgq", "dgq2", "kivi-4", "kvarn", "q4_0:sink=4", "q4_0:rot=hadamard,sink=4",
                                 "fp8-e4m3:scale=prefix", "nvfp4", "dgq2:residual=8,kgran=token"}) {
    CAPTURE(spec);
    CHECK(make_scheme(spec)->keeps_raw_rows(TensorRole::key));
  }
  for (const std::string spec : {"q8_0", "q4_0:rot=hadamard", "dgq3", "turboquant_4bit_nc", "fp8-e4m3",
                                 "fp8-e4m3:scale=prefix,prefix=1", "nvfp4:scale=token", "int4_per_token_head"}) {
    CAPTURE(spec);
    CHECK_FALSE(make_scheme(spec)->keeps_raw_rows(TensorRole::key));
  }
  // Per role: dgq2's token-granularity values without residual, KIVI's values without residual.
  CHECK_FALSE(make_scheme("dgq2")->keeps_raw_rows(TensorRole::value));
  CHECK(make_scheme("kivi-2:group=16,residual=0")->keeps_raw_rows(TensorRole::key));
  CHECK_FALSE(make_scheme("kivi-2:group=16,residual=0")->keeps_raw_rows(TensorRole::value));
  CHECK(make_scheme("q8_0/kivi-4")->keeps_raw_rows(TensorRole::value));
  CHECK_FALSE(make_scheme("q8_0/kivi-4")->keeps_raw_rows(TensorRole::key));
}

TEST_CASE("causal raw dtype: the rows a windowed family holds raw are counted at 2 bytes in fp16 and bf16, by its rule",
          "[causal][raw]") {
  const std::uint64_t row16 = 64 * 2;  // one raw row of 64 channels in fp16 or bf16
  for (const DType raw : {DType::f16, DType::bf16}) {
    // KIVI (rule C2): F(T) = floor(max(T + 1 - R, 0) / G) * G for keys, max(T + 1 - R, 0) for values.
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      check_held_bytes("kivi-4:group=32,residual=32", role, raw, [&](const Scheme& s, std::int64_t t) {
        const std::int64_t out = std::max<std::int64_t>(t + 1 - 32, 0);
        const std::int64_t f = role == TensorRole::key ? out / 32 * 32 : out;
        return s.causal_form()->planned_bytes(f, 64, raw, role) + static_cast<std::uint64_t>(t + 1 - f) * row16;
      });
    }
    // dgq2 per token with a residual (rule C4): F(T) = max(T + 1 - R, 0), the residual raw.
    check_held_bytes("dgq2:kgran=token,vgran=token,residual=8", TensorRole::key, raw,
                     [&](const Scheme& s, std::int64_t t) {
                       const std::int64_t f = std::max<std::int64_t>(t + 1 - 8, 0);
                       return s.causal_form()->planned_bytes(f, 64, raw, TensorRole::key) +
                              static_cast<std::uint64_t>(t + 1 - f) * row16;
                     });
    // KVarN (rule C7): the sink block final on append and stored as it came, then tiles of G.
    check_held_bytes("kvarn:group=64,sink=16", TensorRole::value, raw, [&](const Scheme& s, std::int64_t t) {
      const std::int64_t f = t < 16 ? t + 1 : 16 + (t + 1 - 16) / 64 * 64;
      return s.planned_bytes(f, 64, raw, TensorRole::value) + static_cast<std::uint64_t>(t + 1 - f) * row16;
    });
    // sink=N (rule C6) around a per-token format: n sinks of 2 bytes per element, then q4_0's
    // blocks (18 bytes per 32 values), nothing raw after the sinks.
    check_held_bytes("q4_0:sink=4", TensorRole::key, raw, [&](const Scheme&, std::int64_t t) {
      const std::int64_t sinks = std::min<std::int64_t>(t + 1, 4);
      return static_cast<std::uint64_t>(sinks) * row16 + static_cast<std::uint64_t>(t + 1 - sinks) * (64 / 32 * 18);
    });
  }
}

TEST_CASE("causal raw dtype: fp32 is the cache as it was; per-token formats keep their input", "[causal][raw]") {
  const OwnedTensor x = causal_regime_tensor(100, 64, 5, DType::f32);
  // fp32 raw rows of fp32 input: the same cache, byte for byte, as no raw dtype at all.
  for (const std::string spec : {"kivi-4", "dgq", "kvarn:group=32,sink=8"}) {
    CAPTURE(spec);
    const auto s = make_scheme(spec);
    CausalCache plain(*s, TensorRole::key, 64, DType::f32), fp32(*s, TensorRole::key, 64, DType::f32, DType::f32);
    plain.append(x.view());
    fp32.append(x.view());
    std::vector<float> a, b;
    plain.read(a);
    fp32.read(b);
    CHECK(causal_bits(a) == causal_bits(b));
    CHECK(plain.held_bytes() == fp32.held_bytes());
  }
  // A per-token format holds its fp32 input whatever the raw dtype: its bytes and values unchanged.
  for (const std::string spec : {"q8_0", "q4_0:rot=hadamard", "dgq3"}) {
    CAPTURE(spec);
    const auto s = make_scheme(spec);
    CausalCache plain(*s, TensorRole::value, 64, DType::f32), f16(*s, TensorRole::value, 64, DType::f32, DType::f16);
    CHECK(f16.row_dtype() == DType::f32);
    plain.append(x.view());
    f16.append(x.view());
    std::vector<float> a, b;
    plain.read(a);
    f16.read(b);
    CHECK(causal_bits(a) == causal_bits(b));
    CHECK(plain.held_bytes() == f16.held_bytes());
  }
}

TEST_CASE("causal raw dtype: a value fp16 cannot hold is refused on append, the cache left as it was",
          "[causal][raw][errors]") {
  const auto s = make_scheme("kivi-4");
  CausalCache cache(*s, TensorRole::key, 8, DType::f32, DType::f16);
  std::vector<float> rows(3 * 8, 1.0f);
  cache.append(ConstTensor{rows.data(), DType::f32, 2, 8});
  const std::uint64_t held = cache.held_bytes();
  rows[2 * 8 + 3] = 70000.0f;  // token 2, channel 3
  CHECK(error_message_of<InputError>([&] {
          cache.append(ConstTensor{rows.data() + 2 * 8, DType::f32, 1, 8});
        }) == "causal cache: value 70000 at token 2, channel 3 overflows f16 (the largest finite is 65504)");
  CHECK(cache.tokens() == 2);
  CHECK(cache.held_bytes() == held);
  // bf16 holds it (rounded), and so does a per-token format's fp32 input.
  CausalCache bf16(*s, TensorRole::key, 8, DType::f32, DType::bf16);
  CHECK_NOTHROW(bf16.append(ConstTensor{rows.data(), DType::f32, 3, 8}));
  const auto q8_0 = make_scheme("q8_0");  // a cache keeps a reference to its scheme
  CausalCache q8(*q8_0, TensorRole::key, 8, DType::f32, DType::f16);
  CHECK_NOTHROW(q8.append(ConstTensor{rows.data(), DType::f32, 3, 8}));
  // The timeline refuses it with the same words.
  CHECK(error_message_of<InputError>([&] {
          (void)causal_timeline(*s, ConstTensor{rows.data(), DType::f32, 3, 8}, TensorRole::key, DType::f16);
        }) == "causal cache: value 70000 at token 2, channel 3 overflows f16 (the largest finite is 65504)");
}

}  // namespace dgq::test
