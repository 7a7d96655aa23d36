#pragma once
// DGQ's parameters and what it stores for one tensor (docs/spec.md, "Parameters" and rules
// 8-9): the types every backend (the CPU reference, the CUDA implementation) reads and writes,
// so they live in the core. The algorithm itself is the reference's (dgq/dgq.hpp).
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dgq/tensor.hpp"

namespace dgq {

enum class Granularity : std::uint8_t { segment, segment_channel };
enum class Markers : std::uint8_t { table, bitmap, inband };
// How the segment edges are chosen: rule 5 (the strongest change points of the whole tensor),
// or the causal cache's first-come rule C3 (each edge decided once the block after it is
// complete, without seeing later blocks; docs/spec.md, "Causal caches").
enum class Boundaries : std::uint8_t { adaptive, online };

std::string_view granularity_name(Granularity g);   // "segment", "segment-channel"
std::string_view markers_name(Markers m);           // "table", "bitmap", "inband"
Granularity parse_granularity(std::string_view s);  // throws ParameterError
Markers parse_markers(std::string_view s);          // throws ParameterError
std::string_view boundaries_name(Boundaries b);     // "adaptive", "online"
Boundaries parse_boundaries(std::string_view s);    // throws ParameterError

struct DgqV1Params {
  int win = 16;               // tokens per block, [1, 65536]
  float group_ratio = 0.75f;  // (0, 1]
  float min_var = 0.05f;      // >= 0, finite
  int max_groups = 5;         // [1, 8]
  Granularity granularity = Granularity::segment;
  Markers markers = Markers::table;
  Boundaries boundaries = Boundaries::adaptive;

  void validate() const;  // throws ParameterError naming the parameter and its range
  // "win=16,group_ratio=0.75,min_var=0.05,max_groups=5,granularity=segment,markers=table", then
  // ",boundaries=online" only when not the default, so that every spec (and hash) written before
  // the key existed reads and prints as it did.
  std::string to_string() const;
  bool operator==(const DgqV1Params&) const = default;
};

// What DGQ stores for one [tokens][channels] tensor. Parts that the marker mode does not
// store are empty. ranges: lo/hi have segments*C entries, C = 1 (segment) or channels
// (segment-channel), index s*C + d.
struct DgqV1Encoded {
  std::int64_t tokens = 0;
  std::int64_t channels = 0;
  DType dtype = DType::f16;  // input dtype; decode rounds to it
  DgqV1Params params;
  int segments = 0;                       // number of segments (0 iff tokens == 0)
  std::vector<std::uint32_t> boundaries;  // interior edges, increasing (table mode; empty otherwise)
  std::vector<std::uint8_t> bitmap;       // ceil(tokens/8) bytes, bit t%8 of byte t/8 = segment(t) mod 2 (bitmap mode)
  std::vector<float> lo, hi;              // ranges
  std::vector<std::int8_t> codes;         // tokens*channels, row-major; in-band markers applied in inband mode

  struct Bytes {
    std::uint64_t codes = 0, ranges = 0, markers = 0;
    std::uint64_t total() const { return codes + ranges + markers; }
  };
  Bytes stored_bytes() const;  // rule 9
  bool operator==(const DgqV1Encoded&) const = default;
};

// The segment edges [0, e1, ..., L] a decoder recovers from the stored parts (rule 8): the
// boundary table, the bitmap or the in-band markers. Throws InputError "corrupt DGQ data: ..."
// for markers that contradict each other or the header.
std::vector<std::uint32_t> dgq_segment_edges(const DgqV1Encoded& enc);

}  // namespace dgq
