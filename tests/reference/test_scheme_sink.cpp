// The sink modifier (`<spec>:sink=N`, docs/spec.md "Scheme modifier: attention sinks"): the
// first N tokens stored as they came, the rest by the family as a tensor of its own.
#include <catch2/catch.hpp>

#include <cstring>
#include <limits>

#include "dgq/causal.hpp"
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "test_scheme_support.hpp"

namespace dgq::test {
namespace {

// Rows first .. first+count-1 of x, copied.
OwnedTensor sink_test_rows(const OwnedTensor& x, std::int64_t first, std::int64_t count) {
  const std::size_t row = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
  OwnedTensor out{x.dtype, count, x.channels};
  if (count > 0) std::memcpy(out.bytes.data(), x.bytes.data() + first * row, count * row);
  return out;
}

// A family whose own parameters include `sink` (kvarn's sink block) reads the key itself, as
// dgq2 reads its own `rot` (docs/spec.md rule S3).
bool declares_sink_key(const std::string& family) {
  for (const SchemeParam& p : find_scheme_family(family, Device::cpu)->params) {
    if (p.key == "sink") return true;
  }
  return false;
}

std::string sink_error(const std::string& spec) {
  return error_message_of<ParameterError>([&] { (void)make_scheme(spec); });
}

}  // namespace

TEST_CASE("sink: bad values are refused by name; 0 leaves the scheme as it was", "[scheme][modifier][sink]") {
  for (const char* bad : {"-1", "04", "x", "1.5", "", "1073741825", "+3"}) {
    CAPTURE(bad);
    CHECK_THAT(sink_error(std::string("q4_0:sink=") + bad), Catch::Contains("parameter 'sink' = '"));
  }
  CHECK(make_scheme("q4_0:sink=0")->spec() == "q4_0");
  CHECK(make_scheme("kivi-4:sink=0,residual=8")->spec() == make_scheme("kivi-4:residual=8")->spec());
}

TEST_CASE("sink: the spec is canonical, with the sinks outside the rotation whatever the order given",
          "[scheme][modifier][sink]") {
  CHECK(make_scheme("q4_0:sink=4")->spec() == "q4_0:sink=4");
  CHECK(make_scheme("q4_0:sink=4,rot=hadamard")->spec() == "q4_0:rot=hadamard,sink=4");
  CHECK(make_scheme("q4_0:rot=hadamard,sink=4")->spec() == "q4_0:rot=hadamard,sink=4");
  CHECK(make_scheme("kivi-2:sink=1")->spec() == "kivi-2:group=32,residual=32,sink=1");
  // dgq2's own rot key is the family's; the modifier wraps dgq2.
  const std::string dgq2 = make_scheme("dgq2:rot=hadamard,sink=2")->spec();
  CHECK(dgq2.ends_with(",sink=2"));
  CHECK(make_scheme(dgq2)->spec() == dgq2);
}

TEST_CASE("sink: fewer tokens than sinks are all kept; the family stores nothing", "[scheme][modifier][sink]") {
  const auto s = make_scheme("q4_0:sink=8");
  for (const std::int64_t tokens : {0, 1, 7, 8}) {
    CAPTURE(tokens);
    const OwnedTensor x = random_tensor(tokens, 64, 3);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    CHECK(c.part_bytes("sink") == static_cast<std::uint64_t>(tokens * 64 * 2));
    CHECK(c.total_bytes() == c.part_bytes("sink"));
    CHECK(c.total_bytes() == s->planned_bytes(tokens, 64, DType::f16, TensorRole::key));
    CHECK(decompressed(*s, c).bytes == x.bytes);
  }
}

TEST_CASE("sink: every family keeps its sinks bit for bit and stores the rest as it stores a tensor of its own",
          "[scheme][modifier][sink]") {
  constexpr std::int64_t kSinks = 5, kTokens = 70;
  for (const std::string& family : scheme_families()) {
    if (declares_sink_key(family)) continue;  // its own key (kvarn), tested below
    for (const DType dtype : {DType::f16, DType::f32}) {
      CAPTURE(family, dtype_name(dtype));
      const std::int64_t d = accepted_channels(family, 64);
      const OwnedTensor x = random_tensor(kTokens, d, 11, dtype);
      const auto plain = make_scheme(family);
      const auto sunk = make_scheme(family + ":sink=" + std::to_string(kSinks));
      const OwnedTensor rest = sink_test_rows(x, kSinks, kTokens - kSinks);
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        const Compressed a = plain->compress(rest.view(), role);
        const Compressed b = sunk->compress(x.view(), role);
        REQUIRE(b.parts.size() == a.parts.size() + 1);
        CHECK(b.parts.front().name == "sink");
        CHECK(std::vector<Part>(b.parts.begin() + 1, b.parts.end()) == a.parts);
        CHECK(b.total_bytes() == a.total_bytes() + static_cast<std::uint64_t>(kSinks * d) * dtype_size(dtype));
        const OwnedTensor y = decompressed(*sunk, b);
        CHECK(sink_test_rows(y, 0, kSinks).bytes == sink_test_rows(x, 0, kSinks).bytes);
        CHECK(sink_test_rows(y, kSinks, kTokens - kSinks).bytes == decompressed(*plain, a).bytes);
      }
    }
  }
}

TEST_CASE("sink: a non-finite value is named by its token in the whole tensor, inside or after the sinks",
          "[scheme][modifier][sink][errors]") {
  const auto s = make_scheme("q4_0:sink=4");
  for (const std::int64_t bad : {1, 6}) {
    OwnedTensor x = random_tensor(10, 64, 4, DType::f32);
    x.set(bad, 3, std::numeric_limits<float>::quiet_NaN());
    CHECK(error_message_of<InputError>([&] { (void)s->compress(x.view(), TensorRole::key); }) ==
          "q4_0:sink=4: non-finite value nan at token " + std::to_string(bad) + ", channel 3");
    CHECK(error_message_of<InputError>([&] { (void)s->causal_schedule(x.view(), TensorRole::key); }) ==
          "q4_0:sink=4: non-finite value nan at token " + std::to_string(bad) + ", channel 3");
  }
}

TEST_CASE("sink: data without its sinks, or of another scheme, is refused", "[scheme][modifier][sink][errors]") {
  const auto s = make_scheme("q8_0:sink=2");
  const OwnedTensor x = random_tensor(9, 64, 5);
  Compressed c = s->compress(x.view(), TensorRole::value);
  Compressed short_sink = c;
  short_sink.parts.front().bytes.pop_back();
  OwnedTensor out{DType::f16, 9, 64};
  CHECK_THROWS_AS(s->decompress(short_sink, out.mut()), InputError);
  Compressed plain = make_scheme("q8_0")->compress(x.view(), TensorRole::value);
  CHECK_THROWS_AS(s->decompress(plain, out.mut()), InputError);
  CHECK_THROWS_AS(make_scheme("q8_0")->decompress(c, out.mut()), InputError);
}

TEST_CASE("sink: causally, sinks are final on append and the family's rule starts after them", "[causal][sink]") {
  const OwnedTensor x = random_tensor(80, 64, 6);
  const auto s = make_scheme("kivi-4:group=16,residual=8,sink=4");
  const auto inner = make_scheme("kivi-4:group=16,residual=8");
  const OwnedTensor rest = sink_test_rows(x, 4, 76);
  const CausalSchedule a = s->causal_schedule(x.view(), TensorRole::key);
  const CausalSchedule b = inner->causal_schedule(rest.view(), TensorRole::key);
  for (std::int64_t t = 0; t < 80; ++t) {
    CAPTURE(t);
    if (t < 4) {
      CHECK(a.final_tokens[t] == t + 1);
      CHECK(a.final_bytes[t] == static_cast<std::uint64_t>((t + 1) * 64 * 2));
    } else {
      CHECK(a.final_tokens[t] == 4 + b.final_tokens[t - 4]);
      CHECK(a.final_bytes[t] == 4 * 64 * 2 + b.final_bytes[t - 4]);
    }
  }
  // KIVI's first key group closes at token 4 + 8 + 16 - 1.
  CHECK(a.final_tokens[26] == 4);
  CHECK(a.final_tokens[27] == 20);
  CHECK(s->causal_form()->spec() == "kivi-4:group=16,residual=0,sink=4");
}

}  // namespace dgq::test

namespace dgq::test {

TEST_CASE("sink: a family's own sink key stays the family's (kvarn's sink block)", "[scheme][modifier][sink]") {
  REQUIRE(declares_sink_key("kvarn"));
  const std::string spec = make_scheme("kvarn:sink=4")->spec();
  CHECK(spec.ends_with(",sink=4"));
  CHECK(spec.find("sink=128") == std::string::npos);
  CHECK(make_scheme(spec)->spec() == spec);
  // Not wrapped: kvarn's own parts, its "sink" among them, and no modifier part before them.
  const OwnedTensor x = random_tensor(300, 64, 8);
  const Compressed c = make_scheme(spec)->compress(x.view(), TensorRole::key);
  CHECK(c.parts.front().name == make_scheme("kvarn")->compress(x.view(), TensorRole::key).parts.front().name);
  CHECK(c.part_bytes("sink") == 4u * 64 * 2);
}

}  // namespace dgq::test
