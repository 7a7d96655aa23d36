#pragma once
// One chunk's scores of every cache of a `dgq eval` run, and the chunk files that make the run
// resumable (docs/eval.md): OUTPUT.partial.d/chunk-NNNNN.h5, written whole or not at all, reused
// by a rerun only when its run identity and provenance match.
#include <cstdint>
#include <string>
#include <vector>

#include "dgq/sim/eval/scores.hpp"
#include "dgq/sim/files/hdf5/h5.hpp"
#include "dgq/sim/files/provenance/provenance.hpp"

namespace dgq::sim {

// What one cache scored on one chunk, or (summed with add_chunk) on every chunk so far.
struct ChunkRun {
  TokenScores scores;
  std::uint64_t bytes = 0, elements = 0;
  std::uint64_t held_bytes_sum = 0, held_elements_sum = 0;  // over appends (SchemeCache)
  std::uint64_t k_bytes = 0;                                // the K cache's part of bytes
  bool k_bytes_recorded = true;                             // false: an older chunk file, without K bytes
  std::vector<double> kl_sums;                              // attention KL per layer: sum over probes, and their count
  std::vector<std::int64_t> kl_counts;
  std::vector<float> logits;  // kept only with save_logits (and for a base logits file)
};

// Appends chunk's scores and logits to total, adds its counters.
void add_chunk(ChunkRun& total, const ChunkRun& chunk);

// The datasets and attributes of one run's group (in chunk files and in the results file).
void write_chunk_scores(hid_t group, const ChunkRun& run, const std::string& context, std::int64_t vocab);
ChunkRun read_chunk_scores(hid_t group, std::size_t rows, std::size_t layers, const std::string& context,
                           bool with_logits, std::int64_t vocab);

// DIR/chunk-NNNNN.h5.
std::string eval_chunk_path(const std::string& dir, std::int64_t chunk);

// What every chunk file of one run holds, and what it must match to be reused.
struct ChunkFileLayout {
  std::string dir;       // OUTPUT.partial.d
  std::string identity;  // the run identity (eval_run_identity with the schemes)
  Provenance this_run;   // this build and the run's config hash
  bool allow_mixed_versions = false;
  std::size_t rows = 0, layers = 0;  // scored rows per chunk; the model's layers
  std::int64_t vocab = 0;
  std::vector<bool> with_logits;  // per run (the base first): logits are stored
};

// A chunk file left by an earlier, interrupted run: its runs (the base first), after checking
// its identity and provenance. The writer's version goes to recorded_version.
std::vector<ChunkRun> read_chunk_file(const ChunkFileLayout& layout, std::int64_t chunk, std::string& recorded_version);
// Commits a finished chunk (written as .partial and renamed, so a killed run leaves either a
// whole chunk or none).
void write_chunk_file(const ChunkFileLayout& layout, std::int64_t chunk, const std::vector<ChunkRun>& runs);

}  // namespace dgq::sim
