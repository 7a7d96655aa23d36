#pragma once
// The hash of a token sequence that eval run identities and configuration texts record
// ("tokens=N:HASH", docs/results-format.md), so that a chunk or base-logits file made from other
// tokens is never reused.
#include <cstdint>
#include <vector>

namespace dgq::sim {

// FNV-1a over each token's 4 bytes, little-endian. Its offset basis is 1469598103934665603, not
// FNV's 14695981039346656037 (a digit short): files already record hashes made with it, so it
// stays; it only needs to tell token sequences apart.
std::uint64_t token_sequence_hash(const std::vector<std::int32_t>& tokens);

}  // namespace dgq::sim
