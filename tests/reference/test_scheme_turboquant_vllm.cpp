// vLLM's TurboQuant presets (turboquant_k8v4, turboquant_4bit_nc, turboquant_k3v4_nc,
// turboquant_3bit_nc; docs/spec.md "vLLM TurboQuant presets"): vLLM's slot bytes, hand-computed
// slots, an independent double-precision oracle of the key rule (dense Sylvester Hadamard,
// std::mt19937 signs), norm correction, the distortion against its Lloyd-Max prediction, and
// pinned digests.
#include "test_dgq_support.hpp"
#include "test_scheme_support.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <random>

#include "dgq/errors.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;

namespace {

struct TqvCase {
  const char* name;
  int key_bits, value_bits;
  std::uint64_t slot128, slot64;  // vLLM's slot_size at head_dim 128 and 64
};

// Slot bytes from vLLM's TurboQuantConfig as merged in PR #38479 (key: D fp8 bytes, or
// ceil(D*b/8) + 4; value: ceil(D*vb/8) + 4). At 128 they are the PR's table: 196/136/120/104.
constexpr TqvCase kTqvCases[] = {
    {"turboquant_k8v4", 8, 4, 196, 100},
    {"turboquant_4bit_nc", 4, 4, 136, 72},
    {"turboquant_k3v4_nc", 3, 4, 120, 64},
    {"turboquant_3bit_nc", 3, 3, 104, 56},
};

std::vector<std::uint8_t> tqv_slots(const Compressed& c) {
  REQUIRE(c.parts.size() == 1);
  REQUIRE(c.parts[0].name == "slots");
  return c.parts[0].bytes;
}

double tqv_rel_mse(const OwnedTensor& x, const OwnedTensor& y) {
  double err = 0.0, ref = 0.0;
  for (std::int64_t i = 0; i < x.size(); ++i) {
    const double e = static_cast<double>(y.at(i)) - x.at(i);
    err += e * e;
    ref += static_cast<double>(x.at(i)) * x.at(i);
  }
  return err / ref;
}

// H_d diag(s) x / divisor in double with a dense Sylvester matrix scaled by 1/sqrt(d), the
// signs drawn from std::mt19937(seed) mod 2 (sign = 2 bit - 1): vLLM's key rotation, computed
// without anything of the implementation.
std::vector<double> tqv_oracle_rotate(const std::vector<double>& x, int d, std::uint32_t seed, double divisor) {
  std::mt19937 gen(seed);
  std::vector<double> s(static_cast<std::size_t>(d)), y(static_cast<std::size_t>(d), 0.0);
  for (double& v : s) v = (gen() & 1u) ? 1.0 : -1.0;
  for (int j = 0; j < d; ++j) {
    for (int i = 0; i < d; ++i) {
      const double h = (__builtin_popcount(static_cast<unsigned>(i & j)) % 2 ? -1.0 : 1.0) / std::sqrt(double(d));
      y[j] += h * s[i] * x[i] / divisor;
    }
  }
  return y;
}

int tqv_code(const std::uint8_t* row, std::int64_t j, int bits, std::int64_t row_bytes) {
  const std::int64_t bit = j * bits;
  unsigned w = row[bit / 8];
  if (bit / 8 + 1 < row_bytes) w |= static_cast<unsigned>(row[bit / 8 + 1]) << 8;
  return static_cast<int>((w >> (bit % 8)) & ((1u << bits) - 1u));
}

}  // namespace

TEST_CASE("turboquant vllm presets: K + V per token-head is vLLM's slot size", "[turboquant_vllm]") {
  for (const TqvCase& tc : kTqvCases) {
    CAPTURE(tc.name);
    const auto s = make_scheme(tc.name);
    for (const auto& [d, slot] : {std::pair<std::int64_t, std::uint64_t>{128, tc.slot128}, {64, tc.slot64}}) {
      CAPTURE(d);
      const std::uint64_t k = s->planned_bytes(1, d, DType::bf16, TensorRole::key);
      const std::uint64_t v = s->planned_bytes(1, d, DType::bf16, TensorRole::value);
      CHECK(k + v == slot);
      CHECK(v == static_cast<std::uint64_t>((d * tc.value_bits + 7) / 8 + 4));
      CHECK(k == static_cast<std::uint64_t>(tc.key_bits == 8 ? d : (d * tc.key_bits + 7) / 8 + 4));
      CHECK(s->planned_bytes(5, d, DType::f16, TensorRole::key) == 5 * k);
      const OwnedTensor x = random_tensor(3, d, 7);
      CHECK(s->compress(x.view(), TensorRole::key).total_bytes() == 3 * k);
      CHECK(s->compress(x.view(), TensorRole::value).total_bytes() == 3 * v);
    }
  }
}

TEST_CASE("turboquant vllm presets: spec, seed and head dims", "[turboquant_vllm]") {
  CHECK(make_scheme("turboquant_k8v4")->spec() == "turboquant_k8v4");
  CHECK(make_scheme("turboquant_4bit_nc")->spec() == "turboquant_4bit_nc:seed=42");
  CHECK(make_scheme("turboquant_3bit_nc:seed=1379")->spec() == "turboquant_3bit_nc:seed=1379");
  CHECK_THROWS_AS(make_scheme("turboquant_k8v4:seed=1"), ParameterError);
  // The seed moves the key codes (the rotation) and leaves the values alone.
  const OwnedTensor x = random_tensor(4, 128, 3);
  const auto a = make_scheme("turboquant_4bit_nc:seed=42"), b = make_scheme("turboquant_4bit_nc:seed=1379");
  CHECK(tqv_slots(a->compress(x.view(), TensorRole::key)) != tqv_slots(b->compress(x.view(), TensorRole::key)));
  CHECK(tqv_slots(a->compress(x.view(), TensorRole::value)) == tqv_slots(b->compress(x.view(), TensorRole::value)));
  for (const TqvCase& tc : kTqvCases) {
    const OwnedTensor odd = random_tensor(2, 96, 3);
    CHECK_THROWS_WITH(make_scheme(tc.name)->compress(odd.view(), TensorRole::value),
                      Contains("power of two in [16, 512]") && Contains("got 96"));
  }
}

TEST_CASE("turboquant vllm values: a hand-computed 4-bit and 3-bit slot", "[turboquant_vllm]") {
  // v_j = j - 4: min -4, max 11, scale (11 + 4) / 15 = 1, code j (floor(j + 0.5)); fp16 1 = 0x3c00,
  // fp16 -4 = 0xc400. Codes are nibble pairs, element 2i in the low nibble.
  std::vector<float> v(16);
  for (int j = 0; j < 16; ++j) v[j] = static_cast<float>(j - 4);
  const OwnedTensor x = tensor_from(v, 1, 16, DType::f16);
  const auto s4 = make_scheme("turboquant_k8v4");
  const Compressed c4 = s4->compress(x.view(), TensorRole::value);
  CHECK(tqv_slots(c4) ==
        std::vector<std::uint8_t>{0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, 0x00, 0x3c, 0x00, 0xc4});
  const OwnedTensor y4 = decompressed(*s4, c4);
  for (int j = 0; j < 16; ++j) CHECK(y4.at(j) == v[j]);
  // 3 bits: v_j = (j mod 8) - 4, scale 7 / 7 = 1, codes 0..7 twice; 8 codes fill 24 bits
  // 0 | 1<<3 | 2<<6 | ... | 7<<21 = 0xfac688 -> bytes 88 c6 fa.
  std::vector<float> w(16);
  for (int j = 0; j < 16; ++j) w[j] = static_cast<float>(j % 8 - 4);
  const OwnedTensor x3 = tensor_from(w, 1, 16, DType::f16);
  const auto s3 = make_scheme("turboquant_3bit_nc");
  const Compressed c3 = s3->compress(x3.view(), TensorRole::value);
  CHECK(tqv_slots(c3) == std::vector<std::uint8_t>{0x88, 0xc6, 0xfa, 0x88, 0xc6, 0xfa, 0x00, 0x3c, 0x00, 0xc4});
  const OwnedTensor y3 = decompressed(*s3, c3);
  for (int j = 0; j < 16; ++j) CHECK(y3.at(j) == w[j]);
}

TEST_CASE("turboquant vllm k8v4 keys: e4m3fn bytes, saturating at 448", "[turboquant_vllm]") {
  std::vector<float> k(16, 0.0f);
  k[0] = 1.0f;                  // 0 0111 000 = 0x38
  k[1] = -2.0f;                 // 1 1000 000 = 0xc0
  k[2] = 0.5f;                  // 0 0110 000 = 0x30
  k[3] = 448.0f;                // 0 1111 110 = 0x7e, the largest finite
  k[4] = 500.0f;                // beyond 448: saturates (Triton's satfinite cast)
  k[5] = std::ldexp(1.0f, -9);  // the smallest subnormal, 0x01
  k[6] = 3.25f;                 // 2 * 1.625: 0 1000 101 = 0x45
  const OwnedTensor x = tensor_from(k, 1, 16, DType::bf16);
  const auto s = make_scheme("turboquant_k8v4");
  const Compressed c = s->compress(x.view(), TensorRole::key);
  const std::vector<std::uint8_t> b = tqv_slots(c);
  REQUIRE(b.size() == 16);
  CHECK(b[0] == 0x38);
  CHECK(b[1] == 0xc0);
  CHECK(b[2] == 0x30);
  CHECK(b[3] == 0x7e);
  CHECK(b[4] == 0x7e);
  CHECK(b[5] == 0x01);
  CHECK(b[6] == 0x45);
  const OwnedTensor y = decompressed(*s, c);
  CHECK(y.at(4) == 448.0f);
  CHECK(y.at(6) == 3.25f);
}

TEST_CASE("turboquant vllm MSE keys: a hand-computed 1-token slot shows norm correction", "[turboquant_vllm]") {
  // x = 3 e_0, D = 16. ||x|| = 3, and 3 + 1e-8 rounds to 3 in fp32, so u = x / (||x|| + 1e-8)
  // = e_0 exactly. H_16 diag(s) e_0 has every entry s_0 / 4; s_0 = -1 (std::mt19937(42)'s first
  // draw is even), so y_j = -0.25 for every j: in the 16-level codebook that is the cell of
  // centroid -0.2356 (index 4; cell edges -0.2748 and -0.1999): 16 codes 4 = bytes 0x44.
  // Stored after the codes: fp16 3 = 0x4200, then the 2 reserved bytes 0.
  std::vector<float> k(16, 0.0f);
  k[0] = 3.0f;
  const OwnedTensor x = tensor_from(k, 1, 16, DType::f16);
  const auto s = make_scheme("turboquant_4bit_nc");
  const Compressed c = s->compress(x.view(), TensorRole::key);
  CHECK(tqv_slots(c) ==
        std::vector<std::uint8_t>{0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x44, 0x00, 0x42, 0x00, 0x00});
  // Decode: 16 equal centroids renormalised to unit length are -1/4 each, times the norm 3 is
  // -0.75; the inverse rotation returns 3 e_0. Without norm correction it would be
  // 3 * 16 * 0.2356 / 4 = 2.83 e_0: the centroid vector's norm (0.94) is the error NC removes.
  const OwnedTensor y = decompressed(*s, c);
  CHECK(y.at(0) == 3.0f);
  for (int j = 1; j < 16; ++j) CHECK(std::fabs(y.at(j)) <= 1e-6f);
  // 3-bit keys: the same y_j = -0.25 lies in the cell of -0.1889 (index 2 of 8, the cell
  // [-0.2624, -0.1251)); 8 codes 2 (010) fill 24 bits 0x492492 -> bytes 92 24 49.
  const auto s3 = make_scheme("turboquant_k3v4_nc");
  const Compressed c3 = s3->compress(x.view(), TensorRole::key);
  CHECK(tqv_slots(c3) == std::vector<std::uint8_t>{0x92, 0x24, 0x49, 0x92, 0x24, 0x49, 0x00, 0x42, 0x00, 0x00});
  CHECK(decompressed(*s3, c3).at(0) == 3.0f);
}

TEST_CASE("turboquant vllm MSE keys agree with a double-precision oracle of the rule", "[turboquant_vllm]") {
  // The oracle rotates the input (x / ||x||) and the decoded key (x^ / stored norm) in double.
  // Codes must be monotone in the oracle's rotated coordinate (a cell edge is crossed only
  // upwards; pairs closer than 1e-6 are fp32-vs-double ties), and the rotated decoded key must
  // be the norm-corrected centroid vector: one level per code, increasing with the code, unit
  // norm.
  for (const int bits : {3, 4}) {
    const std::string name = bits == 4 ? "turboquant_4bit_nc:seed=1379" : "turboquant_3bit_nc:seed=1379";
    const auto s = make_scheme(name);
    for (const int d : {16, 64, 128}) {
      CAPTURE(bits, d);
      const std::int64_t tokens = 20, slot = (d * bits + 7) / 8 + 4;
      const std::vector<float> v = gaussian_values(tokens * d, 91);
      const OwnedTensor x = tensor_from(v, tokens, d, DType::f32);
      const Compressed c = s->compress(x.view(), TensorRole::key);
      const OwnedTensor out = decompressed(*s, c);
      const std::vector<std::uint8_t> slots = tqv_slots(c);
      int order_violations = 0, level_violations = 0, norm_violations = 0;
      for (std::int64_t t = 0; t < tokens; ++t) {
        const std::uint8_t* row = slots.data() + t * slot;
        std::vector<double> xin(static_cast<std::size_t>(d)), xout(xin.size());
        double n2 = 0.0;
        for (int j = 0; j < d; ++j) {
          xin[j] = v[t * d + j];
          xout[j] = out.at(t * d + j);
          n2 += xin[j] * xin[j];
        }
        const double stored = rules::half_to_float(static_cast<std::uint16_t>(row[slot - 4] | (row[slot - 3] << 8)));
        const std::vector<double> y = tqv_oracle_rotate(xin, d, 1379, std::sqrt(n2));
        const std::vector<double> z = tqv_oracle_rotate(xout, d, 1379, stored);
        std::vector<int> idx(static_cast<std::size_t>(d));
        for (int j = 0; j < d; ++j) idx[j] = j;
        std::sort(idx.begin(), idx.end(), [&](int a, int b) { return y[a] < y[b]; });
        double zn = 0.0;
        for (int r = 0; r < d; ++r) {
          zn += z[idx[r]] * z[idx[r]];
          if (r == 0) continue;
          const int a = idx[r - 1], b = idx[r];
          const int ca = tqv_code(row, a, bits, slot - 4), cb = tqv_code(row, b, bits, slot - 4);
          if (y[b] > y[a] + 1e-6 && cb < ca) ++order_violations;
          if (ca == cb && std::fabs(z[a] - z[b]) > 1e-5) ++level_violations;
          if (cb > ca && !(z[b] > z[a])) ++level_violations;
        }
        if (std::fabs(zn - 1.0) > 1e-5) ++norm_violations;
      }
      CHECK(order_violations == 0);
      CHECK(level_violations == 0);
      CHECK(norm_violations == 0);
      CHECK(tqv_rel_mse(x, out) < (bits == 4 ? 0.02 : 0.06));
    }
  }
}

TEST_CASE("turboquant vllm norm correction: the decoded key has the stored fp16 norm", "[turboquant_vllm]") {
  for (const char* name : {"turboquant_4bit_nc", "turboquant_k3v4_nc", "turboquant_3bit_nc"}) {
    CAPTURE(name);
    const auto s = make_scheme(name);
    const std::int64_t tokens = 50, d = 128;
    const OwnedTensor x = tensor_from(gaussian_values(tokens * d, 5), tokens, d, DType::f32);
    const Compressed c = s->compress(x.view(), TensorRole::key);
    const OwnedTensor y = decompressed(*s, c);
    const std::vector<std::uint8_t> slots = tqv_slots(c);
    const std::int64_t slot = static_cast<std::int64_t>(slots.size()) / tokens;
    for (std::int64_t t = 0; t < tokens; ++t) {
      double nx = 0.0, ny = 0.0;
      for (std::int64_t j = 0; j < d; ++j) {
        nx += static_cast<double>(x.at(t * d + j)) * x.at(t * d + j);
        ny += static_cast<double>(y.at(t * d + j)) * y.at(t * d + j);
      }
      const std::uint8_t* norm = slots.data() + t * slot + (slot - 4);
      const float stored = rules::half_to_float(static_cast<std::uint16_t>(norm[0] | (norm[1] << 8)));
      CHECK(std::fabs(std::sqrt(ny) - stored) <= 1e-5 * stored);                   // NC: exact to fp32 rounding
      CHECK(std::fabs(stored - std::sqrt(nx)) <= std::ldexp(std::sqrt(nx), -11));  // fp16 rounding of ||x||
      CHECK(norm[2] == 0);
      CHECK(norm[3] == 0);
    }
  }
}

TEST_CASE("turboquant vllm distortion on N(0,1) data matches the Lloyd-Max prediction", "[turboquant_vllm]") {
  // Keys: a Gaussian vector's direction is uniform on the sphere, so each rotated coordinate
  // has the exact density of a sphere coordinate (not vLLM's N(0, 1/d) approximation). Without
  // norm correction vLLM's codebooks give E||u - c||^2 = d * integral (x - Q(x))^2 f(x) dx
  // = 0.009324 (4 bits) and 0.033977 (3 bits) at d = 128, 0.009170 and 0.033440 at d = 64
  // (Simpson's rule on the exact density). With norm correction, a float64 Monte Carlo of the
  // rule (20000 uniform unit vectors, Python, sharing nothing with this code; it also gives the
  // no-NC numbers above to 0.1 %) gives 0.009182, 0.033904, 0.008880 and 0.032838: with these
  // codebooks NC lowers the error by 0.5-3 % (the centroid vector is ~0.7 % too short at
  // d = 128, 4 bits: E||c||^2 = 0.993, and NC restores its length).
  // 2000 tokens put the sample mean within 2 % of these.
  struct Expect {
    const char* name;
    std::int64_t d;
    double key_mse;
  };
  const Expect cases[] = {{"turboquant_4bit_nc", 128, 0.009182},
                          {"turboquant_k3v4_nc", 128, 0.033904},
                          {"turboquant_4bit_nc", 64, 0.008880},
                          {"turboquant_3bit_nc", 64, 0.032838}};
  for (const Expect& e : cases) {
    CAPTURE(e.name, e.d);
    const std::int64_t tokens = 2000;
    const OwnedTensor x = tensor_from(gaussian_values(tokens * e.d, 17), tokens, e.d, DType::f32);
    const auto s = make_scheme(e.name);
    const double mse = tqv_rel_mse(x, decompressed(*s, s->compress(x.view(), TensorRole::key)));
    CHECK(std::fabs(mse / e.key_mse - 1.0) < 0.02);
  }
  // Values: min/max codes with L levels err by about step^2 / 12, step = (max - min) / L; the
  // fp16 scale and zero add a little (the codes are made with the fp32 ones).
  for (const int vb : {4, 3}) {
    CAPTURE(vb);
    const std::int64_t tokens = 2000, d = 128;
    const std::vector<float> v = gaussian_values(tokens * d, 23);
    const OwnedTensor x = tensor_from(v, tokens, d, DType::f32);
    const auto s = make_scheme(vb == 4 ? "turboquant_k8v4" : "turboquant_3bit_nc");
    const double mse = tqv_rel_mse(x, decompressed(*s, s->compress(x.view(), TensorRole::value)));
    double predicted = 0.0, energy = 0.0;
    for (std::int64_t t = 0; t < tokens; ++t) {
      float lo = v[t * d], hi = v[t * d];
      for (std::int64_t j = 0; j < d; ++j) {
        lo = std::min(lo, v[t * d + j]);
        hi = std::max(hi, v[t * d + j]);
        energy += static_cast<double>(v[t * d + j]) * v[t * d + j];
      }
      const double step = (static_cast<double>(hi) - lo) / ((1 << vb) - 1);
      predicted += step * step / 12.0 * static_cast<double>(d);
    }
    CHECK(std::fabs(mse / (predicted / energy) - 1.0) < 0.1);
  }
}

TEST_CASE("turboquant vllm presets: golden digests of the slots", "[turboquant_vllm][golden]") {
  // Input: x[t][j] = sin(0.37 t + 0.11 j) * (1 + 0.5 cos(0.7 j)) + 0.05 t, 3 tokens x 128, in
  // f16 (std::sin of small arguments, identical on every libm we build with; the f16 rounding
  // absorbs any last-bit difference). Digests (FNV-1a 64 of the "slots" part) made by this
  // implementation when the family was added, after the hand-computed and oracle tests above
  // passed; a change of them is a change of the format and must come with docs/spec.md.
  // Presets that share a rule share its digest: the 4-bit values of the first three, the 3-bit
  // keys of k3v4_nc and 3bit_nc.
  std::vector<float> v(3 * 128);
  for (int t = 0; t < 3; ++t) {
    for (int j = 0; j < 128; ++j) {
      v[t * 128 + j] = static_cast<float>(std::sin(0.37 * t + 0.11 * j) * (1.0 + 0.5 * std::cos(0.7 * j)) + 0.05 * t);
    }
  }
  const OwnedTensor x = tensor_from(v, 3, 128, DType::f16);
  struct Golden {
    const char* name;
    const char* key;
    const char* value;
  };
  const Golden cases[] = {
      {"turboquant_k8v4", "6e94c59016757dad", "0d7f5b66fc2dac35"},
      {"turboquant_4bit_nc", "0bae8cf0ffb6195b", "0d7f5b66fc2dac35"},
      {"turboquant_k3v4_nc", "cbb5348636581473", "0d7f5b66fc2dac35"},
      {"turboquant_3bit_nc", "cbb5348636581473", "73a60fa1b9859617"},
  };
  for (const Golden& g : cases) {
    CAPTURE(g.name);
    const auto s = make_scheme(g.name);
    const std::vector<std::uint8_t> k = tqv_slots(s->compress(x.view(), TensorRole::key));
    const std::vector<std::uint8_t> val = tqv_slots(s->compress(x.view(), TensorRole::value));
    CHECK(hex64(fnv1a(k.data(), k.size())) == g.key);
    CHECK(hex64(fnv1a(val.data(), val.size())) == g.value);
  }
}

TEST_CASE("turboquant vllm presets: ranges beyond fp16 and corrupt slots are refused", "[turboquant_vllm]") {
  std::vector<float> big(16, 0.0f);
  big[3] = 70000.0f;  // a bf16 key whose norm is beyond fp16: vLLM would store inf
  const OwnedTensor xb = tensor_from(big, 1, 16, DType::bf16);
  CHECK_THROWS_WITH(make_scheme("turboquant_4bit_nc")->compress(xb.view(), TensorRole::key),
                    Contains("turboquant_4bit_nc: the key norm of token 0 overflows fp16"));
  std::vector<float> low(16, 0.0f);
  low[7] = -70000.0f;  // a value minimum beyond fp16 (the stored zero)
  CHECK_THROWS_WITH(
      make_scheme("turboquant_k8v4")->compress(tensor_from(low, 1, 16, DType::bf16).view(), TensorRole::value),
      Contains("turboquant_k8v4: the value range of token 0"));
  std::vector<float> wide(16, 0.0f);
  wide[2] = 1.0e6f;  // (max - min) / 15 beyond fp16 (the stored scale)
  CHECK_THROWS_WITH(
      make_scheme("turboquant_3bit_nc")->compress(tensor_from(wide, 1, 16, DType::f32).view(), TensorRole::value),
      Contains("turboquant_3bit_nc: the value range of token 0"));
  CHECK_NOTHROW(make_scheme("turboquant_k8v4")->compress(xb.view(), TensorRole::value));  // 70000 / 15 fits
  // A NaN after the overflowing row is reported first (the conformance rule).
  std::vector<float> two(32, 0.0f);
  two[3] = 70000.0f;
  two[16 + 5] = std::numeric_limits<float>::quiet_NaN();
  const OwnedTensor xn = tensor_from(two, 2, 16, DType::f32);
  CHECK_THROWS_WITH(make_scheme("turboquant_3bit_nc")->compress(xn.view(), TensorRole::key),
                    Contains("non-finite value nan at token 1, channel 5"));
  // Stored norm / scale set to fp16 inf: refused when decoding.
  const OwnedTensor x = random_tensor(2, 16, 9);
  const auto s = make_scheme("turboquant_4bit_nc");
  Compressed ck = s->compress(x.view(), TensorRole::key);
  ck.parts[0].bytes[8] = 0x00;
  ck.parts[0].bytes[9] = 0x7c;
  OwnedTensor out(DType::f16, 2, 16);
  CHECK_THROWS_WITH(s->decompress(ck, out.mut()), Contains("stored key norm 0 is inf"));
  Compressed cv = s->compress(x.view(), TensorRole::value);
  cv.parts[0].bytes[12 + 8] = 0x00;
  cv.parts[0].bytes[12 + 9] = 0x7c;
  CHECK_THROWS_WITH(s->decompress(cv, out.mut()), Contains("stored value scale/zero 1 is not finite"));
}
