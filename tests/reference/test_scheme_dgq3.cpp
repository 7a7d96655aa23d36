// dgq3 (DGQ v3, docs/spec.md "DGQ v3", rules W0-W7 and C8): parameters, edge cases, the bytes of
// a head, the promotion rule (W3), the decode against an independent oracle of rules W1-W5,
// what the window mean buys on keys with a shared component, golden digests and the causal cache.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <tuple>

#include "dgq/causal.hpp"
#include "dgq/dgq3_grids.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/rotation.hpp"
#include "golden_scheme_digests.hpp"
#include "test_causal_support.hpp"
#include "test_dgq_support.hpp"
#include "test_scheme_support.hpp"

using namespace dgq;
using namespace dgq::test;

namespace {

double dgq3_squared_error(const OwnedTensor& x, const OwnedTensor& y) {
  double num = 0.0;
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const double d = static_cast<double>(y.at(i)) - x.at(i);
    num += d * d;
  }
  return num;
}

// Keys as RoPE leaves them: a component shared by every token (a slowly turning offset per
// channel pair) plus a smaller token-specific part. SplitMix64, so the values depend on nothing
// but the arguments.
OwnedTensor dgq3_key_like(std::int64_t l, std::int64_t d, std::uint64_t state, DType dtype = DType::f16) {
  std::vector<float> v(static_cast<std::size_t>(l * d));
  SplitMix64 random(state);
  for (std::int64_t t = 0; t < l; ++t) {
    for (std::int64_t c = 0; c < d; ++c) {
      const float unit = random.unit() * 2.0f - 1.0f;
      const std::int64_t pair = c % (d / 2);
      const float angle = 0.002f * static_cast<float>(t) * static_cast<float>(pair + 1);
      const float shared = (4.0f + static_cast<float>(pair % 5)) * (c < d / 2 ? std::cos(angle) : std::sin(angle));
      v[static_cast<std::size_t>(t * d + c)] = shared + unit * (t % 11 == 3 ? 6.0f : 1.0f);
    }
  }
  return tensor_from(v, l, d, dtype);
}

// Rule W8's code written as a search for the nearest level (the lower one on equal distances, in
// fp64, where v - level is exact), not as W8's count of midpoints.
int nearest_grid_level(float v, int bits) {
  int best = 0;
  for (int i = 1; i < (1 << bits); ++i) {
    if (std::fabs(double(v) - rules::grid_level(bits, i)) < std::fabs(double(v) - rules::grid_level(bits, best)))
      best = i;
  }
  return best;
}

// Rules W1, W3-W5 and W8 written out independently (no cnorm): rotate, subtract the window mean
// of the decoded rows, symmetric codes per block (on the Lloyd-Max grid at 2-5 bits when `nl`),
// the decoded rows rotated back.
std::vector<float> dgq3_oracle(const OwnedTensor& x, TensorRole role, int bits, int hi_bits, double hi_frac,
                               double hi_ratio, int block, bool centre, int window, bool nl = false) {
  const std::int64_t L = x.tokens, D = x.channels;
  const int rot_block = rules::hadamard_block(D, role == TensorRole::key);
  std::vector<float> decoded(static_cast<std::size_t>(L * D)), out(decoded.size());
  double sum_var = 0.0;
  std::int64_t promoted = 0;
  for (std::int64_t t = 0; t < L; ++t) {
    std::vector<float> row(static_cast<std::size_t>(D));
    for (std::int64_t c = 0; c < D; ++c) row[c] = x.get(t, c);
    // W3 with rule 1's canonical sums.
    float acc[32] = {};
    for (std::int64_t c = 0; c < D; ++c) acc[c % 32] = acc[c % 32] + row[c];
    for (int s = 16; s >= 1; s /= 2)
      for (int j = 0; j < s; ++j) acc[j] = acc[j] + acc[j + s];
    const float mean = acc[0] / static_cast<float>(D);
    float acc2[32] = {};
    for (std::int64_t c = 0; c < D; ++c) {
      const float delta = row[c] - mean;
      acc2[c % 32] = std::fma(delta, delta, acc2[c % 32]);
    }
    for (int s = 16; s >= 1; s /= 2)
      for (int j = 0; j < s; ++j) acc2[j] = acc2[j] + acc2[j + s];
    const double variance = acc2[0] / static_cast<float>(D);
    const bool wide = hi_frac > 0.0 && static_cast<double>(promoted) < hi_frac * static_cast<double>(t + 1) &&
                      (t == 0 || variance > hi_ratio * (sum_var / static_cast<double>(t)));
    promoted += wide ? 1 : 0;
    sum_var += variance;
    const int b = wide ? hi_bits : bits;
    hadamard_rotate_row(row.data(), D, rot_block);
    std::vector<float> m(static_cast<std::size_t>(D), 0.0f);
    const std::int64_t held = std::min<std::int64_t>(t, window);
    if (centre && held > 0) {
      for (std::int64_t j = t - held; j < t; ++j)
        for (std::int64_t c = 0; c < D; ++c) m[c] = m[c] + decoded[static_cast<std::size_t>(j * D + c)];
      for (std::int64_t c = 0; c < D; ++c) m[c] = m[c] / static_cast<float>(held);
    }
    for (std::int64_t c = 0; c < D; ++c) row[c] = row[c] - m[c];
    for (std::int64_t first = 0; first < D; first += block) {
      float extreme = 0.0f;
      for (std::int64_t c = first; c < first + block; ++c)
        if (std::fabs(row[c]) > std::fabs(extreme)) extreme = row[c];
      const bool on_grid = nl && b <= 5;
      const float lowest = on_grid ? -127.0f : -static_cast<float>(1 << (b - 1));
      const float scale = rules::half_to_float(rules::float_to_half(extreme / lowest));
      for (std::int64_t c = first; c < first + block; ++c) {
        if (on_grid) {
          const float v = scale == 0.0f ? 0.0f : row[c] * (1.0f / scale);
          decoded[static_cast<std::size_t>(t * D + c)] =
              m[c] + float(rules::grid_level(b, nearest_grid_level(v, b))) * scale;
          continue;
        }
        float q = scale == 0.0f ? 0.0f : rintf(row[c] * (1.0f / scale));
        q = std::min(std::max(q, -static_cast<float>(1 << (b - 1))), static_cast<float>((1 << (b - 1)) - 1));
        decoded[static_cast<std::size_t>(t * D + c)] = m[c] + q * scale;
      }
    }
    std::vector<float> back(decoded.begin() + t * D, decoded.begin() + (t + 1) * D);
    hadamard_rotate_row(back.data(), D, rot_block);
    std::copy(back.begin(), back.end(), out.begin() + t * D);
  }
  return out;
}

}  // namespace

TEST_CASE("dgq3: the default spec is canonical; out-of-range parameters are refused by name",
          "[scheme][dgq3][params]") {
  CHECK(make_scheme("dgq3")->spec() ==
        "dgq3:kbits=4,vbits=4,block=64,rot=hadamard,cnorm=none,cnorm_pow=1,calib=32,center=k,center_win=32,pairs=half,"
        "hi_bits=8,hi_frac=0,hi_ratio=2,nl=none");
  CHECK(error_message_of([] { make_scheme("dgq3:nl=q"); }) ==
        "dgq3: parameter 'nl' = 'q' is not one of none, k, v, kv");
  CHECK(error_message_of([] { make_scheme("dgq3:hi_frac=1.5"); }) ==
        "dgq3: parameter 'hi_frac' = '1.5' is not in [0, 1]");
  CHECK(error_message_of([] { make_scheme("dgq3:block=48"); }) ==
        "dgq3: parameter 'block' = '48' is not one of 16, 32, 64, 128, 256");
  CHECK(error_message_of([] { make_scheme("dgq3:center=q"); }) ==
        "dgq3: parameter 'center' = 'q' is not one of none, k, v, kv");
  CHECK(error_message_of([] { make_scheme("dgq3:cnorm=x"); }) ==
        "dgq3: parameter 'cnorm' = 'x' is not one of none, k, v, kv");
  CHECK(error_message_of([] { make_scheme("dgq3:hi_ratio=-1"); }) == "dgq3: parameter 'hi_ratio' = '-1' is not >= 0");
  CHECK(error_message_of([] { make_scheme("dgq3:cnorm_pow=3"); }) ==
        "dgq3: parameter 'cnorm_pow' = '3' is not in [-2, 2]");
}

TEST_CASE("dgq3: empty, one-token, zero and constant heads; head dims it cannot take", "[scheme][dgq3][edge]") {
  const auto s = make_scheme("dgq3:hi_frac=0.25");
  for (const std::int64_t l : {0, 1, 2, 33}) {
    CAPTURE(l);
    const OwnedTensor zeros = tensor_from(std::vector<float>(static_cast<std::size_t>(l * 64), 0.0f), l, 64);
    const Compressed c = s->compress(zeros.view(), TensorRole::key);
    CHECK(decompressed(*s, c).bytes == zeros.bytes);
    const CausalSchedule sched = s->causal_schedule(zeros.view(), TensorRole::key);
    REQUIRE(sched.final_bytes.size() == static_cast<std::size_t>(l));
    if (l > 0) CHECK(sched.final_bytes.back() == c.total_bytes());
  }
  // A constant head: every token's rotated row is c * sqrt(64) in channel 0 and 0 elsewhere.
  const OwnedTensor constant = tensor_from(std::vector<float>(40 * 64, 1.5f), 40, 64);
  const OwnedTensor back = decompressed(*s, s->compress(constant.view(), TensorRole::value));
  for (std::int64_t i = 0; i < constant.size(); ++i) REQUIRE(back.at(i) == 1.5f);
  CHECK(typed_error_of([&] {
          s->compress(tensor_from(std::vector<float>(4 * 96, 1.0f), 4, 96).view(), TensorRole::key);
        }) == "InputError: dgq3: the Hadamard rotation needs head_dim (channels) a positive multiple of 64, got 96");
  CHECK(typed_error_of([&] {
          make_scheme("dgq3:block=128")
              ->compress(tensor_from(std::vector<float>(4 * 64, 1.0f), 4, 64).view(), TensorRole::key);
        }) == "InputError: dgq3: head_dim (channels) must be a positive multiple of block = 128, got 64");
}

TEST_CASE("dgq3: bytes of a head are codes, fp16 block scales, the promotion bitmap and the channel scales",
          "[scheme][dgq3][bytes]") {
  const OwnedTensor x = dgq3_key_like(1024, 64, 5);
  // 4-bit codes and one fp16 scale per 64 channels: 34 bytes per token, 4.25 bits per element.
  CHECK(make_scheme("dgq3")->compress(x.view(), TensorRole::key).total_bytes() == 1024u * 34u);
  CHECK(make_scheme("dgq3:kbits=5,block=32")->compress(x.view(), TensorRole::key).total_bytes() == 1024u * (40u + 4u));
  // cnorm=k adds 64 fp32 scales to K once the head is longer than calib, nothing to V.
  const auto norm = make_scheme("dgq3:cnorm=k");
  CHECK(norm->compress(x.view(), TensorRole::key).total_bytes() == 1024u * 34u + 256u);
  CHECK(norm->compress(x.view(), TensorRole::value).total_bytes() == 1024u * 34u);
  // Promotions: 8-bit rows for the promoted tokens and a bitmap of 128 bytes.
  const auto wide = make_scheme("dgq3:hi_frac=0.05");
  const Compressed c = wide->compress(x.view(), TensorRole::key);
  const std::vector<std::uint8_t>& bitmap = c.parts[2].bytes;
  REQUIRE(bitmap.size() == 128u);
  std::uint64_t promoted = 0;
  for (const std::uint8_t b : bitmap) promoted += static_cast<std::uint64_t>(__builtin_popcount(b));
  CHECK(promoted > 0);
  CHECK(c.total_bytes() == 1024u * 34u + promoted * 32u + 128u);
  CHECK(c.total_bytes() <= wide->planned_bytes(1024, 64, DType::f16, TensorRole::key));
}

TEST_CASE("dgq3: promotion follows the variance and never exceeds the budget at any prefix (rule W3)",
          "[scheme][dgq3][promotion]") {
  // Quiet rows (variance 1) with loud ones (81) at 5, 40 and 41. Token 0 is always promoted (it
  // has no running mean); token 5 then only when the budget allows a second promotion by then
  // (hi_frac 0.2: 1 < 1.2), tokens 40 and 41 while it allows a second and a third. hi_frac is
  // the spec's float, widened: 0.1f * 10 is just above 1, so the blind control promotes token 9.
  std::vector<float> v(60 * 64);
  for (std::int64_t t = 0; t < 60; ++t)
    for (std::int64_t c = 0; c < 64; ++c)
      v[t * 64 + c] = (c % 2 ? 1.0f : -1.0f) * (t == 5 || t == 40 || t == 41 ? 9.0f : 1.0f);
  const OwnedTensor x = tensor_from(v, 60, 64);
  const auto bitmap_of = [&](const std::string& spec) {
    const Compressed c = make_scheme(spec)->compress(x.view(), TensorRole::value);
    std::vector<int> on;
    for (int t = 0; t < 60; ++t)
      if ((c.parts[2].bytes[static_cast<std::size_t>(t / 8)] >> (t % 8)) & 1) on.push_back(t);
    return on;
  };
  CHECK(bitmap_of("dgq3:hi_frac=0.2") == std::vector<int>{0, 5, 40, 41});
  CHECK(bitmap_of("dgq3:hi_frac=0.1") == std::vector<int>{0, 40, 41});
  CHECK(bitmap_of("dgq3:hi_frac=0.04") == std::vector<int>{0, 40});
  // hi_ratio = 0 is the variance-blind control: promotions spread evenly as the budget allows.
  CHECK(bitmap_of("dgq3:hi_frac=0.1,hi_ratio=0") == std::vector<int>{0, 9, 19, 29, 39, 49, 59});
}

TEST_CASE("dgq3: decoding equals an independent oracle of rules W1, W3-W5 and W8", "[scheme][dgq3][oracle]") {
  for (const auto& [spec, bits, hi_bits, hi_frac, block, centre, nl] :
       {std::tuple<const char*, int, int, double, int, bool, bool>{"dgq3", 4, 8, 0.0, 64, true, false},
        {"dgq3:kbits=5,vbits=5,center=none,block=32", 5, 8, 0.0, 32, false, false},
        {"dgq3:kbits=3,vbits=3,hi_frac=0.1,hi_bits=6,center=kv,block=16", 3, 6, double(0.1f), 16, true, false},
        {"dgq3:nl=kv", 4, 8, 0.0, 64, true, true},
        {"dgq3:kbits=2,vbits=2,nl=kv,center=kv,block=32", 2, 8, 0.0, 32, true, true},
        {"dgq3:kbits=3,vbits=3,nl=kv,hi_frac=0.1,hi_bits=5", 3, 5, double(0.1f), 64, true, true},
        {"dgq3:kbits=5,vbits=5,nl=kv,center=none,hi_frac=0.1,hi_bits=7", 5, 7, double(0.1f), 64, false, true}}) {
    const auto s = make_scheme(spec);
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      CAPTURE(spec, role_name(role));
      const OwnedTensor x = dgq3_key_like(200, 128, 9, DType::f32);
      const bool centred =
          centre && (role == TensorRole::key || std::string(spec).find("center=kv") != std::string::npos);
      const std::vector<float> want = dgq3_oracle(x, role, bits, hi_bits, hi_frac, 2.0, block, centred, 32, nl);
      const OwnedTensor got = decompressed(*s, s->compress(x.view(), role));
      std::int64_t mismatches = 0;
      for (std::int64_t i = 0; i < x.size(); ++i) mismatches += got.at(i) == want[static_cast<std::size_t>(i)] ? 0 : 1;
      CHECK(mismatches == 0);
    }
  }
}

TEST_CASE("dgq3: the window mean lowers the error of keys with a shared component; cnorm changes the channels' share",
          "[scheme][dgq3]") {
  const OwnedTensor x = dgq3_key_like(512, 64, 21);
  const auto error = [&](const char* spec) {
    const auto s = make_scheme(spec);
    return dgq3_squared_error(x, decompressed(*s, s->compress(x.view(), TensorRole::key)));
  };
  CHECK(error("dgq3") < 0.5 * error("dgq3:center=none"));
  CHECK(error("dgq3:kbits=5") < 0.5 * error("dgq3"));
  CHECK(error("dgq3:cnorm=k") != error("dgq3"));
}

TEST_CASE("dgq3: the Lloyd-Max grid lowers the error at 2-5 bits and leaves 6-8-bit codes alone (rule W8)",
          "[scheme][dgq3][grid]") {
  // Gaussian rows, the law the grid was fitted to (tools/dgq3-grids.py); on the shipped SmolLM2
  // trace the grid raises K and V SNR by 0.5-0.9 dB at every width (docs/spec.md rule W8).
  const OwnedTensor x = tensor_from(gaussian_values(512 * 128, 33), 512, 128, DType::f32);
  const auto error = [&](const std::string& spec, TensorRole role) {
    const auto s = make_scheme(spec);
    return dgq3_squared_error(x, decompressed(*s, s->compress(x.view(), role)));
  };
  for (const int bits : {2, 3, 4, 5}) {
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      const std::string uniform = "dgq3:kbits=" + std::to_string(bits) + ",vbits=" + std::to_string(bits);
      CAPTURE(bits, role_name(role));
      // The same bytes (the grid changes levels, not widths), a smaller error.
      CHECK(make_scheme(uniform + ",nl=kv")->compress(x.view(), role).total_bytes() ==
            make_scheme(uniform)->compress(x.view(), role).total_bytes());
      CHECK(error(uniform + ",nl=kv", role) < 0.95 * error(uniform, role));
      // nl names roles: the other role keeps evenly spaced levels, bit for bit.
      const std::string other = role == TensorRole::key ? ",nl=v" : ",nl=k";
      CHECK(make_scheme(uniform + other)->compress(x.view(), role).parts ==
            make_scheme(uniform)->compress(x.view(), role).parts);
    }
  }
  for (const char* wide : {"dgq3:kbits=6,vbits=7", "dgq3:kbits=8,vbits=8"}) {
    CAPTURE(wide);
    for (const TensorRole role : {TensorRole::key, TensorRole::value})
      CHECK(make_scheme(std::string(wide) + ",nl=kv")->compress(x.view(), role).parts ==
            make_scheme(wide)->compress(x.view(), role).parts);
  }
}

TEST_CASE("dgq3: stored data that cannot be decoded is refused as corrupt", "[scheme][dgq3][errors]") {
  const auto s = make_scheme("dgq3:cnorm=k,calib=4");
  const OwnedTensor x = dgq3_key_like(16, 64, 2);
  Compressed c = s->compress(x.view(), TensorRole::key);
  Compressed bad_scale = c;
  bad_scale.parts[1].bytes[1] = 0x7c;  // the first block scale becomes +inf
  OwnedTensor out(x.dtype, x.tokens, x.channels);
  CHECK(typed_error_of([&] {
          s->decompress(bad_scale, out.mut());
        }).find("corrupt dgq3 data: non-finite block scale at token 0") != std::string::npos);
  Compressed bad_channel = c;
  std::fill(bad_channel.parts[3].bytes.begin(), bad_channel.parts[3].bytes.begin() + 4, std::uint8_t{0});
  CHECK(typed_error_of([&] {
          s->decompress(bad_channel, out.mut());
        }).find("channel scale 0 is not a positive normal float") != std::string::npos);
  Compressed short_codes = c;
  short_codes.parts[0].bytes.pop_back();
  CHECK_THROWS_AS(s->decompress(short_codes, out.mut()), InputError);
}

TEST_CASE("dgq3 golden digests: every stored part for fixed inputs", "[scheme][dgq3][golden]") {
  // Made by running this test with DGQ_PRINT_GOLDEN=1 on the reference (x86-64, g++ 12.2, Release); the inputs
  // are dgq3_key_like(300, 128, state), which depends on nothing but its state. A change here is a change of
  // the format and must come with docs/spec.md "DGQ v3".
  check_golden_tensor_digests(
      {{"dgq3", DType::f16, TensorRole::key, 1, "9766e000a010f6a9"},
       {"dgq3", DType::f16, TensorRole::value, 2, "5efa5bad5fca8273"},
       {"dgq3:kbits=5,vbits=4,hi_frac=0.05", DType::f32, TensorRole::key, 3, "ee345dde510b9dd7"},
       {"dgq3:kbits=3,vbits=3,block=32,center=kv,hi_frac=0.1,hi_bits=6", DType::bf16, TensorRole::value, 4,
        "e0c7f097ed0b342e"},
       {"dgq3:cnorm=kv,cnorm_pow=-0.5,calib=16,rot=none", DType::f16, TensorRole::key, 5, "b190faa4c823adfc"},
       {"dgq3:nl=kv", DType::f16, TensorRole::key, 6, "d49c6c6e513c6d44"},
       {"dgq3:kbits=3,vbits=2,nl=v,center=kv,hi_frac=0.1,hi_bits=5", DType::f32, TensorRole::value, 7,
        "d638f0958a90faaa"},
       {"dgq3:kbits=5,nl=k,block=32,hi_frac=0.05", DType::bf16, TensorRole::key, 8, "6a9809cb2be3378d"}},
      [](std::uint64_t stream, DType dtype) { return dgq3_key_like(300, 128, stream, dtype); });
}

TEST_CASE("causal: dgq3 is final on append and a prefix costs its own compression (rule C8)", "[causal][dgq3]") {
  for (const char* spec :
       {"dgq3", "dgq3:hi_frac=0.1,center=kv,cnorm=kv,calib=16", "dgq3:kbits=3,hi_frac=0.2,hi_bits=5"}) {
    const auto s = make_scheme(spec);
    const OwnedTensor x = dgq3_key_like(120, 64, 17);
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      CAPTURE(spec, role_name(role));
      const CausalSchedule sched = s->causal_schedule(x.view(), role);
      for (std::int64_t t = 0; t < x.tokens; ++t) {
        REQUIRE(sched.final_tokens[static_cast<std::size_t>(t)] == static_cast<std::uint32_t>(t + 1));
        REQUIRE(sched.final_bytes[static_cast<std::size_t>(t)] ==
                s->compress(causal_rows(x, 0, t + 1), role).total_bytes());
      }
      for (const std::int64_t batch : {1, 7}) check_cache_against_timeline(*s, x, role, batch);
    }
  }
}
