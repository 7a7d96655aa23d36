// The forward pass's weight products (dgq/sim/model/gemm_library.hpp): both libraries compute
// x W^T for a weight stored [out][in], within fp32 rounding of the exact product, on edge shapes
// first; oneDNN's repeats its bytes; the option's words and refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstdint>
#include <vector>

#include "dgq/errors.hpp"
#include "dgq/sim/model/gemm_library.hpp"

using dgq::sim::GemmLibrary;

namespace {

// Deterministic values of both signs and several magnitudes; no randomness decides the test.
std::vector<float> pattern(std::int64_t n, int salt) {
  std::vector<float> v(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i)
    v[static_cast<std::size_t>(i)] =
        std::ldexp(static_cast<float>((i * 37 + salt * 11) % 29) - 14.0f, -static_cast<int>(i % 5));
  return v;
}

std::vector<float> product_with(GemmLibrary library, const std::vector<float>& x, std::int64_t rows, std::int64_t in,
                                const std::vector<float>& w, std::int64_t outs) {
  const GemmLibrary before = dgq::sim::gemm_library_in_use();
  dgq::sim::use_gemm_library(library);
  std::vector<float> y(static_cast<std::size_t>(rows * outs), -1.0f);
  dgq::sim::multiply_by_weights(x.data(), rows, in, w.data(), outs, y.data());
  dgq::sim::use_gemm_library(before);
  return y;
}

// Every element within n * 2^-23 of sum |x_i w_i| of the product computed in double: the bound
// of any fp32 summation order, so a transposed or shifted operand fails it.
void check_close_to_exact(const std::vector<float>& y, const std::vector<float>& x, std::int64_t rows, std::int64_t in,
                          const std::vector<float>& w, std::int64_t outs) {
  for (std::int64_t r = 0; r < rows; ++r)
    for (std::int64_t o = 0; o < outs; ++o) {
      double exact = 0, magnitude = 0;
      for (std::int64_t i = 0; i < in; ++i) {
        const double term = double(x[static_cast<std::size_t>(r * in + i)]) * w[static_cast<std::size_t>(o * in + i)];
        exact += term;
        magnitude += std::fabs(term);
      }
      INFO("row " << r << ", output " << o);
      CHECK(std::fabs(y[static_cast<std::size_t>(r * outs + o)] - exact) <=
            double(in) * std::ldexp(1.0, -23) * magnitude);
    }
}

std::vector<GemmLibrary> libraries_built() {
  std::vector<GemmLibrary> built{GemmLibrary::eigen};
  if (dgq::sim::onednn_available()) built.push_back(GemmLibrary::onednn);
  return built;
}

}  // namespace

TEST_CASE("no row or no output: nothing is written", "[sim][gemm_library]") {
  for (GemmLibrary library : libraries_built()) {
    std::vector<float> y(3, 7.0f);
    dgq::sim::use_gemm_library(library);
    dgq::sim::multiply_by_weights(nullptr, 0, 4, nullptr, 3, y.data());
    dgq::sim::use_gemm_library(dgq::sim::default_gemm_library());
    CHECK(y == std::vector<float>(3, 7.0f));
  }
}

TEST_CASE("each library multiplies by the transposed weights within fp32 rounding", "[sim][gemm_library]") {
  struct Shape {
    std::int64_t rows, in, outs;
  };
  // One token (a decoder's step), one input, one output, a partial SIMD width, and a layer's.
  const auto [rows, in, outs] =
      GENERATE(Shape{1, 1, 1}, Shape{1, 576, 192}, Shape{7, 1, 5}, Shape{3, 17, 1}, Shape{65, 640, 33});
  const std::vector<float> x = pattern(rows * in, 1), w = pattern(outs * in, 2);
  for (GemmLibrary library : libraries_built()) {
    INFO(dgq::sim::gemm_library_name(library) << " [" << rows << "x" << in << "] x [" << outs << "x" << in << "]^T");
    check_close_to_exact(product_with(library, x, rows, in, w, outs), x, rows, in, w, outs);
  }
}

TEST_CASE("oneDNN's product repeats its bytes", "[sim][gemm_library]") {
  if (!dgq::sim::onednn_available()) {
    WARN("built without oneDNN: nothing to repeat");
    return;
  }
  const std::vector<float> x = pattern(100 * 576, 3), w = pattern(1536 * 576, 4);
  CHECK(product_with(GemmLibrary::onednn, x, 100, 576, w, 1536) ==
        product_with(GemmLibrary::onednn, x, 100, 576, w, 1536));
}

TEST_CASE("the library is named onednn or eigen, anything else refused naming the option", "[sim][gemm_library]") {
  CHECK(dgq::sim::parse_gemm_library("eigen", "--gemm") == GemmLibrary::eigen);
  CHECK_THROWS_WITH(dgq::sim::parse_gemm_library("mkl", "--gemm"),
                    Catch::Contains("--gemm 'mkl'") && Catch::Contains("onednn or eigen"));
  if (dgq::sim::onednn_available()) {
    CHECK(dgq::sim::parse_gemm_library("onednn", "--gemm") == GemmLibrary::onednn);
    CHECK(dgq::sim::default_gemm_library() == GemmLibrary::onednn);
  } else {
    CHECK_THROWS_AS(dgq::sim::parse_gemm_library("onednn", "--gemm"), dgq::ParameterError);
    CHECK(dgq::sim::default_gemm_library() == GemmLibrary::eigen);
  }
}

TEST_CASE("attention's tiles: Q K^T and the accumulated P V within fp32 rounding of the exact products",
          "[sim][gemm_library]") {
  const std::int64_t rows = 5, d = 9, n = 13;  // a partial query block and key tile
  const std::vector<float> q = pattern(rows * d, 5), k = pattern(n * d, 6), v = pattern(n * d, 7);
  for (GemmLibrary library : libraries_built()) {
    INFO(dgq::sim::gemm_library_name(library));
    dgq::sim::use_gemm_library(library);
    std::vector<float> scores(static_cast<std::size_t>(rows * n), -1.0f);
    dgq::sim::tile_scores(q.data(), rows, d, k.data(), n, scores.data());
    check_close_to_exact(scores, q, rows, d, k, n);
    // acc starts at 1 everywhere: += must add the product to it, not overwrite it.
    std::vector<float> acc(static_cast<std::size_t>(rows * d), 1.0f);
    dgq::sim::tile_accumulate(scores.data(), rows, n, v.data(), d, acc.data());
    std::vector<float> v_transposed(static_cast<std::size_t>(d * n));
    for (std::int64_t j = 0; j < n; ++j)
      for (std::int64_t c = 0; c < d; ++c)
        v_transposed[static_cast<std::size_t>(c * n + j)] = v[static_cast<std::size_t>(j * d + c)];
    for (float& a : acc) a -= 1.0f;
    check_close_to_exact(acc, scores, rows, n, v_transposed, d);
    dgq::sim::use_gemm_library(dgq::sim::default_gemm_library());
  }
}
