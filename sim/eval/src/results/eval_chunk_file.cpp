#include "results/eval_chunk_file.hpp"

#include <cstdio>

#include "dgq/errors.hpp"
#include "dgq/sim/files/hdf5/numbers.hpp"
#include "dgq/sim/files/hdf5/partial_output.hpp"
#include "dgq/sim/files/provenance/provenance_attributes.hpp"

namespace dgq::sim {

void add_chunk(ChunkRun& total, const ChunkRun& chunk) {
  total.scores.append(chunk.scores);
  total.bytes += chunk.bytes;
  total.elements += chunk.elements;
  total.held_bytes_sum += chunk.held_bytes_sum;
  total.held_elements_sum += chunk.held_elements_sum;
  total.k_bytes += chunk.k_bytes;
  total.k_bytes_recorded = total.k_bytes_recorded && chunk.k_bytes_recorded;
  total.kl_sums.resize(chunk.kl_sums.size(), 0.0);
  total.kl_counts.resize(chunk.kl_counts.size(), 0);
  for (std::size_t l = 0; l < chunk.kl_sums.size(); ++l) {
    total.kl_sums[l] += chunk.kl_sums[l];
    total.kl_counts[l] += chunk.kl_counts[l];
  }
  total.logits.insert(total.logits.end(), chunk.logits.begin(), chunk.logits.end());
}

void write_chunk_scores(hid_t group, const ChunkRun& run, const std::string& context, std::int64_t vocab) {
  h5::write_doubles(group, "nll", run.scores.nll, context);
  h5::write_doubles(group, "kld", run.scores.kld, context);
  h5::write_doubles(group, "p_target", run.scores.p_target, context);
  h5::write_vector(group, "same_top1", run.scores.same_top1, context);
  h5::write_int_attribute(group, "stored_bytes", static_cast<std::int64_t>(run.bytes));
  h5::write_int_attribute(group, "stored_elements", static_cast<std::int64_t>(run.elements));
  h5::write_int_attribute(group, "held_bytes_sum", static_cast<std::int64_t>(run.held_bytes_sum));
  h5::write_int_attribute(group, "held_elements_sum", static_cast<std::int64_t>(run.held_elements_sum));
  if (run.k_bytes_recorded) h5::write_int_attribute(group, "stored_k_bytes", static_cast<std::int64_t>(run.k_bytes));
  h5::write_doubles(group, "attn_kl_sum", run.kl_sums, context);
  std::vector<double> counts(run.kl_counts.begin(), run.kl_counts.end());
  h5::write_doubles(group, "attn_kl_count", counts, context);
  if (!run.logits.empty()) h5::write_floats(group, "logits", run.logits, run.logits.size() / vocab, vocab, context);
}

ChunkRun read_chunk_scores(hid_t group, std::size_t rows, std::size_t layers, const std::string& context,
                           bool with_logits, std::int64_t vocab) {
  ChunkRun run;
  run.scores.nll = h5::read_doubles(group, "nll", rows, context + "/nll");
  run.scores.kld = h5::read_doubles(group, "kld", rows, context + "/kld");
  run.scores.p_target = h5::read_doubles(group, "p_target", rows, context + "/p_target");
  for (std::int64_t v : h5::read_int_vector(group, "same_top1", context + "/same_top1"))
    run.scores.same_top1.push_back(static_cast<std::uint8_t>(v));
  if (run.scores.same_top1.size() != rows) throw InputError(context + "/same_top1: wrong length");
  run.bytes = static_cast<std::uint64_t>(h5::read_int_attribute(group, "stored_bytes", context));
  run.elements = static_cast<std::uint64_t>(h5::read_int_attribute(group, "stored_elements", context));
  run.held_bytes_sum = static_cast<std::uint64_t>(h5::read_int_attribute(group, "held_bytes_sum", context));
  run.held_elements_sum = static_cast<std::uint64_t>(h5::read_int_attribute(group, "held_elements_sum", context));
  run.k_bytes_recorded = h5::has_attribute(group, "stored_k_bytes");
  if (run.k_bytes_recorded)
    run.k_bytes = static_cast<std::uint64_t>(h5::read_int_attribute(group, "stored_k_bytes", context));
  run.kl_sums = h5::read_doubles(group, "attn_kl_sum", layers, context + "/attn_kl_sum");
  for (double v : h5::read_doubles(group, "attn_kl_count", layers, context + "/attn_kl_count"))
    run.kl_counts.push_back(static_cast<std::int64_t>(v));
  if (with_logits) run.logits = h5::read_float_rows(group, "logits", 0, rows, vocab, context + "/logits");
  return run;
}

std::string eval_chunk_path(const std::string& dir, std::int64_t chunk) {
  char name[32];
  std::snprintf(name, sizeof name, "chunk-%05lld.h5", static_cast<long long>(chunk));
  return dir + "/" + name;
}

std::vector<ChunkRun> read_chunk_file(const ChunkFileLayout& layout, std::int64_t chunk,
                                      std::string& recorded_version) {
  const std::string path = eval_chunk_path(layout.dir, chunk);
  h5::Handle f = h5::open_file_readonly(path);
  const std::string stored = h5::read_string_attribute(f.get(), "run_identity", path);
  if (stored != layout.identity)
    throw InputError(path + ": a chunk of another run (" + stored + "); delete " + layout.dir + " to start over");
  const Provenance recorded = read_provenance_attributes(f.get(), path);
  require_provenance(path, "chunk " + std::to_string(chunk), recorded, layout.this_run, layout.allow_mixed_versions);
  recorded_version = recorded.version;
  std::vector<ChunkRun> runs(layout.with_logits.size());
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const std::string where = path + ": /runs/" + std::to_string(i);
    h5::Handle g = h5::open_group(f.get(), "runs/" + std::to_string(i), where);
    runs[i] = read_chunk_scores(g.get(), layout.rows, layout.layers, where, layout.with_logits[i], layout.vocab);
  }
  return runs;
}

void write_chunk_file(const ChunkFileLayout& layout, std::int64_t chunk, const std::vector<ChunkRun>& runs) {
  const std::string path = eval_chunk_path(layout.dir, chunk);
  h5::PartialOutput out(path);
  h5::write_string_attribute(out.file(), "run_identity", layout.identity);
  write_provenance_attributes(out.file(), layout.this_run.config_hash);
  h5::Handle group = h5::create_group(out.file(), "runs", path);
  for (std::size_t i = 0; i < runs.size(); ++i) {
    h5::Handle g = h5::create_group(group.get(), std::to_string(i), path);
    write_chunk_scores(g.get(), runs[i], path + ": /runs/" + std::to_string(i), layout.vocab);
  }
  out.commit();
}

}  // namespace dgq::sim
