// cpu/'s kernel table and its registrations: the fast CPU implementation of every family that
// has one, registered for Device::cpu exactly as cuda/ registers its families for Device::cuda.
#include "dgq/cpu/kernels.hpp"

#include "dgq/kernels/families.hpp"
#include "fast_kernels.hpp"

namespace dgq::cpu {
namespace {

kernels::Extremes min_max_extremes(const float* x, std::int64_t n) {
  const schemes::MinMax m = codes::min_max(x, n);
  return {m.lo, m.hi};
}

// The reference's table with each entry replaced where this build compiles its fast version
// (the conditions are the ones each file tests; elsewhere it is the reference's function).
kernels::CpuKernels make_table() {
  kernels::CpuKernels k = kernels::reference_kernels();
#if defined(__AVX2__) && defined(__F16C__) && defined(__FMA__)
  k.name = "avx2";
  k.load_row = row::load_row;
  k.canonical_sum = row::canonical_sum;
  k.canonical_sum_of_squares = row::canonical_sum_of_squares;
  k.scan_row = row::scan_row;
  k.scan_rows = row::scan_rows;
  k.quantize_rows = row::quantize_rows;
  k.quantize_row = row::quantize_row;
  k.dequantize_row = row::dequantize_row;
#endif
#if defined(__AVX2__)
  k.min_max = min_max_extremes;
  k.uniform_codes = codes::uniform_codes;
  k.uniform_codes_per_channel = codes::uniform_codes_per_channel;
  k.uniform_codes_offset = codes::uniform_codes_offset;
  k.uniform_nibbles = codes::uniform_nibbles;
  k.uniform_nibbles_per_channel = codes::uniform_nibbles_per_channel;
  k.uniform_nibbles_row = codes::uniform_nibbles_row;
  k.rule7_codes = codes::rule7_codes;
  k.pack_crumbs = codes::pack_crumbs;
  k.fwht_in_place = fwht_in_place;
  k.fwht_scaled_in_place = fwht_scaled_in_place;
  k.q8_0_quantize_row = q8_0::quantize_row_into;
  k.q8_0_dequantize_row = q8_0::dequantize_row;
  k.quantize_q4_0 = ggml::quantize_q4_0;
  k.quantize_iq4_nl = ggml::quantize_iq4_nl;
  k.turboquant_cells = codebook_cells;
  k.e4m3_codes = fp8::e4m3_codes;
  k.window_mean = dgq3::window_mean;
  k.signed_extreme = dgq3::signed_extreme;
  k.symmetric_codes = dgq3::symmetric_codes;
  k.symmetric_values = dgq3::symmetric_values;
  k.grid_codes = dgq3::grid_codes;
  k.grid_values = dgq3::grid_values;
#endif
#if defined(__F16C__)
  k.halves_to_floats = halves_to_floats;
  k.floats_to_halves = floats_to_halves;
#endif
#if defined(__AVX2__) && defined(__F16C__)
  k.store_fp16_ranges8 = store_fp16_ranges8;
  k.widen_extremes = codes::widen_extremes;
#endif
  k.dgq2_compress_direct = dgq2_compress_direct;
  return k;
}

}  // namespace

const kernels::CpuKernels& fast_kernels() {
  static const kernels::CpuKernels table = make_table();
  return table;
}

namespace {
// Static initializers of this file, which nothing references (hence the whole-archive link,
// cpu/CMakeLists.txt): the table becomes the CPU's, and the families register for Device::cpu.
[[maybe_unused]] const bool installed = kernels::install_fast_kernels(fast_kernels());
[[maybe_unused]] const bool registered_fast_families =
    register_scheme_families(kernels::kernel_families(fast_kernels(), Device::cpu));
}  // namespace

}  // namespace dgq::cpu
