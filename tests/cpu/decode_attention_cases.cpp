// The decode attention tests' cases built (decode_attention_cases.hpp): each KV head's values,
// compressed by the case's scheme, and what the kernel reads of them (blocks, codes, ranges,
// raw rows) beside the same cache decoded by the reference's decoders and decompressed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "decode_attention_cases.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/q8_0.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"
#include "dgq/kernels/cpu_kernels.hpp"
#include "dgq/rotation.hpp"
#include "dgq/scheme.hpp"
#include "owned_tensor.hpp"
#include "test_dgq_support.hpp"
#include "test_seed.hpp"

namespace decode_test {

std::string spec_of(const DecodeCase& c) {
  if (!c.uniform_spec.empty()) return c.uniform_spec;
  if (c.format == StoredFormat::dgq)
    return "dgq:markers=" + c.dgq_markers + ",granularity=" + c.dgq_granularity + (c.rotated ? ",rot=hadamard" : "");
  return std::string(dgq::cpu::kv_block_format_name(c.format)) + (c.rotated ? ":rot=hadamard" : "");
}

// Rows of one KV head as the case asks: random in [-1, 1) with a per-token spread, every row
// the same (the softmax weights are then all equal), or values near fp16's largest finite.
dgq::test::OwnedTensor head_values(const DecodeCase& c, std::uint64_t seed) {
  const auto& s = c.shape;
  dgq::test::OwnedTensor x(dgq::DType::f32, s.tokens, s.head_dim);
  dgq::test::SplitMix64 rng(seed);
  std::vector<float> first_row(static_cast<std::size_t>(s.head_dim));
  for (auto& v : first_row) v = rng.symmetric(1.0f);
  for (std::int64_t t = 0; t < s.tokens; ++t) {
    const float spread = 0.25f + static_cast<float>(t % 7);
    for (int d = 0; d < s.head_dim; ++d) {
      switch (c.values) {
        case Values::random: x.set(t, d, rng.symmetric(spread)); break;
        case Values::constant_rows: x.set(t, d, first_row[d]); break;
        case Values::large: x.set(t, d, rng.symmetric(60000.0f)); break;
        case Values::regimes:
          x.set(t, d, rng.symmetric(t < s.tokens / 3 || t >= 2 * s.tokens / 3 ? 0.5f : 4.0f));
          break;
      }
    }
  }
  return x;
}

std::vector<float> decode_blocks(StoredFormat f, const std::vector<std::uint8_t>& bytes, std::size_t values) {
  std::vector<float> out(values);
  const int block_bytes = dgq::cpu::kv_block_bytes(f);
  for (std::size_t b = 0; b * 32 < values; ++b) {
    const std::uint8_t* p = bytes.data() + b * block_bytes;
    if (f == StoredFormat::q8_0) {
      dgq::q8_0::Block blk;
      std::memcpy(&blk, p, sizeof blk);
      dgq::q8_0::dequantize_block(blk, 32, out.data() + b * 32);
    } else if (f == StoredFormat::q4_0) {
      dgq::ggml::BlockQ4_0 blk;
      std::memcpy(&blk, p, sizeof blk);
      dgq::ggml::dequantize_q4_0(blk, out.data() + b * 32);
    } else {
      dgq::ggml::BlockIQ4NL blk;
      std::memcpy(&blk, p, sizeof blk);
      dgq::ggml::dequantize_iq4_nl(blk, out.data() + b * 32);
    }
  }
  return out;
}

// DGQ v1 stores fp16 input as the caches of the traces and of dgq eval do: its codes, and the
// values decoded to fp16 (rule 7) in the test's floats.
void add_dgq_head(const dgq::Scheme& scheme, const dgq::test::OwnedTensor& x32, dgq::TensorRole role, RoleCache& r) {
  dgq::test::OwnedTensor x(dgq::DType::f16, x32.tokens, x32.channels);
  dgq::from_float(dgq::to_float(x32.view()).data(), x.mut());
  r.stored.push_back(scheme.compress(x.view(), role));
  const std::uint8_t* codes = nullptr;
  r.ranges.push_back(dgq::cpu::dgq_segment_ranges(r.stored.back(), &codes));
  REQUIRE(codes == r.stored.back().find("codes")->bytes.data());
  dgq::test::OwnedTensor y(dgq::DType::f16, x32.tokens, x32.channels);
  scheme.decompress(r.stored.back(), y.mut());
  r.decompressed.push_back(dgq::to_float(y.view()));
  const std::string& spec = r.stored.back().scheme;
  const bool rotated = dgq::parse_spec(spec).modifier("rot") == "hadamard";
  REQUIRE(r.ranges.back().rotated == rotated);
  if (!rotated) {
    r.decoded.push_back(r.decompressed.back());
    return;
  }
  // The values in the rotated basis: the inner scheme's decompress of the same parts (the
  // modifier's parts are the inner scheme's); the decompressed cache rounds again after rotating
  // back, the kernel does not (half an fp16 ulp in the plain bound).
  const std::string_view modifier = ",rot=hadamard";  // how the cases spell the modifier: last
  REQUIRE(spec.ends_with(modifier));
  const std::string inner = spec.substr(0, spec.size() - modifier.size());
  dgq::Compressed as_inner = r.stored.back();
  as_inner.scheme = inner;
  dgq::make_scheme(inner)->decompress(as_inner, y.mut());
  r.decoded.push_back(dgq::to_float(y.view()));
  r.output_rounding = 0x1p-11;
}

// Code i of a little-endian stream of b-bit codes, written out here from docs/spec.md rule V5
// (the test's own decoder, not the kernel's rule).
unsigned stream_code(const std::uint8_t* bytes, std::uint64_t i, int bits) {
  unsigned code = 0;
  for (int k = 0; k < bits; ++k) {
    const std::uint64_t bit = i * static_cast<std::uint64_t>(bits) + static_cast<std::uint64_t>(k);
    code |= ((bytes[bit / 8] >> (bit % 8)) & 1u) << k;
  }
  return code;
}

// A dgq2 or KIVI head from fp16 input: its ranges by packed_codes_head, its values in the
// stored basis decoded here (fmaf(code, scale, lo) of the token's span, rounded to fp16), and
// Scheme::decompress's fp16 output (for a rotated role: rotated back, then rounded again).
void add_uniform_head(const dgq::Scheme& scheme, const dgq::test::OwnedTensor& x32, dgq::TensorRole role,
                      RoleCache& r) {
  dgq::test::OwnedTensor x(dgq::DType::f16, x32.tokens, x32.channels);
  dgq::from_float(dgq::to_float(x32.view()).data(), x.mut());
  r.stored.push_back(scheme.compress(x.view(), role));
  const dgq::cpu::StoredHead head = dgq::cpu::packed_codes_head(r.stored.back());
  const char* codes_part = head.row_stride != 0 ? "slots" : "codes";  // vLLM's presets: codes inside slots
  REQUIRE(head.codes == r.stored.back().find(codes_part)->bytes.data());
  r.format = head.format;
  r.row_stride = head.row_stride;
  r.rotated = head.rotated;
  r.ranges.push_back(head.ranges);
  r.raw_tokens = head.raw_tokens;
  if (head.raw_tokens > 0) REQUIRE(head.raw == r.stored.back().find("residual")->bytes.data());
  const std::int64_t quantized = x.tokens - head.raw_tokens;
  const int bits = dgq::cpu::kv_block_bytes(head.format) / 4;
  const auto& codes = r.stored.back().find(codes_part)->bytes;
  const std::int64_t row_bytes = head.row_stride != 0 ? head.row_stride : x.channels * bits / 8;
  const auto& rg = head.ranges;
  const bool codebook = !rg.codebook.empty();
  const std::string& spec = r.stored.back().scheme;
  if (codebook && head.row_stride != 0) {
    // vLLM's keys: y = s * H y_rot, so the query turns into H (s * q); the twin's H is the
    // reference kernels' WHT, its signs the preset's (docs/spec.md rule TV3).
    REQUIRE(head.rotation);
    r.rotation = head.rotation;
    const int d = static_cast<int>(x.channels);
    const auto seed = static_cast<std::uint32_t>(dgq::parse_spec(spec).args.integer("seed"));
    const auto signs = dgq::turboquant_vllm::key_signs(d, seed);
    const float h = dgq::turboquant_vllm::hadamard_scale(d);
    r.twin_rotation = [signs, h, d](float* row) {
      for (int j = 0; j < d; ++j) row[j] *= signs[static_cast<std::size_t>(j)];
      dgq::kernels::reference_kernels().fwht_scaled_in_place(row, d, h);
    };
    r.output_rounding = 0x1p-11;
  } else if (codebook) {
    REQUIRE(head.rotation);
    r.rotation = head.rotation;
    const auto seed = static_cast<std::uint32_t>(dgq::parse_spec(spec).args.integer("seed"));
    auto rot = std::make_shared<dgq::turboquant::Rotation>(
        static_cast<int>(x.channels), dgq::turboquant::rotation_stream(seed, role == dgq::TensorRole::key));
    if (role == dgq::TensorRole::key) {
      r.twin_rotation = [rot](float* row) { rot->forward(row); };
    } else {
      r.twin_rotation = [rot](float* row) { rot->inverse(row); };
    }
    r.output_rounding = 0x1p-11;
  }
  std::vector<float> decoded(static_cast<std::size_t>(x.tokens * x.channels));
  std::size_t span = 0;
  for (std::int64_t t = 0; t < x.tokens; ++t) {
    if (t >= quantized) {  // a raw row: the input's fp16 value (in the stored basis: the rows the scheme was given)
      for (std::int64_t d = 0; d < x.channels; ++d) {
        std::uint16_t h;
        std::memcpy(&h, head.raw + ((t - quantized) * x.channels + d) * 2, 2);
        decoded[static_cast<std::size_t>(t * x.channels + d)] = dgq::rules::half_to_float(h);
      }
      continue;
    }
    while (t >= static_cast<std::int64_t>(rg.edges[span + 1])) ++span;
    for (std::int64_t d = 0; d < x.channels; ++d) {
      const std::size_t at =
          span * static_cast<std::size_t>(rg.channels) + (rg.channels == 1 ? 0 : static_cast<std::size_t>(d));
      const unsigned code = stream_code(codes.data() + t * row_bytes, static_cast<std::uint64_t>(d), bits);
      // TurboQuant's y_j = c[code] * g, fp32 (rounded only after the inverse rotation).
      if (codebook) {
        decoded[static_cast<std::size_t>(t * x.channels + d)] = rg.codebook[code] * rg.scale[at];
        continue;
      }
      const float v = std::fma(static_cast<float>(code), rg.scale[at], rg.lo[at]);
      decoded[static_cast<std::size_t>(t * x.channels + d)] = dgq::rules::half_to_float(dgq::rules::float_to_half(v));
    }
  }
  dgq::test::OwnedTensor y(dgq::DType::f16, x32.tokens, x32.channels);
  if (head.rotated) r.output_rounding = 0x1p-11;
  scheme.decompress(r.stored.back(), y.mut());
  r.decompressed.push_back(dgq::to_float(y.view()));
  r.decoded.push_back(std::move(decoded));
  if (!head.rotated && !codebook) REQUIRE(r.decoded.back() == r.decompressed.back());
}

RoleCache build_role(const DecodeCase& c, dgq::TensorRole role, std::uint64_t seed) {
  const auto scheme = dgq::make_scheme(spec_of(c));
  const auto& s = c.shape;
  RoleCache r;
  for (int h = 0; h < s.kv_heads; ++h) {
    const auto x = head_values(c, seed + 1000u * static_cast<std::uint64_t>(h));
    if (!c.uniform_spec.empty()) {
      add_uniform_head(*scheme, x, role, r);
      continue;
    }
    if (c.format == StoredFormat::dgq) {
      add_dgq_head(*scheme, x, role, r);
      continue;
    }
    r.stored.push_back(scheme->compress(x.view(), role));
    const auto* blocks = r.stored.back().find("blocks");
    REQUIRE(blocks != nullptr);
    r.decoded.push_back(decode_blocks(c.format, blocks->bytes, static_cast<std::size_t>(s.tokens * s.head_dim)));
    dgq::test::OwnedTensor y(dgq::DType::f32, s.tokens, s.head_dim);
    scheme->decompress(r.stored.back(), y.mut());
    r.decompressed.push_back(dgq::to_float(y.view()));
    // Unrotated, the test's decoding must be the scheme's own, or the comparisons below would
    // compare with something else than the decompressed cache.
    if (!c.rotated) REQUIRE(r.decoded.back() == r.decompressed.back());
  }
  // Taken once every head is stored: a growing vector may move its elements.
  for (const auto& stored : r.stored) {
    const char* part = r.row_stride != 0                                          ? "slots"
                       : c.format == StoredFormat::dgq || !c.uniform_spec.empty() ? "codes"
                                                                                  : "blocks";
    r.rows.push_back(stored.find(part)->bytes.data());
    if (r.raw_tokens > 0) r.raw.push_back(stored.find("residual")->bytes.data());
  }
  if (c.uniform_spec.empty()) {
    r.format = c.format;
    r.rotated = c.rotated;
  }
  return r;
}

Problem make_problem(const DecodeCase& c, std::uint64_t seed) {
  Problem p{c, build_role(c, dgq::TensorRole::key, seed), build_role(c, dgq::TensorRole::value, seed + 77), {}, 0, {}};
  const auto& s = c.shape;
  dgq::test::SplitMix64 rng(seed + 5);
  // Large K and V get a small query: scores of a few logits, a softmax that is not one-hot.
  const float q_amplitude = c.values == Values::large ? 2e-4f : 1.0f;
  p.q.resize(static_cast<std::size_t>(s.query_heads()) * s.head_dim);
  for (auto& x : p.q) x = rng.symmetric(q_amplitude);
  p.scale = 1.0f / std::sqrt(static_cast<float>(s.head_dim));
  p.stored.format = p.k.format;
  if (p.v.format != p.k.format) p.stored.v_format = p.v.format;
  p.stored.k_rotated = p.k.rotated;
  p.stored.v_rotated = p.v.rotated;
  p.stored.query_rotation = p.k.rotation;
  p.stored.output_rotation = p.v.rotation;
  p.stored.k = p.k.rows;
  p.stored.v = p.v.rows;
  p.stored.k_row_stride = p.k.row_stride;
  p.stored.v_row_stride = p.v.row_stride;
  p.stored.k_raw_tokens = p.k.raw_tokens;
  p.stored.v_raw_tokens = p.v.raw_tokens;
  if (p.k.raw_tokens > 0) p.stored.k_raw = p.k.raw;
  if (p.v.raw_tokens > 0) p.stored.v_raw = p.v.raw;
  for (const auto& r : p.k.ranges) p.stored.k_ranges.push_back(&r);
  for (const auto& r : p.v.ranges) p.stored.v_ranges.push_back(&r);
  return p;
}

std::vector<float> run_kernel(const Problem& p, int threads, DecodePath path) {
  std::vector<float> out(p.q.size());
  dgq::cpu::decode_attention(p.stored, p.c.shape, p.q.data(), p.scale, out.data(), threads, path);
  return out;
}

}  // namespace decode_test
