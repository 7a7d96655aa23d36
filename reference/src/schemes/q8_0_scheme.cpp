// q8_0: llama.cpp's q8_0 KV cache layout. Each token row is cut into blocks of 32 channels,
// each stored as a 34-byte block_q8_0 (dgq/baselines/q8_0.hpp). When channels is not a
// multiple of 32 the last block is zero-padded (codes 0), so every block keeps ggml's size.
// Part: "blocks" (tokens * ceil(channels/32) * 34 bytes, token-major).
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

std::int64_t blocks_per_token(std::int64_t channels) {
  return (channels + q8_0::kBlockValues - 1) / q8_0::kBlockValues;
}

// The messages of a row whose block scale overflows fp16 (compress) or is stored non-finite
// (decompress), found block by block once the row function has said there is one.
[[noreturn]] void throw_scale_overflow(const float* row, std::int64_t channels, std::int64_t t) {
  for (std::int64_t first = 0; first < channels; first += q8_0::kBlockValues) {
    const int count = static_cast<int>(std::min<std::int64_t>(q8_0::kBlockValues, channels - first));
    std::uint8_t block[q8_0::kBlockBytes];
    const std::uint16_t d = q8_0::quantize_block_into(row + first, count, block);
    if ((d & 0x7fffu) == 0x7c00u) {  // d = +inf (amax/127 is never NaN for finite input)
      throw InputError("q8_0: block scale overflows fp16 at token " + std::to_string(t) + ", channels " +
                       std::to_string(first) + ".." + std::to_string(first + count - 1) + " (max |x| above 127*65504)");
    }
  }
  throw std::logic_error("q8_0: quantize_row_into reported an overflow that no block has");
}

[[noreturn]] void throw_bad_scale(const std::uint8_t* row, std::int64_t blocks, std::int64_t t) {
  for (std::int64_t b = 0; b < blocks; ++b) {
    std::uint16_t d;
    std::memcpy(&d, row + b * q8_0::kBlockBytes, sizeof d);
    finite_stored(rules::half_to_float(d), "block scale d", static_cast<std::size_t>(t * blocks + b));
  }
  throw std::logic_error("q8_0: dequantize_row reported a bad scale that no block has");
}

class Q80Scheme final : public Scheme {
 public:
  explicit Q80Scheme(const kernels::CpuKernels& k) : k_(k) {}
  std::string spec() const override { return "q8_0"; }
  std::string family() const override { return "q8_0"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    Compressed c;
    compress_into(x, role, c);
    return c;
  }

  // A fresh output (out has no buffer of the size) is filled by appending a step of rows at a
  // time from a small staging buffer: no zero-filled whole part written twice. A reused output
  // (out's "blocks" buffer already holds the size, the steady state of a cache) is written in
  // place: no allocation, no page faults, no copy. Each block is written once either way.
  void compress_into(ConstTensor x, TensorRole role, Compressed& c) const override {
    check_input_dtype(x, "q8_0");
    std::vector<std::uint8_t> bytes = take_part_buffer(c, "blocks");
    c = start_compressed(spec(), x, role);
    const std::int64_t blocks = blocks_per_token(x.channels);
    const std::size_t row_bytes = static_cast<std::size_t>(blocks) * q8_0::kBlockBytes;
    const std::size_t total = static_cast<std::size_t>(x.tokens) * row_bytes;
    const bool in_place = bytes.capacity() >= total;
    if (in_place) {
      bytes.resize(total);  // no reallocation; every byte is overwritten below
    } else {
      bytes.clear();
      bytes.reserve(total);
    }
    const std::int64_t step = rows_per_step(x.channels);
    std::vector<std::uint8_t> staged(in_place ? 0 : static_cast<std::size_t>(step) * row_bytes);
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    non_finite_errors_first(x, "q8_0", [&] {
      for (std::int64_t t0 = 0; t0 < x.tokens && x.channels > 0; t0 += step) {
        const std::int64_t rows = std::min(step, x.tokens - t0);
        std::uint8_t* dst = in_place ? bytes.data() + t0 * row_bytes : staged.data();
        for (std::int64_t t = t0; t < t0 + rows; ++t) {
          // The kernel tests finiteness; only a row with a NaN/Inf goes through row_as_float,
          // which throws the message naming its first bad element.
          const float* values = row_as_float_unchecked(k_, x, t, row.data());
          const q8_0::RowStatus status = k_.q8_0_quantize_row(values, x.channels, dst + (t - t0) * row_bytes);
          if (status == q8_0::RowStatus::non_finite_input) row_as_float(k_, x, t, row.data(), "q8_0");
          if (status != q8_0::RowStatus::ok) throw_scale_overflow(values, x.channels, t);
        }
        if (!in_place)
          bytes.insert(bytes.end(), staged.begin(), staged.begin() + static_cast<std::ptrdiff_t>(rows * row_bytes));
      }
    });
    c.parts.push_back({"blocks", std::move(bytes)});
  }

  // Decodes a step of rows into a small fp32 buffer and narrows it straight into out (an fp32
  // out is decoded into directly): one pass over the output. On a non-finite stored scale the
  // rows before its block are already written.
  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::int64_t blocks = blocks_per_token(c.channels);
    const Part& part = expect_part(c, "blocks", planned_bytes(c.tokens, c.channels, c.dtype, c.role));
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    for (std::int64_t t0 = 0; t0 < c.tokens; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      const bool direct = out.dtype == DType::f32;
      float* dst = direct ? static_cast<float*>(out.data) + t0 * c.channels : values.data();
      for (std::int64_t t = t0; t < t0 + rows; ++t) {
        const std::uint8_t* row = part.bytes.data() + t * blocks * q8_0::kBlockBytes;
        if (!k_.q8_0_dequantize_row(row, c.channels, dst + (t - t0) * c.channels)) throw_bad_scale(row, blocks, t);
      }
      if (!direct) narrow_rows_into(k_, values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * blocks_per_token(channels)) * q8_0::kBlockBytes;
  }
  const kernels::CpuKernels& k_;
};

}  // namespace

std::vector<SchemeFamily> q8_0_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "q8_0",
          .device = device,
          .order = 70,
          .summary = "llama.cpp's q8_0: blocks of 32 int8 codes with an fp16 scale (byte-identical to ggml)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> { return std::make_unique<Q80Scheme>(*kt); },
          .deployed_block = q8_0::kBlockValues,
          .stored_layout = StoredLayout::ggml_blocks,
          .stored_format = StoredFormat::q8_0,
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_q8_0 =
    register_scheme_families(q8_0_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes
