// The reference's kernel table (dgq/kernels/cpu_kernels.hpp): the scalar functions that write
// the rules out, and the slot through which cpu/ makes its fast table the CPU's.
#include "dgq/kernels/cpu_kernels.hpp"

#include <algorithm>
#include <cmath>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/fwht.hpp"
#include "schemes/dgq3/grid_codes.hpp"
#include "schemes/dgq3/symmetric_codes.hpp"
#include "schemes/dgq_v1/row_kernels.hpp"
#include "schemes/uniform_code_runs.hpp"

namespace dgq::kernels {
namespace {

Extremes min_max_extremes(const float* x, std::int64_t n) {
  const schemes::MinMax m = schemes::min_max(x, n);
  return {m.lo, m.hi};
}

void codebook_cells(const float* u, int d, const float* boundaries, int edges, std::uint8_t* cells) {
  for (int j = 0; j < d; ++j) cells[j] = static_cast<std::uint8_t>(rules::codebook_cell(u[j], boundaries, edges));
}

bool no_fp16_ranges8(const float*, const float*, int, std::vector<std::uint8_t>&, float*, float*) { return false; }

void halves_to_floats(const std::uint16_t* h, float* f, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) f[i] = rules::half_to_float(h[i]);
}

void floats_to_halves(const float* f, std::uint16_t* h, std::int64_t n) {
  for (std::int64_t i = 0; i < n; ++i) h[i] = rules::float_to_half(f[i]);
}

bool widen_extremes(const void* src, DType dt, std::int64_t n, std::int64_t group, float* row, Extremes* ext) {
  const ConstTensor view{src, dt, 1, n};
  bool finite = true;
  for (std::int64_t d = 0; d < n; ++d) {
    row[d] = load_element(view, d);
    finite = finite && std::isfinite(row[d]);
  }
  if (!finite) return false;
  for (std::int64_t first = 0; first < n; first += group, ++ext)
    *ext = min_max_extremes(row + first, std::min(group, n - first));
  return true;
}

void pack_crumbs(const std::uint8_t* q, std::int64_t n, std::uint8_t* out) {
  for (std::int64_t k = 0; k < n / 4; ++k) {
    out[k] = static_cast<std::uint8_t>(q[4 * k] | q[4 * k + 1] << 2 | q[4 * k + 2] << 4 | q[4 * k + 3] << 6);
  }
}

void e4m3_codes(const float* x, std::int64_t n, float scale, std::uint8_t* out) {
  for (std::int64_t i = 0; i < n; ++i) out[i] = fp8::float_to_e4m3(x[i] / scale);
}

constexpr CpuKernels kReference{
    .name = "reference",
    .halves_to_floats = halves_to_floats,
    .floats_to_halves = floats_to_halves,
    .load_row = scalar::load_row,
    .canonical_sum = scalar::canonical_sum,
    .canonical_sum_of_squares = scalar::canonical_sum_of_squares,
    .scan_row = scalar::scan_row,
    .scan_rows = scalar::scan_rows,
    .quantize_rows = scalar::quantize_rows,
    .quantize_row = scalar::quantize_row,
    .dequantize_row = scalar::dequantize_row,
    .min_max = min_max_extremes,
    .uniform_codes = schemes::uniform_codes,
    .uniform_codes_per_channel = schemes::uniform_codes_per_channel,
    .uniform_codes_offset = schemes::uniform_codes_offset,
    .uniform_nibbles = schemes::uniform_nibbles,
    .uniform_nibbles_per_channel = schemes::uniform_nibbles_per_channel,
    .uniform_nibbles_row = schemes::uniform_nibbles_row,
    .widen_extremes = widen_extremes,
    .pack_crumbs = pack_crumbs,
    .rule7_codes = schemes::rule7_codes,
    .fwht_in_place = fwht_in_place,
    .fwht_scaled_in_place = fwht_scaled_in_place,
    .q8_0_quantize_row = q8_0::quantize_row_into,
    .q8_0_dequantize_row = q8_0::dequantize_row,
    .quantize_q4_0 = ggml::quantize_q4_0,
    .quantize_iq4_nl = ggml::quantize_iq4_nl,
    .store_fp16_ranges8 = no_fp16_ranges8,
    .dgq2_compress_direct = nullptr,
    .turboquant_cells = codebook_cells,
    .e4m3_codes = e4m3_codes,
    .window_mean = schemes::dgq3::window_mean,
    .signed_extreme = schemes::dgq3::signed_extreme,
    .symmetric_codes = schemes::dgq3::symmetric_codes,
    .symmetric_values = schemes::dgq3::symmetric_values,
    .grid_codes = schemes::dgq3::grid_codes,
    .grid_values = schemes::dgq3::grid_values,
};

const CpuKernels*& fast_slot() {
  static const CpuKernels* fast = nullptr;
  return fast;
}

}  // namespace

const CpuKernels& reference_kernels() { return kReference; }

const CpuKernels& kernels_for(Device device) {
  if (device == Device::reference || fast_slot() == nullptr) return kReference;
  return *fast_slot();
}

bool install_fast_kernels(const CpuKernels& k) {
  fast_slot() = &k;
  return true;
}

}  // namespace dgq::kernels
