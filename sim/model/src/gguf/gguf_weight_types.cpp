#include "gguf/gguf_weight_types.hpp"

#include <cassert>
#include <cstring>

#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/element_rules.hpp"

namespace dgq::sim::gguf {
namespace {

// ggml_type numbers (ggml/include/ggml.h).
enum : std::uint32_t {
  kF32 = 0,
  kF16 = 1,
  kQ4_0 = 2,
  kQ4_1 = 3,
  kQ5_0 = 6,
  kQ5_1 = 7,
  kQ8_0 = 8,
  kQ4_K = 12,
  kQ5_K = 13,
  kQ6_K = 14,
  kBF16 = 30,
};

constexpr std::int64_t kSuperBlock = 256;  // QK_K

std::uint16_t u16(const std::uint8_t* p) {
  std::uint16_t v;
  std::memcpy(&v, p, 2);
  return v;
}

template <class Block>
void legacy_blocks(const std::uint8_t* bytes, std::int64_t n, float* out, void (*decode)(const Block&, float*)) {
  for (std::int64_t b = 0; b < n / ggml::kBlockValues; ++b) {
    Block block;
    std::memcpy(&block, bytes + b * std::int64_t(sizeof(Block)), sizeof(Block));
    decode(block, out + b * ggml::kBlockValues);
  }
}

void q8_0_blocks(const std::uint8_t* bytes, std::int64_t n, float* out) {
  for (std::int64_t b = 0; b < n / q8_0::kBlockValues; ++b) {
    q8_0::Block block;
    std::memcpy(&block, bytes + b * q8_0::kBlockBytes, q8_0::kBlockBytes);
    q8_0::dequantize_block(block, q8_0::kBlockValues, out + b * q8_0::kBlockValues);
  }
}

// ggml-quants.c get_scale_min_k4: the j-th 6-bit scale and min of a Q4_K/Q5_K super-block.
void scale_min_k4(int j, const std::uint8_t* q, std::uint8_t& scale, std::uint8_t& min) {
  if (j < 4) {
    scale = q[j] & 63;
    min = q[j + 4] & 63;
  } else {
    scale = static_cast<std::uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    min = static_cast<std::uint8_t>((q[j + 4] >> 4) | ((q[j] >> 6) << 4));
  }
}

// The scales and mins of the two 32-value halves of a 64-value step (sub-blocks is and is + 1), as
// ggml computes them before its two loops: d * scale and dmin * min, in float.
struct ScaledPair {
  float d1, m1, d2, m2;
};
ScaledPair scaled_pair(int is, const std::uint8_t* scales, float d, float min) {
  std::uint8_t sc, m;
  ScaledPair p;
  scale_min_k4(is + 0, scales, sc, m);
  p.d1 = d * sc;
  p.m1 = min * m;
  scale_min_k4(is + 1, scales, sc, m);
  p.d2 = d * sc;
  p.m2 = min * m;
  return p;
}

// The super-block Q4_K and Q5_K share (ggml's dequantize_row_q4_K / _q5_K): d and dmin (fp16) at
// bytes 0 and 2, scales[12] at 4, then four 64-value steps of two 32-value halves, each half with
// scaled_pair's scale and min. code(step, l, high) is element l's integer code in the step's low
// (high = false) or high half.
template <class Code>
void k4_super_block(const std::uint8_t* block, Code code, float*& y) {
  const float d = rules::half_to_float(u16(block));
  const float min = rules::half_to_float(u16(block + 2));
  for (int step = 0; step < kSuperBlock / 64; ++step) {
    const ScaledPair s = scaled_pair(2 * step, block + 4, d, min);
    for (int l = 0; l < 32; ++l) *y++ = s.d1 * code(step, l, false) - s.m1;
    for (int l = 0; l < 32; ++l) *y++ = s.d2 * code(step, l, true) - s.m2;
  }
}

// block_q4_K: d, dmin, scales[12], qs[128] (low nibbles first); 144 bytes.
void q4_k_blocks(const std::uint8_t* bytes, std::int64_t n, float* y) {
  for (std::int64_t i = 0; i < n / kSuperBlock; ++i) {
    const std::uint8_t* block = bytes + i * 144;
    const std::uint8_t* qs = block + 16;
    k4_super_block(
        block,
        [qs](int step, int l, bool high) {
          const std::uint8_t b = qs[32 * step + l];
          return high ? b >> 4 : b & 0xF;
        },
        y);
  }
}

// block_q5_K: d, dmin, scales[12], qh[32] (the fifth bits: bit 2*step for the low half, 2*step+1 for
// the high one), qs[128]; 176 bytes.
void q5_k_blocks(const std::uint8_t* bytes, std::int64_t n, float* y) {
  for (std::int64_t i = 0; i < n / kSuperBlock; ++i) {
    const std::uint8_t* block = bytes + i * 176;
    const std::uint8_t* qh = block + 16;
    const std::uint8_t* qs = block + 48;
    k4_super_block(
        block,
        [qh, qs](int step, int l, bool high) {
          const std::uint8_t b = qs[32 * step + l];
          const unsigned fifth = 1u << (2 * step + (high ? 1 : 0));
          return (high ? b >> 4 : b & 0xF) + (qh[l] & fifth ? 16 : 0);
        },
        y);
  }
}

// block_q6_K: ql[128], qh[64], scales[16] (int8), d (fp16); 210 bytes.
void q6_k_blocks(const std::uint8_t* bytes, std::int64_t n, float* y) {
  for (std::int64_t i = 0; i < n / kSuperBlock; ++i) {
    const std::uint8_t* block = bytes + i * 210;
    const float d = rules::half_to_float(u16(block + 208));
    const std::uint8_t* ql = block;
    const std::uint8_t* qh = block + 128;
    const auto* sc = reinterpret_cast<const std::int8_t*>(block + 192);
    for (int half = 0; half < kSuperBlock; half += 128) {
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l + 0] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l + 0] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        y[l + 0] = d * sc[is + 0] * q1;
        y[l + 32] = d * sc[is + 2] * q2;
        y[l + 64] = d * sc[is + 4] * q3;
        y[l + 96] = d * sc[is + 6] * q4;
      }
      y += 128;
      ql += 64;
      qh += 32;
      sc += 8;
    }
  }
}

struct Entry {
  std::uint32_t type;
  WeightType layout;
};

constexpr Entry kDecoded[] = {
    {kF32, {"f32", 1, 4}},       {kF16, {"f16", 1, 2}},       {kBF16, {"bf16", 1, 2}},     {kQ4_0, {"q4_0", 32, 18}},
    {kQ4_1, {"q4_1", 32, 20}},   {kQ5_0, {"q5_0", 32, 22}},   {kQ5_1, {"q5_1", 32, 24}},   {kQ8_0, {"q8_0", 32, 34}},
    {kQ4_K, {"q4_K", 256, 144}}, {kQ5_K, {"q5_K", 256, 176}}, {kQ6_K, {"q6_K", 256, 210}},
};

// ggml_type_name of the types dgq does not decode, so a refusal names them.
const char* other_type_name(std::uint32_t t) {
  switch (t) {
    case 9: return "q8_1";
    case 10: return "q2_K";
    case 11: return "q3_K";
    case 15: return "q8_K";
    case 16: return "iq2_xxs";
    case 17: return "iq2_xs";
    case 18: return "iq3_xxs";
    case 19: return "iq1_s";
    case 20: return "iq4_nl";
    case 21: return "iq3_s";
    case 22: return "iq2_s";
    case 23: return "iq4_xs";
    case 24: return "i8";
    case 25: return "i16";
    case 26: return "i32";
    case 27: return "i64";
    case 28: return "f64";
    case 29: return "iq1_m";
    case 34: return "tq1_0";
    case 35: return "tq2_0";
    case 39: return "mxfp4";
    default: return nullptr;
  }
}

}  // namespace

const WeightType* weight_type(std::uint32_t ggml_type) {
  for (const Entry& e : kDecoded)
    if (e.type == ggml_type) return &e.layout;
  return nullptr;
}

std::string weight_type_name(std::uint32_t ggml_type) {
  if (const WeightType* t = weight_type(ggml_type)) return t->name;
  const char* name = other_type_name(ggml_type);
  return (name != nullptr ? std::string(name) + " " : std::string("unknown ")) + "(ggml type " +
         std::to_string(ggml_type) + ")";
}

std::string decoded_weight_types() {
  std::string names;
  for (const Entry& e : kDecoded) names += (names.empty() ? "" : ", ") + std::string(e.layout.name);
  return names;
}

void dequantize_weight_row(std::uint32_t ggml_type, const std::uint8_t* bytes, std::int64_t n, float* out) {
  assert(weight_type(ggml_type) != nullptr && n % weight_type(ggml_type)->block_values == 0);
  switch (ggml_type) {
    case kF32: std::memcpy(out, bytes, static_cast<std::size_t>(n) * 4); return;
    case kF16:
      for (std::int64_t i = 0; i < n; ++i) out[i] = rules::half_to_float(u16(bytes + 2 * i));
      return;
    case kBF16:
      for (std::int64_t i = 0; i < n; ++i) out[i] = rules::bf16_to_float(u16(bytes + 2 * i));
      return;
    case kQ4_0: legacy_blocks<ggml::BlockQ4_0>(bytes, n, out, ggml::dequantize_q4_0); return;
    case kQ4_1: legacy_blocks<ggml::BlockQ4_1>(bytes, n, out, ggml::dequantize_q4_1); return;
    case kQ5_0: legacy_blocks<ggml::BlockQ5_0>(bytes, n, out, ggml::dequantize_q5_0); return;
    case kQ5_1: legacy_blocks<ggml::BlockQ5_1>(bytes, n, out, ggml::dequantize_q5_1); return;
    case kQ8_0: q8_0_blocks(bytes, n, out); return;
    case kQ4_K: q4_k_blocks(bytes, n, out); return;
    case kQ5_K: q5_k_blocks(bytes, n, out); return;
    case kQ6_K: q6_k_blocks(bytes, n, out); return;
    default: assert(false);
  }
}

}  // namespace dgq::sim::gguf
