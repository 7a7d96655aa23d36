// The causal cache (docs/spec.md, "Causal caches", rules C0-C5) of every registered family,
// generated from the registry (every family's default spec) plus parameterised specs: each
// family's schedule is causal (decided from the tokens seen), the literal CausalCache fed one
// token or seven at a time holds exactly what causal_timeline says after every append (which
// checks causal consistency and the final bytes on every append: the cache throws
// std::logic_error otherwise), per-token formats are final on append with the values and bytes
// of their own compress, the schemes without a causal form refuse it by name, and the online
// segmentation (rule C3) agrees with the adaptive one where the budget does not bind and takes
// the first change points where it does.
#include "test_scheme_support.hpp"

#include <algorithm>
#include <cstring>
#include <functional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/errors.hpp"

namespace dgq::test {
namespace {

// The specs with no causal form (rules C3 and C5): causal_schedule throws ParameterError.
const std::set<std::string> kCausalRefused{"fp8-e4m3", "dgq2:boundaries=fixed"};

// The formats the causal rule treats as per token (rule C1): final on append.
const std::vector<std::string> kCausalPerToken{"fp16",
                                               "q8_0",
                                               "q4_0",
                                               "q4_1",
                                               "q5_0",
                                               "q5_1",
                                               "iq4_nl",
                                               "int8-token",
                                               "int8-group64",
                                               "int4-group64",
                                               "turboquant",
                                               "turboquant:bits=2,variant=prod",
                                               "q4_0:rot=hadamard",
                                               "fp8-e4m3:scale=token"};

// Every registered family's default spec, then parameterised ones: dgq2's group granularity
// (with G a multiple of win, and G = 5 that divides no block), residual and rotation, several
// segments under budget=max_groups, KIVI with a residual, fp8's causal scales, TurboQuant's
// second variant, the rotation modifier around a per-token format and around dgq, and dgq's
// online boundaries.
std::vector<std::string> causal_specs() {
  std::vector<std::string> out;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device == Device::cpu) out.emplace_back(f.name);
  }
  for (const char* spec : {"dgq2:kgran=segment-channel-group,kgroup=32",
                           "dgq2:residual=8",
                           "dgq2:rot=hadamard",
                           "dgq2:budget=max_groups,max_groups=8,kgran=segment-channel-group,kgroup=5,markers=inband",
                           "dgq2:budget=max_groups,max_groups=4,kgran=segment,vgran=segment-channel,markers=bitmap,"
                           "residual=3,bits=3",
                           "dgq2:boundaries=online,vgran=segment-channel-group,vgroup=20,residual=8,rot=hadamard",
                           "kivi-4:residual=8",
                           "kivi-2:group=16,residual=0",
                           "fp8-e4m3:scale=prefix,prefix=16",
                           "fp8-e4m3:scale=token",
                           "turboquant:bits=2,variant=prod",
                           "q4_0:rot=hadamard",
                           "dgq:boundaries=online",
                           "dgq:granularity=segment-channel,markers=bitmap,max_groups=2",
                           "dgq:markers=inband,rot=hadamard"}) {
    out.emplace_back(spec);
  }
  return out;
}

// The head dims a spec is tested at: 64 and 33 where the family takes them (the registry's
// accepts_channels), multiples of 64 only under the rotation modifier.
std::vector<std::int64_t> causal_channels(const std::string& spec) {
  std::vector<std::int64_t> out;
  for (const std::int64_t d : {64, 33}) {
    if (!takes_channels(scheme_family_of(spec), d)) continue;
    if (spec.find("rot=hadamard") != std::string::npos && d % 64 != 0) continue;
    out.push_back(d);
  }
  return out;
}

const std::vector<std::int64_t> kCausalTokens{0, 1, 15, 16, 17, 100, 300};

// Token rows whose spread changes regime at tokens 48, 112, 200 (block edges of win = 16) and
// 250 (inside a block), with a per-channel offset and an outlier now and then: the variance
// rule finds several change points, of different strengths.
OwnedTensor causal_regime_tensor(std::int64_t l, std::int64_t d, std::uint64_t stream, DType t = DType::f16) {
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t tok = 0; tok < l; ++tok) {
    const float spread = tok < 48 ? 1.0f : tok < 112 ? 5.0f : tok < 200 ? 0.2f : tok < 250 ? 3.0f : 0.5f;
    for (std::int64_t c = 0; c < d; ++c) {
      float e = 0.1f * static_cast<float>(c % 7) + spread * normal(gen);
      if (uniform(gen) < 0.005f) e *= 8.0f;
      v[tok * d + c] = e;
    }
  }
  return tensor_from(v, l, d, t);
}

ConstTensor causal_rows(const OwnedTensor& x, std::int64_t first, std::int64_t count) {
  return {x.bytes.data() + static_cast<std::size_t>(first * x.channels) * dtype_size(x.dtype), x.dtype, count,
          x.channels};
}

std::vector<std::uint32_t> causal_bits(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) out[i] = rules::float_bits(v[i]);
  return out;
}

std::string causal_parameter_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const ParameterError& e) {
    return e.what();
  }
  return "no ParameterError";
}

// The schedule's own invariants: one entry per token, non-decreasing, at most T + 1.
void check_schedule_shape(const CausalSchedule& s, std::int64_t tokens) {
  REQUIRE(s.final_tokens.size() == static_cast<std::size_t>(tokens));
  REQUIRE(s.final_bytes.size() == static_cast<std::size_t>(tokens));
  for (std::int64_t t = 0; t < tokens; ++t) {
    CAPTURE(t);
    const auto at = static_cast<std::size_t>(t);
    REQUIRE(s.final_tokens[at] <= static_cast<std::uint32_t>(t + 1));
    if (t > 0) REQUIRE(s.final_tokens[at] >= s.final_tokens[at - 1]);
  }
}

// The literal cache fed `batch` tokens at a time (after an empty append) against the timeline:
// after every append, the final values below final_tokens, the raw input above, the bytes held.
void check_cache_against_timeline(const Scheme& s, const OwnedTensor& x, TensorRole role, std::int64_t batch) {
  const CausalTimeline timeline = causal_timeline(s, x.view(), role);
  check_schedule_shape(timeline.schedule, x.tokens);
  REQUIRE(timeline.final_values.size() == static_cast<std::size_t>(x.size()));
  const std::vector<float> raw = to_float(x.view());
  CausalCache cache(s, role, x.channels, x.dtype);
  cache.append(causal_rows(x, 0, 0));
  CHECK(cache.tokens() == 0);
  CHECK(cache.held_bytes() == 0);
  std::vector<float> got, expected;
  for (std::int64_t first = 0; first < x.tokens; first += batch) {
    const std::int64_t count = std::min(batch, x.tokens - first);
    cache.append(causal_rows(x, first, count));
    const std::int64_t t = first + count - 1;
    const auto final_rows = static_cast<std::int64_t>(timeline.schedule.final_tokens[static_cast<std::size_t>(t)]);
    CAPTURE(batch, t, final_rows);
    REQUIRE(cache.tokens() == t + 1);
    REQUIRE(cache.final_tokens() == final_rows);
    REQUIRE(cache.held_bytes() == causal_held_bytes(timeline.schedule, t, x.channels, x.dtype));
    cache.read(got);
    expected.assign(timeline.final_values.begin(), timeline.final_values.begin() + final_rows * x.channels);
    expected.insert(expected.end(), raw.begin() + final_rows * x.channels, raw.begin() + (t + 1) * x.channels);
    REQUIRE(causal_bits(got) == causal_bits(expected));
  }
}

// A tensor of win-token blocks (win = 16, 64 channels), block i with values offset[i] +
// spread[i]*N(0, 1) (offset 0 when not given): the token variance (rule 1) is about spread[i]^2,
// so the candidates of rule 3 are where the spread changes. An offset leaves it alone, but not
// the variance of the rotated rows (the rotation gathers a constant row into one channel).
OwnedTensor causal_block_tensor(const std::vector<float>& spread, std::uint64_t stream,
                                const std::vector<float>& offset = {}) {
  const std::int64_t d = 64, l = 16 * static_cast<std::int64_t>(spread.size());
  auto gen = rng(stream);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::vector<float> v(static_cast<std::size_t>(l * d));
  for (std::int64_t t = 0; t < l; ++t) {
    const auto block = static_cast<std::size_t>(t / 16);
    const float shift = offset.empty() ? 0.0f : offset[block];
    for (std::int64_t c = 0; c < d; ++c) v[t * d + c] = shift + spread[block] * normal(gen);
  }
  return tensor_from(v, l, d);
}

std::vector<std::uint32_t> causal_edges(const std::string& spec, const OwnedTensor& x) {
  return make_scheme(spec)->compress(x.view(), TensorRole::key).segment_edges();
}

// body(scheme, x, role) for every spec with a causal form, at every head dim it takes
// (causal_channels), every length of kCausalTokens (a regime tensor from its own stream) and
// both roles, the case captured for a failure's message.
template <class Body>
void for_each_causal_case(const std::vector<std::string>& specs, std::uint64_t stream, Body body) {
  for (const std::string& spec : specs) {
    if (kCausalRefused.count(spec) != 0) continue;
    const auto s = make_scheme(spec);
    for (const std::int64_t d : causal_channels(spec)) {
      for (const std::int64_t l : kCausalTokens) {
        const OwnedTensor x = causal_regime_tensor(l, d, ++stream);
        for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
          CAPTURE(spec, d, l, role_name(role));
          body(*s, x, role);
        }
      }
    }
  }
}

}  // namespace

TEST_CASE("causal: the schemes without a causal form refuse it by name", "[causal][errors]") {
  const OwnedTensor x = causal_regime_tensor(20, 64, 1);
  const std::string fp8 =
      "fp8-e4m3: scale=tensor (one scale per tensor) has no causal form; use scale=prefix (a scale fixed from the first "
      "N tokens, as vLLM's calculate_kv_scales) or scale=token";
  const std::string fixed =
      "dgq2: boundaries=fixed has no causal form (equal segments need the final length); use boundaries=online or "
      "adaptive";
  const auto schedule_error = [](const std::string& spec, ConstTensor t, TensorRole role) {
    return causal_parameter_error([&] { (void)make_scheme(spec)->causal_schedule(t, role); });
  };
  for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
    CHECK(schedule_error("fp8-e4m3", x.view(), role) == fp8);
    CHECK(schedule_error("fp8-e4m3:scale=tensor,prefix=4", x.view(), role) == fp8);
    CHECK(schedule_error("fp8-e4m3:rot=hadamard", x.view(), role) == fp8);
    CHECK(schedule_error("dgq2:boundaries=fixed", x.view(), role) == fixed);
    // Even with no tokens, and through the timeline.
    CHECK(schedule_error("fp8-e4m3", causal_rows(x, 0, 0), role) == fp8);
    CHECK(schedule_error("dgq2:boundaries=fixed,kgran=segment", causal_rows(x, 0, 0), role) == fixed);
    CHECK(causal_parameter_error([&] { (void)causal_timeline(*make_scheme("dgq2:boundaries=fixed"), x.view(), role); }) ==
          fixed);
  }
  // The form is refused as well, so a cache of them refuses to be built.
  CHECK(causal_parameter_error([] { (void)make_scheme("fp8-e4m3")->causal_form(); }) == fp8);
  CHECK(causal_parameter_error([] { (void)make_scheme("dgq2:boundaries=fixed")->causal_form(); }) == fixed);
  CHECK(causal_parameter_error([] { CausalCache cache(*make_scheme("fp8-e4m3"), TensorRole::key, 64, DType::f16); }) ==
        fp8);
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
      REQUIRE(prefix.final_bytes == std::vector<std::uint64_t>(full.final_bytes.begin(), full.final_bytes.begin() + t + 1));
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

TEST_CASE("causal: KIVI's schedule is its quantized prefix, and its end state is its prefill bytes", "[causal][kivi]") {
  std::uint64_t stream = 500;
  for (const auto& [spec, group, residual] : std::vector<std::tuple<std::string, std::int64_t, std::int64_t>>{
           {"kivi-4", 32, 32}, {"kivi-2:group=16,residual=8", 16, 8}, {"kivi-4:group=7,residual=0", 7, 0}}) {
    const auto s = make_scheme(spec);
    REQUIRE(s->causal_form()->spec() ==
            std::string(s->family()) + ":group=" + std::to_string(group) + ",residual=0");
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
        REQUIRE(sched.final_bytes[static_cast<std::size_t>(t)] == (want == 0 ? 0 : static_cast<std::uint64_t>(want * 33 + 4)));
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
    expect("dgq2:kgran=segment-channel" + residual, TensorRole::key, r, [](std::int64_t t) { return t < 175 ? 0 : 160; });
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
  for (const auto& [spec, edge] : std::vector<std::pair<std::string, bool>>{{"dgq", false},
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
  CHECK(make_scheme("dgq:rot=hadamard")->causal_form()->spec() == make_scheme("dgq:boundaries=online,rot=hadamard")->spec());
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
