#pragma once
// One layer of a compressed file decoded in memory (used by `dgq decompress` and the
// compressed-file fuzz target): every unit read, decoded with `threads` threads, and checked
// finite. Errors name the file, layer, tensor and head.
#include "dgq/sim/files/compressed.hpp"

namespace dgq::sim {
LayerData decompress_layer(const CompressedReader& reader, const Scheme& scheme, int layer, int threads);
}  // namespace dgq::sim
