// cpu/'s DGQ v3 runs (window_mean, signed_extreme, symmetric_codes, symmetric_values, grid_codes,
// grid_values) against
// the reference's scalar ones on adversarial inputs, every length 1..300 (vector bodies and
// scalar tails), and the dgq3 scheme on Device::cpu against Device::reference for every
// parameter its fast path touches: code widths 2..8, blocks 16..256, the window mean on K and V
// with windows shorter and longer than the head, promotion, channel scales, the Lloyd-Max grid,
// every dtype and role.
#include "test_scheme_support.hpp"

#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "dgq/cpu/kernels.hpp"
#include "dgq/dgq3_grids.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"

namespace dgq::test::dgq3_fast {
namespace {

const kernels::CpuKernels& reference() { return kernels::reference_kernels(); }
const kernels::CpuKernels& fast() { return cpu::fast_kernels(); }

std::vector<std::uint32_t> bits_of(const std::vector<float>& v) {
  std::vector<std::uint32_t> out(v.size());
  for (std::size_t i = 0; i < v.size(); ++i) std::memcpy(&out[i], &v[i], 4);
  return out;
}

}  // namespace

TEST_CASE("dgq3 fast: signed_extreme keeps the first of equal magnitudes and +0 for zeros", "[dgq3][fast]") {
  CHECK(fast().signed_extreme(std::vector<float>{0.0f, -0.0f, 0.0f}.data(), 3) == 0.0f);
  CHECK_FALSE(std::signbit(fast().signed_extreme(std::vector<float>(20, -0.0f).data(), 20)));
  for (std::int64_t n = 1; n <= 300; ++n) {
    for (std::int64_t at : {std::int64_t{0}, n / 3, n - 1}) {
      std::vector<float> y = gaussian_values(n, static_cast<std::uint64_t>(n));
      y[static_cast<std::size_t>(at)] = -7.5f;
      y[static_cast<std::size_t>(n - 1)] = n - 1 == at ? -7.5f : 7.5f;  // a tie of opposite sign after it
      CAPTURE(n, at);
      const float want = reference().signed_extreme(y.data(), n);
      CHECK(bits_of({fast().signed_extreme(y.data(), n)}) == bits_of({want}));
    }
  }
}

TEST_CASE("dgq3 fast: symmetric codes at ties, bounds, zero scale and every width equal the rule's", "[dgq3][fast]") {
  for (int bits = 2; bits <= 8; ++bits) {
    const float half_range = static_cast<float>(1 << (bits - 1));
    for (const float inverse : {0.0f, 1.0f, 0.37f, 4096.0f, 1.6777216e7f}) {
      for (std::int64_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
        std::vector<float> y = gaussian_values(n, static_cast<std::uint64_t>(n * 10 + bits));
        for (std::int64_t i = 0; i < n; ++i) {
          // ties (k + 0.5) / inverse, values beyond both bounds, signed zeros
          if (i % 5 == 0 && inverse != 0.0f) y[i] = (static_cast<float>(i % 17) - 8.5f) / inverse;
          if (i % 7 == 0) y[i] *= 3.0f * half_range;
          if (i % 11 == 0) y[i] = i % 2 ? -0.0f : 0.0f;
        }
        std::vector<std::uint8_t> want(static_cast<std::size_t>(n)), got(want.size());
        reference().symmetric_codes(y.data(), n, inverse, bits, want.data());
        fast().symmetric_codes(y.data(), n, inverse, bits, got.data());
        CAPTURE(bits, inverse, n);
        REQUIRE(got == want);
        std::vector<float> a(want.size()), b(want.size());
        reference().symmetric_values(want.data(), n, bits, 0.0078125f / (bits + 1), a.data());
        fast().symmetric_values(want.data(), n, bits, 0.0078125f / (bits + 1), b.data());
        REQUIRE(bits_of(b) == bits_of(a));
      }
    }
  }
}

TEST_CASE("dgq3: a value on a grid midpoint takes the lower level and the grid's ends clamp (rule W8)",
          "[dgq3][grid]") {
  for (int bits = 2; bits <= 5; ++bits) {
    const int top = (1 << bits) - 1;
    CAPTURE(bits);
    CHECK(rules::grid_level(bits, 0) == -127);
    for (int i = 0; i < top; ++i) {
      REQUIRE(rules::grid_level(bits, i) < rules::grid_level(bits, i + 1));
      const float mid = 0.5f * static_cast<float>(rules::grid_level(bits, i) + rules::grid_level(bits, i + 1));
      CHECK(rules::grid_code(mid, bits) == i);
      CHECK(rules::grid_code(std::nextafter(mid, 1e9f), bits) == i + 1);
      CHECK(rules::grid_code(static_cast<float>(rules::grid_level(bits, i)), bits) == i);
    }
    CHECK(rules::grid_code(-1e30f, bits) == 0);
    CHECK(rules::grid_code(-127.9f, bits) == 0);
    CHECK(rules::grid_code(127.0f, bits) == top);
    CHECK(rules::grid_code(1e30f, bits) == top);
  }
}

TEST_CASE("dgq3 fast: grid codes at midpoints, beyond the ends, zero scale and every width equal the rule's",
          "[dgq3][fast][grid]") {
  for (int bits = 2; bits <= 5; ++bits) {
    for (const float inverse : {0.0f, 1.0f, 0.37f, 96.0f, 1.6777216e7f}) {
      for (std::int64_t n = 1; n <= 300; n += (n < 40 ? 1 : 37)) {
        std::vector<float> y = gaussian_values(n, static_cast<std::uint64_t>(n * 10 + bits));
        for (std::int64_t i = 0; i < n; ++i) {
          y[i] *= 40.0f / (inverse == 0.0f ? 1.0f : inverse);
          // midpoints of the grid (ties), values beyond both ends, signed zeros
          const int m = static_cast<int>(i % ((1 << bits) - 1));
          if (i % 5 == 0 && inverse != 0.0f)
            y[i] = 0.5f * static_cast<float>(rules::grid_level(bits, m) + rules::grid_level(bits, m + 1)) / inverse;
          if (i % 7 == 0) y[i] *= 4.0f;
          if (i % 11 == 0) y[i] = i % 2 ? -0.0f : 0.0f;
        }
        std::vector<std::uint8_t> want(static_cast<std::size_t>(n)), got(want.size());
        reference().grid_codes(y.data(), n, inverse, bits, want.data());
        fast().grid_codes(y.data(), n, inverse, bits, got.data());
        CAPTURE(bits, inverse, n);
        REQUIRE(got == want);
        std::vector<float> a(want.size()), b(want.size());
        reference().grid_values(want.data(), n, bits, -0.0078125f / (bits + 1), a.data());
        fast().grid_values(want.data(), n, bits, -0.0078125f / (bits + 1), b.data());
        REQUIRE(bits_of(b) == bits_of(a));
      }
    }
  }
}

TEST_CASE("dgq3 fast: the window mean adds the held rows oldest first, for every fill of the ring", "[dgq3][fast]") {
  for (const std::int64_t channels : {1, 7, 32, 64, 70}) {
    for (const std::int64_t window : {1, 3, 32}) {
      std::vector<float> ring = gaussian_values(window * channels, static_cast<std::uint64_t>(channels + window));
      for (std::size_t i = 0; i < ring.size(); i += 3) ring[i] *= 1e6f;  // rounding depends on the order
      for (const std::int64_t count : {0, 1, 2, 31, 32, 33, 100}) {
        std::vector<float> want(static_cast<std::size_t>(channels)), got(want.size());
        reference().window_mean(ring.data(), window, count, channels, want.data());
        fast().window_mean(ring.data(), window, count, channels, got.data());
        CAPTURE(channels, window, count);
        REQUIRE(bits_of(got) == bits_of(want));
      }
    }
  }
}

TEST_CASE("dgq3 on the CPU stores and decodes the reference's bytes for every parameter of its fast path",
          "[dgq3][fast][conformance]") {
  REQUIRE(has_fast_cpu_implementation("dgq3"));
  for (const char* spec : {"dgq3", "dgq3:center=none", "dgq3:center=kv,hi_frac=0.05", "dgq3:kbits=2,vbits=3,block=16",
                           "dgq3:kbits=5,vbits=6,block=32,center_win=3", "dgq3:kbits=7,vbits=8,block=128,center=v",
                           "dgq3:block=256,rot=none,hi_frac=0.2,hi_bits=5", "dgq3:cnorm=kv,calib=16,center=kv",
                           "dgq3:center_win=1,kbits=3", "dgq3:nl=kv,kbits=2,vbits=5,center=kv",
                           "dgq3:nl=k,kbits=3,vbits=3,block=16,hi_frac=0.1,hi_bits=5", "dgq3:nl=v,vbits=4,block=256"}) {
    const auto on_cpu = make_scheme(spec, Device::cpu);
    const auto ref = make_scheme(spec, Device::reference);
    for (const DType dtype : {DType::f16, DType::bf16, DType::f32}) {
      for (const auto& [tokens, channels] :
           std::vector<std::pair<std::int64_t, std::int64_t>>{{0, 64}, {1, 64}, {40, 128}, {130, 256}}) {
        std::vector<float> v = gaussian_values(tokens * channels, static_cast<std::uint64_t>(tokens + channels));
        for (std::int64_t i = 0; i < tokens * channels; ++i)
          v[i] += (i % channels == 3 ? 20.0f : 0.0f) + (i / channels > 60 ? 5.0f : 0.0f);
        const OwnedTensor x = tensor_from(v, tokens, channels, dtype);
        for (const TensorRole role : {TensorRole::key, TensorRole::value}) {
          CAPTURE(spec, dtype_name(dtype), tokens, channels, role == TensorRole::key);
          Compressed a, b;
          const std::string refused = typed_error_of([&] { a = ref->compress(x.view(), role); });
          REQUIRE(typed_error_of([&] { b = on_cpu->compress(x.view(), role); }) == refused);
          if (!refused.empty()) continue;  // a head narrower than the block: both refuse it alike
          REQUIRE(b.parts == a.parts);
          OwnedTensor from_ref(dtype, tokens, channels), from_cpu(dtype, tokens, channels);
          ref->decompress(a, from_ref.mut());
          on_cpu->decompress(a, from_cpu.mut());
          REQUIRE(from_cpu.bytes == from_ref.bytes);
        }
      }
    }
  }
}

}  // namespace dgq::test::dgq3_fast
