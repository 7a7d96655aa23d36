// llama.cpp KV-cache types q4_0, q4_1, q5_0, q5_1 and iq4_nl as schemes: each token row is cut
// into blocks of 32 channels, each stored as ggml's block (dgq/baselines/ggml_kv_types.hpp),
// token-major. When channels is not a multiple of 32 the row is zero-padded to the next multiple
// before quantizing (the bytes ggml would write for that padded row), so every block keeps
// ggml's size; the padding decodes to values that are dropped. Part: "blocks"
// (tokens * ceil(channels/32) * block bytes). q8_0 keeps its own file (q8_0_scheme.cpp).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/errors.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/kernel_families.hpp"

namespace dgq::schemes {
namespace {

constexpr int kBlock = ggml::kBlockValues;

// One ggml type: its name, block size and the block quantizer/decoder. `carry` is the
// iq4_nl index buffer ggml reuses block after block (ggml_kv_types.hpp); the others ignore it.
struct BlockType {
  const char* name;
  int bytes;
  // k: q4_0 and iq4_nl quantize through its table (the only two with a fast path).
  bool (*quantize)(const kernels::CpuKernels& k, const float* x, std::uint8_t* block, std::uint8_t (&carry)[kBlock]);
  void (*dequantize)(const std::uint8_t* block, float* out);
};

// The quantizers write the block where it is stored: a trivial block type begins its life in
// the byte buffer (placement new, no initialisation) instead of on the stack followed by a copy
// that would re-read its separate field stores. Block offsets are multiples of the (even) block
// size from an operator-new buffer, so the 2-byte fields are aligned.
template <class Block, bool (*Quantize)(const float*, Block&)>
bool quantize_as(const kernels::CpuKernels&, const float* x, std::uint8_t* block, std::uint8_t (&)[kBlock]) {
  return Quantize(x, *new (block) Block);
}

bool quantize_q4_0_as(const kernels::CpuKernels& k, const float* x, std::uint8_t* block, std::uint8_t (&)[kBlock]) {
  return k.quantize_q4_0(x, *new (block) ggml::BlockQ4_0);
}

bool quantize_iq4_nl_as(const kernels::CpuKernels& k, const float* x, std::uint8_t* block,
                        std::uint8_t (&carry)[kBlock]) {
  return k.quantize_iq4_nl(x, *new (block) ggml::BlockIQ4NL, carry);
}

template <class Block, void (*Dequantize)(const Block&, float*)>
void dequantize_as(const std::uint8_t* block, float* out) {
  Block b;
  std::memcpy(&b, block, sizeof b);
  Dequantize(b, out);
}

constexpr BlockType kQ4_0{"q4_0", 18, quantize_q4_0_as, dequantize_as<ggml::BlockQ4_0, ggml::dequantize_q4_0>};
constexpr BlockType kQ4_1{"q4_1", 20, quantize_as<ggml::BlockQ4_1, ggml::quantize_q4_1>,
                          dequantize_as<ggml::BlockQ4_1, ggml::dequantize_q4_1>};
constexpr BlockType kQ5_0{"q5_0", 22, quantize_as<ggml::BlockQ5_0, ggml::quantize_q5_0>,
                          dequantize_as<ggml::BlockQ5_0, ggml::dequantize_q5_0>};
constexpr BlockType kQ5_1{"q5_1", 24, quantize_as<ggml::BlockQ5_1, ggml::quantize_q5_1>,
                          dequantize_as<ggml::BlockQ5_1, ggml::dequantize_q5_1>};
constexpr BlockType kIQ4NL{"iq4_nl", 18, quantize_iq4_nl_as, dequantize_as<ggml::BlockIQ4NL, ggml::dequantize_iq4_nl>};

std::int64_t blocks_per_token(std::int64_t channels) { return (channels + kBlock - 1) / kBlock; }

class GgmlBlockScheme final : public Scheme {
 public:
  GgmlBlockScheme(const BlockType& type, const kernels::CpuKernels& k) : type_(type), k_(k) {}

  std::string spec() const override { return type_.name; }
  std::string family() const override { return type_.name; }

  // The part is filled by appending a step of rows at a time from a small staging buffer:
  // no zero-filled whole-part vector written twice.
  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, type_.name);
    Compressed c = start_compressed(spec(), x, role);
    const std::int64_t blocks = blocks_per_token(x.channels);
    const std::size_t row_bytes = static_cast<std::size_t>(blocks * type_.bytes);
    const std::int64_t step = rows_per_step(x.channels);
    std::vector<std::uint8_t> bytes;
    bytes.reserve(static_cast<std::size_t>(x.tokens) * row_bytes);
    std::vector<std::uint8_t> staged(static_cast<std::size_t>(step) * row_bytes);
    std::vector<float> row(static_cast<std::size_t>(blocks * kBlock), 0.0f);  // tail stays 0
    std::uint8_t carry[kBlock] = {};
    non_finite_errors_first(x, type_.name, [&] {
      for (std::int64_t t0 = 0; t0 < x.tokens && x.channels > 0; t0 += step) {
        const std::int64_t rows = std::min(step, x.tokens - t0);
        for (std::int64_t t = t0; t < t0 + rows; ++t) {
          // Whole blocks read an fp32 input in place; a partial last block needs the padded row.
          const float* values = x.channels % kBlock == 0
                                    ? row_as_float(k_, x, t, row.data(), type_.name)
                                    : (widen_row_checked(k_, x, t, row.data(), type_.name), row.data());
          std::uint8_t* out = staged.data() + (t - t0) * row_bytes;
          for (std::int64_t b = 0; b < blocks; ++b) {
            if (!type_.quantize(k_, values + b * kBlock, out + b * type_.bytes, carry)) {
              const std::int64_t first = b * kBlock, last = std::min<std::int64_t>(first + kBlock, x.channels) - 1;
              throw InputError(std::string(type_.name) + ": a block scale overflows fp16 at token " +
                               std::to_string(t) + ", channels " + std::to_string(first) + ".." + std::to_string(last));
            }
          }
        }
        bytes.insert(bytes.end(), staged.begin(), staged.begin() + static_cast<std::ptrdiff_t>(rows * row_bytes));
      }
    });
    c.parts.push_back({"blocks", std::move(bytes)});
    return c;
  }

  // A step of rows decoded into a small fp32 buffer and narrowed straight into out: one pass.
  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::int64_t blocks = blocks_per_token(c.channels);
    const Part& part = expect_part(c, "blocks", planned_bytes(c.tokens, c.channels, c.dtype, c.role));
    const std::int64_t step = rows_per_step(c.channels);
    std::vector<float> values(static_cast<std::size_t>(step * c.channels));
    float decoded[kBlock];
    for (std::int64_t t0 = 0; t0 < c.tokens; t0 += step) {
      const std::int64_t rows = std::min(step, c.tokens - t0);
      const bool direct = out.dtype == DType::f32;  // an fp32 out is decoded into directly
      for (std::int64_t t = t0; t < t0 + rows; ++t) {
        float* dst = (direct ? static_cast<float*>(out.data) + t0 * c.channels : values.data()) + (t - t0) * c.channels;
        for (std::int64_t b = 0; b < blocks; ++b) {
          const std::uint8_t* block = part.bytes.data() + (t * blocks + b) * type_.bytes;
          const std::int64_t first = b * kBlock;
          if (first + kBlock <= c.channels) {
            type_.dequantize(block, dst + first);  // a full block decodes in place
          } else {
            type_.dequantize(block, decoded);
            std::copy(decoded, decoded + (c.channels - first), dst + first);
          }
        }
      }
      if (!direct) narrow_rows_into(k_, values.data(), out, t0, rows);
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * blocks_per_token(channels) * type_.bytes);
  }

 private:
  const BlockType& type_;
  const kernels::CpuKernels& k_;
};

}  // namespace

std::vector<SchemeFamily> ggml_block_families(const kernels::CpuKernels& k, Device device) {
  std::vector<SchemeFamily> all = {
      {
          .name = "q4_0",
          .device = device,
          .order = 100,
          .summary = "llama.cpp's q4_0: blocks of 32 4-bit codes with an fp16 scale (byte-identical to ggml)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<GgmlBlockScheme>(kQ4_0, *kt);
          },
          .deployed_block = kBlock,
          .stored_layout = StoredLayout::ggml_blocks,
          .stored_format = StoredFormat::q4_0,
      },
      {
          .name = "q4_1",
          .device = device,
          .order = 110,
          .summary = "llama.cpp's q4_1: blocks of 32 4-bit codes with fp16 scale and minimum (byte-identical to ggml)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<GgmlBlockScheme>(kQ4_1, *kt);
          },
          .deployed_block = kBlock,
      },
      {
          .name = "q5_0",
          .device = device,
          .order = 120,
          .summary = "llama.cpp's q5_0: blocks of 32 5-bit codes with an fp16 scale (byte-identical to ggml)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<GgmlBlockScheme>(kQ5_0, *kt);
          },
          .deployed_block = kBlock,
      },
      {
          .name = "q5_1",
          .device = device,
          .order = 130,
          .summary = "llama.cpp's q5_1: blocks of 32 5-bit codes with fp16 scale and minimum (byte-identical to ggml)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<GgmlBlockScheme>(kQ5_1, *kt);
          },
          .deployed_block = kBlock,
      },
      {
          .name = "iq4_nl",
          .device = device,
          .order = 140,
          .summary = "llama.cpp's iq4_nl: blocks of 32 4-bit indices into a non-linear grid, fp16 scale "
                     "(byte-identical to ggml)",
          .params = {},
          .make = [kt = &k](const SchemeArgs&) -> std::unique_ptr<Scheme> {
            return std::make_unique<GgmlBlockScheme>(kIQ4NL, *kt);
          },
          .deployed_block = kBlock,
          .stored_layout = StoredLayout::ggml_blocks,
          .stored_format = StoredFormat::iq4_nl,
      },
  };
  // Every type on both devices: q4_1, q5_0 and q5_1 have no block kernel of their own in cpu/,
  // but their fp16 conversions (compress from f16, decompress to f16) go through the table, and
  // with the reference's table those are the scalar rules: registered only for Device::reference
  // their decompress to f16 would run at about a fifth of ggml's rate
  // (docs/benchmarks.md). Same bytes on both devices (the CPU conformance suite).
  return all;
}

namespace {
[[maybe_unused]] const bool registered_ggml_block =
    register_scheme_families(ggml_block_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes
