// vLLM's TurboQuant presets (turboquant_4bit_nc, turboquant_k3v4_nc, turboquant_3bit_nc) as
// decode attention reads their slots (docs/spec.md rules TV1-TV12), each token's codes where they
// lie, a slot apart (StoredKv::k_row_stride / v_row_stride):
//   keys (format codebook3/4): value_j = c[code_j] * g, in the basis of vLLM's rotation, with
//     g = n / sqrt(sum_j c[code_j]^2 + 1e-16) (the stored norm n times the norm correction of
//     rule TV9, computed once per token when the cache is set up); the rotation y = s * H y_rot
//     (H the orthonormal WHT, s the seed's signs) moves to the query as q_rot = H (s * q), since
//     q . (s * H y_rot) = (H (s * q)) . y_rot. The decompress computes n * (c * inv) per value:
//     one rounding more than c * g, so the kernel is bit for bit its twin and within a bound of
//     attention on the decompressed cache.
//   values (format uniform3/4, one range per token): fmaf(code, scale, zero), rounded to fp16
//     for fp16 input: rule TV8's value, the decompress's bits.
// turboquant_k8v4's FP8 keys have no format in the kernel and are refused.
#include "decode_attention_vllm.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "dgq/cpu/kernels.hpp"
#include "dgq/errors.hpp"
#include "dgq/kv_block_rules.hpp"

namespace dgq::cpu {
namespace {

StoredFormat codes_format(int bits, bool codebook) {
  if (codebook) return bits == 3 ? StoredFormat::codebook3 : StoredFormat::codebook4;
  return bits == 3 ? StoredFormat::uniform3 : StoredFormat::uniform4;
}

}  // namespace

StoredHead vllm_turboquant_head(const Compressed& c, const turboquant_vllm::Preset& preset, const ParsedSpec& spec) {
  namespace tv = turboquant_vllm;
  const bool key = c.role == TensorRole::key;
  if (key && preset.key_bits == 8)
    throw std::invalid_argument("decode_attention: '" + c.scheme + "' stores FP8 keys, which the kernel does not read");
  const int d = static_cast<int>(c.channels);
  const std::int64_t slot = tv::slot_bytes(preset, d, c.role);
  const Part* slots = c.find("slots");
  if (slots == nullptr) throw InputError(c.scheme + ": part 'slots' is missing");
  if (slots->bytes.size() != static_cast<std::uint64_t>(c.tokens * slot))
    throw InputError(c.scheme + ": corrupt vLLM TurboQuant data: part 'slots' has the wrong size");
  const int bits = key ? preset.key_bits : preset.value_bits;
  const std::int64_t code_bytes = tv::packed_bytes(d, bits);
  StoredHead head;
  head.format = codes_format(bits, key);
  head.codes = slots->bytes.data();
  head.row_stride = slot;
  head.ranges.channels = 1;
  head.ranges.edges.push_back(0);
  const float* levels = key ? tv::centroids(d, bits) : nullptr;
  std::vector<float> y(static_cast<std::size_t>(d));
  for (std::int64_t t = 0; t < c.tokens; ++t) {
    const std::uint8_t* row = slots->bytes.data() + t * slot;
    head.ranges.edges.push_back(static_cast<std::uint32_t>(t + 1));
    if (key) {
      const float n = tv::slot_half(row + code_bytes);
      if (!std::isfinite(n) || n < 0.0f)
        throw InputError(c.scheme + ": stored key norm " + std::to_string(t) + " is " + std::to_string(n) +
                         " (corrupt data)");
      for (int j = 0; j < d; ++j) y[j] = levels[kv_block_rules::uniform_code(row, j, bits)];
      head.ranges.lo.push_back(0.0f);
      head.ranges.scale.push_back(n * tv::norm_correction(y.data(), d));
      continue;
    }
    const float scale = tv::slot_half(row + code_bytes), zero = tv::slot_half(row + code_bytes + 2);
    if (!std::isfinite(scale) || !std::isfinite(zero))
      throw InputError(c.scheme + ": stored value scale/zero " + std::to_string(t) + " is not finite (corrupt data)");
    head.ranges.lo.push_back(zero);
    head.ranges.scale.push_back(scale);
  }
  if (!key) {
    head.ranges.f16 = c.dtype == DType::f16;  // the decompress narrows fma(code, scale, zero) to the dtype
    return head;
  }
  head.ranges.f16 = false;  // the codebook's product stays fp32 until the output
  head.ranges.codebook.assign(levels, levels + (1 << bits));
  auto signs = std::make_shared<const std::vector<float>>(
      tv::key_signs(d, static_cast<std::uint32_t>(spec.args.integer("seed"))));
  const float h = tv::hadamard_scale(d);
  head.rotation = [signs, h, d](float* q) {
    for (int j = 0; j < d; ++j) q[j] *= (*signs)[static_cast<std::size_t>(j)];
    fast_kernels().fwht_scaled_in_place(q, d, h);
  };
  return head;
}

}  // namespace dgq::cpu
