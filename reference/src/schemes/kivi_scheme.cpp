// kivi-4 / kivi-2 (KIVI, Liu et al. 2024): asymmetric min/max codes of 4 or 2 bits. Keys are
// quantized per channel over groups of `group` tokens, values per token. The most recent
// `residual` tokens stay in the input dtype. Keys additionally keep the incomplete group in
// front of the residual in full precision, as KIVI's streaming cache does (a key group is only
// quantized once all its tokens are there), so with L tokens:
//   keys:   quantized = floor(max(L - residual, 0) / group) * group tokens
//   values: quantized = max(L - residual, 0) tokens
// and the remaining tail tokens are stored raw. Parts: "codes" (bit stream over the quantized
// tokens, row-major, LSB first), "ranges" (lo, hi fp32: keys per (group, channel) at index
// group*channels + channel; values per token), "residual" (tail tokens in the input dtype).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/byte_io.hpp"
#include "dgq/causal.hpp"
#include "dgq/kernels/uniform_codes.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/bit_packing.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

struct KiviLayout {
  std::int64_t quantized_tokens = 0;
  std::uint64_t ranges = 0;  // number of (lo, hi) pairs
};

class KiviScheme final : public Scheme {
 public:
  KiviScheme(int bits, int group, int residual, const kernels::CpuKernels& k)
      : bits_(bits), group_(group), residual_(residual), k_(k) {}

  std::string family() const override { return "kivi-" + std::to_string(bits_); }
  std::string spec() const override {
    return family() + ":group=" + std::to_string(group_) + ",residual=" + std::to_string(residual_);
  }

  // Row by row from x (no whole-tensor fp32 copy): each row widened into one small buffer with
  // the NaN/Inf check, in row-major order; keys read their group's rows twice (extremes, then
  // codes), values once. The residual rows are checked too, so the first NaN/Inf of the tensor
  // is reported, before a range that overflows (non_finite_errors_first), as when the whole
  // tensor was widened first.
  Compressed compress(ConstTensor x, TensorRole role) const override {
    const std::string name = family();
    check_input_dtype(x, name);
    Compressed c = start_compressed(spec(), x, role);
    const KiviLayout layout = layout_for(x.tokens, x.channels, role);
    const std::int64_t qn = layout.quantized_tokens * x.channels;
    std::vector<std::uint8_t> codes;
    BitPacker packer(codes, static_cast<std::uint64_t>(qn), bits_);
    std::vector<std::uint8_t> ranges;
    ranges.reserve(layout.ranges * kRangeBytes);
    non_finite_errors_first(x, name, [&] {
      if (x.channels == 0) return;
      if (role == TensorRole::key) {
        encode_keys(x, layout.quantized_tokens, codes.data(), packer, ranges);
      } else {
        encode_values(x, layout.quantized_tokens, codes.data(), packer, ranges);
      }
      std::vector<float> row(static_cast<std::size_t>(x.channels));
      for (std::int64_t t = layout.quantized_tokens; t < x.tokens; ++t) widen_row_checked(k_, x, t, row.data(), name);
    });
    const std::size_t row_bytes = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
    const auto* raw = static_cast<const std::uint8_t*>(x.data);
    std::vector<std::uint8_t> residual(raw + layout.quantized_tokens * row_bytes, raw + x.tokens * row_bytes);
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"ranges", std::move(ranges)});
    c.parts.push_back({"residual", std::move(residual)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const KiviLayout layout = layout_for(c.tokens, c.channels, c.role);
    const std::int64_t qn = layout.quantized_tokens * c.channels;
    const std::size_t row_bytes = static_cast<std::size_t>(c.channels) * dtype_size(c.dtype);
    const Part& codes = expect_part(c, "codes", packed_bytes(static_cast<std::uint64_t>(qn), bits_));
    const Part& ranges = expect_part(c, "ranges", layout.ranges * kRangeBytes);
    const Part& residual = expect_part(c, "residual", (c.tokens - layout.quantized_tokens) * row_bytes);
    // A step of rows decoded into a small buffer and narrowed straight into out: one pass.
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    std::vector<std::uint8_t> row_codes(static_cast<std::size_t>(c.channels));
    std::vector<float> lo(static_cast<std::size_t>(c.channels)), scale(lo.size());
    for (std::int64_t t0 = 0; t0 < layout.quantized_tokens; t0 += step) {
      const std::int64_t rows = std::min(step, layout.quantized_tokens - t0);
      for (std::int64_t t = t0; t < t0 + rows; ++t) {
        // Keys: refresh the per-channel ranges at each group start; values: one range per token.
        if (c.role == TensorRole::key && t % group_ == 0) {
          for (std::int64_t d = 0; d < c.channels; ++d) {
            const Range r = read_range(ranges.bytes, static_cast<std::size_t>((t / group_) * c.channels + d));
            lo[d] = r.lo;
            scale[d] = uniform_scale(r.lo, r.hi, levels());
          }
        } else if (c.role == TensorRole::value) {
          const Range r = read_range(ranges.bytes, static_cast<std::size_t>(t));
          std::fill(lo.begin(), lo.end(), r.lo);
          std::fill(scale.begin(), scale.end(), uniform_scale(r.lo, r.hi, levels()));
        }
        unpack_run(codes.bytes.data(), static_cast<std::uint64_t>(t * c.channels), row_codes.data(),
                   static_cast<std::uint64_t>(c.channels), bits_);
        float* dst = values.data() + (t - t0) * c.channels;
        for (std::int64_t d = 0; d < c.channels; ++d) dst[d] = uniform_value(row_codes[d], lo[d], scale[d]);
      }
      narrow_rows_into(k_, values.data(), out, t0, rows);
    }
    if (!residual.bytes.empty()) {
      std::memcpy(static_cast<std::uint8_t*>(out.data) + layout.quantized_tokens * row_bytes, residual.bytes.data(),
                  residual.bytes.size());
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    const KiviLayout layout = layout_for(tokens, channels, role);
    const auto qn = static_cast<std::uint64_t>(layout.quantized_tokens * channels);
    return packed_bytes(qn, bits_) + layout.ranges * kRangeBytes +
           static_cast<std::uint64_t>((tokens - layout.quantized_tokens) * channels) * dtype_size(dtype);
  }

  // Rule C2 (docs/spec.md, "Causal caches"): a token is final once this scheme would quantize it
  // (keys: its group complete and out of the residual; values: out of the residual), stored as
  // the same family without residual stores it; the residual and the open key group are the
  // cache's raw tail. The last schedule entry is compress's bytes.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    const KiviScheme form(bits_, group_, 0, k_);
    CausalSchedule s;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      const std::int64_t c = layout_for(t + 1, x.channels, role).quantized_tokens;
      s.final_tokens.push_back(static_cast<std::uint32_t>(c));
      s.final_bytes.push_back(form.planned_bytes(c, x.channels, x.dtype, role));
    }
    return s;
  }

  std::unique_ptr<Scheme> causal_form() const override { return std::make_unique<KiviScheme>(bits_, group_, 0, k_); }

  // The residual (both roles) and the open key group are kept raw (rule C2).
  bool keeps_raw_rows(TensorRole role) const override {
    return residual_ > 0 || (role == TensorRole::key && group_ > 1);
  }

 private:
  int levels() const { return (1 << bits_) - 1; }

  KiviLayout layout_for(std::int64_t tokens, std::int64_t channels, TensorRole role) const {
    const std::int64_t old_tokens = tokens > residual_ ? tokens - residual_ : 0;
    KiviLayout layout;
    if (role == TensorRole::key) {
      layout.quantized_tokens = old_tokens / group_ * group_;
      layout.ranges = static_cast<std::uint64_t>(layout.quantized_tokens / group_ * channels);
    } else {
      layout.quantized_tokens = old_tokens;
      layout.ranges = channels > 0 ? static_cast<std::uint64_t>(old_tokens) : 0;
    }
    return layout;
  }

  // Per channel over each group of group_ tokens: the extremes (MinMax::add in token order,
  // kept as two arrays so the loop over channels vectorizes), then each row's codes through
  // the kernel table, packed by put_run.
  void encode_keys(ConstTensor x, std::int64_t tokens, std::uint8_t* stream, BitPacker& packer,
                   std::vector<std::uint8_t>& ranges) const {
    const std::int64_t channels = x.channels;
    const std::string name = family();
    // A group's widened rows are kept for its codes when they fit in kGroupFloats (the
    // default 32 tokens x 128 channels do); larger groups widen each row again.
    constexpr std::int64_t kGroupFloats = 8192;
    const bool keep = static_cast<std::int64_t>(group_) * channels <= kGroupFloats;
    std::vector<float> rows(static_cast<std::size_t>(keep ? group_ * channels : channels));
    std::vector<float> row(static_cast<std::size_t>(channels));
    std::vector<float> mins(row.size()), maxs(row.size()), lo(row.size()), inv(row.size());
    std::vector<std::uint8_t> q(row.size());
    for (std::int64_t first = 0; first < tokens; first += group_) {
      std::fill(mins.begin(), mins.end(), INFINITY);
      std::fill(maxs.begin(), maxs.end(), -INFINITY);
      for (std::int64_t t = first; t < first + group_; ++t) {
        float* v = rows.data() + (keep ? (t - first) * channels : 0);
        widen_row(x, t, v);
        float* mn = mins.data();
        float* mx = maxs.data();
        for (std::int64_t d = 0; d < channels; ++d) {
          mn[d] = v[d] < mn[d] ? v[d] : mn[d];
          mx[d] = v[d] > mx[d] ? v[d] : mx[d];
        }
      }
      for (std::int64_t d = 0; d < channels; ++d) {
        const MinMax r{mins[d], maxs[d]};
        check_range_finite(r, name, [&] {
          return "tokens " + std::to_string(first) + ".." + std::to_string(first + group_ - 1) + ", channel " +
                 std::to_string(d);
        });
        lo[d] = r.stored_lo();
        const float hi = r.stored_hi();
        append_range(ranges, lo[d], hi);
        inv[d] = uniform_inverse(lo[d], hi, levels());
      }
      for (std::int64_t t = first; t < first + group_; ++t) {
        const float* v = keep ? rows.data() + (t - first) * channels
                              : row_as_float_unchecked(k_, x, t, row.data());  // checked above
        if (bits_ == 4 && channels % 2 == 0) {
          // Whole bytes of a zeroed stream, each written once: stored directly, the bytes
          // put_run would or in.
          k_.uniform_nibbles_per_channel(v, channels, lo.data(), inv.data(), levels(), 0, stream + t * channels / 2);
          continue;
        }
        k_.uniform_codes_per_channel(v, channels, lo.data(), inv.data(), levels(), 0, q.data());
        put_row(stream, packer, t, channels, q.data());
      }
    }
  }

  // Row t's codes into the zeroed stream: 2-bit rows of whole bytes packed by the kernel table
  // and stored directly (each byte written once: the bytes put_run would or in), others by
  // put_run.
  void put_row(std::uint8_t* stream, BitPacker& packer, std::int64_t t, std::int64_t channels,
               const std::uint8_t* q) const {
    if (bits_ == 2 && channels % 4 == 0) {
      k_.pack_crumbs(q, channels, stream + t * channels / 4);
      return;
    }
    packer.put_run(static_cast<std::uint64_t>(t * channels), q, static_cast<std::uint64_t>(channels));
  }

  void encode_values(ConstTensor x, std::int64_t tokens, std::uint8_t* stream, BitPacker& packer,
                     std::vector<std::uint8_t>& ranges) const {
    const std::int64_t channels = x.channels;
    const std::string name = family();
    std::vector<float> row(static_cast<std::size_t>(channels));
    std::vector<std::uint8_t> q(row.size());
    for (std::int64_t t = 0; t < tokens; ++t) {
      const kernels::Extremes e = widen_row(x, t, row.data());
      const MinMax r{e.lo, e.hi};
      check_range_finite(r, name, [t] { return "token " + std::to_string(t); });
      const float lo = r.stored_lo(), hi = r.stored_hi();
      append_range(ranges, lo, hi);
      const float inv = uniform_inverse(lo, hi, levels());
      if (bits_ == 4 && channels % 2 == 0) {  // whole bytes, stored directly (as for keys)
        k_.uniform_nibbles(row.data(), channels, lo, inv, levels(), 0, stream + t * channels / 2);
        continue;
      }
      k_.uniform_codes(row.data(), channels, lo, inv, levels(), q.data());
      put_row(stream, packer, t, channels, q.data());
    }
  }

  // Row t widened into row[] with the NaN/Inf check (widen_row_checked's message) and its
  // extremes, in one pass (the kernel table's widen_extremes).
  kernels::Extremes widen_row(ConstTensor x, std::int64_t t, float* row) const {
    const std::size_t row_bytes = static_cast<std::size_t>(x.channels) * dtype_size(x.dtype);
    kernels::Extremes e;
    if (!k_.widen_extremes(static_cast<const std::byte*>(x.data) + t * row_bytes, x.dtype, x.channels, x.channels, row,
                           &e)) {
      widen_row_checked(k_, x, t, row, family());
      throw std::logic_error("widen_extremes reported a NaN/Inf that widen_row_checked did not find");
    }
    return e;
  }

  int bits_;
  int group_;
  int residual_;
  const kernels::CpuKernels& k_;
};

constexpr int kMaxKiviLength = 1 << 30;

using Kind = SchemeParam::Kind;
constexpr SchemeParam kKiviParams[] = {
    {"group", Kind::integer, "32", 1, kMaxKiviLength, "", "tokens per key group (keys are quantized per channel)",
     nullptr},
    {"residual", Kind::integer, "32", 0, kMaxKiviLength, "", "most recent tokens kept in the input dtype", nullptr},
};

}  // namespace

// Its fast path is the kernel table's fp16 conversions (tensor_io).
std::vector<SchemeFamily> kivi_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "kivi-4",
          .device = device,
          .order = 80,
          .summary = "KIVI 4-bit: keys per channel over token groups, values per token; the latest tokens raw",
          .params = kKiviParams,
          .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
            return std::make_unique<KiviScheme>(4, args.integer("group"), args.integer("residual"), *kt);
          },
          .stored_layout = StoredLayout::group_codes,
          .stored_format = StoredFormat::uniform4,
      },
      {
          .name = "kivi-2",
          .device = device,
          .order = 90,
          .summary = "KIVI 2-bit: keys per channel over token groups, values per token; the latest tokens raw",
          .params = kKiviParams,
          .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
            return std::make_unique<KiviScheme>(2, args.integer("group"), args.integer("residual"), *kt);
          },
          .stored_layout = StoredLayout::group_codes,
          .stored_format = StoredFormat::uniform2,
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_kivi =
    register_scheme_families(kivi_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes
