// Each family's own causal rule (docs/spec.md, "Causal caches"): KIVI (C2), fp8-e4m3's prefix
// scale (C5), dgq2's schedule per granularity and residual (C4), dgq's (C3, C4), the rotation
// modifier (C1), and the online change points against the adaptive ones (C3).
#include "test_causal_support.hpp"

namespace dgq::test {

TEST_CASE("causal: KIVI's schedule is its quantized prefix, and its end state is its prefill bytes", "[causal][kivi]") {
  std::uint64_t stream = 500;
  for (const auto& [spec, group, residual] : std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>{
           {"kivi-4", 32, 32}, {"kivi-2:group=16,residual=8", 16, 8}, {"kivi-4:group=7,residual=0", 7, 0}}) {
    const auto s = make_scheme(spec);
    REQUIRE(s->causal_form()->spec() == std::string(s->family()) + ":group=" + std::to_string(group) + ",residual=0");
    for (const std::int64_t l : kCausalTokens) {
      const OwnedTensor x = causal_regime_tensor(l, 64, ++stream);
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        CAPTURE(spec, l, role_name(role));
        const CausalSchedule sched = s->causal_schedule(x.view(), role);
        check_schedule_shape(sched, l);
        for (std::int64_t t = 0; t < l; ++t) {
          const std::int64_t out_of_residual = std::max<std::int64_t>(t + 1 - residual, 0);
          const std::int64_t want = role == TensorRole::key ? out_of_residual / group * group : out_of_residual;
          CAPTURE(t);
          REQUIRE(sched.final_tokens[static_cast<std::size_t>(t)] == static_cast<std::uint32_t>(want));
          REQUIRE(sched.final_bytes[static_cast<std::size_t>(t)] ==
                  s->causal_form()->planned_bytes(want, 64, x.dtype, role));
        }
        if (l > 0) CHECK(causal_held_bytes(sched, l - 1, 64, x.dtype) == s->compress(x.view(), role).total_bytes());
      }
    }
  }
}

TEST_CASE("causal: fp8-e4m3 scale=prefix is final from its N-th token on", "[causal][fp8]") {
  for (const std::int64_t l : kCausalTokens) {
    const OwnedTensor x = causal_regime_tensor(l, 33, 600);
    for (const std::int64_t n : {1, 16, 17, 128}) {
      CAPTURE(l, n);
      const auto s = make_scheme("fp8-e4m3:scale=prefix,prefix=" + std::to_string(n));
      const CausalSchedule sched = s->causal_schedule(x.view(), TensorRole::value);
      check_schedule_shape(sched, l);
      for (std::int64_t t = 0; t < l; ++t) {
        const std::int64_t want = t < n - 1 ? 0 : t + 1;
        REQUIRE(sched.final_tokens[static_cast<std::size_t>(t)] == static_cast<std::uint32_t>(want));
        REQUIRE(sched.final_bytes[static_cast<std::size_t>(t)] ==
                (want == 0 ? 0 : static_cast<std::uint64_t>(want * 33 + 4)));
      }
    }
  }
}

TEST_CASE("causal: dgq2's schedule per granularity, delayed by the residual (rule C4)", "[causal][dgq2]") {
  // One change point, at token 160 (block 10 of win = 16), decided when block 10 is complete
  // (token 175); 320 tokens.
  std::vector<float> spread(20, 1.0f);
  std::fill(spread.begin() + 10, spread.end(), 10.0f);
  const OwnedTensor x = causal_block_tensor(spread, 700);
  REQUIRE(causal_edges("dgq2", x) == std::vector<std::uint32_t>{0, 160, 320});
  const auto expect = [&](const std::string& spec, TensorRole role, std::int64_t residual,
                          const std::function<std::int64_t(std::int64_t)>& undelayed) {
    const CausalSchedule s = make_scheme(spec)->causal_schedule(x.view(), role);
    check_schedule_shape(s, x.tokens);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      CAPTURE(spec, role_name(role), t);
      REQUIRE(s.final_tokens[static_cast<std::size_t>(t)] == (t < residual ? 0 : undelayed(t - residual)));
    }
  };
  for (const std::int64_t r : {0, 8}) {
    const std::string residual = ",residual=" + std::to_string(r);
    // segment-channel: the open segment's start.
    expect("dgq2:kgran=segment-channel" + residual, TensorRole::key, r,
           [](std::int64_t t) { return t < 175 ? 0 : 160; });
    // token: every quantized row.
    expect("dgq2:vgran=token" + residual, TensorRole::value, r, [](std::int64_t t) { return t + 1; });
    // segment-channel-group, G = 32: the groups in complete blocks; after the change point the
    // first group of the new segment ends at 192, final at token 191.
    expect("dgq2:kgran=segment-channel-group,kgroup=32" + residual, TensorRole::key, r, [](std::int64_t t) {
      const std::int64_t covered = (t + 1) / 16 * 16;
      if (t < 175) return covered / 32 * 32;
      return t < 191 ? std::int64_t{160} : 160 + (covered - 160) / 32 * 32;
    });
    // G = 5 divides no block: inside the segment's first block (tokens 160..175) the prefix
    // stays at the edge, as a compression of 160 + 15 tokens could not see it.
    expect("dgq2:kgran=segment-channel-group,kgroup=5" + residual, TensorRole::key, r, [](std::int64_t t) {
      const std::int64_t covered = (t + 1) / 16 * 16;
      if (t < 175) return covered / 5 * 5;
      const std::int64_t grouped = 160 + (covered - 160) / 5 * 5;
      return grouped >= 176 ? grouped : std::int64_t{160};
    });
  }
}

TEST_CASE("causal: dgq's schedule is the open segment's start; its causal form is boundaries=online", "[causal][dgq]") {
  std::vector<float> spread(20, 1.0f);
  std::fill(spread.begin() + 10, spread.end(), 10.0f);
  const OwnedTensor x = causal_block_tensor(spread, 701);
  for (const auto& [spec, form] : std::vector<std::pair<std::string, std::string>>{
           {"dgq", "dgq:boundaries=online"},
           {"dgq:boundaries=online", "dgq:boundaries=online"},
           {"dgq:granularity=segment-channel", "dgq:granularity=segment-channel,boundaries=online"}}) {
    const auto s = make_scheme(spec);
    CHECK(s->causal_form()->spec() == make_scheme(form)->spec());
    const CausalSchedule sched = s->causal_schedule(x.view(), TensorRole::key);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      CAPTURE(spec, t);
      REQUIRE(sched.final_tokens[static_cast<std::size_t>(t)] == (t < 175 ? 0u : 160u));
    }
  }
  CHECK(make_scheme("dgq2:residual=4,boundaries=adaptive")->causal_form()->spec() ==
        make_scheme("dgq2:boundaries=online")->spec());
  CHECK(make_scheme("q4_0:rot=hadamard")->causal_form() == nullptr);
  CHECK(make_scheme("kivi-2:rot=hadamard")->causal_form()->spec() == "kivi-2:group=32,residual=0,rot=hadamard");
}

TEST_CASE("causal: the rotation modifier schedules the rotated tensor (rule C1)", "[causal][rotation]") {
  // Blocks 10.. are offset by 8: the variance of the input rows does not change, that of the
  // rotated rows does (at token 160), so only a schedule of the rotated tensor finds the edge.
  std::vector<float> offset(20, 0.0f);
  std::fill(offset.begin() + 10, offset.end(), 8.0f);
  const OwnedTensor x = causal_block_tensor(std::vector<float>(20, 1.0f), 702, offset);
  REQUIRE(causal_edges("dgq", x) == std::vector<std::uint32_t>{0, 320});
  REQUIRE(causal_edges("dgq:rot=hadamard", x) == std::vector<std::uint32_t>{0, 160, 320});
  // dgq2 rotates by itself (rule V0) and cuts on the rotated rows unless seg_on=input.
  for (const auto& [spec, edge] :
       std::vector<std::pair<std::string, bool>>{{"dgq", false},
                                                 {"dgq:rot=hadamard", true},
                                                 {"dgq2:rot=hadamard", true},
                                                 {"dgq2:rot=hadamard,seg_on=input", false}}) {
    const CausalSchedule s = make_scheme(spec)->causal_schedule(x.view(), TensorRole::key);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      CAPTURE(spec, t);
      REQUIRE(s.final_tokens[static_cast<std::size_t>(t)] == (edge && t >= 175 ? 160u : 0u));
    }
  }
  for (const std::int64_t batch : {1, 7}) {
    check_cache_against_timeline(*make_scheme("dgq:rot=hadamard"), x, TensorRole::key, batch);
    check_cache_against_timeline(*make_scheme("dgq2:rot=hadamard,seg_on=input,residual=5"), x, TensorRole::key, batch);
  }
  CHECK(make_scheme("dgq:rot=hadamard")->causal_form()->spec() ==
        make_scheme("dgq:boundaries=online,rot=hadamard")->spec());
}

TEST_CASE("causal: online edges are the adaptive ones below the budget, and the first ones above it (rule C3)",
          "[causal][dgq][dgq2]") {
  // One candidate (block 10) and a budget of two segments: both rules accept it.
  std::vector<float> one(20, 1.0f);
  std::fill(one.begin() + 10, one.end(), 10.0f);
  const OwnedTensor below = causal_block_tensor(one, 800);
  for (const std::string family : {"dgq", "dgq2"}) {
    CAPTURE(family);
    CHECK(causal_edges(family, below) == std::vector<std::uint32_t>{0, 160, 320});
    CHECK(causal_edges(family + ":boundaries=online", below) == causal_edges(family, below));
  }
  // Two candidates, a weak one first (block 4: variance x2) and a strong one later (block 12:
  // x100), one edge allowed: adaptive takes the strongest, online the first.
  std::vector<float> two(20, 1.0f);
  std::fill(two.begin() + 4, two.end(), 1.41421356f);
  std::fill(two.begin() + 12, two.end(), 14.1421356f);
  const OwnedTensor above = causal_block_tensor(two, 801);
  for (const std::string family : {"dgq", "dgq2"}) {
    CAPTURE(family);
    CHECK(causal_edges(family, above) == std::vector<std::uint32_t>{0, 192, 320});
    CHECK(causal_edges(family + ":boundaries=online", above) == std::vector<std::uint32_t>{0, 64, 320});
  }
  // With room for both, both rules take both.
  CHECK(causal_edges("dgq2:budget=max_groups,max_groups=3", above) == std::vector<std::uint32_t>{0, 64, 192, 320});
  CHECK(causal_edges("dgq2:budget=max_groups,max_groups=3,boundaries=online", above) ==
        std::vector<std::uint32_t>{0, 64, 192, 320});
  // A candidate whose following block is incomplete takes no part online (tokens 0..199: block
  // 12 has 8 tokens); adaptive sees the partial block.
  OwnedTensor partial(DType::f16, 200, 64);
  std::memcpy(partial.bytes.data(), above.bytes.data(), partial.bytes.size());
  CHECK(causal_edges("dgq2:budget=max_groups,max_groups=3", partial) == std::vector<std::uint32_t>{0, 64, 192, 200});
  CHECK(causal_edges("dgq2:budget=max_groups,max_groups=3,boundaries=online", partial) ==
        std::vector<std::uint32_t>{0, 64, 200});
}

}  // namespace dgq::test
