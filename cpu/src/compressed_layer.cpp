// CompressedLayer: the heads of a layer read by read_stored_head (stored_head_readers.cpp), then
// checked to agree with each other before the kernel plans a step.
#include "dgq/cpu/compressed_layer.hpp"

#include <memory>
#include <stdexcept>
#include <string>
#include <utility>

namespace dgq::cpu {
namespace {

[[noreturn]] void refuse(const std::string& what) { throw std::invalid_argument("CompressedLayer: " + what); }

// Heads of one role: read, and checked against head 0 (scheme, shape, dtype, what was read).
std::vector<StoredHead> read_role(std::span<const Compressed* const> heads, const char* role) {
  if (heads.empty()) refuse(std::string("no ") + role + " heads");
  std::vector<StoredHead> read;
  for (std::size_t i = 0; i < heads.size(); ++i) {
    if (heads[i] == nullptr) refuse(std::string(role) + " head " + std::to_string(i) + " is null");
    const Compressed& c = *heads[i];
    const Compressed& first = *heads[0];
    if (c.scheme != first.scheme || c.tokens != first.tokens || c.channels != first.channels || c.dtype != first.dtype)
      refuse(std::string(role) + " head " + std::to_string(i) + " ('" + c.scheme + "', " + std::to_string(c.tokens) +
             " x " + std::to_string(c.channels) + ") differs from head 0 ('" + first.scheme + "', " +
             std::to_string(first.tokens) + " x " + std::to_string(first.channels) + ") in scheme, shape or dtype");
    read.push_back(read_stored_head(c));
    if (read.back().raw_tokens != read.front().raw_tokens)
      refuse(std::string(role) + " head " + std::to_string(i) + " keeps another number of raw tokens than head 0");
  }
  return read;
}

std::vector<const Compressed*> pointers(std::span<const Compressed> heads) {
  std::vector<const Compressed*> out;
  for (const Compressed& c : heads) out.push_back(&c);
  return out;
}

}  // namespace

CompressedLayer::CompressedLayer(std::span<const Compressed> k_heads, std::span<const Compressed> v_heads)
    : CompressedLayer(std::span<const Compressed* const>(pointers(k_heads)),
                      std::span<const Compressed* const>(pointers(v_heads))) {}

CompressedLayer::CompressedLayer(std::span<const Compressed* const> k_heads,
                                 std::span<const Compressed* const> v_heads) {
  std::vector<StoredHead> k = read_role(k_heads, "K"), v = read_role(v_heads, "V");
  if (k.size() != v.size()) refuse(std::to_string(k.size()) + " K heads and " + std::to_string(v.size()) + " V heads");
  const Compressed& k0 = *k_heads[0];
  const Compressed& v0 = *v_heads[0];
  // One dtype: the raw rows of both roles are read as it (StoredKv::raw_f16).
  if (k0.tokens != v0.tokens || k0.channels != v0.channels || k0.dtype != v0.dtype)
    refuse("K holds " + std::to_string(k0.tokens) + " x " + std::to_string(k0.channels) + " " +
           std::string(dtype_name(k0.dtype)) + ", V " + std::to_string(v0.tokens) + " x " +
           std::to_string(v0.channels) + " " + std::string(dtype_name(v0.dtype)));
  if (k0.tokens < 1) refuse("the heads hold no token");
  if (k0.role != TensorRole::key || v0.role != TensorRole::value)
    refuse("K heads must be compressed as keys, V heads as values");
  head_dim_ = static_cast<int>(k0.channels);
  tokens_ = k0.tokens;
  cache_.format = k[0].format;
  if (v[0].format != k[0].format) cache_.v_format = v[0].format;
  cache_.k_rotated = k[0].rotated;
  cache_.v_rotated = v[0].rotated;
  cache_.query_rotation = k[0].rotation;
  cache_.output_rotation = v[0].rotation;
  cache_.k_row_stride = k[0].row_stride;
  cache_.v_row_stride = v[0].row_stride;
  cache_.k_raw_tokens = k[0].raw_tokens;
  cache_.v_raw_tokens = v[0].raw_tokens;
  cache_.raw_f16 = k0.dtype == DType::f16;
  for (auto* role : {&k, &v}) {
    const bool key = role == &k;
    for (StoredHead& h : *role) {
      (key ? cache_.k : cache_.v).push_back(h.codes);
      if (h.raw_tokens > 0) (key ? cache_.k_raw : cache_.v_raw).push_back(h.raw);
      if (kv_format_has_ranges(h.format)) {
        ranges_.push_back(std::make_unique<SpanRanges>(std::move(h.ranges)));
        (key ? cache_.k_ranges : cache_.v_ranges).push_back(ranges_.back().get());
      }
    }
  }
  DecodeAttention plan(cache_, shape(1), 1.0f);  // the kernel's checks now (K against V), not at the first step
}

DecodeAttentionShape CompressedLayer::shape(int group) const {
  return {static_cast<int>(cache_.k.size()), group, head_dim_, tokens_};
}

void CompressedLayer::attend(const float* q, int group, float scale, float* out, int threads) const {
  decode_attention(cache_, shape(group), q, scale, out, threads);
}

}  // namespace dgq::cpu
