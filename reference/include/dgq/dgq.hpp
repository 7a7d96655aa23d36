#pragma once
// DGQ v1, the CPU reference. docs/spec.md defines every byte these functions produce;
// rule numbers below refer to it.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq {

enum class Granularity : std::uint8_t { segment, segment_channel };
enum class Markers : std::uint8_t { table, bitmap, inband };

std::string_view granularity_name(Granularity g);  // "segment", "segment-channel"
std::string_view markers_name(Markers m);          // "table", "bitmap", "inband"
Granularity parse_granularity(std::string_view s);  // throws ParameterError
Markers parse_markers(std::string_view s);          // throws ParameterError

struct DgqParams {
  int win = 16;                // tokens per block, [1, 65536]
  float group_ratio = 0.75f;   // (0, 1]
  float min_var = 0.05f;       // >= 0, finite
  int max_groups = 5;          // [1, 8]
  Granularity granularity = Granularity::segment;
  Markers markers = Markers::table;

  void validate() const;  // throws ParameterError naming the parameter and its range
  std::string to_string() const;  // "win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table"
  bool operator==(const DgqParams&) const = default;
};

// What DGQ stores for one [tokens][channels] tensor. Parts that the marker mode does not
// store are empty. ranges: lo/hi have segments*C entries, C = 1 (segment) or channels
// (segment-channel), index s*C + d.
struct DgqEncoded {
  std::int64_t tokens = 0;
  std::int64_t channels = 0;
  DType dtype = DType::f16;  // input dtype; decode rounds to it
  DgqParams params;
  int segments = 0;                   // number of segments (0 iff tokens == 0)
  std::vector<std::uint32_t> boundaries;  // interior edges, increasing (table mode; empty otherwise)
  std::vector<std::uint8_t> bitmap;       // ceil(tokens/8) bytes, bit t%8 of byte t/8 = segment(t) mod 2 (bitmap mode)
  std::vector<float> lo, hi;              // ranges
  std::vector<std::int8_t> codes;         // tokens*channels, row-major; in-band markers applied in inband mode

  struct Bytes {
    std::uint64_t codes = 0, ranges = 0, markers = 0;
    std::uint64_t total() const { return codes + ranges + markers; }
  };
  Bytes stored_bytes() const;  // rule 9
  bool operator==(const DgqEncoded&) const = default;
};

// Intermediate results, exposed so each rule can be tested on its own (and compared with
// the CUDA kernels stage by stage).
struct DgqAnalysis {
  std::vector<float> token_var;    // rule 1: v_t = max(var_t, min_var), tokens entries
  std::vector<float> block_mean;   // rule 2: one per block of win tokens
  std::vector<float> block_ratio;  // rule 3: r_b for b = 1..blocks-1 at index b-1
  int budget = 0;                  // rule 4
  std::vector<std::uint32_t> edges;  // rule 5: accepted interior edges, increasing
};

// Rules 1-5 on fp32 data ([tokens][channels] row-major).
DgqAnalysis dgq_analyze(const float* x, std::int64_t tokens, std::int64_t channels, const DgqParams& p);

// The canonical sums of rule 1 over one row (exposed for tests and the CUDA comparison).
float canonical_sum(const float* x, std::int64_t n);
float canonical_sum_of_squares(const float* x, std::int64_t n, float mean);

// Full encode (rules 1-8). Throws InputError for NaN/Inf (naming token and channel) or a
// segment whose value range overflows fp32; ParameterError for bad params.
DgqEncoded dgq_encode(ConstTensor x, const DgqParams& p);
// The same bytes written into `out`, reusing its vectors' capacity: encoding tensors of one
// size over and over allocates nothing. Throws as dgq_encode; `out` is then unspecified.
void dgq_encode_into(ConstTensor x, const DgqParams& p, DgqEncoded& out);

// Decode into out (same shape, out.dtype == enc.dtype). Uses only the stored parts: bitmap
// and in-band modes recover the boundaries from the bitmap or the markers.
void dgq_decode(const DgqEncoded& enc, MutTensor out);

// The segment edges [0, e1, ..., L] a decoder recovers from the stored parts.
std::vector<std::uint32_t> dgq_segment_edges(const DgqEncoded& enc);

}  // namespace dgq

namespace dgq {
// Every unit (layer x head x K/V) encoded independently, OpenMP over units; the bytes do not
// depend on the thread count.
std::vector<DgqEncoded> dgq_encode_batch(const std::vector<ConstTensor>& units, const DgqParams& p);
// The same into `out` (resized to units.size()), reusing each entry's buffers (dgq_encode_into).
void dgq_encode_batch_into(const std::vector<ConstTensor>& units, const DgqParams& p, std::vector<DgqEncoded>& out);
}  // namespace dgq
