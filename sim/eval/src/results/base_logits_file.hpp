#pragma once
// The base-logits file of `dgq eval --base-logits` (docs/eval.md): the base cache's logits and
// per-chunk counters, written by one run and reused by the next run of the same identity, so
// the base forward pass is skipped. Its own file so that the reader can be fuzzed alone
// (tests/fuzz/fuzz_base_logits.cpp) exactly as `dgq eval` runs it.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/files/hdf5/h5.hpp"

namespace dgq::sim {

// Per chunk ([chunks]) and per chunk and layer ([chunks x layers]), as float64.
struct BaseChunkCounters {
  std::vector<double> stored_bytes, stored_elements, attn_kl_sums, attn_kl_counts;
  std::vector<double> held_bytes_sums, held_elements_sums;  // [chunks], over appends
  std::vector<double> stored_k_bytes;                       // [chunks]; empty: an older file, without K bytes
};

class BaseLogitsReader {
 public:
  // Opens `path`; InputError unless its run_identity is `identity` and the counters have
  // `chunks` and `chunks x layers` entries.
  BaseLogitsReader(const std::string& path, const std::string& identity, std::size_t chunks, std::size_t layers);
  const BaseChunkCounters& counters() const { return counters_; }
  hid_t file() const { return file_.get(); }  // for its provenance attributes
  // Rows [chunk * rows, (chunk + 1) * rows) of /logits, [rows][vocab].
  std::vector<float> logits(std::int64_t chunk, std::int64_t rows, std::int64_t vocab) const;

 private:
  std::string path_;
  h5::Handle file_;
  BaseChunkCounters counters_;
};

// Writes the file (via PATH.partial, renamed when whole) with this build's provenance and the
// base run's config hash (docs/results-format.md, "Provenance"); logits are [chunks x rows][vocab].
void write_base_logits_file(const std::string& path, const std::string& base_spec, const std::string& identity,
                            const std::string& config_hash, const BaseChunkCounters& counters,
                            const std::vector<float>& logits, std::int64_t rows, std::int64_t vocab);

}  // namespace dgq::sim
