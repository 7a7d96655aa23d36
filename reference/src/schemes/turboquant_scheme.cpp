// turboquant:bits=b,seed=s — TurboQuant_mse (arXiv 2504.19874, Algorithm 1) on each token row
// of one head: norm g = ||x||_2 (fp32, stored), y = Pi x (dgq/baselines/turboquant.hpp),
// code_j = the Lloyd-Max cell of y_j / g, b bits each; decode y^_j = c[code_j] * g, x^ = Pi^T y^.
// Parts: "norms" (fp32 per token) and "codes" (one little-endian bit stream per token row,
// element j at bits [j*b, (j+1)*b) of the row's d*b/8 bytes). head_dim (channels) must be a
// power of two in [16, 512], the dimensions with a pinned codebook.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "dgq/baselines/turboquant.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "schemes/scheme_factories.hpp"
#include "schemes/tensor_io.hpp"

namespace dgq::schemes {
namespace {

constexpr int kMinDim = 16, kMaxDim = 512;

bool supported_dim(std::int64_t d) { return d >= kMinDim && d <= kMaxDim && (d & (d - 1)) == 0; }

void put_code(std::uint8_t* row, int j, int bits, unsigned code) {
  const int bit = j * bits;
  const unsigned shifted = code << (bit % 8);  // at most 4 + 7 bits: two bytes
  row[bit / 8] |= static_cast<std::uint8_t>(shifted & 0xffu);
  if (shifted > 0xffu) row[bit / 8 + 1] |= static_cast<std::uint8_t>(shifted >> 8);
}

unsigned get_code(const std::uint8_t* row, int j, int bits, std::int64_t row_bytes) {
  const int bit = j * bits;
  unsigned window = row[bit / 8];
  if (bit / 8 + 1 < row_bytes) window |= static_cast<unsigned>(row[bit / 8 + 1]) << 8;
  return (window >> (bit % 8)) & ((1u << bits) - 1u);
}

// sqrt(sum x_j^2), the squares accumulated with fma in channel order.
float row_norm(const float* x, int d) {
  float acc = 0.0f;
  for (int j = 0; j < d; ++j) acc = std::fma(x[j], x[j], acc);
  return std::sqrt(acc);
}

class TurboQuantScheme final : public Scheme {
 public:
  TurboQuantScheme(int bits, std::uint32_t seed) : bits_(bits), seed_(seed) {}

  std::string spec() const override {
    return "turboquant:bits=" + std::to_string(bits_) + ",seed=" + std::to_string(seed_);
  }
  std::string family() const override { return "turboquant"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "turboquant");
    const int d = checked_dim(x.channels);
    Compressed c = start_compressed(spec(), x, role);
    const turboquant::Rotation rot(d, turboquant::rotation_stream(seed_, role == TensorRole::key));
    const turboquant::CodebookView book = turboquant::codebook(d, bits_);
    const int edges = (1 << bits_) - 1;
    const std::int64_t row_bytes = codes_per_row(d);
    std::vector<std::uint8_t> norms(static_cast<std::size_t>(x.tokens) * 4);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.tokens * row_bytes), 0);
    std::vector<float> y(static_cast<std::size_t>(d));
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      widen_row_checked(x, t, y.data(), "turboquant");
      const float g = row_norm(y.data(), d);
      if (std::isinf(g)) {
        throw InputError("turboquant: the L2 norm of token " + std::to_string(t) + " overflows fp32");
      }
      std::memcpy(norms.data() + t * 4, &g, 4);
      rot.forward(y.data());
      const float inv = g > 0.0f ? 1.0f / g : 0.0f;
      std::uint8_t* row = codes.data() + t * row_bytes;
      for (int j = 0; j < d; ++j) {
        put_code(row, j, bits_, static_cast<unsigned>(rules::codebook_cell(y[j] * inv, book.boundaries, edges)));
      }
    }
    c.parts.push_back({"norms", std::move(norms)});
    c.parts.push_back({"codes", std::move(codes)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    if (c.tokens == 0) return;  // nothing stored, nothing to write
    const int d = checked_dim(c.channels);
    const Part& norms = expect_part(c, "norms", static_cast<std::uint64_t>(c.tokens) * 4);
    const std::int64_t row_bytes = codes_per_row(d);
    const Part& codes = expect_part(c, "codes", static_cast<std::uint64_t>(c.tokens * row_bytes));
    const turboquant::Rotation rot(d, turboquant::rotation_stream(seed_, c.role == TensorRole::key));
    const turboquant::CodebookView book = turboquant::codebook(d, bits_);
    std::vector<float> values(static_cast<std::size_t>(c.tokens * d));
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      float g;
      std::memcpy(&g, norms.bytes.data() + t * 4, 4);
      const std::uint8_t* row = codes.bytes.data() + t * row_bytes;
      float* y = values.data() + t * d;
      for (int j = 0; j < d; ++j) y[j] = book.centroids[get_code(row, j, bits_, row_bytes)] * g;
      rot.inverse(y);
    }
    narrow_into(values.data(), out);
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    return static_cast<std::uint64_t>(tokens * (4 + codes_per_row(channels)));
  }

 private:
  std::int64_t codes_per_row(std::int64_t d) const { return (d * bits_ + 7) / 8; }

  int checked_dim(std::int64_t d) const {
    if (!supported_dim(d)) {
      throw InputError("turboquant: head_dim (channels) must be a power of two in [16, 512] (the pinned "
                       "codebooks), got " + std::to_string(d));
    }
    return static_cast<int>(d);
  }

  int bits_;
  std::uint32_t seed_;
};

}  // namespace

std::unique_ptr<Scheme> make_turboquant_scheme(SpecArgs& args) {
  const int bits = args.take_int("bits", 3, 1, 4);
  const int seed = args.take_int("seed", 0, 0, 2147483647);
  return std::make_unique<TurboQuantScheme>(bits, static_cast<std::uint32_t>(seed));
}

}  // namespace dgq::schemes
