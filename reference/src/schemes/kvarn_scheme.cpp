// kvarn (KVarN, Muller et al., arXiv 2606.03458; vLLM backend `kvarn_k4v2_g128`): per tile of
// `group` tokens, a Hadamard rotation over the whole head, a Sinkhorn-like variance normalisation
// of the tile (dgq/schemes/sinkhorn_normalisation.hpp) and asymmetric min/max codes per tile row:
// keys per channel over the group's tokens, values per token over the channels. The row's RTN
// scale and zero are folded into the row's Sinkhorn factor and stored as fp16; the other axis'
// Sinkhorn factor is stored as fp16 too. The first `sink` tokens (the attention-sink block) and
// the open group stay raw in the input dtype. Rules N0-N6 of docs/spec.md "KVarN".
//
// Parts (every one present, possibly empty): "sink" (raw rows), "codes" (one little-endian bit
// stream over the groups' tiles, group-major, each tile row-major: K tiles are channels x tokens,
// V tiles tokens x channels, as the source packs them), "scales" and "zeros" (fp16 per tile row:
// K per channel, V per token), "sinkhorn" (fp16 per tile column: K per token, V per channel),
// "tail" (raw rows of the open group).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/registry.hpp"
#include "dgq/rotation.hpp"
#include "dgq/schemes/sinkhorn_normalisation.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/bit_packing.hpp"

namespace dgq::schemes {
namespace {

constexpr char kKvarnName[] = "kvarn";

// Rule N1: the rotation spans the whole head (the source's D x D Sylvester matrix).
bool kvarn_supported_dim(std::int64_t d) { return d >= 2 && d <= (std::int64_t{1} << 20) && (d & (d - 1)) == 0; }

void kvarn_check_dim(std::int64_t d) {
  if (!kvarn_supported_dim(d)) {
    throw InputError(
        "kvarn: head_dim (channels) must be a power of two in [2, 1048576] (the Hadamard rotation spans "
        "the whole head), got " +
        std::to_string(d));
  }
}

// Rule N0: how a head of L tokens is cut.
struct KvarnLayout {
  std::int64_t sink = 0;    // raw leading tokens
  std::int64_t groups = 0;  // complete groups after them
  std::int64_t tail = 0;    // raw tokens of the open group
};

// A tile's shape for a role (rule N3): K tiles are channels x tokens, V tiles tokens x channels.
struct KvarnTile {
  std::int64_t rows = 0, cols = 0;
};

KvarnTile kvarn_tile(TensorRole role, std::int64_t group, std::int64_t channels) {
  return role == TensorRole::key ? KvarnTile{channels, group} : KvarnTile{group, channels};
}

void kvarn_store_fp16(std::vector<std::uint8_t>& out, float v, const std::function<std::string()>& what) {
  const std::uint16_t h = rules::float_to_half(v);
  if ((h & 0x7c00u) == 0x7c00u) throw InputError("kvarn: " + what() + " does not fit fp16 (|value| > 65504)");
  out.push_back(static_cast<std::uint8_t>(h & 0xffu));
  out.push_back(static_cast<std::uint8_t>(h >> 8));
}

float kvarn_read_fp16(const Part& p, std::size_t i, std::string_view spec) {
  const std::uint16_t h = static_cast<std::uint16_t>(p.bytes[2 * i] | (p.bytes[2 * i + 1] << 8));
  if ((h & 0x7c00u) == 0x7c00u) {
    throw InputError(std::string(spec) + ": corrupt kvarn data: non-finite fp16 at index " + std::to_string(i) +
                     " of part '" + p.name + "'");
  }
  return rules::half_to_float(h);
}

// Rule N1's rounding: the rotated rows as a cache of the input dtype holds them.
void kvarn_round_through(const kernels::CpuKernels& k, std::vector<float>& values, std::int64_t tokens,
                         std::int64_t channels, DType dtype) {
  if (dtype == DType::f32 || tokens == 0) return;
  std::vector<std::uint8_t> bytes(static_cast<std::size_t>(tokens * channels) * dtype_size(dtype));
  const MutTensor t{bytes.data(), dtype, tokens, channels};
  narrow_into(k, values.data(), t);
  to_float(ConstTensor(t), values);
}

class KvarnScheme final : public Scheme {
 public:
  KvarnScheme(int kbits, int vbits, int group, int iterations, int sink, const kernels::CpuKernels& k)
      : kbits_(kbits), vbits_(vbits), group_(group), iterations_(iterations), sink_(sink), k_(k) {}

  std::string family() const override { return kKvarnName; }
  std::string spec() const override {
    return std::string(kKvarnName) + ":kbits=" + std::to_string(kbits_) + ",vbits=" + std::to_string(vbits_) +
           ",group=" + std::to_string(group_) + ",iters=" + std::to_string(iterations_) +
           ",sink=" + std::to_string(sink_);
  }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    kvarn_check_dim(x.channels);
    const std::vector<float> v = widen_checked(k_, x, kKvarnName);
    Compressed c = start_compressed(spec(), x, role);
    const KvarnLayout layout = layout_for(x.tokens);
    const std::int64_t d = x.channels;
    const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(x.dtype);
    const auto* raw = static_cast<const std::uint8_t*>(x.data);
    const std::int64_t tail_at = layout.sink + layout.groups * group_;
    std::vector<std::uint8_t> sink(raw, raw + layout.sink * row_bytes);
    std::vector<std::uint8_t> tail(raw + tail_at * row_bytes, raw + x.tokens * row_bytes);
    std::vector<std::uint8_t> codes, scales, zeros, sinkhorn;
    const int bits = bits_for(role);
    BitPacker packer(codes, static_cast<std::uint64_t>(layout.groups * group_ * d), bits);
    for (std::int64_t g = 0; g < layout.groups; ++g) {
      encode_group(v.data(), layout.sink + g * group_, d, x.dtype, role, g, packer, scales, zeros, sinkhorn);
    }
    c.parts.push_back({"sink", std::move(sink)});
    c.parts.push_back({"codes", std::move(codes)});
    c.parts.push_back({"scales", std::move(scales)});
    c.parts.push_back({"zeros", std::move(zeros)});
    c.parts.push_back({"sinkhorn", std::move(sinkhorn)});
    c.parts.push_back({"tail", std::move(tail)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    const KvarnLayout layout = layout_for(c.tokens);
    const std::int64_t d = c.channels;
    if (layout.groups > 0) kvarn_check_dim(d);
    const std::size_t row_bytes = static_cast<std::size_t>(d) * dtype_size(c.dtype);
    const KvarnTile tile = kvarn_tile(c.role, group_, d);
    const int bits = bits_for(c.role);
    const auto n = static_cast<std::uint64_t>(layout.groups);
    const Part& sink = expect_part(c, "sink", static_cast<std::uint64_t>(layout.sink) * row_bytes);
    const Part& codes = expect_part(c, "codes", packed_bytes(n * static_cast<std::uint64_t>(group_ * d), bits));
    const Part& scales = expect_part(c, "scales", n * static_cast<std::uint64_t>(tile.rows) * 2);
    const Part& zeros = expect_part(c, "zeros", n * static_cast<std::uint64_t>(tile.rows) * 2);
    const Part& factors = expect_part(c, "sinkhorn", n * static_cast<std::uint64_t>(tile.cols) * 2);
    const Part& tail = expect_part(c, "tail", static_cast<std::uint64_t>(layout.tail) * row_bytes);
    auto* dst = static_cast<std::uint8_t*>(out.data);
    if (!sink.bytes.empty()) std::memcpy(dst, sink.bytes.data(), sink.bytes.size());
    std::vector<std::uint8_t> tile_codes(static_cast<std::size_t>(group_ * d));
    std::vector<float> values(tile_codes.size());  // [group][channels], token-major
    std::vector<float> scale(static_cast<std::size_t>(tile.rows)), zero(scale.size()),
        factor(static_cast<std::size_t>(tile.cols));
    for (std::int64_t g = 0; g < layout.groups; ++g) {
      unpack_run(codes.bytes.data(), static_cast<std::uint64_t>(g * group_ * d), tile_codes.data(), tile_codes.size(),
                 bits);
      for (std::int64_t r = 0; r < tile.rows; ++r) {
        scale[r] = kvarn_read_fp16(scales, static_cast<std::size_t>(g * tile.rows + r), spec());
        zero[r] = kvarn_read_fp16(zeros, static_cast<std::size_t>(g * tile.rows + r), spec());
      }
      for (std::int64_t col = 0; col < tile.cols; ++col) {
        factor[col] = kvarn_read_fp16(factors, static_cast<std::size_t>(g * tile.cols + col), spec());
      }
      for (std::int64_t r = 0; r < tile.rows; ++r) {
        for (std::int64_t col = 0; col < tile.cols; ++col) {
          // Rule N5: (q * scale + zero) * factor, three fp32 operations, no fma.
          const float q = static_cast<float>(tile_codes[static_cast<std::size_t>(r * tile.cols + col)]);
          const float y = (q * scale[r] + zero[r]) * factor[col];
          const std::int64_t t = c.role == TensorRole::key ? col : r;
          const std::int64_t ch = c.role == TensorRole::key ? r : col;
          values[static_cast<std::size_t>(t * d + ch)] = y;
        }
      }
      for (std::int64_t t = 0; t < group_; ++t) hadamard_rotate_row(k_, values.data() + t * d, d, static_cast<int>(d));
      narrow_rows_into(k_, values.data(), out, layout.sink + g * group_, group_);
    }
    if (!tail.bytes.empty()) {
      std::memcpy(dst + (layout.sink + layout.groups * group_) * row_bytes, tail.bytes.data(), tail.bytes.size());
    }
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType dtype, TensorRole role) const override {
    const KvarnLayout layout = layout_for(tokens);
    const KvarnTile tile = kvarn_tile(role, group_, channels);
    const auto n = static_cast<std::uint64_t>(layout.groups);
    const std::uint64_t raw = static_cast<std::uint64_t>((layout.sink + layout.tail) * channels) * dtype_size(dtype);
    return raw + packed_bytes(n * static_cast<std::uint64_t>(group_ * channels), bits_for(role)) +
           n * static_cast<std::uint64_t>(2 * tile.rows + tile.cols) * 2;
  }

  // Rule C7 (docs/spec.md, "Causal caches"): a sink token is final on append (raw), a group is
  // final once its last token is there, the open group is the raw tail. The scheme stores its
  // own final prefix: a prefix ending on a group edge is cut exactly as the whole chunk.
  CausalSchedule causal_schedule(ConstTensor x, TensorRole role) const override {
    CausalSchedule s;
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      const KvarnLayout layout = layout_for(t + 1);
      const std::int64_t final_tokens = layout.sink + layout.groups * group_;
      s.final_tokens.push_back(static_cast<std::uint32_t>(final_tokens));
      s.final_bytes.push_back(planned_bytes(final_tokens, x.channels, x.dtype, role));
    }
    return s;
  }

  // The sink block and the open tile are stored as they came (rules N0, C7).
  bool keeps_raw_rows(TensorRole) const override { return sink_ > 0 || group_ > 1; }

 private:
  int bits_for(TensorRole role) const { return role == TensorRole::key ? kbits_ : vbits_; }

  KvarnLayout layout_for(std::int64_t tokens) const {
    KvarnLayout layout;
    layout.sink = std::min<std::int64_t>(sink_, tokens);
    layout.groups = (tokens - layout.sink) / group_;
    layout.tail = tokens - layout.sink - layout.groups * group_;
    return layout;
  }

  // Rules N1-N4 for the group of tokens [first, first + group): rotate, normalise, code, fold.
  void encode_group(const float* v, std::int64_t first, std::int64_t d, DType dtype, TensorRole role, std::int64_t g,
                    BitPacker& packer, std::vector<std::uint8_t>& scales, std::vector<std::uint8_t>& zeros,
                    std::vector<std::uint8_t>& sinkhorn) const {
    std::vector<float> rotated(v + first * d, v + (first + group_) * d);
    for (std::int64_t t = 0; t < group_; ++t) hadamard_rotate_row(k_, rotated.data() + t * d, d, static_cast<int>(d));
    kvarn_round_through(k_, rotated, group_, d, dtype);
    const KvarnTile shape = kvarn_tile(role, group_, d);
    std::vector<float> tile(rotated.size());
    for (std::int64_t t = 0; t < group_; ++t) {
      for (std::int64_t ch = 0; ch < d; ++ch) {
        const float y = rotated[static_cast<std::size_t>(t * d + ch)];
        if (role == TensorRole::key) {
          tile[static_cast<std::size_t>(ch * group_ + t)] = y;
        } else {
          tile[static_cast<std::size_t>(t * d + ch)] = y;
        }
      }
    }
    const SinkhornScales s = sinkhorn_normalise(tile.data(), shape.rows, shape.cols, iterations_);
    std::vector<float> balanced(tile.size());
    sinkhorn_apply(tile.data(), shape.rows, shape.cols, s, balanced.data());
    const int levels = (1 << bits_for(role)) - 1;
    const std::string span = "tokens " + std::to_string(first) + ".." + std::to_string(first + group_ - 1);
    const char* row_kind = role == TensorRole::key ? "channel " : "token ";
    const char* col_kind = role == TensorRole::key ? "token " : "channel ";
    const std::uint64_t base = static_cast<std::uint64_t>(g * group_ * d);
    for (std::int64_t r = 0; r < shape.rows; ++r) {
      const float* row = balanced.data() + r * shape.cols;
      float lo = row[0], hi = row[0];
      for (std::int64_t col = 1; col < shape.cols; ++col) {
        lo = std::min(lo, row[col]);
        hi = std::max(hi, row[col]);
      }
      // Rule N4: the source's clamp_min(1e-10) keeps the division finite for a constant row.
      const float scale = std::max((hi - lo) / static_cast<float>(levels), 1e-10f);
      for (std::int64_t col = 0; col < shape.cols; ++col) {
        const float q = std::min(std::max(rintf((row[col] - lo) / scale), 0.0f), static_cast<float>(levels));
        packer.put(base + static_cast<std::uint64_t>(r * shape.cols + col), static_cast<std::uint8_t>(q));
      }
      const auto what = [&](const char* quantity) {
        return std::function<std::string()>([=, &span] {
          return std::string(quantity) + " of " + span + ", " + row_kind +
                 std::to_string(role == TensorRole::key ? r : first + r);
        });
      };
      kvarn_store_fp16(scales, s.row[r] * scale, what("the folded scale"));
      kvarn_store_fp16(zeros, s.row[r] * lo, what("the folded zero"));
    }
    for (std::int64_t col = 0; col < shape.cols; ++col) {
      kvarn_store_fp16(sinkhorn, s.col[col], [&] {
        return "the Sinkhorn factor of " + span + ", " + col_kind +
               std::to_string(role == TensorRole::key ? first + col : col);
      });
    }
  }

  int kbits_, vbits_, group_, iterations_, sink_;
  const kernels::CpuKernels& k_;
};

[[noreturn]] void kvarn_reject_bits(std::string_view key, int value) {
  throw ParameterError("kvarn: parameter '" + std::string(key) + "' = '" + std::to_string(value) +
                       "' is not one of 2, 4, 8");
}

int kvarn_bits(const SchemeArgs& args, std::string_view key) {
  const int bits = args.integer(key);
  if (bits != 2 && bits != 4 && bits != 8) kvarn_reject_bits(key, bits);
  return bits;
}

using Kind = SchemeParam::Kind;
constexpr SchemeParam kKvarnParams[] = {
    {"kbits", Kind::integer, "4", 2, 8, "", "key code width: 2, 4 or 8 bits (rule N4)", nullptr},
    {"vbits", Kind::integer, "2", 2, 8, "", "value code width: 2, 4 or 8 bits (rule N4)", nullptr},
    {"group", Kind::integer, "128", 2, 65536, "", "tokens per tile (the vLLM block; rule N0)", nullptr},
    {"iters", Kind::integer, "8", 0, 64, "", "Sinkhorn column+row passes (rule N2)", nullptr},
    {"sink", Kind::integer, "128", 0, 1 << 30, "", "leading tokens kept raw (the fp16 sink block; rule N0)", nullptr},
};

[[maybe_unused]] const bool registered_kvarn = register_scheme_family({
    .name = kKvarnName,
    .device = Device::reference,
    .order = 250,
    .summary = "KVarN: Hadamard + Sinkhorn variance normalisation per 128-token tile; K 4-bit per channel, V 2-bit "
               "per token; sink block and open tile raw",
    .params = kKvarnParams,
    .make = [](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
      return std::make_unique<KvarnScheme>(kvarn_bits(args, "kbits"), kvarn_bits(args, "vbits"), args.integer("group"),
                                           args.integer("iters"), args.integer("sink"), kernels::reference_kernels());
    },
    .accepts_channels = kvarn_supported_dim,
});

}  // namespace
}  // namespace dgq::schemes
