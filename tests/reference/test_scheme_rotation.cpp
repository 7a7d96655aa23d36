// The `rot=hadamard` modifier: llama.cpp's block choice, the transform's algebra (orthonormal,
// its own inverse, the Sylvester matrix llama.cpp builds), a 4x64 example worked by hand,
// attention computed in the rotated basis, and the wrapper's spec and byte contract.
#include "test_scheme_support.hpp"

#include <bit>

#include "dgq/errors.hpp"
#include "dgq/rotation.hpp"

using namespace dgq;
using namespace dgq::test;
using Catch::Matchers::Contains;

namespace {

// llama.cpp's ggml_gen_hadamard (src/llama-kv-cache.cpp), in double: H[0][0] = 1/sqrt(n), then
// each s doubles the top-left block as [[A, A], [A, -A]].
std::vector<double> llama_hadamard_matrix(int n) {
  std::vector<double> h(static_cast<std::size_t>(n * n), 0.0);
  h[0] = 1.0 / std::sqrt(static_cast<double>(n));
  for (int s = 1; s < n; s *= 2) {
    for (int i = 0; i < s; ++i) {
      for (int j = 0; j < s; ++j) {
        const double v = h[i * n + j];
        h[(i + s) * n + j] = v;
        h[i * n + j + s] = v;
        h[(i + s) * n + j + s] = -v;
      }
    }
  }
  return h;
}

double dot(const float* a, const float* b, std::int64_t n) {
  double s = 0.0;
  for (std::int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return s;
}

// Each row of x (tokens x channels, fp32) rotated with rules::hadamard_block for the role.
std::vector<float> rotated_rows(std::vector<float> x, std::int64_t channels, bool key) {
  const int block = rules::hadamard_block(channels, key);
  for (std::size_t t = 0; t < x.size() / static_cast<std::size_t>(channels); ++t) {
    hadamard_rotate_row(x.data() + t * channels, channels, block);
  }
  return x;
}

}  // namespace

TEST_CASE("hadamard block: K the largest power of two >= 64 dividing head_dim, V 64, else none", "[rotation]") {
  CHECK(rules::hadamard_block(64, true) == 64);
  CHECK(rules::hadamard_block(128, true) == 128);
  CHECK(rules::hadamard_block(192, true) == 64);
  CHECK(rules::hadamard_block(256, true) == 256);
  CHECK(rules::hadamard_block(384, true) == 128);
  CHECK(rules::hadamard_block(576, true) == 64);
  for (const std::int64_t d : {64, 128, 192, 256}) CHECK(rules::hadamard_block(d, false) == 64);
  for (const std::int64_t d : {0, 1, 32, 63, 65, 96, 160}) {
    CAPTURE(d);
    CHECK(rules::hadamard_block(d, true) == 0);
    CHECK(rules::hadamard_block(d, false) == 0);
  }
}

TEST_CASE("hadamard scale is 1/sqrt(n) exactly representable, no sqrt evaluated", "[rotation]") {
  CHECK(rules::hadamard_scale(4) == 0.5f);
  CHECK(rules::hadamard_scale(64) == 0.125f);
  CHECK(rules::hadamard_scale(256) == 0.0625f);
  CHECK(rules::hadamard_scale(2) == 0.70710677f);
  CHECK(rules::hadamard_scale(128) == 0.70710677f / 8.0f);
  for (const int n : {2, 4, 8, 64, 128, 256, 512}) {
    CAPTURE(n);
    CHECK(static_cast<float>(1.0 / std::sqrt(static_cast<double>(n))) == rules::hadamard_scale(n));
  }
}

TEST_CASE("hadamard rotation of a single block equals llama.cpp's Sylvester matrix times x", "[rotation]") {
  for (const int n : {64, 128, 256}) {
    CAPTURE(n);
    const std::vector<double> h = llama_hadamard_matrix(n);
    const std::vector<float> x = gaussian_values(n, static_cast<std::uint64_t>(n));
    std::vector<float> y = x;
    hadamard_rotate_row(y.data(), n, n);
    for (int i = 0; i < n; ++i) {
      double expect = 0.0;
      for (int j = 0; j < n; ++j) expect += h[i * n + j] * x[j];
      // log2(n) fp32 butterfly stages plus the scale: a few ulps of sum |x|/sqrt(n).
      double bound = 0.0;
      for (int j = 0; j < n; ++j) bound += std::fabs(x[j]);
      CHECK(std::fabs(y[i] - expect) <= 1e-6 * bound);
    }
  }
}

TEST_CASE("hadamard rotation is its own inverse: H*H = I (exactly for n = 64)", "[rotation]") {
  for (const int n : {64, 128, 256}) {
    for (int i = 0; i < n; ++i) {
      std::vector<float> e(static_cast<std::size_t>(n), 0.0f);
      e[i] = 1.0f;
      hadamard_rotate_row(e.data(), n, n);
      for (int j = 0; j < n; ++j) {
        CAPTURE(n, i, j);
        const float sign = std::popcount(static_cast<unsigned>(i & j)) % 2 ? -1.0f : 1.0f;
        REQUIRE(e[j] == sign * rules::hadamard_scale(n));  // column i of H, exact
      }
      hadamard_rotate_row(e.data(), n, n);
      for (int j = 0; j < n; ++j) {
        CAPTURE(n, i, j);
        const float expect = i == j ? 1.0f : 0.0f;
        if (n == 64) {
          REQUIRE(e[j] == expect);  // every partial sum is a multiple of 1/8: no rounding
        } else {
          REQUIRE(std::fabs(e[j] - expect) <= 4e-7f);
        }
      }
    }
  }
}

TEST_CASE("hadamard rotation is orthonormal to rounding: norms and dot products kept", "[rotation]") {
  for (const std::int64_t d : {64, 128, 192, 256}) {
    for (const bool key : {true, false}) {
      CAPTURE(d, key);
      const std::vector<float> a = gaussian_values(d, 1), b = gaussian_values(d, 2);
      const std::vector<float> ra = rotated_rows(a, d, key), rb = rotated_rows(b, d, key);
      const double na = dot(a.data(), a.data(), d);
      CHECK(std::fabs(dot(ra.data(), ra.data(), d) - na) <= 1e-6 * na);
      CHECK(std::fabs(dot(ra.data(), rb.data(), d) - dot(a.data(), b.data(), d)) <=
            1e-6 * std::sqrt(na * dot(b.data(), b.data(), d)));
    }
  }
}

TEST_CASE("hadamard rotation of a 4x64 tensor matches the hand-computed result", "[rotation][golden]") {
  // Rows: all ones; e_0; e_1; +1 on channels 0..31 and -1 on 32..63. With H[i][j] =
  // (-1)^popcount(i&j)/8: H*1 = 8 e_0 (only row 0 sums all +1); H e_0 = column 0 = 1/8 everywhere;
  // H e_1 = column 1 = +1/8 at even i, -1/8 at odd i; the last row is the Walsh function of
  // index 32 times 8 -> 8 e_32.
  std::vector<float> x(4 * 64, 0.0f);
  for (int j = 0; j < 64; ++j) {
    x[j] = 1.0f;
    x[3 * 64 + j] = j < 32 ? 1.0f : -1.0f;
  }
  x[64 + 0] = 1.0f;
  x[128 + 1] = 1.0f;
  std::vector<float> expect(4 * 64, 0.0f);
  expect[0] = 8.0f;
  for (int j = 0; j < 64; ++j) {
    expect[64 + j] = 0.125f;
    expect[128 + j] = j % 2 ? -0.125f : 0.125f;
  }
  expect[3 * 64 + 32] = 8.0f;
  // fp16:rot=hadamard stores the rotated rows in the input dtype: here exactly the rotation.
  const OwnedTensor t = tensor_from(x, 4, 64, DType::f32);
  for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
    CAPTURE(role_name(role));
    const Compressed c = make_scheme("fp16:rot=hadamard")->compress(t.view(), role);
    const std::vector<std::uint8_t>& stored = c.find("values")->bytes;
    REQUIRE(stored.size() == expect.size() * 4);
    std::vector<float> got(expect.size());
    std::memcpy(got.data(), stored.data(), stored.size());
    CHECK(got == expect);
    CHECK(decompressed(*make_scheme("fp16:rot=hadamard"), c).bytes == t.bytes);  // rotated back exactly
  }
}

TEST_CASE("attention computed in the rotated basis equals attention in the original one to rounding",
          "[rotation][attention]") {
  // Scores: q.k = (Hq).(Hk) with Q rotated by K's blocks; output: sum p_t v_t = H^-1 sum p_t (H v_t).
  // Checked on the stored (quantized) cache itself: decompress gives K^ in the original basis;
  // the inner scheme decodes the same bytes in the rotated basis.
  const std::int64_t tokens = 100, d = 128, queries = 4;
  std::vector<float> k(static_cast<std::size_t>(tokens * d)), v(k.size()), q(static_cast<std::size_t>(queries * d));
  for (std::int64_t i = 0; i < tokens; ++i) {
    const std::vector<float> rk = gaussian_values(d, 100 + i), rv = gaussian_values(d, 300 + i);
    std::copy(rk.begin(), rk.end(), k.begin() + i * d);
    std::copy(rv.begin(), rv.end(), v.begin() + i * d);
  }
  for (std::int64_t i = 0; i < queries; ++i) {
    const std::vector<float> r = gaussian_values(d, 500 + i);
    std::copy(r.begin(), r.end(), q.begin() + i * d);
  }
  const auto rotated = make_scheme("q4_0:rot=hadamard");
  const auto inner = make_scheme("q4_0");
  const OwnedTensor kt = tensor_from(k, tokens, d, DType::f32), vt = tensor_from(v, tokens, d, DType::f32);
  auto decode_both = [&](const OwnedTensor& x, TensorRole role, std::vector<float>& original,
                         std::vector<float>& in_rotated) {
    Compressed c = rotated->compress(x.view(), role);
    const OwnedTensor back = decompressed(*rotated, c);
    c.scheme = inner->spec();
    const OwnedTensor rot = decompressed(*inner, c);
    original.assign(x.size(), 0.0f);
    in_rotated.assign(x.size(), 0.0f);
    for (std::int64_t i = 0; i < x.size(); ++i) {
      original[i] = back.at(i);
      in_rotated[i] = rot.at(i);
    }
  };
  std::vector<float> k_hat, k_hat_rot, v_hat, v_hat_rot;
  decode_both(kt, TensorRole::key, k_hat, k_hat_rot);
  decode_both(vt, TensorRole::value, v_hat, v_hat_rot);
  const std::vector<float> q_rot = rotated_rows(q, d, true);
  const double inv_sqrt_d = 1.0 / std::sqrt(static_cast<double>(d));
  for (std::int64_t qi = 0; qi < queries; ++qi) {
    std::vector<double> s(tokens), s_rot(tokens);
    for (std::int64_t t = 0; t < tokens; ++t) {
      s[t] = dot(q.data() + qi * d, k_hat.data() + t * d, d) * inv_sqrt_d;
      s_rot[t] = dot(q_rot.data() + qi * d, k_hat_rot.data() + t * d, d) * inv_sqrt_d;
      CAPTURE(qi, t, s[t], s_rot[t]);
      CHECK(std::fabs(s[t] - s_rot[t]) <= 1e-5 * (1.0 + std::fabs(s[t])));
    }
    const double m = *std::max_element(s.begin(), s.end());
    std::vector<double> p(tokens);
    double z = 0.0;
    for (std::int64_t t = 0; t < tokens; ++t) z += p[t] = std::exp(s[t] - m);
    std::vector<float> out(d, 0.0f), out_rot(d, 0.0f);
    for (std::int64_t c = 0; c < d; ++c) {
      double a = 0.0, b = 0.0;
      for (std::int64_t t = 0; t < tokens; ++t) {
        a += p[t] / z * v_hat[t * d + c];
        b += p[t] / z * v_hat_rot[t * d + c];
      }
      out[c] = static_cast<float>(a);
      out_rot[c] = static_cast<float>(b);
    }
    hadamard_rotate_row(out_rot.data(), d, rules::hadamard_block(d, false));  // back to the original basis
    for (std::int64_t c = 0; c < d; ++c) {
      CAPTURE(qi, c);
      CHECK(std::fabs(out[c] - out_rot[c]) <= 1e-5f * (1.0f + std::fabs(out[c])));
    }
  }
}

TEST_CASE("rot=hadamard is a modifier of every family with a canonical spec", "[rotation][registry]") {
  CHECK(make_scheme("q4_0:rot=hadamard")->spec() == "q4_0:rot=hadamard");
  CHECK(make_scheme("q4_0:rot=none")->spec() == "q4_0");
  CHECK(make_scheme("kivi-2:rot=hadamard,group=16")->spec() == "kivi-2:group=16,residual=32,rot=hadamard");
  const auto dgq = make_scheme("dgq:rot=hadamard");
  CHECK(dgq->spec() == make_scheme("dgq")->spec() + ",rot=hadamard");
  CHECK(dgq->family() == "dgq");
  CHECK_THROWS_WITH(make_scheme("q4_0:rot=random"), Contains("'rot' = 'random'"));
  CHECK_THROWS_AS(make_scheme("q4_0:rot=hadamard,bits=3"), ParameterError);
  for (const std::string& f : scheme_families()) {
    CAPTURE(f);
    const auto s = make_scheme(f + ":rot=hadamard");
    CHECK(make_scheme(s->spec())->spec() == s->spec());
    const OwnedTensor x = random_tensor(40, 128, 17);
    for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
      const Compressed c = s->compress(x.view(), role);
      CHECK(c.scheme == s->spec());
      CHECK(c.total_bytes() == s->planned_bytes(40, 128, DType::f16, role));
      CHECK(c.total_bytes() == make_scheme(f)->planned_bytes(40, 128, DType::f16, role));
      const OwnedTensor y = decompressed(*s, c);
      CHECK(y.bytes.size() == x.bytes.size());
    }
  }
}

TEST_CASE("rot=hadamard rejects head_dim not a multiple of 64 and names bad elements", "[rotation][errors]") {
  const auto s = make_scheme("q8_0:rot=hadamard");
  for (const std::int64_t d : {1, 32, 96, 130}) {
    CAPTURE(d);
    const OwnedTensor x = random_tensor(3, d, 1);
    CHECK_THROWS_AS(s->compress(x.view(), TensorRole::key), InputError);
    CHECK_THROWS_WITH(s->compress(x.view(), TensorRole::value),
                      Contains("head_dim (channels) a positive multiple of 64, got " + std::to_string(d)));
  }
  OwnedTensor x = random_tensor(5, 64, 2);
  store_element(x.mut(), 3 * 64 + 17, std::nanf(""));
  CHECK_THROWS_WITH(s->compress(x.view(), TensorRole::key), Contains("token 3, channel 17"));
  const OwnedTensor empty(DType::f16, 0, 128);
  CHECK(s->compress(empty.view(), TensorRole::key).total_bytes() == 0);
}

TEST_CASE("rot=hadamard round trips fp16 input close to the plain scheme's error", "[rotation][roundtrip]") {
  const OwnedTensor x = random_tensor(64, 128, 9);
  for (const std::string inner : {"fp16", "q8_0"}) {
    CAPTURE(inner);
    const auto s = make_scheme(inner + ":rot=hadamard");
    const OwnedTensor y = decompressed(*s, s->compress(x.view(), TensorRole::key));
    double err = 0.0, norm = 0.0;
    for (std::int64_t i = 0; i < x.size(); ++i) {
      err += (y.at(i) - x.at(i)) * (y.at(i) - x.at(i));
      norm += x.at(i) * x.at(i);
    }
    // fp16: two fp16 roundings (rotated, then rotated back), relative error ~2^-11 per element.
    CHECK(std::sqrt(err / norm) < (inner == "fp16" ? 1e-3 : 1e-2));
  }
}
