// widen_extremes (one pass: widen, NaN/Inf check, each group's extremes) in cpu/'s table and in
// the reference's against the three passes written out: the exact widening, std::isfinite per
// element, MinMax::add in order per group with its stored endpoints; every dtype, row lengths
// 1..300, groups of the whole row, 64, 8 and 3, signed zeros, subnormals, extremes, NaN/Inf.
#include "test_scheme_support.hpp"

#include "dgq/cpu/kernels.hpp"
#include "dgq/kernels/uniform_codes.hpp"

namespace dgq::test::widen_extremes_fast {

TEST_CASE("widen_extremes gives the widened row, its finiteness and each group's stored extremes",
          "[scheme][fast][widen_extremes]") {
  auto gen = rng(1616);
  static const float pool[] = {0.0f,     -0.0f,     1e-45f,  -1e-45f,  6.0e-8f, -6.0e-8f,
                               65504.0f, -65504.0f, 3.0e38f, -3.0e38f, 1.5f,    -2.25f};
  for (const DType dt : {DType::f16, DType::bf16, DType::f32}) {
    for (std::int64_t n = 1; n <= 300; ++n) {
      std::vector<float> v(static_cast<std::size_t>(n));
      for (float& e : v) {
        e = gen() % 3 == 0 ? pool[gen() % (sizeof(pool) / sizeof(pool[0]))]
                           : std::uniform_real_distribution<float>(-50.0f, 50.0f)(gen);
        if (dt == DType::f16 && std::fabs(e) > 65504.0f) e = e > 0.0f ? 65504.0f : -65504.0f;  // stays finite
      }
      // One run in four carries a NaN or an Inf at a random place (after rounding to dt).
      const int bad = static_cast<int>(gen() % 8);
      if (bad < 2) v[gen() % v.size()] = bad == 0 ? NAN : -INFINITY;
      OwnedTensor x = tensor_from(v, 1, n, dt);
      std::vector<float> plain(v.size());
      bool finite = true;
      for (std::int64_t d = 0; d < n; ++d) {
        plain[d] = x.at(d);
        finite = finite && std::isfinite(plain[d]);
      }
      for (const std::int64_t group : {n, std::int64_t{64}, std::int64_t{8}, std::int64_t{3}}) {
        CAPTURE(dtype_name(dt), n, group, bad);
        const std::int64_t groups = (n + group - 1) / group;
        for (const kernels::CpuKernels* k : {&cpu::fast_kernels(), &kernels::reference_kernels()}) {
          std::vector<float> row(v.size(), 7.0f);
          std::vector<kernels::Extremes> ext(static_cast<std::size_t>(groups), kernels::Extremes{9.0f, 9.0f});
          const bool got = k->widen_extremes(x.bytes.data(), dt, n, group, row.data(), ext.data());
          REQUIRE(got == finite);
          if (!finite) continue;
          for (std::int64_t d = 0; d < n; ++d) REQUIRE(rules::float_bits(row[d]) == rules::float_bits(plain[d]));
          for (std::int64_t g = 0; g < groups; ++g) {
            schemes::MinMax m;
            for (std::int64_t d = g * group; d < std::min(n, (g + 1) * group); ++d) m.add(plain[d]);
            const schemes::MinMax e{ext[g].lo, ext[g].hi};
            REQUIRE(rules::float_bits(e.stored_lo()) == rules::float_bits(m.stored_lo()));
            REQUIRE(rules::float_bits(e.stored_hi()) == rules::float_bits(m.stored_hi()));
          }
        }
      }
    }
  }
}

}  // namespace dgq::test::widen_extremes_fast
