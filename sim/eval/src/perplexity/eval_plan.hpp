#pragma once
// The plan of a `dgq eval` run: its inputs read and checked, its caches made and the
// identities its files must carry, all before any forward pass, so that a bad option, input or
// scheme spec fails at once rather than after hours of work.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "dgq/sim/eval/eval.hpp"
#include "dgq/sim/eval/scheme_cache.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"

namespace dgq::sim {

struct EvalPlan {
  // Validates the options and inputs in the order of docs/eval.md's errors; throws
  // ParameterError or InputError naming the option or file.
  explicit EvalPlan(const EvalOptions& options);
  // The caches point into model.config: a plan stays where it was made.
  EvalPlan(const EvalPlan&) = delete;
  EvalPlan& operator=(const EvalPlan&) = delete;

  const ModelConfig& config() const { return model.config; }
  std::size_t runs() const { return specs.size(); }

  Model model;
  TokenText text;
  std::int64_t chunks = 0;
  CacheMode cache_mode = CacheMode::prefill;
  KeyPosition keys = KeyPosition::post_rope;
  DType raw_dtype = DType::f16;
  std::int64_t first = 0, rows = 0, vocab = 0;       // first scored row, scored rows per chunk
  std::vector<std::string> specs;                    // the base first, then the schemes
  std::vector<std::unique_ptr<SchemeCache>> caches;  // one per spec
  // What chunk files must carry to be reused (with the schemes), and the base logits file
  // (without them).
  std::string identity, base_identity;
  // Provenance (docs/results-format.md): the whole run's hash for its chunk files and results
  // root, one per spec for its run, the base's for the base logits file.
  Provenance this_run;
  std::vector<std::string> scheme_hashes;
};

}  // namespace dgq::sim
