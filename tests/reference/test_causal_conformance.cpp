// The causal cache (docs/spec.md, "Causal caches", rules C0-C5) of every registered family,
// generated from the registry (every family's default spec) plus parameterised specs: each
// family's schedule is causal (decided from the tokens seen), the literal CausalCache fed one
// token or seven at a time holds exactly what causal_timeline says after every append (which
// checks causal consistency and the final bytes on every append: the cache throws
// std::logic_error otherwise), per-token formats are final on append with the values and bytes
// of their own compress, the schemes without a causal form refuse it by name, and the online
// segmentation (rule C3) agrees with the adaptive one where the budget does not bind and takes
// the first change points where it does.
#include <limits>

#include "test_causal_support.hpp"

namespace dgq::test {

TEST_CASE("causal: the schemes without a causal form refuse it by name", "[causal][errors]") {
  const OwnedTensor x = causal_regime_tensor(20, 64, 1);
  const std::string fp8 =
      "fp8-e4m3: scale=tensor (one scale per tensor) has no causal form; use scale=prefix (a scale fixed from the "
      "first "
      "N tokens, as vLLM's calculate_kv_scales) or scale=token";
  const std::string fixed =
      "dgq2: boundaries=fixed has no causal form (equal segments need the final length); use boundaries=online or "
      "adaptive";
  const auto schedule_error = [](const std::string& spec, ConstTensor t, TensorRole role) {
    return error_message_of<ParameterError>([&] { (void)make_scheme(spec)->causal_schedule(t, role); });
  };
  for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
    CHECK(schedule_error("fp8-e4m3", x.view(), role) == fp8);
    CHECK(schedule_error("fp8-e4m3:scale=tensor,prefix=4", x.view(), role) == fp8);
    CHECK(schedule_error("fp8-e4m3:rot=hadamard", x.view(), role) == fp8);
    CHECK(schedule_error("fp8-e4m3:sink=4", x.view(), role) == fp8);
    CHECK(schedule_error("fp8-e4m3:sink=40", x.view(), role) == fp8);  // every token a sink
    CHECK(schedule_error("dgq2:boundaries=fixed", x.view(), role) == fixed);
    // Even with no tokens, and through the timeline.
    CHECK(schedule_error("fp8-e4m3", causal_rows(x, 0, 0), role) == fp8);
    CHECK(schedule_error("dgq2:boundaries=fixed,kgran=segment", causal_rows(x, 0, 0), role) == fixed);
    CHECK(error_message_of<ParameterError>(
              [&] { (void)causal_timeline(*make_scheme("dgq2:boundaries=fixed"), x.view(), role); }) == fixed);
  }
  // The form is refused as well, so a cache of them refuses to be built.
  CHECK(error_message_of<ParameterError>([] { (void)make_scheme("fp8-e4m3")->causal_form(); }) == fp8);
  CHECK(error_message_of<ParameterError>([] { (void)make_scheme("dgq2:boundaries=fixed")->causal_form(); }) == fixed);
  CHECK(error_message_of<ParameterError>(
            [] { CausalCache cache(*make_scheme("fp8-e4m3"), TensorRole::key, 64, DType::f16); }) == fp8);
  // Every other spec of the suite has one.
  for (const std::string& spec : causal_specs()) {
    if (kCausalRefused.count(spec) != 0) continue;
    CAPTURE(spec);
    CHECK_NOTHROW(make_scheme(spec)->causal_form());
    CHECK_NOTHROW(make_scheme(spec)->causal_schedule(causal_rows(x, 0, 0), TensorRole::key));
  }
}

TEST_CASE("causal: an empty tensor has an empty schedule; one token costs what its causal form stores for it",
          "[causal][edge]") {
  for (const std::string& spec : causal_specs()) {
    if (kCausalRefused.count(spec) != 0) continue;
    const auto s = make_scheme(spec);
    for (const std::int64_t d : causal_channels(spec)) {
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        CAPTURE(spec, d, role_name(role));
        const OwnedTensor x = causal_regime_tensor(1, d, 2);
        const CausalSchedule empty = s->causal_schedule(causal_rows(x, 0, 0), role);
        CHECK(empty.final_tokens.empty());
        CHECK(empty.final_bytes.empty());
        const CausalSchedule one = s->causal_schedule(x.view(), role);
        check_schedule_shape(one, 1);
        // Nothing final: nothing stored; the token final: the causal form's bytes for it.
        const std::unique_ptr<Scheme> form = s->causal_form();
        const Scheme& stores = form != nullptr ? *form : *s;
        CHECK(one.final_bytes[0] == (one.final_tokens[0] == 0 ? 0 : stores.compress(x.view(), role).total_bytes()));
      }
    }
  }
}

TEST_CASE("causal: every family's schedule of a prefix is the prefix of its schedule (decided from the tokens seen)",
          "[causal][conformance]") {
  for_each_causal_case(causal_specs(), 100, [](const Scheme& s, const OwnedTensor& x, TensorRole role) {
    const CausalSchedule full = s.causal_schedule(x.view(), role);
    check_schedule_shape(full, x.tokens);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      CAPTURE(t);
      const CausalSchedule prefix = s.causal_schedule(causal_rows(x, 0, t + 1), role);
      REQUIRE(prefix.final_tokens ==
              std::vector<std::uint32_t>(full.final_tokens.begin(), full.final_tokens.begin() + t + 1));
      REQUIRE(prefix.final_bytes ==
              std::vector<std::uint64_t>(full.final_bytes.begin(), full.final_bytes.begin() + t + 1));
    }
  });
}

TEST_CASE("causal: every family's literal cache holds the timeline's values and bytes after every append",
          "[causal][conformance]") {
  for_each_causal_case(causal_specs(), 200, [](const Scheme& s, const OwnedTensor& x, TensorRole role) {
    for (const std::int64_t batch : {1, 7}) check_cache_against_timeline(s, x, role, batch);
  });
  // Other dtypes, at one length.
  std::uint64_t stream = 250;
  for (const DType t : {DType::bf16, DType::f32}) {
    for (const std::string& spec : causal_specs()) {
      if (kCausalRefused.count(spec) != 0) continue;
      CAPTURE(spec, dtype_name(t));
      check_cache_against_timeline(*make_scheme(spec), causal_regime_tensor(100, 64, ++stream, t), TensorRole::key, 7);
    }
  }
}

TEST_CASE("causal: per-token formats are final on append, with their own compress's values and bytes",
          "[causal][conformance]") {
  for_each_causal_case(kCausalPerToken, 300, [](const Scheme& s, const OwnedTensor& x, TensorRole role) {
    CHECK(s.causal_form() == nullptr);  // the scheme stores its final prefix itself
    const CausalTimeline timeline = causal_timeline(s, x.view(), role);
    check_schedule_shape(timeline.schedule, x.tokens);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      REQUIRE(timeline.schedule.final_tokens[static_cast<std::size_t>(t)] == static_cast<std::uint32_t>(t + 1));
    }
    const Compressed c = s.compress(x.view(), role);
    REQUIRE(causal_bits(timeline.final_values) == causal_bits(to_float(decompressed(s, c).view())));
    if (x.tokens == 0) return;
    REQUIRE(timeline.schedule.final_bytes.back() == c.total_bytes());
    REQUIRE(causal_held_bytes(timeline.schedule, x.tokens - 1, x.channels, x.dtype) == c.total_bytes());
  });
}

TEST_CASE("causal: the families with a look-ahead are not final on append", "[causal]") {
  // The counterpart of the per-token list: each of these holds raw tokens somewhere on a
  // 300-token tensor (a test that the per-token check above can tell them apart).
  const OwnedTensor x = causal_regime_tensor(300, 64, 400);
  for (const std::string spec : {"dgq", "dgq2", "kivi-4", "kivi-2:group=16,residual=0", "fp8-e4m3:scale=prefix"}) {
    CAPTURE(spec);
    const CausalSchedule s = make_scheme(spec)->causal_schedule(x.view(), TensorRole::key);
    bool raw_somewhere = false;
    for (std::size_t t = 0; t < s.final_tokens.size(); ++t) raw_somewhere |= s.final_tokens[t] != t + 1;
    CHECK(raw_somewhere);
  }
}

TEST_CASE("causal: a refused append (NaN/Inf) leaves every family's cache as it was", "[causal][errors]") {
  std::uint64_t stream = 900;
  for (const std::string& spec : causal_specs()) {
    if (kCausalRefused.count(spec) != 0) continue;
    CAPTURE(spec);
    const auto scheme = make_scheme(spec);
    const OwnedTensor x = causal_regime_tensor(60, 64, ++stream, DType::f32);
    CausalCache cache(*scheme, TensorRole::key, 64, DType::f32);
    CausalCache twin(*scheme, TensorRole::key, 64, DType::f32);
    cache.append(causal_rows(x, 0, 40));
    twin.append(causal_rows(x, 0, 40));
    std::vector<float> before, after;
    cache.read(before);
    const std::uint64_t held = cache.held_bytes();
    // Three rows, the middle one's channel 5 not finite: the raw tail of a family that waits
    // (KIVI, DGQ's segments) would hold it; refused on append all the same.
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity()}) {
      std::vector<float> rows(3 * 64, 0.5f);
      rows[64 + 5] = bad;
      CHECK(error_message_of<InputError>([&] {
              cache.append(ConstTensor{rows.data(), DType::f32, 3, 64});
            }).find("at token 41, channel 5") != std::string::npos);
      cache.read(after);
      REQUIRE(cache.tokens() == 40);
      REQUIRE(cache.held_bytes() == held);
      REQUIRE(causal_bits(after) == causal_bits(before));
    }
    // And it goes on as a cache that never saw the bad rows.
    cache.append(causal_rows(x, 40, 20));
    twin.append(causal_rows(x, 40, 20));
    cache.read(after);
    twin.read(before);
    CHECK(cache.final_tokens() == twin.final_tokens());
    CHECK(cache.held_bytes() == twin.held_bytes());
    CHECK(causal_bits(after) == causal_bits(before));
  }
}

}  // namespace dgq::test
