#pragma once
// The decode side-by-side run's caches (decode_side_by_side.cpp times them): a cache type
// (ggml's, stored by dgq's scheme of the same name, or one ggml lacks, stored by its spec) and
// one layer of it stored once at the largest length, with what dgq's kernel reads of every head
// (cpu::read_stored_head) and, for the types ggml lacks, the decompressed values of a prefix
// for the cross-check.
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "dgq/cpu/span_ranges.hpp"
#include "dgq/stored_format.hpp"
#include "dgq/tensor.hpp"
#include "ggml.h"

namespace dgq::ggml_bench {

// A cache type of the run. ggml's types are stored by dgq's schemes of the same name (ggml's
// bytes); the types ggml lacks by `spec`, with `peer` the ggml type compared as "the same"
// (the nearest in bits of those timed here).
struct CacheType {
  const char* name;
  ggml_type type;  // ggml's type; GGML_TYPE_COUNT for the types ggml lacks
  bool dgq;        // dgq's decode attention reads this type
  StoredFormat format = StoredFormat::q8_0;
  const char* spec = nullptr;  // types ggml lacks: the scheme that stores K and V
  const char* peer = nullptr;  // types ggml lacks: the ggml type it is compared with
  bool ggml() const { return spec == nullptr; }
};

// One role (K or V) of one type: [kv_heads][max_tokens][row_bytes] and, for the types ggml
// lacks, each head's ranges, the stored bytes beside the codes (ranges, markers) and
// Scheme::decompress's values for the cross-check. `bytes` ends with extra_head_bytes of slack,
// so that the memcpy reference can copy a head's codes and its extra bytes in one run.
struct StoredRole {
  std::vector<std::uint8_t> bytes;
  std::size_t row_bytes = 0;  // a token's codes to the next's: packed, or vLLM's slot
  bool slotted = false;       // row_bytes is a slot (codes and per-token fields), not packed codes
  StoredFormat format = StoredFormat::q8_0;
  bool rotated = false;
  std::function<void(float*)> rotation;  // TurboQuant's Pi (forward for K, inverse for V)
  std::vector<cpu::SpanRanges> ranges;
  std::size_t extra_head_bytes = 0;  // at max_tokens
  // The first check_tokens tokens of every head, decompressed ([heads][check_tokens][D] fp32).
  std::vector<float> decoded;
  std::int64_t check_tokens = 0;
};

// The cross-check of the types ggml lacks runs at L <= this many tokens only: their decompressed
// fp32 copy of every length took 21 of the 23 GB of the machine at head_dim 256 (a layout or
// head-mapping error shows at any length).
constexpr std::int64_t kCheckTokens = 16384;

struct StoredLayer {
  StoredRole k, v;
  std::int64_t max_tokens = 0;
  const std::uint8_t* head(const StoredRole& role, int h) const {
    return role.bytes.data() + static_cast<std::size_t>(h) * static_cast<std::size_t>(max_tokens) * role.row_bytes;
  }
};

// Head h's ranges clipped to the first `tokens` tokens.
cpu::SpanRanges clipped(const cpu::SpanRanges& r, std::int64_t tokens);
// K and V of one layer of type t (kv: the layer's values at the largest length).
StoredLayer store_layer(const CacheType& t, const Tensor3& kv, int head_dim);

}  // namespace dgq::ggml_bench
