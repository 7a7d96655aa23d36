// Decode attention's plan, its merge of the chunks in token order, the rotation of the query and
// of the output, and a std::thread driver. The chunk itself: decode_attention_chunk.cpp.
#include "dgq/cpu/decode_attention.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <cmath>
#include <stdexcept>
#include <string>
#include <thread>
#include <tuple>
#include <utility>

#include "decode_attention_chunk.hpp"
#include "dgq/attention_rules.hpp"
#include "dgq/cpu/kernels.hpp"
#include "dgq/element_rules.hpp"
#include "dgq/kv_block_rules.hpp"
#include "dgq/rotation.hpp"

namespace dgq::cpu {
namespace ar = dgq::attention_rules;

int kv_block_bytes(StoredFormat f) { return kv_block_rules::block_bytes(static_cast<StoredFormat>(f)); }

const char* kv_block_format_name(StoredFormat f) {
  switch (f) {
    case StoredFormat::q8_0: return "q8_0";
    case StoredFormat::q4_0: return "q4_0";
    case StoredFormat::iq4_nl: return "iq4_nl";
    case StoredFormat::dgq: return "dgq";
    case StoredFormat::uniform2: return "uniform2";
    case StoredFormat::uniform3: return "uniform3";
    case StoredFormat::uniform4: return "uniform4";
    case StoredFormat::uniform8: return "uniform8";
    case StoredFormat::codebook2: return "codebook2";
    case StoredFormat::codebook3: return "codebook3";
    case StoredFormat::codebook4: return "codebook4";
  }
  return "?";
}

bool kv_format_has_ranges(StoredFormat f) { return kv_block_rules::has_ranges(static_cast<StoredFormat>(f)); }

bool decode_attention_vectorized() { return attention::vectorized_path_compiled(); }

namespace {

void check_plan(const StoredKv& cache, const DecodeAttentionShape& s) {
  const auto fail = [](const std::string& what) { throw std::invalid_argument("decode_attention: " + what); };
  if (s.kv_heads < 1 || s.group < 1 || s.tokens < 1) fail("need kv_heads, group and tokens >= 1");
  if (s.head_dim < 32 || s.head_dim % 32 != 0)
    fail("head_dim must be a positive multiple of 32 (ggml's blocks), got " + std::to_string(s.head_dim));
  if ((cache.k_rotated || cache.v_rotated) && s.head_dim % 64 != 0)
    fail("the Hadamard rotation needs head_dim a multiple of 64, got " + std::to_string(s.head_dim));
  if (cache.k.size() != static_cast<std::size_t>(s.kv_heads) || cache.v.size() != static_cast<std::size_t>(s.kv_heads))
    fail("the cache has " + std::to_string(cache.k.size()) + " K and " + std::to_string(cache.v.size()) +
         " V heads, the shape " + std::to_string(s.kv_heads));
  for (const auto& [raw, raw_tokens] :
       {std::pair{&cache.k_raw, cache.k_raw_tokens}, std::pair{&cache.v_raw, cache.v_raw_tokens}}) {
    if (raw_tokens < 0 || raw_tokens > s.tokens)
      fail("raw tokens must be in [0, " + std::to_string(s.tokens) + "], got " + std::to_string(raw_tokens));
    if (raw_tokens > 0 && (raw->size() != static_cast<std::size_t>(s.kv_heads) ||
                           std::find(raw->begin(), raw->end(), nullptr) != raw->end()))
      fail("a cache with raw tokens needs the raw rows of every K and V head");
  }
  if ((cache.k_raw_tokens > 0 || cache.v_raw_tokens > 0) && (cache.query_rotation || cache.output_rotation))
    fail("raw rows beside a rotation other than the Hadamard blocks are not read");
  for (int h = 0; h < s.kv_heads; ++h)
    if ((cache.k[h] == nullptr && cache.k_raw_tokens < s.tokens) ||
        (cache.v[h] == nullptr && cache.v_raw_tokens < s.tokens))
      fail("KV head " + std::to_string(h) + " has no data");
  const StoredFormat kf = cache.format, vf = cache.value_format();
  // uniform_bits is not 0 for the uniform and the codebook formats: codes with a range per span.
  const auto coded = [](StoredFormat f) { return kv_block_rules::uniform_bits(static_cast<StoredFormat>(f)) != 0; };
  if (kf != vf && !(coded(kf) && coded(vf)))
    fail(std::string("K and V may differ in format only among the uniform and codebook formats, got ") +
         kv_block_format_name(kf) + " and " + kv_block_format_name(vf));
  for (const auto& [stride, f] : {std::pair{cache.k_row_stride, kf}, std::pair{cache.v_row_stride, vf}}) {
    const std::int64_t packed = static_cast<std::int64_t>(s.head_dim / 32) * kv_block_bytes(f);
    if (stride != 0 && stride < packed)
      fail("a row stride of " + std::to_string(stride) + " bytes is shorter than a row of " + kv_block_format_name(f) +
           " codes (" + std::to_string(packed) + ")");
  }
  if ((cache.query_rotation || cache.output_rotation) && (cache.k_rotated || cache.v_rotated))
    fail("a cache has the Hadamard rotation or another one, not both");
  if (!kv_format_has_ranges(kf)) return;
  if (cache.k_ranges.size() != cache.k.size() || cache.v_ranges.size() != cache.v.size())
    fail(std::string("format ") + kv_block_format_name(kf) + " needs the segment ranges of every K and V head");
  for (const auto& [ranges, raw_tokens, f] :
       {std::tuple{&cache.k_ranges, cache.k_raw_tokens, kf}, std::tuple{&cache.v_ranges, cache.v_raw_tokens, vf}}) {
    const std::int64_t codes = s.tokens - raw_tokens;  // the tokens the ranges cover
    const auto rf = static_cast<StoredFormat>(f);
    const std::size_t levels = kv_block_rules::is_codebook(rf) ? std::size_t{1} << kv_block_rules::uniform_bits(rf) : 0;
    for (const SpanRanges* r : *ranges) {
      if (r == nullptr || r->edges.size() < (codes > 0 ? 2u : 1u) || r->edges.front() != 0 ||
          r->edges.back() != codes || (r->channels != 1 && r->channels != s.head_dim) ||
          r->lo.size() != (r->edges.size() - 1) * static_cast<std::size_t>(r->channels) ||
          r->scale.size() != r->lo.size() || r->f16 != (*ranges)[0]->f16 || r->codebook.size() != levels)
        fail(std::string("a ") + kv_block_format_name(kf) + " head's segment ranges do not cover its " +
             std::to_string(codes) + " tokens and " + std::to_string(s.head_dim) +
             " channels (or its heads differ in dtype, or a codebook is not 2^bits levels)");
    }
  }
}

// Where the lo and scale of tokens first .. first+count-1 of a dgq head start: their segment's
// range row (one value, or one per channel).
void token_ranges(const SpanRanges& r, std::int64_t first, std::int64_t count, std::vector<const float*>& lo,
                  std::vector<const float*>& scale) {
  lo.resize(static_cast<std::size_t>(count));
  scale.resize(static_cast<std::size_t>(count));
  if (count == 0) return;  // the chunk's rows are all raw
  // The segment of token `first` by binary search (per-token ranges have L segments), then on.
  std::size_t segment = static_cast<std::size_t>(
      std::upper_bound(r.edges.begin(), r.edges.end(), static_cast<std::uint32_t>(first)) - r.edges.begin() - 1);
  for (std::int64_t t = 0; t < count; ++t) {
    while (first + t >= static_cast<std::int64_t>(r.edges[segment + 1])) ++segment;
    lo[static_cast<std::size_t>(t)] = r.lo.data() + segment * static_cast<std::size_t>(r.channels);
    scale[static_cast<std::size_t>(t)] = r.scale.data() + segment * static_cast<std::size_t>(r.channels);
  }
}

// A codebook's levels padded with zeros to 16, so that the vector path loads two whole
// registers (a 2-bit codebook has 4 levels).
const float* padded_levels(const std::vector<float>& levels, std::array<float, 16>& out) {
  out.fill(0.0f);
  std::copy_n(levels.begin(), std::min<std::size_t>(levels.size(), out.size()), out.begin());
  return out.data();
}

}  // namespace

DecodeAttention::DecodeAttention(const StoredKv& cache, const DecodeAttentionShape& shape, float scale, DecodePath path)
    : cache_(cache), shape_(shape), scale_(scale), path_(path) {
  check_plan(cache, shape);
  chunks_ = (shape.tokens + ar::kChunkTokens - 1) / ar::kChunkTokens;
  k_row_bytes_ = cache.k_row_stride != 0
                     ? cache.k_row_stride
                     : static_cast<std::int64_t>(shape.head_dim / 32) * kv_block_bytes(cache.format);
  v_row_bytes_ = cache.v_row_stride != 0
                     ? cache.v_row_stride
                     : static_cast<std::int64_t>(shape.head_dim / 32) * kv_block_bytes(cache.value_format());
  const auto partials = static_cast<std::size_t>(shape.kv_heads * chunks_ * shape.group);
  q_.resize(static_cast<std::size_t>(shape.query_heads()) * shape.head_dim);
  chunk_max_.resize(partials);
  chunk_sum_.resize(partials);
  chunk_acc_.resize(partials * shape.head_dim);
  out_.resize(q_.size());
}

void DecodeAttention::set_query(const float* q) {
  std::copy(q, q + q_.size(), q_.begin());
  if (cache_.query_rotation)
    for (int h = 0; h < shape_.query_heads(); ++h)
      cache_.query_rotation(q_.data() + static_cast<std::size_t>(h) * shape_.head_dim);
  if (!cache_.k_rotated) return;
  const int block = rules::hadamard_block(shape_.head_dim, true);
  for (int h = 0; h < shape_.query_heads(); ++h)
    hadamard_rotate_row(fast_kernels(), q_.data() + static_cast<std::size_t>(h) * shape_.head_dim, shape_.head_dim,
                        block);
}

void DecodeAttention::run_chunk(std::int64_t item) {
  assert(item >= 0 && item < chunk_items());
  const int kv_head = static_cast<int>(item / chunks_);
  const std::int64_t chunk = item % chunks_, first = chunk * ar::kChunkTokens;
  const int D = shape_.head_dim, g = shape_.group;
  thread_local std::vector<float> scores;
  thread_local std::vector<const float*> k_lo, k_scale, v_lo, v_scale;
  scores.resize(static_cast<std::size_t>(g) * ar::kChunkTokens);
  const std::int64_t k_codes = shape_.tokens - cache_.k_raw_tokens, v_codes = shape_.tokens - cache_.v_raw_tokens;
  attention::ChunkInput in{cache_.format,
                           cache_.value_format(),
                           first < k_codes ? cache_.k[kv_head] + first * k_row_bytes_ : nullptr,
                           first < v_codes ? cache_.v[kv_head] + first * v_row_bytes_ : nullptr,
                           std::min(ar::kChunkTokens, shape_.tokens - first),
                           D,
                           g,
                           q_.data() + static_cast<std::size_t>(kv_head) * g * D,
                           scale_};
  // Raw rows: from the chunk's token k_codes - first on (0 when the chunk starts in them).
  const std::int64_t raw_row_bytes = static_cast<std::int64_t>(D) * (cache_.raw_f16 ? 2 : 4);
  in.raw_f16 = cache_.raw_f16;
  in.k_row_bytes = k_row_bytes_;
  in.v_row_bytes = v_row_bytes_;
  if (k_codes < first + in.tokens) {
    in.k_raw_from = std::max<std::int64_t>(k_codes - first, 0);
    in.k_raw = cache_.k_raw[kv_head] + (first + in.k_raw_from - k_codes) * raw_row_bytes;
  }
  if (v_codes < first + in.tokens) {
    in.v_raw_from = std::max<std::int64_t>(v_codes - first, 0);
    in.v_raw = cache_.v_raw[kv_head] + (first + in.v_raw_from - v_codes) * raw_row_bytes;
  }
  if (kv_format_has_ranges(cache_.format)) {
    token_ranges(*cache_.k_ranges[kv_head], first, in.codes_end(false), k_lo, k_scale);
    token_ranges(*cache_.v_ranges[kv_head], first, in.codes_end(true), v_lo, v_scale);
    in.k_lo = k_lo.data(), in.k_scale = k_scale.data(), in.v_lo = v_lo.data(), in.v_scale = v_scale.data();
    in.k_f16 = cache_.k_ranges[kv_head]->f16;
    in.v_f16 = cache_.v_ranges[kv_head]->f16;
    in.k_range_channels = cache_.k_ranges[kv_head]->channels;
    in.v_range_channels = cache_.v_ranges[kv_head]->channels;
    thread_local std::array<float, 16> k_levels, v_levels;
    in.k_codebook = padded_levels(cache_.k_ranges[kv_head]->codebook, k_levels);
    in.v_codebook = padded_levels(cache_.v_ranges[kv_head]->codebook, v_levels);
  }
  const std::size_t at = static_cast<std::size_t>(item) * g;
  attention::attend_chunk(in, {chunk_max_.data() + at, chunk_sum_.data() + at, chunk_acc_.data() + at * D},
                          scores.data(), path_ == DecodePath::scalar);
}

// Chunks 0, 1, ..., in this order whatever ran them: the running (m, l, acc) and each chunk's
// are brought to the common maximum by ar::rescale_weight and added by ar::merge_step.
void DecodeAttention::merge_head(int query_head) {
  const int D = shape_.head_dim, g = shape_.group;
  const int kv_head = query_head / g, member = query_head % g;
  const auto partial = [&](std::int64_t chunk) {
    return static_cast<std::size_t>((kv_head * chunks_ + chunk) * g + member);
  };
  float* acc = out_.data() + static_cast<std::size_t>(query_head) * D;
  float m = chunk_max_[partial(0)], l = chunk_sum_[partial(0)];
  std::copy_n(chunk_acc_.data() + partial(0) * D, D, acc);
  for (std::int64_t c = 1; c < chunks_; ++c) {
    const std::size_t i = partial(c);
    const float m_new = std::max(m, chunk_max_[i]);
    const float a = ar::rescale_weight(m, m_new), b = ar::rescale_weight(chunk_max_[i], m_new);
    l = ar::merge_step(l, a, chunk_sum_[i], b);
    const float* chunk_acc = chunk_acc_.data() + i * D;
    for (int d = 0; d < D; ++d) acc[d] = ar::merge_step(acc[d], a, chunk_acc[d], b);
    m = m_new;
  }
  for (int d = 0; d < D; ++d) acc[d] = acc[d] / l;
  if (cache_.v_rotated) hadamard_rotate_row(fast_kernels(), acc, D, rules::hadamard_block(D, false));
  if (cache_.output_rotation) cache_.output_rotation(acc);
}

void decode_attention(const StoredKv& cache, const DecodeAttentionShape& shape, const float* q, float scale, float* out,
                      int threads, DecodePath path) {
  if (threads < 1) throw std::invalid_argument("decode_attention: threads must be >= 1");
  DecodeAttention step(cache, shape, scale, path);
  step.set_query(q);
  // Items dealt round-robin: which thread runs an item changes nothing in its bits.
  const auto run_all = [threads](std::int64_t items, const auto& work) {
    if (threads == 1) {
      for (std::int64_t i = 0; i < items; ++i) work(i);
      return;
    }
    std::vector<std::thread> pool;
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&work, t, threads, items] {
        for (std::int64_t i = t; i < items; i += threads) work(i);
      });
    for (auto& th : pool) th.join();
  };
  run_all(step.chunk_items(), [&step](std::int64_t i) { step.run_chunk(i); });
  run_all(shape.query_heads(), [&step](std::int64_t h) { step.merge_head(static_cast<int>(h)); });
  std::copy_n(step.output(), static_cast<std::size_t>(shape.query_heads()) * shape.head_dim, out);
}

}  // namespace dgq::cpu
