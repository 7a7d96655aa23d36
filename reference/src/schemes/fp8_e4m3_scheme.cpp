// fp8-e4m3 (vLLM's fp8 KV cache with a dynamic per-tensor scale): scale = amax/448 in fp32,
// code = e4m3(x/scale) rounded to nearest even and saturated to +-448, x^ = e4m3(code)*scale.
// An all-zero tensor (or one whose amax/448 underflows to 0) stores scale 0 and code 0
// everywhere. Parts: "scale" (fp32; empty when the tensor has no elements), "codes".
#include <algorithm>
#include <cmath>
#include <vector>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/registry.hpp"
#include "schemes/kernel_families.hpp"
#include "dgq/schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

class Fp8E4M3Scheme final : public Scheme {
 public:
  explicit Fp8E4M3Scheme(const kernels::CpuKernels& k) : k_(k) {}
  std::string spec() const override { return "fp8-e4m3"; }
  std::string family() const override { return "fp8-e4m3"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "fp8-e4m3");
    Compressed c = start_compressed(spec(), x, role);
    const std::int64_t n = x.tokens * x.channels;
    std::vector<std::uint8_t> scale_part;
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(n), 0);
    if (n > 0) {
      // Two passes over the rows, each widened into one small buffer: the per-tensor amax
      // (with the NaN/Inf check, in row-major order), then the codes.
      std::vector<float> row(static_cast<std::size_t>(x.channels));
      float amax = 0.0f;
      for (std::int64_t t = 0; t < x.tokens; ++t) {
        widen_row_checked(k_, x, t, row.data(), "fp8-e4m3");
        for (const float e : row) amax = std::fabs(e) > amax ? std::fabs(e) : amax;  // finite input: same as fmax, inlined
      }
      const float scale = amax / fp8::kE4M3Max;
      // Any finite input fits the per-tensor scale (docs/schemes.md); only an amax so close to
      // FLT_MAX that 448 * scale rounds to inf could not be decoded: refused.
      if (!std::isfinite(scale * fp8::kE4M3Max))
        throw InputError("fp8-e4m3: amax " + std::to_string(amax) + " is too close to the fp32 maximum to decode");
      append_le(scale_part, scale);
      if (scale != 0.0f) {
        for (std::int64_t t = 0; t < x.tokens; ++t) {
          widen_row_checked(k_, x, t, row.data(), "fp8-e4m3");
          std::uint8_t* out = codes.data() + t * x.channels;
          for (std::int64_t d = 0; d < x.channels; ++d) out[d] = fp8::float_to_e4m3(row[d] / scale);
        }
      }
    }
    c.parts.push_back({"scale", std::move(scale_part)});
    c.parts.push_back({"codes", std::move(codes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::uint64_t n = static_cast<std::uint64_t>(c.tokens * c.channels);
    const Part& scale_part = expect_part(c, "scale", scale_bytes(n));
    const Part& codes = expect_part(c, "codes", n);
    if (n == 0) return;
    const float scale = finite_stored(read_le<float>(scale_part.bytes, 0), "scale", 0);
    float table[256];
    for (int b = 0; b < 256; ++b) table[b] = fp8::e4m3_to_float(static_cast<std::uint8_t>(b));
    // A step of rows decoded into a small buffer and narrowed straight into out: one pass.
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      const std::uint8_t* src = codes.bytes.data() + t0 * c.channels;
      for (std::int64_t i = 0; i < rows * c.channels; ++i) values[i] = table[src[i]] * scale;
      narrow_rows_into(k_, values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType,
                              TensorRole) const override {
    const auto n = static_cast<std::uint64_t>(tokens * channels);
    return n + scale_bytes(n);
  }

 private:
  static std::uint64_t scale_bytes(std::uint64_t elements) { return elements > 0 ? sizeof(float) : 0; }

  const kernels::CpuKernels& k_;
};


}  // namespace

// Its fast path is the kernel table's fp16 conversions (tensor_io).
std::vector<SchemeFamily> fp8_e4m3_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "fp8-e4m3",
          .device = device,
          .order = 60,
          .summary = "fp8 e4m3 codes with one dynamic per-tensor scale (vLLM's fp8 KV cache)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> { return std::make_unique<Fp8E4M3Scheme>(*kt); },
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_fp8_e4m3 =
    register_scheme_families(fp8_e4m3_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes
