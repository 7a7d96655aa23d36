// The row-at-a-time baselines use whole-run kernels (min_max, uniform_codes, rule7_codes, pack_crumbs, AVX2
// where available) and widen one row at a time (widen_row_checked). Each must give the bytes
// and messages of the per-element rules they replace, for every run length 1..300 (vector
// bodies plus scalar tails), .5 ties, values past both clamps, zeros, subnormals, extremes.
#include "test_scheme_support.hpp"

#include "../../reference/src/schemes/bit_packing.hpp"
#include "dgq/cpu/kernels.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/schemes/tensor_io.hpp"

using namespace dgq;
using namespace dgq::schemes;
using namespace dgq::test;

namespace {

// cpu/'s runs under the names of the reference's (schemes/uniform_code_runs.hpp), so that each
// test below reads as the rule it checks.
const kernels::CpuKernels& cpu_table() { return cpu::fast_kernels(); }
MinMax min_max(const float* x, std::int64_t n) {
  const kernels::Extremes e = cpu_table().min_max(x, n);
  return MinMax{e.lo, e.hi};
}
void uniform_codes(const float* x, std::int64_t n, float lo, float inv, int levels, std::uint8_t* q) {
  cpu_table().uniform_codes(x, n, lo, inv, levels, q);
}
void rule7_codes(const float* x, std::int64_t n, float lo, float inv, std::uint8_t* q) {
  cpu_table().rule7_codes(x, n, lo, inv, q);
}
void uniform_codes_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                               int offset, std::uint8_t* q) {
  cpu_table().uniform_codes_per_channel(x, n, lo, inv, levels, offset, q);
}
void uniform_codes_offset(const float* x, std::int64_t n, float lo, float inv, int levels, int offset,
                          std::uint8_t* q) {
  cpu_table().uniform_codes_offset(x, n, lo, inv, levels, offset, q);
}
void uniform_nibbles(const float* x, std::int64_t n, float lo, float inv, int levels, int offset, std::uint8_t* out) {
  cpu_table().uniform_nibbles(x, n, lo, inv, levels, offset, out);
}
void uniform_nibbles_per_channel(const float* x, std::int64_t n, const float* lo, const float* inv, int levels,
                                 int offset, std::uint8_t* out) {
  cpu_table().uniform_nibbles_per_channel(x, n, lo, inv, levels, offset, out);
}
void uniform_nibbles_row(const void* src, DType dt, std::int64_t n, const float* lo, const float* inv, bool per_channel,
                         int levels, int offset, std::uint8_t* out) {
  cpu_table().uniform_nibbles_row(src, dt, n, lo, inv, per_channel, levels, offset, out);
}

// Values a range's codes meet: integers and .5 ties (exact with lo = 0, inv = 1), zeros of
// both signs, subnormals, extremes, and random values.
std::vector<float> adversarial_run(std::int64_t n, std::mt19937_64& gen) {
  static const float pool[] = {0.0f,  -0.0f, 0.5f,   1.5f,    2.5f,      126.5f,   252.5f,    253.0f,  253.5f,   14.5f,
                               15.5f, -0.5f, 1e-45f, -1e-45f, 1.17e-38f, 65504.0f, -65504.0f, 3.0e38f, -3.0e38f, 7.0f};
  std::vector<float> v(static_cast<std::size_t>(n));
  for (float& e : v) {
    e = gen() % 2 == 0 ? pool[gen() % (sizeof(pool) / sizeof(pool[0]))]
                       : std::uniform_real_distribution<float>(-300.0f, 300.0f)(gen);
  }
  return v;
}

struct CodeRange {
  float lo, inv;
};

// lo/inv pairs: identity steps (ties land on .5), zero inverse (flat range), ranges narrower
// than the data (clamps at both ends), and the run's own extremes.
std::vector<CodeRange> ranges_for(const std::vector<float>& v, int levels) {
  const MinMax r = [&] {
    MinMax m;
    for (const float e : v) m.add(e);
    return m;
  }();
  return {{0.0f, 1.0f},
          {-0.5f, 1.0f},
          {3.0f, 0.0f},
          {-1.0f, 0.25f},
          {-1e-45f, 1e30f},
          {r.stored_lo(), uniform_inverse(r.stored_lo(), r.stored_hi(), levels)},
          {r.stored_lo(), rules::code_inverse_step(r.stored_lo(), r.stored_hi())}};
}

}  // namespace

TEST_CASE("min_max gives MinMax's stored extremes for runs of 1..300 values", "[scheme][fast]") {
  auto gen = rng(515);
  for (std::int64_t n = 1; n <= 300; ++n) {
    CAPTURE(n);
    const std::vector<float> v = adversarial_run(n, gen);
    MinMax scalar;
    for (const float e : v) scalar.add(e);
    const MinMax fast = min_max(v.data(), n);
    CHECK(rules::float_bits(fast.stored_lo()) == rules::float_bits(scalar.stored_lo()));
    CHECK(rules::float_bits(fast.stored_hi()) == rules::float_bits(scalar.stored_hi()));
  }
  // All zeros of mixed signs: the stored endpoints are +0 either way.
  const std::vector<float> zeros{-0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f, 0.0f, -0.0f};
  CHECK(rules::float_bits(min_max(zeros.data(), 9).stored_lo()) == 0u);
  CHECK(rules::float_bits(min_max(zeros.data(), 9).stored_hi()) == 0u);
}

TEST_CASE("uniform_codes and rule7_codes equal the per-element rules for runs of 1..300 values", "[scheme][fast]") {
  auto gen = rng(616);
  for (std::int64_t n = 1; n <= 300; ++n) {
    const std::vector<float> v = adversarial_run(n, gen);
    for (const int levels : {15, 253}) {
      for (const CodeRange& r : ranges_for(v, levels)) {
        CAPTURE(n, levels, r.lo, r.inv);
        std::vector<std::uint8_t> fast(static_cast<std::size_t>(n)), scalar(fast.size());
        uniform_codes(v.data(), n, r.lo, r.inv, levels, fast.data());
        for (std::int64_t j = 0; j < n; ++j) scalar[j] = uniform_code(v[j], r.lo, r.inv, levels);
        REQUIRE(fast == scalar);
        rule7_codes(v.data(), n, r.lo, r.inv, fast.data());
        for (std::int64_t j = 0; j < n; ++j) scalar[j] = static_cast<std::uint8_t>(rule7_code(v[j], r.lo, r.inv));
        REQUIRE(fast == scalar);
      }
    }
  }
}

TEST_CASE("uniform_codes_per_channel/_offset and uniform_nibbles equal uniform_code per element, packed plainly",
          "[scheme][fast]") {
  auto gen = rng(818);
  for (std::int64_t n = 1; n <= 300; ++n) {
    const std::vector<float> v = adversarial_run(n, gen);
    for (const int levels : {15, 13, 253}) {
      const int offset = levels == 13 ? 1 : 0;  // dgq2's in-band codes are q + 1
      const std::vector<CodeRange> rs = ranges_for(v, levels);
      // One range per element, drawn from the pairs above, so neighbours differ.
      std::vector<float> lo(static_cast<std::size_t>(n)), inv(lo.size());
      for (std::int64_t j = 0; j < n; ++j) {
        const CodeRange& r = rs[gen() % rs.size()];
        lo[j] = r.lo;
        inv[j] = r.inv;
      }
      CAPTURE(n, levels);
      std::vector<std::uint8_t> fast(static_cast<std::size_t>(n)), plain(fast.size());
      uniform_codes_per_channel(v.data(), n, lo.data(), inv.data(), levels, offset, fast.data());
      for (std::int64_t j = 0; j < n; ++j)
        plain[j] = static_cast<std::uint8_t>(uniform_code(v[j], lo[j], inv[j], levels) + offset);
      REQUIRE(fast == plain);
      for (const CodeRange& r : rs) {
        CAPTURE(r.lo, r.inv);
        std::vector<std::uint8_t> one(fast.size()), plain_one(fast.size());
        uniform_codes_offset(v.data(), n, r.lo, r.inv, levels, offset, one.data());
        for (std::int64_t j = 0; j < n; ++j)
          plain_one[j] = static_cast<std::uint8_t>(uniform_code(v[j], r.lo, r.inv, levels) + offset);
        REQUIRE(one == plain_one);
        if (levels == 253 || n % 2 != 0) continue;
        // Nibbles: byte k holds codes 2k (low) and 2k + 1 (high).
        std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n / 2), 0xAA), plain_bytes(bytes.size());
        for (std::int64_t k = 0; k < n / 2; ++k)
          plain_bytes[k] = static_cast<std::uint8_t>(plain_one[2 * k] | plain_one[2 * k + 1] << 4);
        uniform_nibbles(v.data(), n, r.lo, r.inv, levels, offset, bytes.data());
        REQUIRE(bytes == plain_bytes);
      }
      if (levels == 253 || n % 2 != 0) continue;
      std::vector<std::uint8_t> bytes(static_cast<std::size_t>(n / 2), 0x55), plain_bytes(bytes.size());
      for (std::int64_t k = 0; k < n / 2; ++k)
        plain_bytes[k] = static_cast<std::uint8_t>(plain[2 * k] | plain[2 * k + 1] << 4);
      uniform_nibbles_per_channel(v.data(), n, lo.data(), inv.data(), levels, offset, bytes.data());
      REQUIRE(bytes == plain_bytes);
      // Straight from a row of each dtype (widened exactly), per channel and with one range.
      for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
        OwnedTensor row = tensor_from(v, 1, n, dt);
        for (std::int64_t i = 0; i < n; ++i) {
          if (!std::isfinite(row.at(i))) store_element(row.mut(), i, 65504.0f);
        }
        for (const bool per_channel : {true, false}) {
          CAPTURE(dtype_name(dt), per_channel);
          std::vector<std::uint8_t> got(static_cast<std::size_t>(n / 2), 0x33), want(got.size());
          for (std::int64_t k = 0; k < n / 2; ++k) {
            unsigned c[2];
            for (int h = 0; h < 2; ++h) {
              const std::int64_t j = 2 * k + h, r = per_channel ? j : 0;
              c[h] = uniform_code(row.at(j), lo[r], inv[r], levels) + static_cast<unsigned>(offset);
            }
            want[k] = static_cast<std::uint8_t>(c[0] | c[1] << 4);
          }
          uniform_nibbles_row(row.bytes.data(), dt, n, lo.data(), inv.data(), per_channel, levels, offset, got.data());
          REQUIRE(got == want);
        }
      }
    }
  }
}

TEST_CASE("widen_row_checked gives widen_checked's values and NaN/Inf messages, row by row", "[scheme][fast]") {
  auto gen = rng(717);
  for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
    for (std::int64_t d = 1; d <= 300; d += (d < 40 ? 1 : 29)) {
      CAPTURE(dtype_name(dt), d);
      const std::int64_t l = 3;
      OwnedTensor x = tensor_from(adversarial_run(l * d, gen), l, d, dt);
      for (std::int64_t i = 0; i < x.size(); ++i) {
        if (!std::isfinite(x.at(i))) store_element(x.mut(), i, 65504.0f);  // fp16 has no 3e38
      }
      const std::vector<float> whole = widen_checked(kernels::reference_kernels(), x.view(), "s");
      std::vector<float> row(static_cast<std::size_t>(d));
      for (std::int64_t t = 0; t < l; ++t) {
        widen_row_checked(cpu_table(), x.view(), t, row.data(), "s");
        for (std::int64_t j = 0; j < d; ++j) REQUIRE(rules::float_bits(row[j]) == rules::float_bits(whole[t * d + j]));
      }
      // Two bad elements in the last row: the first one is named, as by widen_checked.
      const std::int64_t first_bad = (l - 1) * d + static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(d));
      store_element(x.mut(), first_bad, gen() % 2 == 0 ? NAN : -INFINITY);
      if (first_bad + 1 < l * d) store_element(x.mut(), first_bad + 1, NAN);
      std::string want;
      try {
        (void)widen_checked(kernels::reference_kernels(), x.view(), "s");
      } catch (const InputError& e) {
        want = e.what();
      }
      REQUIRE_FALSE(want.empty());
      CHECK_THROWS_WITH(widen_row_checked(cpu_table(), x.view(), l - 1, row.data(), "s"), want);
    }
  }
}

TEST_CASE("row-at-a-time schemes report the first NaN/Inf even after an earlier row's overflow", "[scheme][fast]") {
  // Row 0 spans more than fp32 can hold (an overflow error of its own); row 2 holds a NaN.
  // Checked up front, the whole tensor's NaN came first; so it must still.
  const std::int64_t l = 3, d = 70;
  std::vector<float> v(static_cast<std::size_t>(l * d), 1.0f);
  v[0] = -3.0e38f;
  v[1] = 3.0e38f;
  v[2 * d + 66] = NAN;
  const OwnedTensor x = tensor_from(v, l, d, DType::f32);
  for (const std::string family : {"int8-token", "int8-group64", "int4-group64"}) {
    CAPTURE(family);
    CHECK_THROWS_WITH(make_scheme(family)->compress(x.view(), TensorRole::key),
                      family + ": non-finite value nan at token 2, channel 66");
  }
  // Without the NaN the overflow is what is reported.
  std::vector<float> finite = v;
  finite[2 * d + 66] = 1.0f;
  const OwnedTensor y = tensor_from(finite, l, d, DType::f32);
  CHECK_THROWS_WITH(make_scheme("int8-token")->compress(y.view(), TensorRole::key),
                    Catch::Matchers::Contains("value range of token 0 overflows fp32"));
}

TEST_CASE("check_finite names the first NaN/Inf in row-major order, across its chunks", "[scheme][fast]") {
  auto gen = rng(818);
  const std::int64_t l = 100, d = 128;  // 12800 elements: several 4096-element chunks
  for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
    for (const std::int64_t first_bad : {std::int64_t{0}, std::int64_t{4095}, std::int64_t{4096}, std::int64_t{8191},
                                         std::int64_t{12799}, static_cast<std::int64_t>(gen() % 12800)}) {
      CAPTURE(dtype_name(dt), first_bad);
      OwnedTensor x = tensor_from(std::vector<float>(static_cast<std::size_t>(l * d), 1.0f), l, d, dt);
      check_finite(x.view(), "s");  // all finite: no throw
      store_element(x.mut(), first_bad, first_bad % 2 == 0 ? INFINITY : NAN);
      if (first_bad + 5 < l * d) store_element(x.mut(), first_bad + 5, NAN);
      const std::string what = first_bad % 2 == 0 ? "inf" : "nan";
      CHECK_THROWS_WITH(check_finite(x.view(), "s"), "s: non-finite value " + what + " at token " +
                                                         std::to_string(first_bad / d) + ", channel " +
                                                         std::to_string(first_bad % d));
    }
  }
}

TEST_CASE("pack_crumbs packs 2-bit codes four to a byte as BitPacker::put does", "[scheme][fast]") {
  auto gen = rng(919);
  for (const kernels::CpuKernels* k : {&cpu_table(), &kernels::reference_kernels()}) {
    for (std::int64_t n = 4; n <= 300; n += 4) {
      CAPTURE(n, k->name);
      std::vector<std::uint8_t> q(static_cast<std::size_t>(n));
      for (auto& c : q) c = static_cast<std::uint8_t>(gen() & 3u);
      if (n == 64) std::fill(q.begin(), q.end(), std::uint8_t{3});  // every byte 0xff
      std::vector<std::uint8_t> got(static_cast<std::size_t>(n / 4), 0x5a), want;
      BitPacker packer(want, static_cast<std::uint64_t>(n), 2);
      for (std::int64_t j = 0; j < n; ++j) packer.put(static_cast<std::uint64_t>(j), q[j]);
      k->pack_crumbs(q.data(), n, got.data());
      REQUIRE(got == want);
    }
  }
}
