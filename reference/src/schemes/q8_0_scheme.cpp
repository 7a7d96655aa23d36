// q8_0: llama.cpp's q8_0 KV cache layout. Each token row is cut into blocks of 32 channels,
// each stored as a 34-byte block_q8_0 (dgq/baselines/q8_0.hpp). When channels is not a
// multiple of 32 the last block is zero-padded (codes 0), so every block keeps ggml's size.
// Part: "blocks" (tokens * ceil(channels/32) * 34 bytes, token-major).
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/byte_io.hpp"
#include "dgq/registry.hpp"
#include "schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

std::int64_t blocks_per_token(std::int64_t channels) {
  return (channels + q8_0::kBlockValues - 1) / q8_0::kBlockValues;
}

class Q80Scheme final : public Scheme {
 public:
  std::string spec() const override { return "q8_0"; }
  std::string family() const override { return "q8_0"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "q8_0");
    Compressed c = start_compressed(spec(), x, role);
    const std::int64_t blocks = blocks_per_token(x.channels);
    std::vector<std::uint8_t> bytes(static_cast<std::size_t>(x.tokens * blocks) * q8_0::kBlockBytes);
    std::vector<float> row(static_cast<std::size_t>(x.channels));
    non_finite_errors_first(x, "q8_0", [&] {
      for (std::int64_t t = 0; t < x.tokens && x.channels > 0; ++t) {
        widen_row_checked(x, t, row.data(), "q8_0");
        for (std::int64_t b = 0; b < blocks; ++b) {
          const std::int64_t first = b * q8_0::kBlockValues;
          const int count = static_cast<int>(std::min<std::int64_t>(q8_0::kBlockValues, x.channels - first));
          q8_0::Block block;
          q8_0::quantize_block(row.data() + first, count, block);
          if (std::isinf(rules::half_to_float(block.d))) {
            throw InputError("q8_0: block scale overflows fp16 at token " + std::to_string(t) + ", channels " +
                             std::to_string(first) + ".." + std::to_string(first + count - 1) +
                             " (max |x| above 127*65504)");
          }
          std::memcpy(bytes.data() + (t * blocks + b) * q8_0::kBlockBytes, &block, q8_0::kBlockBytes);
        }
      }
    });
    c.parts.push_back({"blocks", std::move(bytes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const std::int64_t blocks = blocks_per_token(c.channels);
    const Part& part = expect_part(c, "blocks", planned_bytes(c.tokens, c.channels, c.dtype, c.role));
    std::vector<float> values(static_cast<std::size_t>(c.tokens * c.channels));
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      for (std::int64_t b = 0; b < blocks; ++b) {
        const std::int64_t first = b * q8_0::kBlockValues;
        const int count = static_cast<int>(std::min<std::int64_t>(q8_0::kBlockValues, c.channels - first));
        q8_0::Block block;
        std::memcpy(&block, part.bytes.data() + (t * blocks + b) * q8_0::kBlockBytes, q8_0::kBlockBytes);
        finite_stored(rules::half_to_float(block.d), "block scale d", static_cast<std::size_t>(t * blocks + b));
        q8_0::dequantize_block(block, count, values.data() + t * c.channels + first);
      }
    }
    narrow_into(values.data(), out);
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType,
                              TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * blocks_per_token(channels)) * q8_0::kBlockBytes;
  }
};

[[maybe_unused]] const bool registered_q8_0 = register_scheme_family({
    .name = "q8_0",
    .device = Device::cpu,
    .order = 70,
    .summary = "llama.cpp's q8_0: blocks of 32 int8 codes with an fp16 scale (byte-identical to ggml)",
    .params = {},
    .make = [](const SchemeArgs&) -> std::unique_ptr<Scheme> { return std::make_unique<Q80Scheme>(); },
});

}  // namespace

}  // namespace dgq::schemes
