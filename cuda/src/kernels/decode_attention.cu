// The CUDA decode attention (dgq/cuda/decode_attention.hpp): every thread runs the scalar order
// of cpu/src/decode_attention_chunk_scalar.cpp's attend_chunk_scalar for one (KV head, chunk, query
// head), then one thread per query head merges the chunks in token order as
// DecodeAttention::merge_head does. Built with -fmad=false: every fma is the rules' own.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <string>

#include "../cuda_check.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/cuda/decode_attention.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/errors.hpp"

namespace dgq::cuda {
namespace {

namespace ar = dgq::attention_rules;
namespace kb = dgq::kv_block_rules;
constexpr int kMaxHeadDim = 256;

struct Plan {
  StoredFormat k_format, v_format;
  int kv_heads, group, head_dim;
  std::int64_t tokens, chunks, k_row_bytes, v_row_bytes;
  float scale;
  bool dgq_f16;
  int k_channels, v_channels;  // range values per token of each role: 1, or head_dim (per channel)
};

// Formats with ranges: each token's lo and scale, [kv_head][token][channels of the role] (its
// segment's, expanded on the host).
struct TokenRanges {
  const float *k_lo, *k_scale, *v_lo, *v_scale;
};

// lo, scale: the token's range row (channels values, 1 or head_dim); unused for block formats.
__device__ void dequantize_row(const Plan& p, StoredFormat f, const std::uint8_t* row, const float* lo,
                               const float* scale, int channels, float* x) {
  if (f == StoredFormat::dgq) {
    for (int d = 0; d < p.head_dim; ++d) {
      const int c = channels == 1 ? 0 : d;
      x[d] = kb::dgq_value(row[d], lo[c], scale[c], p.dgq_f16);
    }
    return;
  }
  if (const int bits = kb::uniform_bits(f); bits != 0) {
    for (int d = 0; d < p.head_dim; ++d) {
      const int c = channels == 1 ? 0 : d;
      x[d] = kb::uniform_value(kb::uniform_code(row, d, bits), lo[c], scale[c], p.dgq_f16);
    }
    return;
  }
  const int bytes = kb::block_bytes(f);
  for (int d = 0; d < p.head_dim; ++d)
    x[d] = kb::block_value(f, row + (d / kb::kBlockValues) * bytes, d % kb::kBlockValues);
}

__device__ float dot(const float* q, const float* k, int head_dim) {
  float acc[ar::kDotAccumulators][ar::kDotLanes] = {};
  for (int d = 0; d < head_dim; ++d) {
    float& a = acc[(d / ar::kDotLanes) % ar::kDotAccumulators][d % ar::kDotLanes];
    a = fmaf(q[d], k[d], a);
  }
  float lanes[ar::kDotLanes];
  for (int j = 0; j < ar::kDotLanes; ++j) lanes[j] = acc[0][j] + acc[1][j];
  return ar::lane_tree_sum8(lanes);
}

// partial index: (kv_head * chunks + chunk) * group + member, as the CPU kernel's.
__global__ void chunk_kernel(Plan p, const std::uint8_t* const* k, const std::uint8_t* const* v, TokenRanges r,
                             const float* q, float* chunk_max, float* chunk_sum, float* chunk_acc) {
  const std::int64_t item = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (item >= p.kv_heads * p.chunks * p.group) return;
  const int member = static_cast<int>(item % p.group);
  const std::int64_t chunk = (item / p.group) % p.chunks;
  const int kv_head = static_cast<int>(item / (p.group * p.chunks));
  const std::int64_t first = chunk * ar::kChunkTokens;
  const std::int64_t tokens = p.tokens - first < ar::kChunkTokens ? p.tokens - first : ar::kChunkTokens;
  const int D = p.head_dim;
  const float* qh = q + (static_cast<std::int64_t>(kv_head) * p.group + member) * D;
  float x[kMaxHeadDim], scores[ar::kChunkTokens];
  const std::int64_t at = static_cast<std::int64_t>(kv_head) * p.tokens + first;  // TokenRanges' token index of token 0
  const auto k_range = [&](const float* base, std::int64_t t) {
    return base ? base + (at + t) * p.k_channels : nullptr;
  };
  const auto v_range = [&](const float* base, std::int64_t t) {
    return base ? base + (at + t) * p.v_channels : nullptr;
  };
  for (std::int64_t t = 0; t < tokens; ++t) {
    dequantize_row(p, p.k_format, k[kv_head] + (first + t) * p.k_row_bytes, k_range(r.k_lo, t), k_range(r.k_scale, t),
                   p.k_channels, x);
    scores[t] = dot(qh, x, D) * p.scale;
  }
  float m = scores[0];
  for (std::int64_t t = 1; t < tokens; ++t) m = m < scores[t] ? scores[t] : m;  // std::max_element's value
  float lanes[ar::kDotLanes] = {};
  for (std::int64_t t = 0; t < tokens; ++t) {
    scores[t] = ar::softmax_exp(scores[t] - m);
    lanes[t % ar::kDotLanes] += scores[t];
  }
  chunk_max[item] = m;
  chunk_sum[item] = ar::lane_tree_sum8(lanes);
  float* acc = chunk_acc + item * D;
  for (int d = 0; d < D; ++d) acc[d] = 0.0f;
  for (std::int64_t t = 0; t < tokens; ++t) {
    dequantize_row(p, p.v_format, v[kv_head] + (first + t) * p.v_row_bytes, v_range(r.v_lo, t), v_range(r.v_scale, t),
                   p.v_channels, x);
    for (int d = 0; d < D; ++d) acc[d] = fmaf(scores[t], x[d], acc[d]);
  }
}

__global__ void merge_kernel(Plan p, const float* chunk_max, const float* chunk_sum, const float* chunk_acc,
                             float* out) {
  const int query_head = static_cast<int>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (query_head >= p.kv_heads * p.group) return;
  const int D = p.head_dim, kv_head = query_head / p.group, member = query_head % p.group;
  const auto partial = [&](std::int64_t chunk) { return (kv_head * p.chunks + chunk) * p.group + member; };
  float* acc = out + static_cast<std::int64_t>(query_head) * D;
  float m = chunk_max[partial(0)], l = chunk_sum[partial(0)];
  for (int d = 0; d < D; ++d) acc[d] = chunk_acc[partial(0) * D + d];
  for (std::int64_t c = 1; c < p.chunks; ++c) {
    const std::int64_t i = partial(c);
    const float m_new = m < chunk_max[i] ? chunk_max[i] : m;
    const float a = ar::rescale_weight(m, m_new), b = ar::rescale_weight(chunk_max[i], m_new);
    l = ar::merge_step(l, a, chunk_sum[i], b);
    for (int d = 0; d < D; ++d) acc[d] = ar::merge_step(acc[d], a, chunk_acc[i * D + d], b);
    m = m_new;
  }
  for (int d = 0; d < D; ++d) acc[d] = acc[d] / l;
}

// A device allocation freed on every path.
struct Device {
  void* ptr = nullptr;
  explicit Device(std::size_t bytes) { check_cuda(cudaMalloc(&ptr, bytes ? bytes : 1), "cudaMalloc"); }
  ~Device() { cudaFree(ptr); }
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
};

void check_input(const DecodeAttentionInput& in) {
  const auto fail = [](const std::string& why) { throw ParameterError("cuda decode_attention: " + why); };
  if (in.kv_heads < 1 || in.group < 1 || in.tokens < 1) fail("kv_heads, group and tokens must be >= 1");
  if (in.head_dim < 32 || in.head_dim > kMaxHeadDim || in.head_dim % 32 != 0)
    fail("head_dim must be a multiple of 32 in [32, 256], got " + std::to_string(in.head_dim));
  if (in.k.size() != static_cast<std::size_t>(in.kv_heads) || in.v.size() != static_cast<std::size_t>(in.kv_heads))
    fail("one K and one V pointer per KV head");
  for (int h = 0; h < in.kv_heads; ++h)
    if (in.k[h] == nullptr || in.v[h] == nullptr) fail("KV head " + std::to_string(h) + " has no data");
  if (in.q == nullptr) fail("no query");
  if ((in.k_rotated || in.v_rotated) && in.head_dim % 64 != 0)
    fail("the Hadamard rotation needs head_dim a multiple of 64, got " + std::to_string(in.head_dim));
  const StoredFormat kf = in.format, vf = in.v_format.value_or(in.format);
  for (StoredFormat f : {kf, vf})
    if (kb::is_codebook(f)) fail("the codebook formats (TurboQuant) are not in the CUDA twin");
  const bool uniform_pair = kb::uniform_bits(kf) != 0 && kb::uniform_bits(vf) != 0;
  if (kf != vf && !uniform_pair) fail("K and V may differ in format only between uniform code widths");
  if (!kb::has_ranges(kf)) return;
  if (in.k_segments.size() != in.k.size() || in.v_segments.size() != in.v.size())
    fail("formats with ranges need the segments of every K and V head");
  for (const auto* heads : {&in.k_segments, &in.v_segments}) {
    for (const DgqSegments& s : *heads) {
      const std::size_t n = s.edges.size() < 2 ? 0 : s.edges.size() - 1;
      const auto per = static_cast<std::size_t>(s.channels);
      if (n == 0 || (s.channels != 1 && s.channels != in.head_dim) || s.lo.size() != n * per ||
          s.scale.size() != n * per || s.edges.front() != 0 ||
          s.edges.back() != static_cast<std::uint32_t>(in.tokens) || s.channels != (*heads)[0].channels)
        fail("a head's segments do not cover its " + std::to_string(in.tokens) + " tokens and " +
             std::to_string(in.head_dim) + " channels (or the heads of a role differ in channels)");
      for (std::size_t i = 0; i < n; ++i)
        if (s.edges[i] >= s.edges[i + 1]) fail("a head's segment edges are not increasing");
    }
  }
}

// Each row of rows x head_dim rotated in blocks of `block` channels as the CPU kernel's
// hadamard_rotate_row does (docs/spec.md, "Hadamard rotation": the butterfly stages, then one
// multiply by the block's scale), on the host from the core's rules.
void hadamard_rotate_rows(float* rows, std::size_t count, int head_dim, int block) {
  const float scale = rules::hadamard_scale(block);
  for (std::size_t r = 0; r < count; ++r) {
    for (int first = 0; first < head_dim; first += block) {
      float* x = rows + r * static_cast<std::size_t>(head_dim) + first;
      for (int h = 1; h < block; h *= 2)
        for (int j = 0; j < block; ++j)
          if ((j & h) == 0) rules::hadamard_butterfly(x[j], x[j + h]);
      for (int j = 0; j < block; ++j) x[j] = x[j] * scale;
    }
  }
}

// Each token's lo and scale rows from its segment, [kv_head][token][channels], for one role.
void expand_token_ranges(const std::vector<DgqSegments>& heads, std::vector<float>& lo, std::vector<float>& scale) {
  for (const DgqSegments& s : heads) {
    const auto per = static_cast<std::size_t>(s.channels);
    for (std::size_t i = 0; i + 1 < s.edges.size(); ++i) {
      for (std::uint32_t t = s.edges[i]; t < s.edges[i + 1]; ++t) {
        lo.insert(lo.end(), s.lo.begin() + static_cast<std::ptrdiff_t>(i * per),
                  s.lo.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
        scale.insert(scale.end(), s.scale.begin() + static_cast<std::ptrdiff_t>(i * per),
                     s.scale.begin() + static_cast<std::ptrdiff_t>((i + 1) * per));
      }
    }
  }
}

}  // namespace

void decode_attention(const DecodeAttentionInput& in, float* out) {
  check_input(in);
  const StoredFormat vf = in.v_format.value_or(in.format);
  const bool ranged = kb::has_ranges(in.format);
  Plan p{in.format,
         vf,
         in.kv_heads,
         in.group,
         in.head_dim,
         in.tokens,
         (in.tokens + ar::kChunkTokens - 1) / ar::kChunkTokens,
         static_cast<std::int64_t>(in.head_dim / 32) * kb::block_bytes(in.format),
         static_cast<std::int64_t>(in.head_dim / 32) * kb::block_bytes(vf),
         in.scale,
         in.dgq_f16,
         ranged ? in.k_segments[0].channels : 1,
         ranged ? in.v_segments[0].channels : 1};
  const std::size_t k_head_bytes = static_cast<std::size_t>(p.tokens * p.k_row_bytes);
  const std::size_t v_head_bytes = static_cast<std::size_t>(p.tokens * p.v_row_bytes);
  const std::size_t heads = static_cast<std::size_t>(p.kv_heads);
  const std::size_t partials = heads * static_cast<std::size_t>(p.chunks * p.group);
  const std::size_t q_floats = heads * p.group * p.head_dim;
  Device cache(heads * (k_head_bytes + v_head_bytes)), pointers(2 * heads * sizeof(void*)), q(q_floats * sizeof(float));
  Device chunk_max(partials * sizeof(float)), chunk_sum(partials * sizeof(float)),
      chunk_acc(partials * p.head_dim * sizeof(float)), result(q_floats * sizeof(float));
  std::vector<const std::uint8_t*> device_rows(2 * heads);
  for (std::size_t h = 0; h < heads; ++h) {
    std::uint8_t* k_at = cache.as<std::uint8_t>() + h * k_head_bytes;
    std::uint8_t* v_at = cache.as<std::uint8_t>() + heads * k_head_bytes + h * v_head_bytes;
    check_cuda(cudaMemcpy(k_at, in.k[h], k_head_bytes, cudaMemcpyHostToDevice), "cudaMemcpy K");
    check_cuda(cudaMemcpy(v_at, in.v[h], v_head_bytes, cudaMemcpyHostToDevice), "cudaMemcpy V");
    device_rows[h] = k_at;
    device_rows[heads + h] = v_at;
  }
  check_cuda(cudaMemcpy(pointers.ptr, device_rows.data(), device_rows.size() * sizeof(void*), cudaMemcpyHostToDevice),
             "cudaMemcpy row pointers");
  std::vector<float> query(in.q, in.q + q_floats);
  if (in.k_rotated)
    hadamard_rotate_rows(query.data(), heads * p.group, p.head_dim, rules::hadamard_block(p.head_dim, true));
  check_cuda(cudaMemcpy(q.ptr, query.data(), q_floats * sizeof(float), cudaMemcpyHostToDevice), "cudaMemcpy q");
  // Formats with ranges: four [kv_head][token][channels] arrays (K lo, K scale, V lo, V scale).
  std::vector<float> ranges;
  if (ranged) {
    std::vector<float> k_lo, k_scale, v_lo, v_scale;
    expand_token_ranges(in.k_segments, k_lo, k_scale);
    expand_token_ranges(in.v_segments, v_lo, v_scale);
    for (const auto* part : {&k_lo, &k_scale, &v_lo, &v_scale}) ranges.insert(ranges.end(), part->begin(), part->end());
  }
  Device token_ranges(ranges.size() * sizeof(float));
  if (!ranges.empty())
    check_cuda(cudaMemcpy(token_ranges.ptr, ranges.data(), ranges.size() * sizeof(float), cudaMemcpyHostToDevice),
               "cudaMemcpy token ranges");
  const std::size_t k_part = heads * static_cast<std::size_t>(p.tokens) * static_cast<std::size_t>(p.k_channels);
  const std::size_t v_part = heads * static_cast<std::size_t>(p.tokens) * static_cast<std::size_t>(p.v_channels);
  const float* ranges_at = token_ranges.as<float>();
  const TokenRanges r = ranges.empty() ? TokenRanges{nullptr, nullptr, nullptr, nullptr}
                                       : TokenRanges{ranges_at, ranges_at + k_part, ranges_at + 2 * k_part,
                                                     ranges_at + 2 * k_part + v_part};
  constexpr int kThreads = 64;
  const auto* rows = pointers.as<const std::uint8_t* const>();
  chunk_kernel<<<static_cast<unsigned>((partials + kThreads - 1) / kThreads), kThreads>>>(
      p, rows, rows + heads, r, q.as<float>(), chunk_max.as<float>(), chunk_sum.as<float>(), chunk_acc.as<float>());
  check_launch("decode attention chunk_kernel");
  const int query_heads = p.kv_heads * p.group;
  merge_kernel<<<static_cast<unsigned>((query_heads + kThreads - 1) / kThreads), kThreads>>>(
      p, chunk_max.as<float>(), chunk_sum.as<float>(), chunk_acc.as<float>(), result.as<float>());
  check_launch("decode attention merge_kernel");
  check_cuda(cudaMemcpy(out, result.ptr, q_floats * sizeof(float), cudaMemcpyDeviceToHost), "cudaMemcpy out");
  if (in.v_rotated) hadamard_rotate_rows(out, heads * p.group, p.head_dim, rules::hadamard_block(p.head_dim, false));
}

}  // namespace dgq::cuda
