// The decode side-by-side run's caches stored (decode_stored_cache.hpp): ggml's types by dgq's
// schemes of the same name (ggml's bytes), the types ggml lacks by their spec, each head read as
// dgq's kernel reads it.
#include "decode_stored_cache.hpp"

#include <omp.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "dgq/cpu/decode_attention.hpp"
#include "dgq/cpu/stored_head.hpp"
#include "dgq/scheme.hpp"

namespace dgq::ggml_bench {
namespace {

// Every head of one role through t.spec.
StoredRole store_scheme_role(const CacheType& t, const Tensor3& x, TensorRole role) {
  const auto scheme = make_scheme(t.spec);
  const auto heads = static_cast<int>(x.heads);
  std::vector<Compressed> stored(static_cast<std::size_t>(heads));
  StoredRole s;
  s.ranges.resize(stored.size());
  s.check_tokens = std::min<std::int64_t>(x.tokens, kCheckTokens);
  const auto check_values = static_cast<std::size_t>(s.check_tokens * x.channels);
  s.decoded.resize(static_cast<std::size_t>(x.heads) * check_values);
  std::vector<cpu::StoredHead> parsed(stored.size());  // where the kernel finds each head's codes and ranges
#pragma omp parallel for schedule(dynamic, 1)
  for (int h = 0; h < heads; ++h) {
    stored[static_cast<std::size_t>(h)] = scheme->compress(x.head(h), role);
    std::vector<std::uint16_t> half(x.head_bytes() / 2);
    scheme->decompress(stored[static_cast<std::size_t>(h)], MutTensor{half.data(), DType::f16, x.tokens, x.channels});
    const std::vector<float> values = to_float(ConstTensor{half.data(), DType::f16, x.tokens, x.channels});
    std::memcpy(s.decoded.data() + static_cast<std::size_t>(h) * check_values, values.data(),
                check_values * sizeof(float));
  }
  for (int h = 0; h < heads; ++h)
    parsed[static_cast<std::size_t>(h)] = cpu::read_stored_head(stored[static_cast<std::size_t>(h)]);
  s.format = parsed[0].format;
  s.rotated = parsed[0].rotated;
  s.rotation = parsed[0].rotation;  // one per role, shared by the heads (docs/spec.md, TurboQuant step 2)
  s.slotted = parsed[0].row_stride != 0;
  s.row_bytes =
      s.slotted ? static_cast<std::size_t>(parsed[0].row_stride)
                : static_cast<std::size_t>(x.channels / 32) * static_cast<std::size_t>(cpu::kv_block_bytes(s.format));
  const std::size_t head_bytes = s.row_bytes * static_cast<std::size_t>(x.tokens);
  for (const Compressed& c : stored)
    s.extra_head_bytes = std::max<std::size_t>(s.extra_head_bytes, c.total_bytes() - head_bytes);
  s.bytes.resize(head_bytes * stored.size() + s.extra_head_bytes);
  for (int h = 0; h < heads; ++h) {
    std::memcpy(s.bytes.data() + static_cast<std::size_t>(h) * head_bytes, parsed[static_cast<std::size_t>(h)].codes,
                head_bytes);
    s.ranges[static_cast<std::size_t>(h)] = std::move(parsed[static_cast<std::size_t>(h)].ranges);
  }
  return s;
}

}  // namespace

cpu::SpanRanges clipped(const cpu::SpanRanges& r, std::int64_t tokens) {
  cpu::SpanRanges out = r;
  out.edges.clear();
  out.lo.clear();
  out.scale.clear();
  const auto channels = static_cast<std::size_t>(r.channels);
  for (std::size_t i = 0; i + 1 < r.edges.size() && r.edges[i] < tokens; ++i) {
    out.edges.push_back(r.edges[i]);
    out.lo.insert(out.lo.end(), r.lo.begin() + static_cast<std::ptrdiff_t>(i * channels),
                  r.lo.begin() + static_cast<std::ptrdiff_t>((i + 1) * channels));
    out.scale.insert(out.scale.end(), r.scale.begin() + static_cast<std::ptrdiff_t>(i * channels),
                     r.scale.begin() + static_cast<std::ptrdiff_t>((i + 1) * channels));
  }
  out.edges.push_back(static_cast<std::uint32_t>(tokens));
  return out;
}

namespace {

StoredRole store_ggml_role(const CacheType& t, const Tensor3& x, int head_dim) {
  StoredRole s;
  s.format = t.format;
  s.row_bytes = ggml_row_size(t.type, head_dim);
  if (t.type == GGML_TYPE_F16) {
    s.bytes.resize(x.storage.size());
    std::memcpy(s.bytes.data(), x.storage.data(), s.bytes.size());
    return s;
  }
  const auto scheme = make_scheme(t.name);
  const auto heads = static_cast<int>(x.heads);
  const std::size_t head_bytes = s.row_bytes * static_cast<std::size_t>(x.tokens);
  s.bytes.resize(head_bytes * static_cast<std::size_t>(heads));
#pragma omp parallel for schedule(dynamic, 1)
  for (int h = 0; h < heads; ++h) {
    const Compressed c = scheme->compress(x.head(h), TensorRole::key);
    const Part* blocks = c.find("blocks");
    if (blocks == nullptr || blocks->bytes.size() != head_bytes)
      throw std::runtime_error(std::string("unexpected parts of ") + t.name);
    std::memcpy(s.bytes.data() + static_cast<std::size_t>(h) * head_bytes, blocks->bytes.data(), head_bytes);
  }
  return s;
}

}  // namespace

// K and V hold the same values (see the top of this file), each in its own buffer. DGQ v1 (format
// dgq: its codes do not depend on the role) and the ggml types store V as K (the same bytes);
// dgq2 and KIVI store each role as that role (their layouts differ: per-channel key ranges,
// per-token value ranges, other widths).
StoredLayer store_layer(const CacheType& t, const Tensor3& kv, int head_dim) {
  StoredLayer s;
  s.max_tokens = kv.tokens;
  if (t.ggml()) {
    s.k = store_ggml_role(t, kv, head_dim);
    s.v = s.k;
  } else if (t.format == StoredFormat::dgq) {
    s.k = store_scheme_role(t, kv, TensorRole::key);
    s.v = s.k;
    s.v.decoded.clear();  // the same values as K's: the cross-check reads k.decoded for both
  } else {
    s.k = store_scheme_role(t, kv, TensorRole::key);
    s.v = store_scheme_role(t, kv, TensorRole::value);
  }
  return s;
}

}  // namespace dgq::ggml_bench
