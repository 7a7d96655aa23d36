// Decode attention on stored q8_0 / q4_0 / iq4_nl blocks, DGQ v1 codes and dgq2's and KIVI's
// uniform codes (cpu/src/decode_attention*.cpp) against attention over the decompressed cache:
//  - bit for bit against a scalar twin written here, which runs the order the kernel documents
//    (dgq/attention_rules.hpp) on the cache decoded by the reference's block decoders, and
//    rotates the query and the output with the reference's Hadamard rotation;
//  - within a stated bound against plain softmax attention in double over Scheme::decompress's
//    output (the original basis, also for rot=hadamard), which shares no code with the kernel;
//  - the same bytes from 1, 2 and 3 threads and from the AVX2 and the scalar path.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dgq/attention_rules.hpp"
#include "dgq/baselines/ggml_kv_types.hpp"
#include "dgq/baselines/turboquant.hpp"
#include "dgq/baselines/turboquant_vllm.hpp"
#include "dgq/baselines/q8_0.hpp"
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

using dgq::cpu::DecodeAttentionShape;
using dgq::cpu::DecodePath;
using dgq::StoredFormat;
namespace ar = dgq::attention_rules;

namespace {

// regimes: random rows whose spread jumps by 8x at a third and at two thirds of the tokens,
// so that DGQ finds several segments.
enum class Values { random, constant_rows, large, regimes };

struct DecodeCase {
  StoredFormat format;
  bool rotated;
  DecodeAttentionShape shape;
  Values values = Values::random;
  std::string dgq_markers = "table";          // format dgq: its markers parameter
  std::string dgq_granularity = "segment";    // and its granularity
  std::string uniform_spec = "";              // a dgq2 or KIVI spec: the uniform formats (format ignored)
};

std::string spec_of(const DecodeCase& c) {
  if (!c.uniform_spec.empty()) return c.uniform_spec;
  if (c.format == StoredFormat::dgq)
    return "dgq:markers=" + c.dgq_markers + ",granularity=" + c.dgq_granularity + (c.rotated ? ",rot=hadamard" : "");
  return std::string(dgq::cpu::kv_block_format_name(c.format)) + (c.rotated ? ":rot=hadamard" : "");
}

// One role's cache for every KV head: the scheme's stored blocks, those blocks decoded in the
// stored basis (by the reference's decoders), and Scheme::decompress's output.
struct RoleCache {
  std::vector<dgq::Compressed> stored;
  std::vector<std::vector<float>> decoded, decompressed;
  std::vector<dgq::cpu::SpanRanges> ranges;  // formats with ranges (dgq, uniform*)
  std::vector<const std::uint8_t*> rows;            // what the kernel reads: blocks, or codes
  std::vector<const std::uint8_t*> raw;             // dgq2's and KIVI's raw rows (packed_codes_head)
  std::int64_t raw_tokens = 0;
  std::int64_t row_stride = 0;                      // vLLM's presets: bytes from a token's codes to the next's
  StoredFormat format = StoredFormat::q8_0;       // the uniform heads' (from packed_codes_head)
  bool rotated = false;
  // Relative error per value of `decompressed` against the exact inverse rotation of `decoded`:
  // a rotated dgq2 role decompresses to fp16 after rotating back (rule V0), the kernel rotates
  // the fp32 output instead, so half an fp16 ulp (2^-11 relative) enters the plain bound.
  double output_rounding = 0;
  // TurboQuant: the kernel's rotation (the head's, fast kernels) and the twin's (the reference's
  // turboquant::Rotation drawn here from the spec's seed): forward for K, inverse for V.
  std::function<void(float*)> rotation, twin_rotation;
};

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
        case Values::regimes: x.set(t, d, rng.symmetric(t < s.tokens / 3 || t >= 2 * s.tokens / 3 ? 0.5f : 4.0f)); break;
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
  const bool rotated = spec.size() > 13 && spec.compare(spec.size() - 13, 13, ",rot=hadamard") == 0;
  REQUIRE(r.ranges.back().rotated == rotated);
  if (!rotated) {
    r.decoded.push_back(r.decompressed.back());
    return;
  }
  // The values in the rotated basis: the inner scheme's decompress of the same parts (the
  // modifier's parts are the inner scheme's); the decompressed cache rounds again after rotating
  // back, the kernel does not (half an fp16 ulp in the plain bound).
  const std::string inner = spec.substr(0, spec.size() - 13);
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
void add_uniform_head(const dgq::Scheme& scheme, const dgq::test::OwnedTensor& x32, dgq::TensorRole role, RoleCache& r) {
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
    const std::size_t at = spec.find("seed=");
    const auto signs = dgq::turboquant_vllm::key_signs(d, static_cast<std::uint32_t>(std::stoul(spec.substr(at + 5))));
    const float h = dgq::turboquant_vllm::hadamard_scale(d);
    r.twin_rotation = [signs, h, d](float* row) {
      for (int j = 0; j < d; ++j) row[j] *= signs[static_cast<std::size_t>(j)];
      dgq::kernels::reference_kernels().fwht_scaled_in_place(row, d, h);
    };
    r.output_rounding = 0x1p-11;
  } else if (codebook) {
    REQUIRE(head.rotation);
    r.rotation = head.rotation;
    const std::size_t at = spec.find("seed=");
    const auto seed = static_cast<std::uint32_t>(at == std::string::npos ? 0 : std::stoul(spec.substr(at + 5)));
    auto rot = std::make_shared<dgq::turboquant::Rotation>(static_cast<int>(x.channels),
                                                          dgq::turboquant::rotation_stream(seed, role == dgq::TensorRole::key));
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
      const std::size_t at = span * static_cast<std::size_t>(rg.channels) + (rg.channels == 1 ? 0 : static_cast<std::size_t>(d));
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
    const char* part = r.row_stride != 0 ? "slots" : c.format == StoredFormat::dgq || !c.uniform_spec.empty() ? "codes" : "blocks";
    r.rows.push_back(stored.find(part)->bytes.data());
    if (r.raw_tokens > 0) r.raw.push_back(stored.find("residual")->bytes.data());
  }
  if (c.uniform_spec.empty()) {
    r.format = c.format;
    r.rotated = c.rotated;
  }
  return r;
}

struct Problem {
  DecodeCase c;
  RoleCache k, v;
  std::vector<float> q;
  float scale;
  dgq::cpu::StoredKv stored;
};

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

std::vector<float> run_kernel(const Problem& p, int threads, DecodePath path = DecodePath::best) {
  std::vector<float> out(p.q.size());
  dgq::cpu::decode_attention(p.stored, p.c.shape, p.q.data(), p.scale, out.data(), threads, path);
  return out;
}

// ---- The scalar twin: the documented order, written out on decoded floats ------------------

float twin_dot(const float* q, const float* k, int n) {
  float acc[2][8] = {};
  for (int d = 0; d < n; ++d) {
    float& a = acc[(d / 8) % 2][d % 8];
    a = std::fma(q[d], k[d], a);
  }
  float lanes[8];
  for (int j = 0; j < 8; ++j) lanes[j] = acc[0][j] + acc[1][j];
  return ar::lane_tree_sum8(lanes);
}

struct Partial {
  float m = 0, l = 0;
  std::vector<float> acc;
};

Partial twin_chunk(const float* q, const float* k, const float* v, std::int64_t first, std::int64_t count, int D,
                   float scale) {
  std::vector<float> s(static_cast<std::size_t>(count));
  for (std::int64_t t = 0; t < count; ++t) s[t] = twin_dot(q, k + (first + t) * D, D) * scale;
  Partial part;
  part.m = *std::max_element(s.begin(), s.end());
  float lanes[8] = {};
  part.acc.assign(static_cast<std::size_t>(D), 0.0f);
  for (std::int64_t t = 0; t < count; ++t) {
    const float w = ar::softmax_exp(s[t] - part.m);
    lanes[t % 8] += w;
    for (int d = 0; d < D; ++d) part.acc[d] = std::fma(w, v[(first + t) * D + d], part.acc[d]);
  }
  part.l = ar::lane_tree_sum8(lanes);
  return part;
}

std::vector<float> twin_attention(const Problem& p) {
  const auto& s = p.c.shape;
  const int D = s.head_dim;
  std::vector<float> out(p.q.size());
  for (int qh = 0; qh < s.query_heads(); ++qh) {
    const int kvh = qh / s.group;
    std::vector<float> q(p.q.begin() + qh * D, p.q.begin() + (qh + 1) * D);
    if (p.stored.k_rotated) dgq::hadamard_rotate_row(q.data(), D, dgq::rules::hadamard_block(D, true));
    if (p.k.twin_rotation) p.k.twin_rotation(q.data());
    Partial run;
    for (std::int64_t first = 0; first < s.tokens; first += ar::kChunkTokens) {
      const auto count = std::min(ar::kChunkTokens, s.tokens - first);
      Partial c = twin_chunk(q.data(), p.k.decoded[kvh].data(), p.v.decoded[kvh].data(), first, count, D, p.scale);
      if (first == 0) {
        run = c;
        continue;
      }
      const float m_new = std::max(run.m, c.m);
      const float a = ar::softmax_exp(run.m - m_new), b = ar::softmax_exp(c.m - m_new);
      run.l = std::fma(c.l, b, run.l * a);
      for (int d = 0; d < D; ++d) run.acc[d] = std::fma(c.acc[d], b, run.acc[d] * a);
      run.m = m_new;
    }
    for (int d = 0; d < D; ++d) out[qh * D + d] = run.acc[d] / run.l;
    if (p.stored.v_rotated) dgq::hadamard_rotate_row(out.data() + qh * D, D, dgq::rules::hadamard_block(D, false));
    if (p.v.twin_rotation) p.v.twin_rotation(out.data() + qh * D);
  }
  return out;
}

// ---- Plain attention in double on Scheme::decompress's output, and its bound -----------------

struct Reference {
  std::vector<double> out;
  double bound = 0;  // per element
};

// The kernel's error against exact attention on the same decompressed values, per element,
// with u = 2^-24 and S = max over tokens of scale * sum_d |q_d k_d| (how ill-conditioned a
// score is):
//  - a score is a dot of D terms (error <= D u S); rot=hadamard adds the rotation's rounding of
//    q and of the stored k against the decompressed one (log2(256) = 8 butterfly stages, each
//    within u of the row's norm: <= 2 D u S more, generously);
//  - exp(s - m) then has a relative error of at most twice that (s and m) plus the exp's own
//    few ulps (Cephes' polynomial: < 4u);
//  - the sums over tokens (l and acc, fp32, <= kChunkTokens terms in a chunk, then one merge
//    per chunk, each term >= 0 for l) add (kChunkTokens + chunks) u relative to sum |p v|;
//  - out = acc / l is a convex combination of the V rows, so relative weight errors of delta
//    move it by at most 2 delta max|V|; the inverse rotation of the output adds 8u max|V| D.
// A kernel that reads a wrong nibble or drops a chunk is off by a fraction of max|V|, far above.
Reference plain_attention(const Problem& p) {
  const auto& s = p.c.shape;
  const int D = s.head_dim;
  const double u = 0x1p-24;
  Reference r;
  r.out.assign(p.q.size(), 0.0);
  for (int qh = 0; qh < s.query_heads(); ++qh) {
    const auto& k = p.k.decompressed[qh / s.group];
    const auto& v = p.v.decompressed[qh / s.group];
    std::vector<double> score(static_cast<std::size_t>(s.tokens));
    double conditioning = 0, vmax = 0;
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      double dot = 0, magnitude = 0;
      for (int d = 0; d < D; ++d) {
        dot += static_cast<double>(p.q[qh * D + d]) * k[t * D + d];
        magnitude += std::fabs(static_cast<double>(p.q[qh * D + d]) * k[t * D + d]);
      }
      score[t] = dot * p.scale;
      conditioning = std::max(conditioning, magnitude * p.scale);
      for (int d = 0; d < D; ++d) vmax = std::max(vmax, std::fabs(static_cast<double>(v[t * D + d])));
    }
    const double m = *std::max_element(score.begin(), score.end());
    double l = 0;
    for (std::int64_t t = 0; t < s.tokens; ++t) {
      const double w = std::exp(score[t] - m);
      l += w;
      for (int d = 0; d < D; ++d) r.out[qh * D + d] += w * v[t * D + d];
    }
    for (int d = 0; d < D; ++d) r.out[qh * D + d] /= l;
    // TurboQuant's Pi is two Walsh-Hadamard transforms: twice the Hadamard block's terms.
    const double k_rotation_terms = p.stored.k_rotated ? 2.0 : p.k.rotation ? 4.0 : 0.0;
    const double score_error = ((1.0 + k_rotation_terms) * D * u + p.k.output_rounding) * conditioning;
    const double chunks = static_cast<double>((s.tokens + ar::kChunkTokens - 1) / ar::kChunkTokens);
    const double delta = 2 * score_error + 4 * u + (static_cast<double>(ar::kChunkTokens) + chunks) * u;
    const double rotation = p.stored.v_rotated ? 8 * u * D : p.v.rotation ? 16 * u * D : 0;
    r.bound = std::max(r.bound, (2 * delta + rotation + p.v.output_rounding) * vmax);
  }
  return r;
}

std::string describe(const DecodeCase& c, std::uint64_t seed) {
  const auto& s = c.shape;
  return spec_of(c) + " kv_heads=" + std::to_string(s.kv_heads) + " group=" + std::to_string(s.group) +
         " head_dim=" + std::to_string(s.head_dim) + " tokens=" + std::to_string(s.tokens) +
         " values=" + std::to_string(static_cast<int>(c.values)) + " seed=" + std::to_string(seed);
}

bool same_bytes(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// Every check of one case: twin bits, plain bound, thread counts, the two paths.
void check_case(const DecodeCase& c, std::uint64_t seed) {
  INFO(describe(c, seed));
  const Problem p = make_problem(c, seed);
  const auto got = run_kernel(p, 1);
  REQUIRE(same_bytes(got, twin_attention(p)));
  const auto ref = plain_attention(p);
  double worst = 0;
  for (std::size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(got[i] - ref.out[i]));
  INFO("worst |kernel - plain| " << worst << ", bound " << ref.bound);
  REQUIRE(worst <= ref.bound);
  REQUIRE(same_bytes(got, run_kernel(p, 2)));
  REQUIRE(same_bytes(got, run_kernel(p, 3)));
  REQUIRE(same_bytes(got, run_kernel(p, 1, DecodePath::scalar)));
}

constexpr StoredFormat kFormats[] = {StoredFormat::q8_0, StoredFormat::q4_0, StoredFormat::iq4_nl};

}  // namespace

TEST_CASE("decode attention: one token, one head, every format and head_dim", "[decode_attention]") {
  for (auto f : kFormats)
    for (int D : {32, 64, 128, 256})
      for (bool rotated : {false, true}) {
        if (rotated && D % 64 != 0) continue;
        check_case({f, rotated, {1, 1, D, 1}}, dgq::test::seed() + static_cast<std::uint64_t>(D));
      }
}

TEST_CASE("decode attention: token counts around the chunk edges", "[decode_attention]") {
  const std::int64_t K = ar::kChunkTokens;
  for (auto f : kFormats)
    for (std::int64_t L : {std::int64_t{7}, K - 1, K, K + 1, 2 * K + 3})
      check_case({f, false, {2, 1, 64, L}}, dgq::test::seed() + static_cast<std::uint64_t>(L));
}

TEST_CASE("decode attention: GQA groups 1, 3 and 4, rotated and not", "[decode_attention]") {
  for (auto f : kFormats)
    for (int group : {1, 3, 4})
      for (bool rotated : {false, true})
        check_case({f, rotated, {2, group, 128, 300}}, dgq::test::seed() + static_cast<std::uint64_t>(group));
}

TEST_CASE("decode attention: head_dim 64, 128 and 256 over several chunks", "[decode_attention]") {
  for (auto f : kFormats)
    for (int D : {64, 128, 256}) check_case({f, true, {1, 2, D, 600}}, dgq::test::seed() + 31u * static_cast<std::uint64_t>(D));
}

TEST_CASE("decode attention: constant rows and values near fp16's largest", "[decode_attention]") {
  for (auto f : kFormats) {
    check_case({f, false, {1, 4, 128, 520}, Values::constant_rows}, dgq::test::seed() + 11);
    check_case({f, false, {1, 2, 128, 520}, Values::large}, dgq::test::seed() + 12);
    check_case({f, true, {1, 2, 128, 300}, Values::large}, dgq::test::seed() + 13);
  }
}

// With every row equal the weights are exactly 1 (s - m = 0) and the output is that row: pins
// the softmax normalisation independently of the twin's copy of the order. Bound: acc sums at
// most kChunkTokens equal terms per chunk and merges once per chunk, l is exact, so the relative
// error is below (kChunkTokens + chunks + 1) u.
TEST_CASE("decode attention: equal rows give that row back", "[decode_attention]") {
  const std::int64_t L = 700;
  DecodeCase c{StoredFormat::q8_0, false, {1, 1, 64, L}, Values::constant_rows};
  const Problem p = make_problem(c, dgq::test::seed() + 21);
  const auto got = run_kernel(p, 2);
  const double relative = (static_cast<double>(ar::kChunkTokens) + 4) * 0x1p-24;
  for (int d = 0; d < 64; ++d) {
    const double row = p.v.decompressed[0][d];
    CAPTURE(d, row, got[d]);
    REQUIRE(std::fabs(got[d] - row) <= relative * std::fabs(row));
  }
}

TEST_CASE("decode attention: bad shapes and caches are refused", "[decode_attention]") {
  const std::vector<std::uint8_t> bytes(34 * 8, 0);
  dgq::cpu::StoredKv kv;
  kv.k = kv.v = {bytes.data()};
  const float q[256] = {};
  float out[256];
  const auto run = [&](DecodeAttentionShape s, int threads = 1) {
    dgq::cpu::decode_attention(kv, s, q, 1.0f, out, threads);
  };
  REQUIRE_NOTHROW(run({1, 1, 64, 2}));
  REQUIRE_THROWS_WITH(run({1, 1, 48, 2}), Catch::Contains("multiple of 32"));
  REQUIRE_THROWS_WITH(run({1, 1, 64, 0}), Catch::Contains("tokens >= 1"));
  REQUIRE_THROWS_WITH(run({2, 1, 64, 2}), Catch::Contains("1 K and 1 V heads, the shape 2"));
  REQUIRE_THROWS_WITH(run({1, 1, 64, 2}, 0), Catch::Contains("threads"));
  kv.k_rotated = true;
  REQUIRE_THROWS_WITH(run({1, 1, 96, 1}), Catch::Contains("multiple of 64"));
  kv.k_rotated = false;
  kv.v = {nullptr};
  REQUIRE_THROWS_WITH(run({1, 1, 64, 2}), Catch::Contains("KV head 0 has no data"));
}

// The plan's contract for a caller with its own threads (the ggml bench's OpenMP): chunk items
// and head merges in any order give the bytes of decode_attention().
TEST_CASE("decode attention: work items in reverse order give the same bytes", "[decode_attention]") {
  for (auto f : kFormats) {
    const DecodeCase c{f, true, {3, 2, 128, 3 * ar::kChunkTokens + 17}};
    const auto seed = dgq::test::seed() + 41;
    INFO(describe(c, seed));
    const Problem p = make_problem(c, seed);
    dgq::cpu::DecodeAttention step(p.stored, c.shape, p.scale);
    step.set_query(p.q.data());
    REQUIRE(step.chunk_items() == 3 * 4);
    for (std::int64_t i = step.chunk_items() - 1; i >= 0; --i) step.run_chunk(i);
    for (int h = c.shape.query_heads() - 1; h >= 0; --h) step.merge_head(h);
    const std::vector<float> got(step.output(), step.output() + p.q.size());
    REQUIRE(same_bytes(got, run_kernel(p, 1)));
  }
}

// DGQ v1 (format dgq): its int8 codes read with each token's segment range, rounded to fp16 in
// registers, bit for bit the twin on Scheme::decompress's fp16 output.
TEST_CASE("decode attention on DGQ v1 codes: every marker mode, several segments, both granularities, chunk edges and GQA",
          "[decode_attention][dgq]") {
  const std::int64_t K = ar::kChunkTokens;
  for (const char* markers : {"table", "bitmap", "inband"}) {
    // The segments must be there, or the per-token ranges would go untested.
    const DecodeCase several{StoredFormat::dgq, false, {2, 4, 128, 3 * K + 5}, Values::regimes, markers};
    const Problem p = make_problem(several, dgq::test::seed() + 51);
    for (const auto& r : p.k.ranges) {
      CAPTURE(markers);
      REQUIRE(r.edges.size() >= 3);
      REQUIRE(r.f16);
    }
    check_case(several, dgq::test::seed() + 51);
  }
  // Segment-channel: a lo and scale per segment and channel, read beside the codes.
  for (const char* markers : {"table", "inband"}) {
    const DecodeCase per_channel{StoredFormat::dgq, false, {2, 4, 128, 2 * K + 9}, Values::regimes, markers,
                                 "segment-channel"};
    const Problem p = make_problem(per_channel, dgq::test::seed() + 54);
    for (const auto& r : p.k.ranges) {
      CAPTURE(markers);
      REQUIRE(r.edges.size() >= 3);
      REQUIRE(r.channels == 128);
    }
    check_case(per_channel, dgq::test::seed() + 54);
  }
  check_case({StoredFormat::dgq, false, {1, 3, 32, 70}, Values::regimes, "bitmap", "segment-channel"}, dgq::test::seed() + 55);
  check_case({StoredFormat::dgq, false, {1, 1, 256, K + 1}, Values::large, "table", "segment-channel"}, dgq::test::seed() + 56);
  for (std::int64_t L : {std::int64_t{1}, std::int64_t{7}, K - 1, K, K + 1})
    check_case({StoredFormat::dgq, false, {1, 3, 64, L}, Values::regimes}, dgq::test::seed() + static_cast<std::uint64_t>(L));
  for (int D : {32, 256}) check_case({StoredFormat::dgq, false, {2, 2, D, 600}}, dgq::test::seed() + static_cast<std::uint64_t>(D));
  check_case({StoredFormat::dgq, false, {1, 4, 128, 520}, Values::constant_rows}, dgq::test::seed() + 52);
  // With the rotation modifier: the codes in the rotated basis, the query and the output rotated.
  check_case({StoredFormat::dgq, true, {2, 4, 128, 2 * K + 9}, Values::regimes}, dgq::test::seed() + 57);
  check_case({StoredFormat::dgq, true, {1, 3, 64, K + 1}, Values::regimes, "inband", "segment-channel"},
             dgq::test::seed() + 58);
  check_case({StoredFormat::dgq, false, {1, 2, 128, 520}, Values::large}, dgq::test::seed() + 53);
}

TEST_CASE("decode attention on DGQ v1 codes: other schemes and missing ranges are refused", "[decode_attention][dgq]") {
  const auto x = head_values({StoredFormat::dgq, false, {1, 1, 64, 40}}, 7);
  const std::uint8_t* codes = nullptr;
  const auto q8 = dgq::make_scheme("q8_0")->compress(x.view(), dgq::TensorRole::key);
  REQUIRE_THROWS_WITH(dgq::cpu::dgq_segment_ranges(q8, &codes), Catch::Contains("not 'q8_0'"));
  const auto per_channel = dgq::make_scheme("dgq:granularity=segment-channel")->compress(x.view(), dgq::TensorRole::key);
  const dgq::cpu::SpanRanges per_channel_ranges = dgq::cpu::dgq_segment_ranges(per_channel, &codes);
  REQUIRE(per_channel_ranges.channels == 64);
  REQUIRE(per_channel_ranges.lo.size() == (per_channel_ranges.edges.size() - 1) * 64);
  // The rotation modifier is read, any other refused by name (the sinks' parts are not DGQ's).
  REQUIRE(dgq::cpu::dgq_segment_ranges(dgq::make_scheme("dgq:rot=hadamard")->compress(x.view(), dgq::TensorRole::key), &codes)
              .rotated);
  REQUIRE_THROWS_WITH(dgq::cpu::dgq_segment_ranges(dgq::make_scheme("dgq:sink=4")->compress(x.view(), dgq::TensorRole::key), &codes),
                      Catch::Contains("modifier sink="));
  const Problem p = make_problem({StoredFormat::dgq, false, {1, 1, 64, 40}}, 8);
  dgq::cpu::StoredKv kv = p.stored;
  kv.v_ranges.clear();
  float out[64];
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("segment ranges of every K and V head"));
  dgq::cpu::SpanRanges short_ranges = p.k.ranges[0];
  short_ranges.edges.back() = 39;
  kv = p.stored;
  kv.k_ranges = {&short_ranges};
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("do not cover its 40 tokens"));
  // Per-channel ranges of another width than the head's.
  dgq::cpu::SpanRanges narrow = p.k.ranges[0];
  narrow.channels = 32;
  narrow.lo.resize((narrow.edges.size() - 1) * 32);
  narrow.scale.resize(narrow.lo.size());
  kv = p.stored;
  kv.k_ranges = {&narrow};
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("and 64 channels"));
}

// dgq2 and KIVI (formats uniform2 .. uniform8): their b-bit codes read with each token's span
// range (a segment, a group inside one, a KIVI key group, or the token itself), K and V of
// different widths, bit for bit the twin on the values Scheme::decompress writes; rotated roles
// (dgq2's rot, rot_on) within the bound of plain attention on the decompressed cache.
TEST_CASE("decode attention on dgq2 and KIVI codes: every width, granularity and range dtype, K and V apart",
          "[decode_attention][uniform]") {
  const std::int64_t K = ar::kChunkTokens;
  const DecodeAttentionShape several{2, 4, 128, 3 * K + 5};
  for (const char* spec : {"dgq2:bits=4", "dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128",
                           "dgq2:kbits=3,vbits=2,markers=bitmap", "dgq2:bits=8,kgran=segment,vgran=segment-channel",
                           "dgq2:kbits=2,vbits=8,vgran=segment-channel-group,vgroup=64,range_dtype=fp32",
                           "dgq2:bits=3,kgran=segment,vgran=segment-channel-group,vgroup=32",
                           "kivi-4:group=32,residual=0", "kivi-2:group=32,residual=0"}) {
    DecodeCase c{StoredFormat::q8_0, false, several, Values::regimes};
    c.uniform_spec = spec;
    c.shape.tokens = spec[0] == 'k' ? 25 * 32 : several.tokens;  // KIVI: whole key groups
    const Problem p = make_problem(c, dgq::test::seed() + 61);
    if (std::string(spec).find("kgran=segment,") != std::string::npos || std::string(spec) == "dgq2:bits=4") {
      for (const auto& r : p.k.ranges) REQUIRE(r.edges.size() >= 3);  // several segments, per-token ranges exercised
    }
    check_case(c, dgq::test::seed() + 61);
  }
}

TEST_CASE("decode attention on dgq2 and KIVI codes: one token, chunk edges, head_dim 32 and 256, GQA 1 and 3",
          "[decode_attention][uniform]") {
  const std::int64_t K = ar::kChunkTokens;
  for (std::int64_t L : {std::int64_t{1}, std::int64_t{7}, K - 1, K, K + 1}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 3, 64, L}, Values::regimes};
    c.uniform_spec = "dgq2:kbits=3,vbits=4,kgran=segment-channel-group,kgroup=16";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(L));
  }
  for (int D : {32, 256}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 1, D, 320}};
    c.uniform_spec = "kivi-2:group=32,residual=0";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D));
    c.uniform_spec = "dgq2:bits=3";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D) + 1);
  }
  DecodeCase constant{StoredFormat::q8_0, false, {1, 4, 128, 520}, Values::constant_rows};
  constant.uniform_spec = "dgq2:bits=2";
  check_case(constant, dgq::test::seed() + 62);
  DecodeCase large{StoredFormat::q8_0, false, {1, 2, 128, 512}, Values::large};
  large.uniform_spec = "kivi-4:group=32,residual=0";
  check_case(large, dgq::test::seed() + 63);
}

// dgq2 reads rot itself (rot_on picks the roles); KIVI takes it as the scheme modifier, whose
// parts are KIVI's codes of the rotated tensor (a reader that ignores the modifier reads a rotated
// KIVI head in the wrong basis).
TEST_CASE("decode attention on dgq2 and KIVI codes with the Hadamard rotation: V only and both roles",
          "[decode_attention][uniform]") {
  for (const char* spec : {"dgq2:kbits=4,vbits=3,kgran=segment-channel-group,kgroup=128,rot=hadamard,rot_on=v",
                           "dgq2:bits=4,rot=hadamard", "dgq2:bits=3,rot=hadamard,rot_on=k",
                           "kivi-4:group=32,residual=0,rot=hadamard", "kivi-2:group=64,residual=0,rot=hadamard"}) {
    const bool kivi = spec[0] == 'k';
    DecodeCase c{StoredFormat::q8_0, false, {2, 4, 128, 2 * ar::kChunkTokens + (kivi ? 64 : 9)}, Values::regimes};
    c.uniform_spec = spec;
    const Problem p = make_problem(c, dgq::test::seed() + 64);
    const std::string s(spec);
    REQUIRE(p.stored.k_rotated == (s.find("rot_on=v") == std::string::npos));
    REQUIRE(p.stored.v_rotated == (s.find("rot_on=k") == std::string::npos));
    check_case(c, dgq::test::seed() + 64);
  }
}

// Raw rows: dgq2's and KIVI's residual tokens (KIVI's keys also keep an incomplete group raw),
// read from the part "residual" after the codes; chunks that hold codes and raw rows, chunks of
// raw rows only, a head with no codes at all (L <= residual), K and V with different raw counts;
// bit for bit the twin (which decodes the raw rows as the input's values) on both paths.
TEST_CASE("decode attention on dgq2 and KIVI codes with raw rows: residual tokens and KIVI's incomplete key group",
          "[decode_attention][uniform]") {
  const std::int64_t K = ar::kChunkTokens;
  struct RawCase {
    const char* spec;
    std::int64_t tokens;
  };
  for (const RawCase& rc : {RawCase{"kivi-4:group=32,residual=32", 3 * K + 45},  // K: 13 + 32 raw, V: 32
                            RawCase{"kivi-2:group=128,residual=300", 2 * K + 7},   // raw rows over a chunk edge
                            RawCase{"kivi-4:group=32,residual=32", 20},            // no codes at all
                            RawCase{"dgq2:bits=4,residual=64", 2 * K + 9},
                            RawCase{"dgq2:kbits=4,vbits=2,kgran=segment-channel-group,kgroup=64,residual=16", K + 3}}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 3, 64, rc.tokens}, Values::regimes};
    c.uniform_spec = rc.spec;
    CAPTURE(rc.spec, rc.tokens);
    const Problem p = make_problem(c, dgq::test::seed() + 65);
    REQUIRE(p.stored.k_raw_tokens > 0);
    REQUIRE(p.stored.v_raw_tokens > 0);
    check_case(c, dgq::test::seed() + 65);
  }
  // KIVI keys keep the incomplete group: 45 = 13 + 32 raw keys, 32 raw values.
  DecodeCase kivi{StoredFormat::q8_0, false, {1, 1, 64, 3 * K + 45}};
  kivi.uniform_spec = "kivi-4:group=32,residual=32";
  const Problem p = make_problem(kivi, 66);
  REQUIRE(p.stored.k_raw_tokens == 45);
  REQUIRE(p.stored.v_raw_tokens == 32);
  // A cache that says it has raw rows must hand them over.
  dgq::cpu::StoredKv kv = p.stored;
  kv.v_raw.clear();
  float out[64];
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1), Catch::Contains("raw rows of every"));
  kv = p.stored;
  kv.k_raw_tokens = p.c.shape.tokens + 1;
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1), Catch::Contains("raw tokens must be in"));
  kv = p.stored;
  kv.k_raw_tokens = 44;  // the ranges then miss a token
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1), Catch::Contains("do not cover"));
}

// fp32 input keeps fp32 raw rows: the vector path reads them as stored, bit for bit the scalar
// path, and the result is attention on the decompressed cache within rounding.
TEST_CASE("decode attention on KIVI codes with fp32 raw rows: both paths agree", "[decode_attention][uniform]") {
  const DecodeAttentionShape shape{1, 2, 64, ar::kChunkTokens + 40};
  const auto x = head_values({StoredFormat::q8_0, false, shape}, 67);  // fp32
  const auto scheme = dgq::make_scheme("kivi-4:group=32,residual=50");
  const dgq::Compressed k = scheme->compress(x.view(), dgq::TensorRole::key);
  const dgq::Compressed v = scheme->compress(x.view(), dgq::TensorRole::value);
  const dgq::cpu::StoredHead kh = dgq::cpu::packed_codes_head(k), vh = dgq::cpu::packed_codes_head(v);
  REQUIRE_FALSE(kh.ranges.f16);
  dgq::cpu::StoredKv kv;
  kv.format = kh.format;
  kv.k = {kh.codes};
  kv.v = {vh.codes};
  kv.k_ranges = {&kh.ranges};
  kv.v_ranges = {&vh.ranges};
  kv.k_raw = {kh.raw};
  kv.v_raw = {vh.raw};
  kv.k_raw_tokens = kh.raw_tokens;
  kv.v_raw_tokens = vh.raw_tokens;
  kv.raw_f16 = false;
  REQUIRE(kv.k_raw_tokens == 50 + (shape.tokens - 50) % 32);
  std::vector<float> q(static_cast<std::size_t>(shape.query_heads() * shape.head_dim));
  dgq::test::SplitMix64 rng(68);
  for (auto& value : q) value = rng.symmetric(1.0f);
  std::vector<float> best(q.size()), scalar(q.size());
  dgq::cpu::decode_attention(kv, shape, q.data(), 0.125f, best.data(), 2, DecodePath::best);
  dgq::cpu::decode_attention(kv, shape, q.data(), 0.125f, scalar.data(), 1, DecodePath::scalar);
  REQUIRE(std::memcmp(best.data(), scalar.data(), best.size() * sizeof(float)) == 0);
  // Against plain attention on the decompressed cache (fp32: the raw rows exactly).
  dgq::test::OwnedTensor kd(dgq::DType::f32, shape.tokens, shape.head_dim), vd(dgq::DType::f32, shape.tokens, shape.head_dim);
  scheme->decompress(k, kd.mut());
  scheme->decompress(v, vd.mut());
  const std::vector<float> kf = dgq::to_float(kd.view()), vf = dgq::to_float(vd.view());
  for (int h = 0; h < shape.group; ++h) {
    std::vector<double> s(static_cast<std::size_t>(shape.tokens));
    double m = -1e300, l = 0;
    for (std::int64_t t = 0; t < shape.tokens; ++t) {
      double dot = 0;
      for (int d = 0; d < shape.head_dim; ++d) dot += double(q[h * shape.head_dim + d]) * kf[t * shape.head_dim + d];
      s[t] = dot * 0.125;
      m = std::max(m, s[t]);
    }
    for (auto& e : s) l += (e = std::exp(e - m));
    for (int d = 0; d < shape.head_dim; ++d) {
      double o = 0;
      for (std::int64_t t = 0; t < shape.tokens; ++t) o += s[t] * vf[t * shape.head_dim + d];
      CHECK(std::abs(o / l - best[h * shape.head_dim + d]) <= 1e-4);
    }
  }
}

TEST_CASE("decode attention on dgq2 and KIVI codes: in-band markers, other families and mixed formats are refused",
          "[decode_attention][uniform]") {
  const auto x = head_values({StoredFormat::q8_0, false, {1, 1, 64, 40}}, 9);
  const auto head_of = [&x](const char* spec, dgq::TensorRole role = dgq::TensorRole::key) {
    return dgq::cpu::packed_codes_head(dgq::make_scheme(spec)->compress(x.view(), role));
  };
  REQUIRE(head_of("dgq2:bits=4,residual=8").raw_tokens == 8);
  REQUIRE_THROWS_WITH(head_of("dgq2:bits=4,residual=8,rot=hadamard"), Catch::Contains("unrotated beside rotated codes"));
  REQUIRE_THROWS_WITH(head_of("dgq2:bits=4,markers=inband"), Catch::Contains("marks segments in-band"));
  // A token role has nothing to mark: in-band is table there (rule V5) and is read.
  REQUIRE(head_of("dgq2:bits=4,markers=inband", dgq::TensorRole::value).format == StoredFormat::uniform4);
  REQUIRE(head_of("kivi-4:group=32,residual=0").raw_tokens == 8);  // the incomplete key group
  REQUIRE(head_of("kivi-2:group=8,residual=16", dgq::TensorRole::value).raw_tokens == 16);
  REQUIRE(head_of("kivi-2:group=8,residual=0").ranges.edges.size() == 6);
  REQUIRE_THROWS_WITH(head_of("q8_0"), Catch::Contains("not 'q8_0'"));
  REQUIRE_THROWS_WITH(head_of("dgq"), Catch::Contains("dgq2, KIVI, TurboQuant or vLLM"));
  REQUIRE_THROWS_WITH(head_of("turboquant:bits=3,variant=prod"), Catch::Contains("QJL residual"));
  // A modifier the kernel does not read is refused by name, never ignored.
  REQUIRE_THROWS_WITH(head_of("kivi-4:group=8,residual=0,sink=4"), Catch::Contains("modifier sink="));
  REQUIRE_THROWS_WITH(head_of("dgq2:bits=4,sink=2"), Catch::Contains("modifier sink="));
  REQUIRE_THROWS_WITH(head_of("turboquant:bits=3,rot=hadamard"), Catch::Contains("before TurboQuant's own"));
  // Corrupt parts: a truncated codes part, a missing one, ranges or norms of the wrong size.
  const auto corrupt = [&x](const char* spec, const char* part, bool drop) {
    dgq::Compressed c = dgq::make_scheme(spec)->compress(x.view(), dgq::TensorRole::value);
    for (auto it = c.parts.begin(); it != c.parts.end(); ++it) {
      if (it->name != part) continue;
      if (drop) {
        c.parts.erase(it);
      } else {
        it->bytes.pop_back();
      }
      break;
    }
    return c;
  };
  REQUIRE_THROWS_AS(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "codes", false)), dgq::InputError);
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "codes", false)), Catch::Contains("corrupt dgq2 data"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "ranges", false)), Catch::Contains("corrupt dgq2 data"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4", "codes", true)), Catch::Contains("part 'codes' is missing"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("kivi-4:group=8,residual=0", "ranges", false)),
                      Catch::Contains("corrupt KIVI data"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("kivi-4:group=8,residual=8", "residual", false)),
                      Catch::Contains("corrupt KIVI data: part 'residual'"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("dgq2:bits=4,residual=8", "residual", true)),
                      Catch::Contains("part 'residual' is missing"));
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(corrupt("turboquant:bits=3", "norms", false)),
                      Catch::Contains("corrupt TurboQuant data"));
  REQUIRE_THROWS_WITH(head_of("turboquant:bits=1"), Catch::Contains("2 to 4 bits"));
  // K and V of different formats: only between uniform widths.
  DecodeCase c{StoredFormat::q8_0, false, {1, 1, 64, 40}};
  c.uniform_spec = "dgq2:kbits=4,vbits=2";
  const Problem p = make_problem(c, 10);
  REQUIRE(p.stored.format == StoredFormat::uniform4);
  REQUIRE(p.stored.value_format() == StoredFormat::uniform2);
  dgq::cpu::StoredKv kv = p.stored;
  kv.format = StoredFormat::q4_0;
  float out[64];
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("only among the uniform and codebook formats"));
  kv = p.stored;
  kv.v_format = StoredFormat::dgq;
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("only among the uniform and codebook formats"));
  // A row stride shorter than a packed row of the format.
  kv = p.stored;
  kv.v_row_stride = 31;  // K: 64 channels of 4-bit codes take 32 bytes
  kv.k_row_stride = 31;
  REQUIRE_THROWS_WITH(dgq::cpu::decode_attention(kv, p.c.shape, p.q.data(), 1.0f, out, 1),
                      Catch::Contains("shorter than a row of uniform4 codes (32)"));
}

// TurboQuant_mse (formats codebook2 .. codebook4): the codes index the codebook of (head_dim,
// bits), times each token's norm, in the basis of the role's rotation Pi, which the kernel moves
// to the query (K) and the output (V); bit for bit the twin with the reference's Pi, and within
// the bound of plain attention on the decompressed cache (rounded to fp16 after rotating back).
TEST_CASE("decode attention on TurboQuant codes: 2, 3 and 4 bits, seeds, head_dim 32 to 256, chunk edges",
          "[decode_attention][codebook]") {
  const std::int64_t K = ar::kChunkTokens;
  for (const char* spec : {"turboquant:bits=2", "turboquant:bits=3,seed=7", "turboquant:bits=4"}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 4, 128, 2 * K + 9}, Values::regimes};
    c.uniform_spec = spec;
    const Problem p = make_problem(c, dgq::test::seed() + 71);
    REQUIRE(p.stored.query_rotation);
    REQUIRE(p.stored.output_rotation);
    check_case(c, dgq::test::seed() + 71);
  }
  for (std::int64_t L : {std::int64_t{1}, K, K + 1}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 3, 64, L}};
    c.uniform_spec = "turboquant:bits=3";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(L));
  }
  for (int D : {32, 256}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 2, D, 300}};
    c.uniform_spec = "turboquant:bits=4,seed=3";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D));
  }
}

// vLLM's TurboQuant presets (docs/spec.md rules TV1-TV12): keys as codebook codes of the WHT-
// rotated key times each token's corrected norm, the rotation moved to the query; values as
// uniform codes with a per-token fp16 scale and zero; both read inside vLLM's slots, a slot apart.
// Bit for bit the twin (the reference kernels' WHT with the preset's signs), within the bound of
// attention on the decompressed cache (which rounds n * (c * inv) where the kernel rounds c * g).
TEST_CASE("decode attention on vLLM's TurboQuant presets: 4bit_nc, k3v4_nc, 3bit_nc, seeds, chunk edges",
          "[decode_attention][codebook]") {
  const std::int64_t K = ar::kChunkTokens;
  for (const char* spec : {"turboquant_4bit_nc", "turboquant_k3v4_nc:seed=7", "turboquant_3bit_nc:seed=1379"}) {
    DecodeCase c{StoredFormat::q8_0, false, {2, 4, 128, 2 * K + 9}, Values::regimes};
    c.uniform_spec = spec;
    CAPTURE(spec);
    const Problem p = make_problem(c, dgq::test::seed() + 73);
    REQUIRE(p.stored.query_rotation);
    REQUIRE_FALSE(p.stored.output_rotation);
    REQUIRE(p.stored.k_row_stride == (std::string(spec).find("4bit") != std::string::npos ? 68 : 52));
    check_case(c, dgq::test::seed() + 73);
  }
  for (std::int64_t L : {std::int64_t{1}, K, K + 1}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 3, 64, L}};
    c.uniform_spec = "turboquant_k3v4_nc";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(L));
  }
  for (int D : {32, 256}) {
    DecodeCase c{StoredFormat::q8_0, false, {1, 2, D, 300}};
    c.uniform_spec = "turboquant_3bit_nc";
    check_case(c, dgq::test::seed() + static_cast<std::uint64_t>(D));
  }
}

TEST_CASE("decode attention on vLLM's TurboQuant presets: FP8 keys, a rotation before the preset and corrupt slots are refused",
          "[decode_attention][codebook]") {
  const auto x = head_values({StoredFormat::q8_0, false, {1, 1, 64, 40}}, 11);
  const auto stored = [&x](const char* spec, dgq::TensorRole role) { return dgq::make_scheme(spec)->compress(x.view(), role); };
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(stored("turboquant_k8v4", dgq::TensorRole::key)),
                      Catch::Contains("FP8 keys"));
  REQUIRE(dgq::cpu::packed_codes_head(stored("turboquant_k8v4", dgq::TensorRole::value)).format == StoredFormat::uniform4);
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(stored("turboquant_4bit_nc:rot=hadamard", dgq::TensorRole::key)),
                      Catch::Contains("before the preset's own"));
  dgq::Compressed c = stored("turboquant_4bit_nc", dgq::TensorRole::key);
  c.parts[0].bytes.pop_back();
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(c), Catch::Contains("part 'slots' has the wrong size"));
  c = stored("turboquant_4bit_nc", dgq::TensorRole::value);
  c.parts[0].bytes[32 + 1] = 0x7c;  // token 0's scale: fp16 infinity
  c.parts[0].bytes[32] = 0x00;
  REQUIRE_THROWS_WITH(dgq::cpu::packed_codes_head(c), Catch::Contains("not finite (corrupt data)"));
}
