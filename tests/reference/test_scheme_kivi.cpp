// kivi-4 / kivi-2: per-channel key groups, per-token values, the recent tokens (and for keys
// the incomplete group before them) kept exactly.
#include "test_scheme_support.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

// Tokens quantized, by the layout docs/schemes.md defines.
std::int64_t quantized_tokens(std::int64_t l, TensorRole role, std::int64_t group, std::int64_t residual) {
  const std::int64_t old = std::max<std::int64_t>(l - residual, 0);
  return role == TensorRole::key ? old / group * group : old;
}

}  // namespace

TEST_CASE("kivi quantizes whole key groups and every value token before the residual", "[scheme][kivi][edge]") {
  for (const std::string spec : {"kivi-4", "kivi-2", "kivi-2:group=16,residual=48", "kivi-4:residual=0"}) {
    const auto s = make_scheme(spec);
    const ParsedSpec parsed = parse_spec(spec);
    const std::int64_t group = parsed.args.integer("group");
    const std::int64_t residual = parsed.args.integer("residual");
    const int bits = parsed.family->name == "kivi-4" ? 4 : 2;
    for (const std::int64_t l : {0, 1, 31, 32, 33, 63, 64, 65, 100}) {
      for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
        const std::int64_t d = 33;
        CAPTURE(spec, l, role_name(role));
        const OwnedTensor x = random_tensor(l, d, 900 + static_cast<std::uint64_t>(l));
        const Compressed c = s->compress(x.view(), role);
        const std::int64_t q = quantized_tokens(l, role, group, residual);
        CHECK(c.part_bytes("residual") == static_cast<std::uint64_t>((l - q) * d * 2));
        CHECK(c.part_bytes("codes") == static_cast<std::uint64_t>((q * d * bits + 7) / 8));
        CHECK(c.part_bytes("ranges") ==
              static_cast<std::uint64_t>(role == TensorRole::key ? q / group * d * 8 : q * 8));
        // The tail comes back bit for bit.
        const OwnedTensor y = decompressed(*s, c);
        const std::size_t tail_at = static_cast<std::size_t>(q * d * 2);
        CHECK(std::equal(x.bytes.begin() + static_cast<std::ptrdiff_t>(tail_at), x.bytes.end(),
                         y.bytes.begin() + static_cast<std::ptrdiff_t>(tail_at)));
      }
    }
  }
}

TEST_CASE("kivi keys take their range per channel over the group's tokens", "[scheme][kivi]") {
  // 64 old tokens + 32 residual, 2 channels. Channel 0 ramps 0..31 in each group, channel 1 is
  // constant 5: channel 1 gets hi == lo and decodes exactly, channel 0 gets [0, 31].
  std::vector<float> v;
  for (int t = 0; t < 96; ++t) {
    v.push_back(static_cast<float>(t % 32));
    v.push_back(5.0f);
  }
  const OwnedTensor x = tensor_from(v, 96, 2);
  const auto s = make_scheme("kivi-4");
  const Compressed c = s->compress(x.view(), TensorRole::key);
  const std::vector<std::uint8_t>& r = c.find("ranges")->bytes;
  REQUIRE(r.size() == 2 * 2 * 8);
  float f[8];
  std::memcpy(f, r.data(), 32);
  CHECK(std::vector<float>(f, f + 8) == std::vector<float>{0, 31, 5, 5, 0, 31, 5, 5});
  const OwnedTensor y = decompressed(*s, c);
  for (int t = 0; t < 96; ++t) {
    CAPTURE(t);
    CHECK(y.at(2 * t + 1) == 5.0f);
    CHECK(std::fabs(y.at(2 * t) - x.at(2 * t)) <= affine_bound(0.0f, 31.0f, 15));
  }
}

TEST_CASE("kivi round trips stay within half a step of their group's range", "[scheme][kivi][roundtrip]") {
  for (const auto& [spec, levels] : {std::pair<std::string, int>{"kivi-4", 15}, {"kivi-2", 3}}) {
    const auto s = make_scheme(spec);
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      for (const std::int64_t d : {1, 64, 128}) {
        const std::int64_t l = 200;
        OwnedTensor x = random_tensor(l, d, 1200 + static_cast<std::uint64_t>(d));
        store_element(x.mut(), 0, 65504.0f);
        store_element(x.mut(), 1, 6e-8f);
        const OwnedTensor y = decompressed(*s, s->compress(x.view(), role));
        const std::int64_t q = quantized_tokens(l, role, 32, 32);
        for (std::int64_t i = 0; i < q * d; ++i) {
          const std::int64_t t = i / d, ch = i % d;
          float lo = INFINITY, hi = -INFINITY;
          if (role == TensorRole::key) {
            for (std::int64_t u = t / 32 * 32; u < t / 32 * 32 + 32; ++u) {
              lo = std::fmin(lo, x.at(u * d + ch));
              hi = std::fmax(hi, x.at(u * d + ch));
            }
          } else {
            for (std::int64_t k = 0; k < d; ++k) {
              lo = std::fmin(lo, x.at(t * d + k));
              hi = std::fmax(hi, x.at(t * d + k));
            }
          }
          CAPTURE(spec, role_name(role), d, t, ch, x.at(i), y.at(i), lo, hi);
          CHECK(std::fabs(y.at(i) - x.at(i)) <= affine_bound(lo, hi, levels) + half_ulp(DType::f16, y.at(i)));
        }
        for (std::int64_t i = q * d; i < l * d; ++i) CHECK(y.at(i) == x.at(i));
      }
    }
  }
}
