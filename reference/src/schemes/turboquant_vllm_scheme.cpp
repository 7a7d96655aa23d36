// vLLM's four TurboQuant KV-cache presets (--kv-cache-dtype turboquant_k8v4, turboquant_4bit_nc,
// turboquant_k3v4_nc, turboquant_3bit_nc; vLLM PR #38479), one token-head slot half per role,
// byte for byte as vLLM's store kernel lays it out (docs/spec.md "vLLM TurboQuant presets",
// rules TV1-TV12). One part "slots": per token row, the key half or the value half of vLLM's
// slot:
//   key, FP8 preset:  D bytes of e4m3fn, the input cast without a scale;
//   key, MSE presets: codes (ceil(D*b/8) bytes, b = 3 or 4) | vec_norm fp16 | 2 reserved bytes
//                     (the field vLLM sized for a residual norm and never writes; stored 0);
//   value:            codes (ceil(D*vb/8) bytes, vb = 3 or 4) | scale fp16 | zero (the min) fp16.
// Codes are one little-endian bit stream per row (element j at bits [j*b, (j+1)*b)), which is
// vLLM's nibble pairs for 4 bits and its 8-codes-in-24-bits groups for 3 bits.
#include <cmath>
#include <cstring>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "dgq/baselines/fp8_e4m3.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/fwht.hpp"
#include "dgq/registry.hpp"
#include "dgq/schemes/tensor_io.hpp"
#include "schemes/turboquant_vllm_codebooks.hpp"

namespace dgq::schemes {
namespace {

using TqvPreset = turboquant_vllm::Preset;  // name, key bits (8: FP8 keys), value bits

constexpr TqvPreset kTqvK8V4{"turboquant_k8v4", 8, 4};
constexpr TqvPreset kTqv4BitNc{"turboquant_4bit_nc", 4, 4};
constexpr TqvPreset kTqvK3V4Nc{"turboquant_k3v4_nc", 3, 4};
constexpr TqvPreset kTqv3BitNc{"turboquant_3bit_nc", 3, 3};

constexpr float kTqvNormEpsilon = 1e-8f;       // x / (||x|| + 1e-8): vLLM's store launcher
constexpr float kTqvScaleFloor = 1e-8f;        // scale = max((max - min) / levels, 1e-8)
constexpr std::uint32_t kTqvDefaultSeed = 42;  // TurboQuantConfig.seed; layer L uses 42 + 1337 L

// Powers of two in [16, 512]: vLLM builds a Sylvester Hadamard matrix of head_dim (which fails
// for any other size, for every preset: _ensure_on_device runs for FP8 keys too); 16..512 are
// the pinned codebooks.
bool tqv_supported_dim(std::int64_t d) { return d >= 16 && d <= 512 && (d & (d - 1)) == 0; }

std::int64_t tqv_packed(std::int64_t d, int bits) { return (d * bits + 7) / 8; }

void tqv_put_code(std::uint8_t* row, std::int64_t j, int bits, unsigned code) {
  const std::int64_t bit = j * bits;
  const unsigned shifted = code << (bit % 8);  // at most 4 + 7 bits: two bytes
  row[bit / 8] |= static_cast<std::uint8_t>(shifted & 0xffu);
  if (shifted > 0xffu) row[bit / 8 + 1] |= static_cast<std::uint8_t>(shifted >> 8);
}

unsigned tqv_get_code(const std::uint8_t* row, std::int64_t j, int bits, std::int64_t row_bytes) {
  const std::int64_t bit = j * bits;
  unsigned window = row[bit / 8];
  if (bit / 8 + 1 < row_bytes) window |= static_cast<unsigned>(row[bit / 8 + 1]) << 8;
  return (window >> (bit % 8)) & ((1u << bits) - 1u);
}

float tqv_get_half(const std::uint8_t* at) {
  return rules::half_to_float(static_cast<std::uint16_t>(at[0] | (at[1] << 8)));
}

// sum_j x_j^2, fma-accumulated in channel order (rules TV4 and TV9).
float tqv_sum_squares(const float* x, int d) {
  float acc = 0.0f;
  for (int j = 0; j < d; ++j) acc = std::fma(x[j], x[j], acc);
  return acc;
}

// vLLM's per-layer WHT signs: torch.randint(0, 2, (d,), generator seeded with `seed`) on the
// CPU is the mt19937 stream of std::mt19937(seed) (PyTorch's CPU engine), each draw mod 2;
// sign = 2 * bit - 1 (rule TV3).
std::vector<float> tqv_signs(int d, std::uint32_t seed) {
  std::mt19937 gen(seed);
  std::vector<float> s(static_cast<std::size_t>(d));
  for (float& v : s) v = (gen() & 1u) ? 1.0f : -1.0f;
  return s;
}

// One entry of vLLM's orthonormal Sylvester Hadamard matrix: H / math.sqrt(d) in fp32.
float tqv_hadamard_scale(int d) { return 1.0f / static_cast<float>(std::sqrt(static_cast<double>(d))); }

const float* tqv_centroids(int d, int bits) {
  for (const turboquant_vllm::Centroids& c : turboquant_vllm::kCentroidTables) {
    if (c.dim == d && c.bits == bits) return c.values;
  }
  throw std::logic_error("turboquant_vllm: no pinned centroids for this head_dim");
}

class TurboQuantVllmScheme final : public Scheme {
 public:
  TurboQuantVllmScheme(const TqvPreset& preset, std::uint32_t seed, const kernels::CpuKernels& k)
      : p_(preset), seed_(seed), k_(k) {}

  std::string family() const override { return std::string(p_.name); }
  std::string spec() const override { return key_fp8() ? family() : family() + ":seed=" + std::to_string(seed_); }

  Compressed compress(ConstTensor x, TensorRole role) const override {
    const std::string name = family();
    check_input_dtype(x, name);
    Compressed c = start_compressed(spec(), x, role);
    const int d = checked_dim(x.channels);
    const std::int64_t slot = slot_bytes(d, role);
    std::vector<std::uint8_t> slots(static_cast<std::size_t>(x.tokens * slot), 0);
    std::vector<float> row(static_cast<std::size_t>(d));
    const KeyTables tables = role == TensorRole::key && !key_fp8() ? key_tables(d) : KeyTables{};
    non_finite_errors_first(x, name, [&] {
      for (std::int64_t t = 0; t < x.tokens; ++t) {
        widen_row_checked(k_, x, t, row.data(), name);
        std::uint8_t* out = slots.data() + t * slot;
        if (role == TensorRole::value) {
          encode_value(row.data(), d, t, out);
        } else if (key_fp8()) {
          for (int j = 0; j < d; ++j) out[j] = fp8::float_to_e4m3(row[j]);
        } else {
          encode_key(tables, row.data(), d, t, out);
        }
      }
    });
    c.parts.push_back({"slots", std::move(slots)});
    return c;
  }

  void decompress(const Compressed& c, MutTensor out) const override {
    check_decompress_target(c, out, spec());
    if (c.tokens == 0) return;
    const int d = checked_dim(c.channels);
    const std::int64_t slot = slot_bytes(d, c.role);
    const Part& slots = expect_part(c, "slots", static_cast<std::uint64_t>(c.tokens * slot));
    const KeyTables tables = c.role == TensorRole::key && !key_fp8() ? key_tables(d) : KeyTables{};
    std::vector<float> values(static_cast<std::size_t>(c.tokens * d));
    for (std::int64_t t = 0; t < c.tokens; ++t) {
      const std::uint8_t* in = slots.bytes.data() + t * slot;
      float* y = values.data() + t * d;
      if (c.role == TensorRole::value) {
        decode_value(in, d, t, y);
      } else if (key_fp8()) {
        for (int j = 0; j < d; ++j) y[j] = fp8::e4m3_to_float(in[j]);
      } else {
        decode_key(tables, in, d, t, y);
      }
    }
    narrow_into(k_, values.data(), out);
  }

  std::uint64_t planned_bytes(std::int64_t tokens, std::int64_t channels, DType, TensorRole role) const override {
    return static_cast<std::uint64_t>(tokens * slot_bytes(channels, role));
  }

 private:
  struct KeyTables {
    std::vector<float> signs, midpoints;
    mutable std::vector<float> scratch;  // the rotated row being coded
    const float* centroids = nullptr;
    float h = 0.0f;
  };

  bool key_fp8() const { return p_.key_bits == 8; }

  std::int64_t slot_bytes(std::int64_t d, TensorRole role) const { return turboquant_vllm::slot_bytes(p_, d, role); }

  KeyTables key_tables(int d) const {
    KeyTables kt;
    kt.signs = tqv_signs(d, seed_);
    kt.centroids = tqv_centroids(d, p_.key_bits);
    const int n = 1 << p_.key_bits;
    kt.midpoints.resize(static_cast<std::size_t>(n - 1));
    for (int i = 0; i + 1 < n; ++i) kt.midpoints[i] = (kt.centroids[i] + kt.centroids[i + 1]) / 2.0f;
    kt.h = tqv_hadamard_scale(d);
    kt.scratch.resize(static_cast<std::size_t>(d));
    return kt;
  }

  // Rules TV4-TV6.
  void encode_key(const KeyTables& kt, const float* x, int d, std::int64_t t, std::uint8_t* out) const {
    const float n = std::sqrt(tqv_sum_squares(x, d));
    const std::uint16_t n16 = rules::float_to_half(n);
    if (std::isinf(n) || (n16 & 0x7fffu) == 0x7c00u) {
      throw InputError(family() + ": the key norm of token " + std::to_string(t) +
                       " overflows fp16 (||x|| above 65504; vLLM would store inf)");
    }
    const float denom = n + kTqvNormEpsilon;
    float* y = kt.scratch.data();
    for (int j = 0; j < d; ++j) y[j] = kt.signs[j] * (x[j] / denom);
    k_.fwht_scaled_in_place(y, d, kt.h);
    const int edges = (1 << p_.key_bits) - 1;
    for (int j = 0; j < d; ++j) {
      unsigned code = 0;
      while (static_cast<int>(code) < edges && y[j] >= kt.midpoints[code]) ++code;
      tqv_put_code(out, j, p_.key_bits, code);
    }
    const std::int64_t at = tqv_packed(d, p_.key_bits);
    out[at] = static_cast<std::uint8_t>(n16 & 0xffu);
    out[at + 1] = static_cast<std::uint8_t>(n16 >> 8);
    // out[at + 2], out[at + 3]: the reserved field, left 0.
  }

  // Rules TV9-TV10.
  void decode_key(const KeyTables& kt, const std::uint8_t* in, int d, std::int64_t t, float* y) const {
    const std::int64_t code_bytes = tqv_packed(d, p_.key_bits);
    const float n = tqv_get_half(in + code_bytes);
    if (!std::isfinite(n) || n < 0.0f) {
      throw InputError(family() + ": stored key norm " + std::to_string(t) + " is " + std::to_string(n) +
                       " (corrupt data)");
    }
    for (int j = 0; j < d; ++j) y[j] = kt.centroids[tqv_get_code(in, j, p_.key_bits, code_bytes)];
    const float inv = turboquant_vllm::norm_correction(y, d);
    for (int j = 0; j < d; ++j) y[j] = n * (y[j] * inv);
    k_.fwht_scaled_in_place(y, d, kt.h);
    for (int j = 0; j < d; ++j) y[j] *= kt.signs[j];
  }

  // Rules TV7-TV8.
  void encode_value(const float* v, int d, std::int64_t t, std::uint8_t* out) const {
    float lo = v[0], hi = v[0];
    for (int j = 1; j < d; ++j) {  // strict comparisons: of equal values (+0, -0) the first is kept
      if (v[j] < lo) lo = v[j];
      if (v[j] > hi) hi = v[j];
    }
    const int levels = (1 << p_.value_bits) - 1;
    const float width = hi - lo;
    float scale = width / static_cast<float>(levels);
    if (!(scale > kTqvScaleFloor)) scale = kTqvScaleFloor;
    const std::uint16_t s16 = rules::float_to_half(scale), z16 = rules::float_to_half(lo);
    if (std::isinf(width) || (s16 & 0x7fffu) == 0x7c00u || (z16 & 0x7fffu) == 0x7c00u) {
      throw InputError(family() + ": the value range of token " + std::to_string(t) + " [" + std::to_string(lo) + ", " +
                       std::to_string(hi) + "] has a scale or minimum beyond fp16 (vLLM would store inf)");
    }
    for (int j = 0; j < d; ++j) {
      const float u = (v[j] - lo) / scale + 0.5f;
      int q = static_cast<int>(u);  // truncation, as Triton's .to(tl.int32)
      q = q < 0 ? 0 : (q > levels ? levels : q);
      tqv_put_code(out, j, p_.value_bits, static_cast<unsigned>(q));
    }
    const std::int64_t at = tqv_packed(d, p_.value_bits);
    out[at] = static_cast<std::uint8_t>(s16 & 0xffu);
    out[at + 1] = static_cast<std::uint8_t>(s16 >> 8);
    out[at + 2] = static_cast<std::uint8_t>(z16 & 0xffu);
    out[at + 3] = static_cast<std::uint8_t>(z16 >> 8);
  }

  void decode_value(const std::uint8_t* in, int d, std::int64_t t, float* y) const {
    const std::int64_t code_bytes = tqv_packed(d, p_.value_bits);
    const float scale = tqv_get_half(in + code_bytes), zero = tqv_get_half(in + code_bytes + 2);
    if (!std::isfinite(scale) || !std::isfinite(zero)) {
      throw InputError(family() + ": stored value scale/zero " + std::to_string(t) + " is not finite (corrupt data)");
    }
    for (int j = 0; j < d; ++j) {
      const float q = static_cast<float>(tqv_get_code(in, j, p_.value_bits, code_bytes));
      y[j] = std::fma(q, scale, zero);
    }
  }

  int checked_dim(std::int64_t d) const {
    if (!tqv_supported_dim(d)) {
      throw InputError(family() +
                       ": head_dim (channels) must be a power of two in [16, 512] (vLLM's Sylvester "
                       "Hadamard rotation), got " +
                       std::to_string(d));
    }
    return static_cast<int>(d);
  }

  TqvPreset p_;
  std::uint32_t seed_;
  const kernels::CpuKernels& k_;
};

using Kind = SchemeParam::Kind;

constexpr SchemeParam kTqvMseParams[] = {
    {"seed", Kind::integer, "42", 0, 2147483647, "",
     "seed of the key rotation's signs (std::mt19937 = torch's CPU generator); vLLM's layer L uses 42 + 1337*L",
     nullptr},
};

SchemeFamily tqv_family(const TqvPreset& p, int order, std::string_view summary) {
  const bool fp8_keys = p.key_bits == 8;
  return {
      .name = p.name,
      .device = Device::reference,
      .order = order,
      .summary = summary,
      .params = fp8_keys ? std::span<const SchemeParam>() : std::span<const SchemeParam>(kTqvMseParams),
      .make = [&p, fp8_keys](const SchemeArgs& args) -> std::unique_ptr<Scheme> {
        const auto seed = fp8_keys ? kTqvDefaultSeed : static_cast<std::uint32_t>(args.integer("seed"));
        return std::make_unique<TurboQuantVllmScheme>(p, seed, kernels::reference_kernels());
      },
      .accepts_channels = tqv_supported_dim,
      // turboquant_k8v4's FP8 keys too: the slots' reader refuses them by name, its values it reads.
      .stored_layout = StoredLayout::preset_slots,
  };
}

[[maybe_unused]] const bool registered_turboquant_vllm = [] {
  register_scheme_family(tqv_family(kTqvK8V4, 170,
                                    "vLLM turboquant_k8v4: FP8 e4m3 keys, 4-bit min/max values with fp16 scale/zero "
                                    "(196 B per token-head at D=128)"));
  register_scheme_family(tqv_family(kTqv4BitNc, 171,
                                    "vLLM turboquant_4bit_nc: WHT-rotated 4-bit Lloyd-Max keys, fp16 norm, norm "
                                    "correction; 4-bit min/max values (136 B at D=128)"));
  register_scheme_family(tqv_family(kTqvK3V4Nc, 172,
                                    "vLLM turboquant_k3v4_nc: WHT-rotated 3-bit Lloyd-Max keys, norm correction; "
                                    "4-bit min/max values (120 B at D=128)"));
  register_scheme_family(tqv_family(kTqv3BitNc, 173,
                                    "vLLM turboquant_3bit_nc: WHT-rotated 3-bit Lloyd-Max keys, norm correction; "
                                    "3-bit min/max values (104 B at D=128)"));
  return true;
}();

}  // namespace
}  // namespace dgq::schemes

namespace dgq::turboquant_vllm {

const Preset* find_preset(std::string_view family) {
  for (const Preset* p : {&schemes::kTqvK8V4, &schemes::kTqv4BitNc, &schemes::kTqvK3V4Nc, &schemes::kTqv3BitNc}) {
    if (p->name == family) return p;
  }
  return nullptr;
}

std::int64_t packed_bytes(std::int64_t d, int bits) { return schemes::tqv_packed(d, bits); }

// vLLM's key_packed_size / value_packed_size (TurboQuantConfig, rule TV1).
std::int64_t slot_bytes(const Preset& p, std::int64_t d, TensorRole role) {
  if (role == TensorRole::value) return packed_bytes(d, p.value_bits) + 4;
  return p.key_bits == 8 ? d : packed_bytes(d, p.key_bits) + 4;
}

float slot_half(const std::uint8_t* at) { return schemes::tqv_get_half(at); }
const float* centroids(int d, int bits) { return schemes::tqv_centroids(d, bits); }
std::vector<float> key_signs(int d, std::uint32_t seed) { return schemes::tqv_signs(d, seed); }
float hadamard_scale(int d) { return schemes::tqv_hadamard_scale(d); }

float norm_correction(const float* levels, int d) {
  constexpr float kEpsilon = 1e-16f;  // 1 / sqrt(sum c^2 + 1e-16): vLLM's norm correction
  return 1.0f / std::sqrt(schemes::tqv_sum_squares(levels, d) + kEpsilon);
}

}  // namespace dgq::turboquant_vllm
