#pragma once
// SchemeCache's literal-decoder state, defined where every file that constructs or destroys a
// SchemeCache sees it (a constructor that throws destroys its unique_ptr<Decoder> member, which
// needs the complete type in that translation unit).
#include <cstdint>
#include <memory>
#include <vector>

#include "dgq/causal.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"

namespace dgq::sim {

struct SchemeCache::Decoder {
  // [layer][kv head][role]: a role's compressed cache, or (its scheme exact) its fp32 rows.
  std::vector<std::unique_ptr<CausalCache>> caches;
  std::vector<std::vector<float>> exact;
  std::int64_t tokens = 0;  // appended so far (the last layer's count)
};

}  // namespace dgq::sim
