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
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/kernel_families.hpp"

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

// The canonical dot product of S's row i with r: 32 fma accumulators acc[j mod 32] in
// increasing j, then the tree 16, 8, 4, 2, 1 (docs/spec.md rule 1's canonical sum, with fma).
float canonical_dot(const float* a, const float* b, int d) {
  float acc[rules::kCanonicalLanes] = {};
  for (int j = 0; j < d; ++j) acc[j % rules::kCanonicalLanes] = std::fma(a[j], b[j], acc[j % rules::kCanonicalLanes]);
  for (const int step : rules::kCanonicalTree) {
    for (int j = 0; j < step; ++j) acc[j] = acc[j] + acc[j + step];
  }
  return acc[0];
}

constexpr float kSqrtHalfPi = 1.2533141373155003f;  // sqrt(pi/2), the QJL de-quantization constant

class TurboQuantScheme final : public Scheme {
 public:
  TurboQuantScheme(int bits, std::uint32_t seed, bool prod, const kernels::CpuKernels& k)
      : bits_(bits), mse_bits_(prod ? bits - 1 : bits), seed_(seed), prod_(prod), k_(k) {}

  std::string spec() const override {
    return "turboquant:bits=" + std::to_string(bits_) + ",seed=" + std::to_string(seed_) +
           (prod_ ? ",variant=prod" : "");
  }
  std::string family() const override { return "turboquant"; }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    check_input_dtype(x, "turboquant");
    Compressed c = start_compressed(spec(), x, role);
    const int d = checked_dim(x.channels);
    const bool key = role == TensorRole::key;
    const turboquant::Rotation rot(d, turboquant::rotation_stream(seed_, key), k_);
    const turboquant::CodebookView book = turboquant::codebook(d, mse_bits_);
    const std::vector<float> s =
        prod_ ? turboquant::qjl_matrix(d, turboquant::qjl_stream(seed_, key)) : std::vector<float>();
    const int edges = (1 << mse_bits_) - 1;
    const std::int64_t row_bytes = codes_per_row(d), sign_bytes = d / 8;
    std::vector<std::uint8_t> norms(static_cast<std::size_t>(x.tokens) * 4);
    std::vector<std::uint8_t> codes(static_cast<std::size_t>(x.tokens * row_bytes), 0);
    std::vector<std::uint8_t> signs(prod_ ? static_cast<std::size_t>(x.tokens * sign_bytes) : 0, 0);
    std::vector<std::uint8_t> residual_norms(prod_ ? static_cast<std::size_t>(x.tokens) * 4 : 0);
    std::vector<float> xr(static_cast<std::size_t>(d)), y(xr.size()), r(xr.size());
    std::vector<std::uint8_t> cells(static_cast<std::size_t>(d), 0);
    for (std::int64_t t = 0; t < x.tokens; ++t) {
      widen_row_checked(k_, x, t, xr.data(), "turboquant");
      const float g = checked_norm(xr.data(), d, t, "L2 norm");
      std::memcpy(norms.data() + t * 4, &g, 4);
      if (mse_bits_ > 0) {
        std::copy(xr.begin(), xr.end(), y.begin());
        rot.forward(y.data());
        const float inv = g > 0.0f ? 1.0f / g : 0.0f;
        for (int j = 0; j < d; ++j) y[j] *= inv;
        k_.turboquant_cells(y.data(), d, book.boundaries, edges, cells.data());
        std::uint8_t* row = codes.data() + t * row_bytes;
        for (int j = 0; j < d; ++j) put_code(row, j, mse_bits_, cells[j]);
      }
      if (!prod_) continue;
      // QJL of the residual r = x - DeQuant_mse(idx), with the decoder's own arithmetic.
      decode_mse(rot, book, cells.data(), g, d, y.data());
      for (int j = 0; j < d; ++j) r[j] = xr[j] - y[j];
      const float gamma = checked_norm(r.data(), d, t, "residual norm");
      std::memcpy(residual_norms.data() + t * 4, &gamma, 4);
      std::uint8_t* sign_row = signs.data() + t * sign_bytes;
      for (int i = 0; i < d; ++i) {
        if (canonical_dot(s.data() + static_cast<std::size_t>(i) * d, r.data(), d) < 0.0f) {
          sign_row[i / 8] |= static_cast<std::uint8_t>(1u << (i % 8));
        }
      }
    }
    c.parts.push_back({"norms", std::move(norms)});
    c.parts.push_back({"codes", std::move(codes)});
    if (prod_) {
      c.parts.push_back({"qjl", std::move(signs)});
      c.parts.push_back({"residual_norms", std::move(residual_norms)});
    }
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    if (c.tokens == 0) return;  // nothing stored, nothing to write
    const int d = checked_dim(c.channels);
    const bool key = c.role == TensorRole::key;
    const Part& norms = expect_part(c, "norms", static_cast<std::uint64_t>(c.tokens) * 4);
    const std::int64_t row_bytes = codes_per_row(d), sign_bytes = d / 8;
    const Part& codes = expect_part(c, "codes", static_cast<std::uint64_t>(c.tokens * row_bytes));
    const Part* signs = prod_ ? &expect_part(c, "qjl", static_cast<std::uint64_t>(c.tokens * sign_bytes)) : nullptr;
    const Part* residual_norms =
        prod_ ? &expect_part(c, "residual_norms", static_cast<std::uint64_t>(c.tokens) * 4) : nullptr;
    const turboquant::Rotation rot(d, turboquant::rotation_stream(seed_, key), k_);
    const turboquant::CodebookView book = turboquant::codebook(d, mse_bits_);
    const std::vector<float> s =
        prod_ ? turboquant::qjl_matrix(d, turboquant::qjl_stream(seed_, key)) : std::vector<float>();
    std::vector<float> values(static_cast<std::size_t>(c.tokens * d));
    std::vector<std::uint8_t> cells(static_cast<std::size_t>(d), 0);
    std::vector<float> z(static_cast<std::size_t>(d));
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      float g;
      std::memcpy(&g, norms.bytes.data() + t * 4, 4);
      const std::uint8_t* row = codes.bytes.data() + t * row_bytes;
      if (mse_bits_ > 0) {
        for (int j = 0; j < d; ++j) cells[j] = static_cast<std::uint8_t>(get_code(row, j, mse_bits_, row_bytes));
      }
      float* y = values.data() + t * d;
      decode_mse(rot, book, cells.data(), g, d, y);
      if (!prod_) continue;
      // x^ = x~_mse + sqrt(pi/2)/d * gamma * S^T qjl; S^T qjl summed over i in increasing order.
      float gamma;
      std::memcpy(&gamma, residual_norms->bytes.data() + t * 4, 4);
      const std::uint8_t* sign_row = signs->bytes.data() + t * sign_bytes;
      std::fill(z.begin(), z.end(), 0.0f);
      for (int i = 0; i < d; ++i) {
        const float* si = s.data() + static_cast<std::size_t>(i) * d;
        if ((sign_row[i / 8] >> (i % 8)) & 1u) {
          for (int j = 0; j < d; ++j) z[j] = z[j] - si[j];
        } else {
          for (int j = 0; j < d; ++j) z[j] = z[j] + si[j];
        }
      }
      const float scale = kSqrtHalfPi / static_cast<float>(d) * gamma;
      for (int j = 0; j < d; ++j) y[j] = y[j] + scale * z[j];
    }
    narrow_into(k_, values.data(), out);
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole) const override {
    const std::int64_t per_token = 4 + codes_per_row(channels) + (prod_ ? (channels + 7) / 8 + 4 : 0);
    return static_cast<std::uint64_t>(tokens * per_token);
  }

 private:
  std::int64_t codes_per_row(std::int64_t d) const { return (d * mse_bits_ + 7) / 8; }

  // x~ = Pi^T (c[cell] * g): the MSE stage's decode (zeros when it has no bits).
  void decode_mse(const turboquant::Rotation& rot, const turboquant::CodebookView& book, const std::uint8_t* cells,
                  float g, int d, float* y) const {
    if (mse_bits_ == 0) {
      std::fill(y, y + d, 0.0f);
      return;
    }
    for (int j = 0; j < d; ++j) y[j] = book.centroids[cells[j]] * g;
    rot.inverse(y);
  }

  static float checked_norm(const float* x, int d, std::int64_t t, const char* what) {
    const float g = row_norm(x, d);
    if (std::isinf(g))
      throw InputError("turboquant: the " + std::string(what) + " of token " + std::to_string(t) + " overflows fp32");
    return g;
  }

  int checked_dim(std::int64_t d) const {
    if (!supported_dim(d)) {
      throw InputError(
          "turboquant: head_dim (channels) must be a power of two in [16, 512] (the pinned "
          "codebooks), got " +
          std::to_string(d));
    }
    return static_cast<int>(d);
  }

  int bits_, mse_bits_;
  std::uint32_t seed_;
  bool prod_;
  const kernels::CpuKernels& k_;
};

using Kind = SchemeParam::Kind;

void check_variant(std::string_view v) {
  if (v != "mse" && v != "prod") {
    throw ParameterError("turboquant: parameter 'variant' = '" + std::string(v) + "' is not one of mse, prod");
  }
}

constexpr SchemeParam kTurboQuantParams[] = {
    {"bits", Kind::integer, "3", 1, 4, "", "bits per coordinate (codebook of 2^bits levels)", nullptr},
    {"seed", Kind::integer, "0", 0, 2147483647, "", "seed of the random rotation (and of the QJL matrix)", nullptr},
    {"variant", Kind::word, "mse", 0, 0, "mse or prod",
     "mse: Lloyd-Max codes; prod: bits-1 MSE codes + 1-bit QJL residual", check_variant},
};

}  // namespace

std::vector<SchemeFamily> turboquant_families(const kernels::CpuKernels& k, Device device) {
  return {
      {
          .name = "turboquant",
          .device = device,
          .order = 150,
          .summary =
              "TurboQuant (arXiv 2504.19874): random rotation, per-token fp32 norm, Lloyd-Max codes per coordinate",
          .params = kTurboQuantParams,
          .make = [kt = &k](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
            return std::make_unique<TurboQuantScheme>(args.integer("bits"),
                                                      static_cast<std::uint32_t>(args.integer("seed")),
                                                      args.word("variant") == "prod", *kt);
          },
          .accepts_channels = supported_dim,
          .stored_layout = StoredLayout::codebook_tokens,
      },
  };
}

namespace {
[[maybe_unused]] const bool registered_turboquant =
    register_scheme_families(turboquant_families(kernels::reference_kernels(), Device::reference));
}  // namespace

}  // namespace dgq::schemes
