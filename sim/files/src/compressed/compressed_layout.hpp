#pragma once
// Paths and attributes of the compressed-file format (docs/compressed-format.md).
#include <string>

#include "dgq/scheme.hpp"

namespace dgq::sim::compressed {

// "/layers/3/k/5": the group holding one unit's parts.
inline std::string unit_group(int layer, TensorRole role, int head) {
  return "/layers/" + std::to_string(layer) + "/" + std::string(role_name(role)) + "/" + std::to_string(head);
}

inline constexpr const char* kAttrScheme = "scheme";
inline constexpr const char* kAttrTokens = "tokens";
inline constexpr const char* kAttrKvDtype = "kv_dtype";
inline constexpr const char* kAttrChannels = "channels";
inline constexpr const char* kAttrDtype = "dtype";
inline constexpr const char* kAttrParts = "parts";                 // part names in order, comma-separated
inline constexpr const char* kAttrSegmentEdges = "segment_edges";  // diagnostics, not counted as stored

}  // namespace dgq::sim::compressed
