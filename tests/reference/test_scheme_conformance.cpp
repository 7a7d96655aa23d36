// Conformance of every registered CPU scheme family, generated from the registry
// (dgq/registry.hpp), as llama.cpp's test-quantize-fns loops over its type traits: a family
// added to the registry gets these tests without a new test file. Each TEST_CASE loops over
// scheme_family_list() and CAPTUREs the family, so a failure names it.
#include <omp.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "test_scheme_support.hpp"

namespace dgq::test {
namespace {

std::vector<const SchemeFamily*> cpu_families() {
  std::vector<const SchemeFamily*> out;
  for (const SchemeFamily& f : scheme_family_list()) {
    if (f.device == Device::cpu) out.push_back(&f);
  }
  return out;
}

double relative_error(const OwnedTensor& x, const OwnedTensor& y) {
  double num = 0.0, den = 0.0;
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(y.at(i)) - x.at(i);
    num += d * d;
    den += static_cast<double>(x.at(i)) * x.at(i);
  }
  return den > 0.0 ? std::sqrt(num / den) : std::sqrt(num);
}

// 2 + sin(0.1 t + 0.3 d): no outliers, so even 2-bit codes keep it to within a third of its size.
OwnedTensor smooth_tensor(std::int64_t tokens, std::int64_t channels, DType dtype) {
  std::vector<float> v(static_cast<std::size_t>(tokens * channels));
  for (std::int64_t t = 0; t < tokens; ++t) {
    for (std::int64_t d = 0; d < channels; ++d) v[t * channels + d] = 2.0f + std::sin(0.1f * t + 0.3f * d);
  }
  return tensor_from(v, tokens, channels, dtype);
}

// A family's default spec with one parameter set to value.
std::string with_param(const SchemeFamily& f, const SchemeParam& p, const std::string& value) {
  return std::string(f.name) + ":" + std::string(p.key) + "=" + value;
}

}  // namespace

TEST_CASE("the registry holds every built-in family once, in listing order (none dropped by the linker)",
          "[scheme][registry][conformance]") {
  std::vector<std::string> names;
  for (const SchemeFamily* f : cpu_families()) names.emplace_back(f->name);
  // The one list of names in the tests: it checks the link (a family missing here would be
  // skipped silently by every test that enumerates the registry) and enumerates nothing.
  const std::vector<std::string> built_in{"dgq",  "fp16",   "int8-token", "int8-group64", "int4-group64", "fp8-e4m3",
                                          "q8_0", "kivi-4", "kivi-2",     "q4_0",         "q4_1",         "q5_0",
                                          "q5_1", "iq4_nl", "turboquant", "dgq2"};
  // The built-in families come first and in this order (dgq memory and help list them so);
  // families added later follow them.
  REQUIRE(names.size() >= built_in.size());
  CHECK(std::vector<std::string>(names.begin(), names.begin() + static_cast<std::ptrdiff_t>(built_in.size())) ==
        built_in);
  CHECK(std::set<std::string>(names.begin(), names.end()).size() == names.size());
  CHECK(scheme_families() == names);
  CHECK(find_scheme_family("dgq", Device::cpu) != nullptr);
  CHECK(find_scheme_family("no-such-family", Device::cpu) == nullptr);
}

TEST_CASE("every family's default spec is canonical and round-trips through make_scheme",
          "[scheme][registry][conformance]") {
  for (const SchemeFamily* f : cpu_families()) {
    CAPTURE(f->name);
    const auto s = make_scheme(f->name);
    CHECK(s->family() == f->name);
    CHECK(make_scheme(s->spec())->spec() == s->spec());
    // Spelling every default out changes nothing.
    std::string spelled(f->name);
    for (const SchemeParam& p : f->params) {
      spelled += &p == f->params.data() ? ':' : ',';
      spelled += std::string(p.key) + "=" + std::string(p.default_text);
    }
    CHECK(make_scheme(spelled)->spec() == s->spec());
    CHECK_FALSE(f->summary.empty());
  }
}

TEST_CASE("every family rejects unknown keys and out-of-range integers, naming family and key",
          "[scheme][registry][conformance][errors]") {
  for (const SchemeFamily* f : cpu_families()) {
    CAPTURE(f->name);
    // Nothing is close to no_such_key, so the message lists every key the spec may hold instead.
    std::string keys;
    for (const SchemeParam& p : f->params) keys += (keys.empty() ? "" : ", ") + std::string(p.key);
    for (const SchemeModifier& m : scheme_modifier_list()) {
      const bool declared =
          std::any_of(f->params.begin(), f->params.end(), [&](const SchemeParam& p) { return p.key == m.key; });
      if (!declared) keys += (keys.empty() ? "" : ", ") + std::string(m.key);
    }
    CHECK(typed_error_of([&] { (void)make_scheme(std::string(f->name) + ":no_such_key=1"); }) ==
          std::string("ParameterError: ") + std::string(f->name) + ": unknown parameter 'no_such_key' (" +
              std::string(f->name) + " takes " + keys + ")");
    for (const SchemeParam& p : f->params) {
      CAPTURE(p.key);
      if (p.kind != SchemeParam::Kind::integer) continue;
      const std::string where = std::string(f->name) + ": parameter '" + std::string(p.key) + "'";
      if (p.min > std::numeric_limits<int>::min()) {
        CHECK(typed_error_of([&] { (void)make_scheme(with_param(*f, p, std::to_string(p.min - 1))); }) ==
              "ParameterError: " + where + " = " + std::to_string(p.min - 1) + " is outside [" + std::to_string(p.min) +
                  ", " + std::to_string(p.max) + "]");
      }
      CHECK(typed_error_of([&] { (void)make_scheme(with_param(*f, p, "1.5")); }) ==
            "ParameterError: " + where + " = '1.5' is not an integer");
      CHECK_NOTHROW(make_scheme(with_param(*f, p, std::to_string(p.min))));
    }
  }
}

TEST_CASE("every family round-trips edge shapes in every dtype, deterministically",
          "[scheme][registry][conformance][roundtrip]") {
  const std::vector<std::pair<std::int64_t, std::int64_t>> shapes{{0, 1}, {1, 1}, {1, 64}, {33, 31}, {130, 70}};
  for (const SchemeFamily* f : cpu_families()) {
    const auto s = make_scheme(f->name);
    for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
      for (const auto& [tokens, wanted_channels] : shapes) {
        const std::int64_t channels = accepted_channels(f->name, wanted_channels);
        for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
          CAPTURE(f->name, dtype_name(dtype), tokens, channels, role_name(role));
          const OwnedTensor x = random_tensor(tokens, channels, 7, dtype);
          const Compressed c = s->compress(x.view(), role);
          CHECK(c.scheme == s->spec());
          CHECK(c.tokens == tokens);
          CHECK(c.channels == channels);
          CHECK(c.dtype == dtype);
          CHECK(c.role == role);
          CHECK(s->compress(x.view(), role).parts == c.parts);
          const OwnedTensor y = decompressed(*s, c);
          for (std::int64_t i = 0; i < y.size(); ++i) REQUIRE(std::isfinite(y.at(i)));
          // On smooth data every family keeps most of the signal (a decoder writing zeros or
          // garbage fails this).
          if (tokens * channels >= 64) {
            const OwnedTensor smooth = smooth_tensor(tokens, channels, dtype);
            CHECK(relative_error(smooth, decompressed(*s, s->compress(smooth.view(), role))) < 0.5);
          }
        }
      }
    }
  }
}

TEST_CASE("planned_bytes is what every family declares at every edge shape: the stored bytes, or their bound",
          "[scheme][registry][conformance][bytes]") {
  for (const std::string& f : scheme_families()) {
    const auto s = make_scheme(f);
    const bool exact = find_scheme_family(f, Device::cpu)->stored_size == SchemeFamily::StoredSize::exact;
    for (const DType t : {DType::f16, DType::bf16, DType::f32}) {
      for (const std::int64_t l : kEdgeTokens) {
        for (const std::int64_t wanted : kEdgeChannels) {
          const std::int64_t d = accepted_channels(f, wanted);
          for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
            CAPTURE(f, dtype_name(t), l, d, role_name(role));
            const OwnedTensor x = random_tensor(l, d, static_cast<std::uint64_t>(l * 131 + d), t);
            const Compressed c = s->compress(x.view(), role);
            if (exact) {
              CHECK(c.total_bytes() == s->planned_bytes(l, d, t, role));
            } else {
              CHECK(c.total_bytes() <= s->planned_bytes(l, d, t, role));
            }
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

TEST_CASE("every family names the first NaN or Inf by token and channel", "[scheme][registry][conformance][errors]") {
  for (const SchemeFamily* f : cpu_families()) {
    const auto s = make_scheme(f->name);
    for (const float bad : {std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity()}) {
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        const std::int64_t channels = accepted_channels(f->name, 40);
        CAPTURE(f->name, bad, role_name(role), channels);
        OwnedTensor x = random_tensor(70, channels, 3, DType::f32);
        store_element(x.mut(), 37 * channels + 5, bad);
        store_element(x.mut(), 52 * channels + 1, bad);  // a later one is not the one reported
        const std::string value = std::isnan(bad) ? "nan" : bad > 0 ? "inf" : "-inf";  // an infinity's sign is named
        CHECK(typed_error_of([&] { (void)s->compress(x.view(), role); }) ==
              std::string("InputError: ") + std::string(f->name) + ": non-finite value " + value +
                  " at token 37, channel 5");
      }
    }
  }
}

TEST_CASE("every family rejects data of another scheme and a missing part", "[scheme][registry][conformance][errors]") {
  for (const SchemeFamily* f : cpu_families()) {
    CAPTURE(f->name);
    const auto s = make_scheme(f->name);
    const OwnedTensor x = random_tensor(40, accepted_channels(f->name, 33), 5);
    Compressed c = s->compress(x.view(), TensorRole::key);
    OwnedTensor out(c.dtype, c.tokens, c.channels);
    Compressed other = c;
    other.scheme = "something-else";
    CHECK(typed_error_of([&] { s->decompress(other, out.mut()); }).rfind("InputError: ", 0) == 0);
    for (std::size_t i = 0; i < c.parts.size(); ++i) {
      CAPTURE(c.parts[i].name);
      Compressed missing = c;
      missing.parts.erase(missing.parts.begin() + static_cast<std::ptrdiff_t>(i));
      const std::string error = typed_error_of([&] { s->decompress(missing, out.mut()); });
      CHECK(error.find("part '" + c.parts[i].name + "'") != std::string::npos);
      CHECK(error.rfind("InputError: ", 0) == 0);
    }
  }
}

TEST_CASE("every family's bytes do not depend on the OpenMP thread count", "[scheme][registry][conformance][threads]") {
  const int before = omp_get_max_threads();
  for (const SchemeFamily* f : cpu_families()) {
    CAPTURE(f->name);
    const auto s = make_scheme(f->name);
    const OwnedTensor x = random_tensor(300, accepted_channels(f->name, 96), 13);
    omp_set_num_threads(1);
    const Compressed one = s->compress(x.view(), TensorRole::key);
    const OwnedTensor y1 = decompressed(*s, one);
    omp_set_num_threads(4);
    const Compressed four = s->compress(x.view(), TensorRole::key);
    const OwnedTensor y4 = decompressed(*s, four);
    omp_set_num_threads(before);
    CHECK(one.parts == four.parts);
    CHECK(y1.bytes == y4.bytes);
  }
}

TEST_CASE("a family with a head_dim rule refuses every other channel count with an InputError naming it",
          "[scheme][registry][conformance][errors]") {
  int families_with_a_rule = 0;
  for (const SchemeFamily* f : cpu_families()) {
    if (f->accepts_channels == nullptr) continue;
    ++families_with_a_rule;
    const auto s = make_scheme(f->name);
    for (const std::int64_t channels : {1, 15, 33, 40, 96, 100, 513, 1024}) {
      if (f->accepts_channels(channels)) continue;
      CAPTURE(f->name, channels);
      const OwnedTensor x = random_tensor(3, channels, 17);
      const std::string error = typed_error_of([&] { (void)s->compress(x.view(), TensorRole::key); });
      CHECK(error.rfind("InputError: " + std::string(f->name) + ": ", 0) == 0);
      CHECK(error.find("got " + std::to_string(channels)) != std::string::npos);
      // Before any row is read: `dgq memory` asks a scheme about a head_dim with a head of no
      // tokens (sim/memory/src/head_dim_check.cpp).
      const OwnedTensor empty(DType::f16, 0, channels);
      CHECK(typed_error_of([&] { (void)s->compress(empty.view(), TensorRole::value); }) == error);
    }
  }
  CHECK(families_with_a_rule >= 1);  // turboquant's codebooks exist for powers of two only
}

TEST_CASE("every family compresses an empty tensor to empty parts and decompresses it",
          "[scheme][registry][conformance][edge]") {
  for (const std::string& f : scheme_families()) {
    const auto s = make_scheme(f);
    for (const auto& [l, d] : {std::pair<std::int64_t, std::int64_t>{0, 128}, {0, 1}, {5, 0}}) {
      if (!takes_channels(f, d)) continue;  // refused by name: test_scheme_conformance.cpp
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

TEST_CASE("every family rejects a part of the wrong size, naming part and sizes",
          "[scheme][registry][conformance][errors]") {
  // A family whose data decides its size (StoredSize::at_most) cannot name one expected size; it
  // names the part and the bytes it has, and what it expected in its own words.
  for (const std::string& f : scheme_families()) {
    const auto s = make_scheme(f);
    const bool exact = find_scheme_family(f, Device::cpu)->stored_size == SchemeFamily::StoredSize::exact;
    const OwnedTensor x = random_tensor(70, accepted_channels(f, 65), 11);
    const Compressed good = s->compress(x.view(), TensorRole::key);
    REQUIRE(good.total_bytes() > 0);
    for (std::size_t p = 0; p < good.parts.size(); ++p) {
      CAPTURE(f, good.parts[p].name);
      if (good.parts[p].bytes.empty()) continue;  // dgq2's residual with residual=0: nothing to shorten
      Compressed shorter = good;
      shorter.parts[p].bytes.pop_back();
      OwnedTensor out(x.dtype, x.tokens, x.channels);
      const std::string expected = "part '" + good.parts[p].name + "' has " +
                                   std::to_string(good.parts[p].bytes.size() - 1) + " bytes, " +
                                   (exact ? "expected " + std::to_string(good.parts[p].bytes.size()) : "");
      CHECK_THROWS_AS(s->decompress(shorter, out.mut()), InputError);
      CHECK_THROWS_WITH(s->decompress(shorter, out.mut()), Catch::Matchers::Contains(expected));
      Compressed missing = good;
      missing.parts.erase(missing.parts.begin() + static_cast<std::ptrdiff_t>(p));
      CHECK_THROWS_WITH(s->decompress(missing, out.mut()),
                        Catch::Matchers::Contains("part '" + good.parts[p].name + "' is missing"));
    }
  }
}

TEST_CASE("every family leaves its input unchanged and is deterministic", "[scheme][registry][conformance]") {
  for (const std::string& f : scheme_families()) {
    CAPTURE(f);
    const auto s = make_scheme(f);
    const OwnedTensor x = random_tensor(97, accepted_channels(f, 80), 5);
    const std::vector<std::uint8_t> before = x.bytes;
    const Compressed a = s->compress(x.view(), TensorRole::value);
    const Compressed b = s->compress(x.view(), TensorRole::value);
    CHECK(x.bytes == before);
    CHECK(a.parts == b.parts);
  }
}

}  // namespace dgq::test
